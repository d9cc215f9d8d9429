# An external CMake project (examples/add_integers) finds the installed packedfun, builds and loads.
"""The extension-author path end to end: ``find_package(packedfun CONFIG REQUIRED)`` with
``-Dpackedfun_DIR=$(packedfun-config --cmakedir)``, build, then ``packedfun.load_module`` and call
the library's ``AddIntegers`` / ``Greet``."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import packedfun
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = REPO_ROOT / "examples" / "add_integers"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

pytestmark = pytest.mark.skipif(
    os.environ.get("PACKEDFUN_BACKEND") == "ctypes",
    reason="builds a library; loading it is covered by the default-backend pass",
)


def _cmake_dir() -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "packedfun.config", "--cmakedir"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return proc.stdout.strip()


def _run(cmd: list) -> None:
    proc = subprocess.run(
        [str(c) for c in cmd], capture_output=True, text=True, check=False, timeout=900
    )
    if proc.returncode != 0:
        pytest.fail(f"$ {' '.join(map(str, cmd))}\n{(proc.stdout + proc.stderr)[-6000:]}")


@pytest.fixture(scope="module")
def example_library(tmp_path_factory) -> Path:
    if not (EXAMPLE / "CMakeLists.txt").is_file():
        pytest.skip("examples/add_integers is not in this checkout")
    cmake = shutil.which("cmake")
    if cmake is None:
        if IN_CI:
            pytest.fail("cmake is required in CI")
        pytest.skip("cmake not found")
    cmake_dir = _cmake_dir()
    assert (Path(cmake_dir) / "packedfunConfig.cmake").is_file(), cmake_dir
    build = tmp_path_factory.mktemp("add_integers_build")
    configure = [cmake, "-S", EXAMPLE, "-B", build, f"-Dpackedfun_DIR={cmake_dir}"]
    if shutil.which("ninja"):
        configure += ["-G", "Ninja"]
    _run(configure)
    _run([cmake, "--build", build, "-j", "2"])
    libraries = sorted(p for p in build.rglob("*.so") if p.is_file())
    assert len(libraries) == 1, f"expected one shared library, built: {libraries}"
    return libraries[0]


def _function(module, name: str):
    """The module's function by name, falling back to the global registry (static registration)."""
    for getter in (lambda: module[name], lambda: getattr(module, name)):
        try:
            func = getter()
        except (AttributeError, KeyError, TypeError):
            continue
        if func is not None:
            return func
    return packedfun.get_global_func(name)


@pytest.fixture(scope="module")
def example_module(example_library):
    if not hasattr(packedfun, "load_module"):
        pytest.skip("packedfun.load_module is not available yet")
    return packedfun.load_module(str(example_library))


def test_add_integers(example_module):
    add = _function(example_module, "AddIntegers")
    assert add(5, 7) == 12
    assert add(-3, 3) == 0


def test_greet(example_module):
    greet = _function(example_module, "Greet")
    text = greet("packedfun")
    assert isinstance(text, str)
    assert "packedfun" in text


def test_add_integers_rejects_wrong_types(example_module):
    add = _function(example_module, "AddIntegers")
    with pytest.raises(TypeError, match="AddIntegers"):
        add("five", 7)


def test_library_links_the_installed_runtime(example_library):
    ldd = shutil.which("ldd")
    if ldd is None:
        pytest.skip("ldd not found")
    out = subprocess.run([ldd, str(example_library)], capture_output=True, text=True, check=True)
    assert "libpackedfun.so" in out.stdout
