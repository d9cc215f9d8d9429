# One registry both ways: tvm-ffi libraries' globals seen through packedfun, packedfun's by tvm-ffi.
"""A library built against apache-tvm-ffi (fixtures/tvm_ffi_registry.cc) registers globals with
``TVM_FFI_STATIC_INIT_BLOCK`` + ``refl::GlobalDef().def``; packedfun's ``get_global_func``,
``list_global_func_names`` and ``init_ffi_api`` see them, whichever way the library (and
libtvm_ffi) came into the process. The other way, the library's own ``Function::GetGlobal`` finds
what is registered through packedfun; a name both have is packedfun's on both sides, and removing
or overriding acts on both. Every case runs in a child process, on the backend under test."""

from __future__ import annotations

import importlib.util
import os

import pytest

if importlib.util.find_spec("tvm_ffi") is None:
    pytest.skip("apache-tvm-ffi is not installed", allow_module_level=True)

from test_tvm_ffi_kernels import SOURCE as KERNELS_SOURCE  # noqa: E402
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

# tvm-ffi code (the library's Function::GetGlobal) looking up what packedfun registered.
_TVM_SEES_PF = """
import packedfun as pf
call = pf.get_global_func("pf_tvm_reg.call_global")
call2 = pf.get_global_func("pf_tvm_reg.call_global2")
has = pf.get_global_func("pf_tvm_reg.has_global")
get = pf.get_global_func("pf_tvm_reg.get_global")
# registered before: seen
assert call("pf_tvm_mirror.triple", 5) == 15
# so are those a packedfun C++ library registers (here packedfun's runtime itself)
builtins = [n for n in pf.list_global_func_names() if n.startswith("packedfun.")]
assert builtins and all(has(n) for n in builtins), builtins
# a name both sides registered: packedfun's, on both sides
assert pf.get_global_func("pf_tvm_reg.add")(1, 2) == -1
assert call2("pf_tvm_reg.add", 1, 2) == -1
# registered after: seen at once; overriding and removing act on tvm-ffi's side too
pf.register_global_func("pf_tvm_mirror.late", lambda x: x + 100)
assert call("pf_tvm_mirror.late", 1) == 101
pf.register_global_func("pf_tvm_mirror.late", lambda x: x + 200, override=True)
assert call("pf_tvm_mirror.late", 1) == 201
pf.remove_global_func("pf_tvm_mirror.late")
assert not has("pf_tvm_mirror.late")
# the Function tvm-ffi finds is packedfun's own, and comes back as itself
triple = pf.get_global_func("pf_tvm_mirror.triple")
assert get("pf_tvm_mirror.triple").same_as(triple)
# an exception raised inside crosses tvm-ffi and comes back as itself
def fail(x):
    raise KeyError("from python")
pf.register_global_func("pf_tvm_mirror.fail", fail)
try:
    call("pf_tvm_mirror.fail", 1)
except KeyError as err:
    assert "from python" in str(err)
else:
    raise AssertionError("no error")
# removing packedfun's entry puts the library's back, on both sides
assert pf.remove_global_func("pf_tvm_reg.add") is True
assert pf.get_global_func("pf_tvm_reg.add")(1, 2) == 3
assert call2("pf_tvm_reg.add", 1, 2) == 3
# one registry: removing the name again removes the library's
assert pf.remove_global_func("pf_tvm_reg.add") is True
assert pf.get_global_func("pf_tvm_reg.add", allow_missing=True) is None
assert not has("pf_tvm_reg.add")
assert "pf_tvm_reg.add" not in pf.list_global_func_names()
assert pf.remove_global_func("pf_tvm_reg.add") is False
assert has("pf_tvm_mirror.triple") and "pf_tvm_mirror.triple" in pf.list_global_func_names()
print("ok")
"""

_REGISTER_FIRST = """
pf.register_global_func("pf_tvm_mirror.triple", lambda x: 3 * x)
pf.register_global_func("pf_tvm_reg.add", lambda a, b: -1)  # the library registers it too
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


def test_tvm_ffi_sees_globals_registered_before_it_loaded(lib):
    # packedfun's names exist before libtvm_ffi and the library are in the process.
    code = "import sys, packedfun as pf\n" + _REGISTER_FIRST + "pf.load_module(sys.argv[1])\n"
    assert run_child(lib, code=code + _TVM_SEES_PF).strip() == "ok"


def test_library_loaded_after_the_bridge_started(lib):
    # The bridge is running (another tvm-ffi library loaded) and already copied packedfun's
    # `pf_tvm_reg.add` into tvm-ffi's registry when the library that registers that name too is
    # loaded: its static registration (fatal in tvm-ffi for a duplicate) still succeeds.
    other = build_library(KERNELS_SOURCE, "pf_tvm_kernels")
    code = (
        "import sys, packedfun as pf\n"
        "pf.load_module(sys.argv[2])\n" + _REGISTER_FIRST + "pf.load_module(sys.argv[1])\n"
    )
    assert run_child(lib, other, code=code + _TVM_SEES_PF).strip() == "ok"


def test_registered_after_the_library_loaded(lib):
    code = "import sys, packedfun as pf\npf.load_module(sys.argv[1])\n" + _REGISTER_FIRST
    assert run_child(lib, code=code + _TVM_SEES_PF).strip() == "ok"


def test_library_loaded_behind_packedfuns_back_sees_packedfuns_globals(lib):
    # libtvm_ffi and the library come in through ctypes; the first lookup starts the bridge.
    code = (
        "import sys, ctypes, importlib.metadata, packedfun as pf\n"
        "files = importlib.metadata.distribution('apache-tvm-ffi').files\n"
        "so = [f.locate() for f in files if f.name == 'libtvm_ffi.so'][0]\n"
        "ctypes.CDLL(str(so), ctypes.RTLD_GLOBAL)\n"
        "ctypes.CDLL(sys.argv[1], ctypes.RTLD_GLOBAL)\n" + _REGISTER_FIRST
    )
    assert run_child(lib, code=code + _TVM_SEES_PF).strip() == "ok"


def test_testing_names_stay_each_sides_own(lib):
    # Both packages ship a testing library with `testing.*` names: tvm-ffi's keep theirs.
    code = (
        "import sys, packedfun as pf, packedfun.testing\n"
        "pf.load_module(sys.argv[1])\n"
        "has = pf.get_global_func('pf_tvm_reg.has_global')\n"
        "assert pf.get_global_func('testing.echo', allow_missing=True) is not None\n"
        "assert not has('testing.echo')\n"
        "print('ok')\n"
    )
    assert run_child(lib, code=code).strip() == "ok"


def test_names_missing_without_libtvm_ffi():
    code = "import packedfun as pf\nprint(any('pf_tvm' in n for n in pf.list_global_func_names()))"
    out = run_child(code=code)
    assert out.strip() == "False"


def test_a_deleter_that_registers_while_the_copy_changes(lib):
    # Overriding drops tvm-ffi's copy of the old Function, whose Python callable's __del__
    # registers another global: that must neither deadlock nor be lost.
    code = (
        "import sys, gc, packedfun as pf\n"
        "pf.load_module(sys.argv[1])\n"
        "class Callback:\n"
        "    def __call__(self, x):\n"
        "        return x\n"
        "    def __del__(self):\n"
        "        pf.register_global_func('pf_tvm_mirror.from_del', lambda x: x + 7)\n"
        "pf.register_global_func('pf_tvm_mirror.cb', Callback())\n"
        "call = pf.get_global_func('pf_tvm_reg.call_global')\n"
        "assert call('pf_tvm_mirror.cb', 1) == 1\n"
        "pf.register_global_func('pf_tvm_mirror.cb', lambda x: 2 * x, override=True)\n"
        "gc.collect()\n"
        "assert call('pf_tvm_mirror.cb', 4) == 8\n"
        "assert call('pf_tvm_mirror.from_del', 1) == 8\n"
        "print('ok')\n"
    )
    assert run_child(lib, code=code, timeout=60).strip() == "ok"
