# One registry: globals that tvm-ffi libraries register are found through packedfun's registry.
"""A library built against apache-tvm-ffi (fixtures/tvm_ffi_registry.cc) registers globals with
``TVM_FFI_STATIC_INIT_BLOCK`` + ``refl::GlobalDef().def``; packedfun's ``get_global_func``,
``list_global_func_names`` and ``init_ffi_api`` see them, whichever way the library (and
libtvm_ffi) came into the process. Every case runs in a child process, on the backend under test."""

from __future__ import annotations

import importlib.util
import os

import pytest

if importlib.util.find_spec("tvm_ffi") is None:
    pytest.skip("apache-tvm-ffi is not installed", allow_module_level=True)

from test_tvm_ffi_kernels import build_library, run_child  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "fixtures", "tvm_ffi_registry.cc")


@pytest.fixture(scope="module")
def lib() -> str:
    return build_library(SOURCE, "pf_tvm_registry")


_CHECKS = """
import sys, types
import packedfun as pf
add = pf.get_global_func("pf_tvm_reg.add")
assert isinstance(add, pf.Function) and add(2, 40) == 42
assert pf.get_global_func("pf_tvm_reg.greet")("you") == "hello you"
names = pf.list_global_func_names()
assert {"pf_tvm_reg.add", "pf_tvm_reg.greet"} <= set(names), names
assert len(names) == len(set(names))  # one entry per name
assert any(n.startswith("packedfun.") for n in names)  # packedfun's own are still there
mod = types.ModuleType("pf_tvm_reg_api")
pf.init_ffi_api("pf_tvm_reg", "pf_tvm_reg_api") if "pf_tvm_reg_api" in sys.modules else None
sys.modules["pf_tvm_reg_api"] = mod
pf.init_ffi_api("pf_tvm_reg", "pf_tvm_reg_api")
assert mod.add(1, 2) == 3
try:
    pf.get_global_func("pf_tvm_reg.no_such")
except ValueError:
    pass
else:
    raise AssertionError("no error for a missing name")
# packedfun's own entry wins over tvm-ffi's for a name both registries have
pf.register_global_func("pf_tvm_reg.add", lambda a, b: -1, override=True)
assert pf.get_global_func("pf_tvm_reg.add")(1, 2) == -1
pf.remove_global_func("pf_tvm_reg.add")
assert pf.get_global_func("pf_tvm_reg.add")(1, 2) == 3  # tvm-ffi's again
print("ok")
"""


def test_loaded_through_packedfun(lib):
    # load_module loads libtvm_ffi for the library; the library's static init registers its globals
    out = run_child(lib, code="import sys, packedfun as pf\nm = pf.load_module(sys.argv[1])\n"
                    + _CHECKS)  # fmt: skip
    assert out.strip() == "ok"


def test_loaded_behind_packedfuns_back(lib):
    # libtvm_ffi and the library come in through ctypes after packedfun was imported: order of
    # loading does not matter.
    code = (
        "import sys, ctypes, importlib.metadata, packedfun as pf\n"
        "before = pf.list_global_func_names()\n"
        "assert 'pf_tvm_reg.add' not in before\n"
        "files = importlib.metadata.distribution('apache-tvm-ffi').files\n"
        "so = [f.locate() for f in files if f.name == 'libtvm_ffi.so'][0]\n"
        "ctypes.CDLL(str(so), ctypes.RTLD_GLOBAL)\n"
        "ctypes.CDLL(sys.argv[1], ctypes.RTLD_GLOBAL)\n"
    )
    assert run_child(lib, code=code + _CHECKS).strip() == "ok"


def test_names_missing_without_libtvm_ffi():
    code = "import packedfun as pf\nprint(any('pf_tvm' in n for n in pf.list_global_func_names()))"
    out = run_child(code=code)
    assert out.strip() == "False"
