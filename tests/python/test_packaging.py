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
import packedfun.config
import pytest
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
