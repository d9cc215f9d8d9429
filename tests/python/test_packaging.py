# An external CMake project (examples/add_integers) finds the installed packedfun, builds and loads.
"""The extension-author path end to end: ``find_package(packedfun CONFIG REQUIRED)`` with
``-Dpackedfun_DIR=$(packedfun-config --cmakedir)``, build, then ``packedfun.load_module`` and call
the library's ``AddIntegers`` / ``Greet``."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import packedfun
import packedfun.config
import pytest
import suite
from cmake_project import REPO_ROOT, build_external, run

EXAMPLE = REPO_ROOT / "examples" / "add_integers"

pytestmark = pytest.mark.deselect_if(
    os.environ.get("PACKEDFUN_BACKEND") == "ctypes",
    reason="builds a library; loading it is covered by the default-backend pass",
)


@pytest.fixture(scope="module")
def example_build(tmp_path_factory) -> Path:
    if not (EXAMPLE / "CMakeLists.txt").is_file():
        pytest.skip("examples/add_integers is not in this checkout")
    return build_external(EXAMPLE, tmp_path_factory.mktemp("add_integers_build"))


@pytest.fixture(scope="module")
def example_library(example_build) -> Path:
    libraries = sorted(p for p in example_build.rglob("*.so") if p.is_file())
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


def _dynamic_section(path: Path) -> str:
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("readelf not found")
    return subprocess.run(
        [readelf, "-d", str(path)], capture_output=True, text=True, check=True
    ).stdout


def test_headers_target_links_no_runtime(example_build):
    """packedfun::headers gives the include paths alone: the program runs without the runtime."""
    exe = example_build / "abi_info"
    assert exe.is_file()
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.startswith("ABI 1.") and "sizeof(PFAny) = 16" in out.stdout
    assert "libpackedfun" not in _dynamic_section(exe)


def test_helper_installs_with_an_rpath_to_the_runtime(example_build, tmp_path):
    """packedfun_add_extension installs into INSTALL_DIR; outside a wheel build the installed
    library's rpath is the directory of the libpackedfun.so it was built against."""
    prefix = tmp_path / "prefix"
    run([shutil.which("cmake"), "--install", example_build, "--prefix", prefix])
    installed = prefix / "lib" / "libadd_integers.so"
    assert installed.is_file()
    dynamic = _dynamic_section(installed)
    runtime_dir = Path(packedfun.config.get_lib_dir()).resolve()
    rpaths = [
        line.split("[", 1)[1].rstrip("]")
        for line in dynamic.splitlines()
        if "RPATH" in line or "RUNPATH" in line
    ]
    assert any(Path(p).resolve() == runtime_dir for r in rpaths for p in r.split(":")), dynamic


def test_package_loads_its_own_library(example_library, tmp_path, monkeypatch):
    """packedfun.libinfo.load_package_library: a package's __init__ loads lib<name>.so beside it."""
    pkg = tmp_path / "add_integers_pkg"
    pkg.mkdir()
    shutil.copy(example_library, pkg / "libadd_integers.so")
    (pkg / "__init__.py").write_text(
        "from packedfun.libinfo import load_package_library\n"
        "_LIB = load_package_library(__name__, 'add_integers')\n"
        "add_integers = _LIB.add_integers\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    try:
        mod = importlib.import_module("add_integers_pkg")
        assert mod.add_integers(20, 22) == 42
    finally:
        sys.modules.pop("add_integers_pkg", None)


_FRAMES_CMAKE = """\
cmake_minimum_required(VERSION 3.18)
project(frames LANGUAGES CXX)
find_package(packedfun CONFIG REQUIRED)
packedfun_add_extension(frames SOURCES frames.cc INSTALL_DIR lib)
packedfun_add_extension(frames_nodebug SOURCES frames.cc INSTALL_DIR lib NO_DEBUG_INFO)
"""
_FRAMES_SOURCE = """\
#include <packedfun/packedfun.h>
namespace mylib {
__attribute__((noinline)) void Fail(int64_t x) {
  PACKEDFUN_THROW(ValueError) << "bad " << x;  // THROW
}
}  // namespace mylib
int64_t RaiseError(int64_t x) {
  mylib::Fail(x);
  return x;
}
PACKEDFUN_DLL_EXPORT_TYPED_FUNC(raise_error, RaiseError);
"""
_FRAMES_CHILD = """
import sys, traceback
import packedfun
try:
    packedfun.load_module(sys.argv[1]).raise_error(3)
except ValueError as exc:
    print("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
"""


@pytest.fixture(scope="module")
def release_install(tmp_path_factory) -> Path:
    """The two libraries of _FRAMES_CMAKE, built as Release (no -g of CMake's own) and installed
    with `cmake --install --strip`, as scikit-build-core installs a Release wheel."""
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.skip("cmake not found")
    base = tmp_path_factory.mktemp("frames")
    (base / "src").mkdir()
    (base / "src" / "CMakeLists.txt").write_text(_FRAMES_CMAKE)
    (base / "src" / "frames.cc").write_text(_FRAMES_SOURCE)
    configure = [cmake, "-S", base / "src", "-B", base / "build", "-DCMAKE_BUILD_TYPE=Release"]
    configure += [f"-Dpackedfun_DIR={packedfun.config.get_cmake_dir()}"]
    if shutil.which("ninja"):
        configure += ["-G", "Ninja"]
    run(configure)
    run([cmake, "--build", base / "build"])
    run([cmake, "--install", base / "build", "--strip", "--prefix", base / "prefix"])
    return base / "prefix" / "lib"


@pytest.mark.parametrize("backend", ["_core", "ctypes"])
@pytest.mark.parametrize("debug_info", [True, False])
def test_installed_release_extension_names_its_frames(release_install, backend, debug_info):
    """packedfun_add_extension compiles with -g1 and keeps the installed file unstripped: a Release
    build installed with --strip still prints file and line; with NO_DEBUG_INFO, the names."""
    suite.require("elftools")
    lib = release_install / ("libframes.so" if debug_info else "libframes_nodebug.so")
    env = {k: v for k, v in os.environ.items() if k != "PACKEDFUN_BACKEND"}
    if backend == "ctypes":
        env["PACKEDFUN_BACKEND"] = "ctypes"
    proc = subprocess.run([sys.executable, "-c", _FRAMES_CHILD, str(lib)], capture_output=True,
                          text=True, timeout=120, env=env)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    native = proc.stdout[proc.stdout.index("Native backtrace") :]
    line = next(i for i, t in enumerate(_FRAMES_SOURCE.splitlines(), 1) if "// THROW" in t)
    if debug_info:
        assert re.search(rf'File "[^"]*frames\.cc", line {line}, in mylib::Fail\n', native), native
    else:
        assert re.search(r'File "[^"]*libframes_nodebug\.so", offset 0x[0-9a-f]+, in mylib::Fail',
                         native), native  # fmt: skip
    assert "??" not in native, native
