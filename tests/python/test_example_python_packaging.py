# examples/python_packaging: a pip-installable C++ extension package, built without an index.
"""Builds a wheel of the packedfun under test, puts it (with scikit-build-core and the runtime
dependencies) into a local wheelhouse, then installs ``examples/python_packaging`` with
``pip install --no-index --find-links WHEELHOUSE --target SITE``: pip builds the example in an
isolated environment whose ``packedfun`` build requirement is that local wheel. A child process
with only SITE on its path imports the package and uses it: global functions bound by
``init_ffi_api``, the reflected ``IntPair``, an error whose traceback shows the C++ file and line,
and stubs that ``packedfun.stubgen --check`` finds current.

Cost: the packedfun wheel reuses scikit-build-core's build directory (``build/{wheel_tag}``, the
one ``pip install .`` filled), so in CI it is an incremental build; the wheelhouse is made once per
test session.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import suite

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = REPO_ROOT / "examples" / "python_packaging"

pytestmark = [
    pytest.mark.deselect_if(
        os.environ.get("PACKEDFUN_BACKEND") == "ctypes",
        reason="builds wheels; the child processes below run both backends",
    ),
    suite.full_only("builds the example's wheel and installs it offline (about 2 minutes)"),
]


def _pip(*args, timeout: int = 900) -> None:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", *map(str, args)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    if proc.returncode != 0:
        pytest.fail(f"$ {' '.join(cmd)}\n{(proc.stdout + proc.stderr)[-6000:]}")


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory) -> Path:
    """A packedfun wheel of this checkout and the wheels an offline, isolated build needs."""
    house = tmp_path_factory.mktemp("wheelhouse")
    _pip("wheel", "--no-deps", "-w", house, REPO_ROOT)
    # The build backend, the CMake and Ninja it may ask for (a cmake on PATH that is a Python
    # script of another environment does not run inside an isolated build) and packedfun's
    # dependencies, as wheels from the package index.
    wanted = ["scikit-build-core>=0.10", "cmake>=3.18", "ninja", "pyelftools"]
    _pip("download", "--only-binary=:all:", "-d", house, *wanted)
    return house


@pytest.fixture(scope="session")
def site(wheelhouse, tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("site")
    _pip("install", "--no-index", "--find-links", wheelhouse, "--target", target, EXAMPLE)
    return target


_CHILD = r"""
import re, sys, traceback
import packedfun
import my_ffi_extension as m

assert packedfun.__file__.startswith(sys.argv[1]), packedfun.__file__  # the wheel, not the tree
assert m.__file__.startswith(sys.argv[1])
assert m.add_one(41) == 42
assert m.greet("packedfun") == "Hello, packedfun!"
assert m.greet("x", times=2) == "Hello, x! Hello, x!"
assert m.add_one.__doc__ and "x + 1" in m.add_one.__doc__
pair = m.IntPair(1, b=2)
assert isinstance(pair, m.IntPair) and (pair.a, pair.b, pair.sum()) == (1, 2, 3)
assert m.IntPair(5).b == 0
try:
    m.raise_error("boom")
except ValueError as exc:
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
else:
    raise AssertionError("no error")
match = re.search(r'File "([^"]*extension\.cc)", line (\d+), in my_ffi_extension::RaiseError', text)
assert match, text
print(match.group(2))
"""


@pytest.mark.parametrize("backend", ["_core", "ctypes"])
def test_installed_package_works(site, backend):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PACKEDFUN_BACKEND")}
    env["PYTHONPATH"] = str(site)
    if backend == "ctypes":
        env["PACKEDFUN_BACKEND"] = "ctypes"
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(site)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=site,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    source = (EXAMPLE / "src" / "extension.cc").read_text().splitlines()
    throw_line = next(i for i, line in enumerate(source, 1) if "PACKEDFUN_THROW" in line)
    assert int(proc.stdout.strip()) == throw_line


def test_library_sits_in_the_package_with_a_relative_rpath(site):
    lib = site / "my_ffi_extension" / "libmy_ffi_extension.so"
    assert lib.is_file()
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("readelf not found")
    dynamic = subprocess.run([readelf, "-d", lib], capture_output=True, text=True, check=True)
    assert re.search(r"R(UN)?PATH.*\[\$ORIGIN/\.\./packedfun/lib\]", dynamic.stdout), dynamic.stdout


def test_shipped_stubs_are_current(site):
    """The committed .pyi is what packedfun.stubgen writes for the installed package."""
    stub = EXAMPLE / "python" / "my_ffi_extension" / "__init__.pyi"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PACKEDFUN_BACKEND")}
    env["PYTHONPATH"] = str(site)
    cmd = [sys.executable, "-m", "packedfun.stubgen", "--import", "my_ffi_extension"]
    cmd += ["--prefix", "my_ffi_extension", "--python-module", "my_ffi_extension"]
    cmd += ["-o", str(stub), "--check"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env, cwd=site)
    assert proc.returncode == 0, proc.stdout + proc.stderr
