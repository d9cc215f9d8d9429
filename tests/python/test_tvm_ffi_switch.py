# The tvm_ffi switch: `import tvm_ffi` anywhere in the process gives packedfun (child processes).
"""Every case runs in a child process (the switch changes the import system of the whole process),
on the backend under test (the child inherits ``PACKEDFUN_BACKEND``)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap

import pytest
import suite

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PTH = os.path.join(ROOT, "python", "packedfun_tvm_ffi.pth")


def _env(**extra: str) -> dict:
    env = dict(os.environ)
    env.pop("PACKEDFUN_AS_TVM_FFI", None)
    env.pop("PACKEDFUN_TVM_FFI_LIBRARY", None)
    spec = importlib.util.find_spec("packedfun")
    origin = spec.origin if spec is not None and spec.origin else None
    parent = os.path.dirname(os.path.dirname(origin)) if origin else os.path.join(ROOT, "python")
    env["PYTHONPATH"] = os.pathsep.join([parent] + [p for p in [env.get("PYTHONPATH")] if p])
    env.update(extra)
    return env


# Checks that no module file was executed twice (under two names) and none of apache-tvm-ffi's.
_ONCE = """
def check_once():
    import sys, os
    seen = {}
    for name, mod in list(sys.modules.items()):
        f = getattr(mod, "__file__", None)
        if f is None:
            continue
        f = os.path.realpath(f)
        assert seen.setdefault(f, mod) is mod, (name, f)
        assert os.sep + "tvm_ffi" + os.sep not in f, (name, f)  # apache-tvm-ffi's own files
"""


def run_child(code: str, *args: str, cwd: str | None = None, **env: str) -> str:
    code = _ONCE + textwrap.dedent(code)  # check_once() is defined in every child
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                          text=True, timeout=300, env=_env(**env), cwd=cwd)  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return proc.stdout


def test_install_aliases_the_package_and_its_submodules():
    run_child(
        """
        import sys
        import packedfun.tvm_ffi_compat as compat
        assert not compat.installed()
        compat.install()
        compat.install()  # twice: nothing more
        assert compat.installed() and sys.meta_path.count(compat._finder) == 1
        import packedfun
        import tvm_ffi
        assert tvm_ffi is packedfun
        import tvm_ffi.cpp, tvm_ffi.libinfo, tvm_ffi.config, tvm_ffi.testing
        import packedfun.cpp, packedfun.libinfo, packedfun.config, packedfun.testing
        assert tvm_ffi.cpp is packedfun.cpp and sys.modules["tvm_ffi.cpp"] is packedfun.cpp
        assert tvm_ffi.libinfo is packedfun.libinfo and tvm_ffi.config is packedfun.config
        assert sys.modules["tvm_ffi.testing"] is sys.modules["packedfun._tvm_ffi_testing"]
        from tvm_ffi.cpp import load_inline
        assert load_inline is packedfun.cpp.load_inline
        from tvm_ffi import register_global_func, get_global_func
        assert get_global_func("testing.echo")(5) == 5
        assert packedfun.cpp.__name__ == "packedfun.cpp"  # the module keeps its own name
        import tvm_ffi.core  # the switch's own module, not apache-tvm-ffi's (check_once)
        assert tvm_ffi.core.__name__ == "packedfun._tvm_ffi_core"
        try:
            import tvm_ffi.cython  # a name packedfun has no module for
        except ModuleNotFoundError:
            pass
        else:
            raise AssertionError("tvm_ffi.cython imported")
        check_once()
        compat.uninstall()
        assert not compat.installed() and "tvm_ffi" not in sys.modules
        """
    )


def test_third_party_package_gets_packedfun(tmp_path):
    pkg = tmp_path / "thirdparty"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "import tvm_ffi\nimport tvm_ffi.cpp\nfrom tvm_ffi import register_global_func\n"
        "@register_global_func('thirdparty.twice')\ndef twice(x):\n    return 2 * x\n"
        "FFI = tvm_ffi\nCPP = tvm_ffi.cpp\n"
    )
    run_child(
        """
        import sys
        sys.path.insert(0, sys.argv[1])
        import packedfun.tvm_ffi_compat
        packedfun.tvm_ffi_compat.install()
        import thirdparty, packedfun
        assert thirdparty.FFI is packedfun
        import packedfun.cpp
        assert thirdparty.CPP is packedfun.cpp is sys.modules["tvm_ffi.cpp"]
        assert packedfun.cpp.__name__ == "packedfun.cpp"
        assert packedfun.get_global_func("thirdparty.twice")(21) == 42
        check_once()
        """,
        str(tmp_path),
    )


def test_environment_variable_through_the_pth_file():
    # The wheel installs python/packedfun_tvm_ffi.pth into site-packages; site.addsitedir runs it
    # the same way interpreter start does. Set, it loads nothing of packedfun until the first
    # `import tvm_ffi`; unset, it imports nothing at all.
    code = """
        import site, sys
        site.addsitedir(sys.argv[1])
        print("packedfun" in sys.modules, "tvm_ffi" in sys.modules)
        import tvm_ffi
        print(tvm_ffi.__name__)
        """
    then = """
        import packedfun.cpp, packedfun.tvm_ffi_compat as compat, tvm_ffi.cpp
        print(compat.installed(), sys.modules["tvm_ffi.cpp"] is packedfun.cpp)
        """
    folder = os.path.dirname(PTH)
    assert run_child(code + then, folder, PACKEDFUN_AS_TVM_FFI="1").split() == [
        "False", "False", "packedfun", "True", "True"]  # fmt: skip
    off = run_child(code, folder, PACKEDFUN_AS_TVM_FFI="0").split()
    assert off[:2] == ["False", "False"]
    if importlib.util.find_spec("tvm_ffi") is not None:  # apache-tvm-ffi installed: its own
        assert off[2] == "tvm_ffi"


def _site_dir_of_packedfun() -> str:
    spec = importlib.util.find_spec("packedfun")
    assert spec is not None and spec.origin, "packedfun is not importable"
    return os.path.dirname(os.path.dirname(os.path.abspath(spec.origin)))


@pytest.mark.deselect_if(not suite.packedfun_in_site_dir(), reason=suite.NOT_IN_SITE_DIR)
def test_installed_wheel_carries_the_pth_file():
    site_dir = _site_dir_of_packedfun()
    assert os.path.isfile(os.path.join(site_dir, "packedfun_tvm_ffi.pth"))
    assert os.path.isfile(os.path.join(site_dir, "_packedfun_tvm_ffi.py"))
    out = run_child("import sys, tvm_ffi; print(tvm_ffi.__name__, 'packedfun' in sys.modules)",
                    PACKEDFUN_AS_TVM_FFI="1")  # fmt: skip
    assert out.split() == ["packedfun", "True"]


def test_install_after_apache_tvm_ffi_was_imported_is_refused():
    if importlib.util.find_spec("tvm_ffi") is None:  # not imported here: the switch is under test
        suite.require("tvm_ffi")
    run_child(
        """
        import tvm_ffi  # apache-tvm-ffi's own
        import packedfun.tvm_ffi_compat as compat
        try:
            compat.install()
        except RuntimeError as exc:
            assert "before" in str(exc), exc
        else:
            raise AssertionError("no error")
        assert not compat.installed()
        """
    )


def test_libtvm_ffi_is_found_under_the_switch():
    if importlib.util.find_spec("tvm_ffi") is None:  # not imported here: the switch is under test
        suite.require("tvm_ffi")
    from test_tvm_ffi_kernels import SOURCE, build_library

    lib = build_library(SOURCE, "pf_tvm_kernels")
    run_child(
        """
        import sys
        import packedfun.tvm_ffi_compat
        packedfun.tvm_ffi_compat.install()
        import tvm_ffi
        m = tvm_ffi.load_module(sys.argv[1])
        assert m.add(1, 2) == 3
        assert not any(getattr(v, "__file__", "") and "/tvm_ffi/" in v.__file__
                       for v in list(sys.modules.values()))
        """,
        lib,
    )
