# Tests of packedfun.load_module / Module / system_lib over C libraries built by the test itself.
import ctypes
import gc
import os
import shutil
import subprocess
import textwrap
import weakref
from pathlib import Path

import packedfun
import pytest
from packedfun import Module

CC = os.environ.get("CC", "cc")
if shutil.which(CC) is None:
    pytest.skip(f"no C compiler ({CC}) to build test libraries", allow_module_level=True)

PKG = Path(packedfun.__file__).resolve().parent

MAIN_SOURCE = r"""
#include <packedfun/c_api.h>

static int set_int(PFAny* result, int64_t value) {
  result->type_index = kPFTypeInt;
  result->zero_padding = 0;
  result->v_int64 = value;
  return 0;
}

static int two_ints(const char* fn, const PFAny* args, int32_t n, int64_t* a, int64_t* b) {
  if (n != 2 || args[0].type_index != kPFTypeInt || args[1].type_index != kPFTypeInt) {
    (void)fn;
    return PFErrorSetRaisedFromCStr("TypeError", "add: expected two ints");
  }
  *a = args[0].v_int64;
  *b = args[1].v_int64;
  return 0;
}

PACKEDFUN_EXPORT int __packedfun_add(void* self, const PFAny* args, int32_t n, PFAny* result) {
  (void)self;
  int64_t a, b;
  if (two_ints("add", args, n, &a, &b)) return -1;
  return set_int(result, a + b);
}
PACKEDFUN_EXPORT const char* __packedfun_doc__add = "add(a, b): the sum.";

PACKEDFUN_EXPORT int __packedfun_neg(void* self, const PFAny* args, int32_t n, PFAny* result) {
  (void)self;
  (void)n;
  return set_int(result, -args[0].v_int64);
}

PACKEDFUN_EXPORT const char* __packedfun_main__ = "add";

static int mul(void* self, const PFAny* args, int32_t n, PFAny* result) {
  (void)self;
  int64_t a, b;
  if (two_ints("mul", args, n, &a, &b)) return -1;
  return set_int(result, a * b);
}

/* A global registered at load time; override == 0, so a second run would fail loudly. */
__attribute__((constructor)) static void register_mul(void) {
  static const char name[] = "test_module.mul";
  PFByteArray view = {name, sizeof name - 1};
  PFObject* func = NULL;
  if (PFFunctionCreate(NULL, &mul, NULL, &func) != 0 ||
      PFFunctionSetGlobal(&view, func, 0, NULL) != 0) {
    PFObject* error = NULL;
    PFErrorMoveFromRaised(&error);
    PFObjectDecRef(error);
  }
  PFObjectDecRef(func);
}
"""

DEP_SOURCE = r"""
#include <packedfun/c_api.h>
PACKEDFUN_EXPORT int __packedfun_sub(void* self, const PFAny* args, int32_t n, PFAny* result) {
  (void)self;
  (void)n;
  result->type_index = kPFTypeInt;
  result->zero_padding = 0;
  result->v_int64 = args[0].v_int64 - args[1].v_int64;
  return 0;
}
PACKEDFUN_EXPORT const char* __packedfun_doc__sub = "sub(a, b): the difference.";
"""

UNRESOLVED_SOURCE = r"""
extern int pf_test_symbol_that_does_not_exist(int);
int call_it(int x) { return pf_test_symbol_that_does_not_exist(x); }
"""

SYSTEM_SOURCE = r"""
#include <packedfun/c_api.h>
PACKEDFUN_EXPORT int __packedfun_pf_test_sys_twice(void* self, const PFAny* args, int32_t n,
                                                   PFAny* result) {
  (void)self;
  (void)n;
  result->type_index = kPFTypeInt;
  result->zero_padding = 0;
  result->v_int64 = 2 * args[0].v_int64;
  return 0;
}
"""


def build_c(directory: Path, name: str, source: str, link_runtime: bool = True) -> str:
    """Compiles `source` as C11 into directory/lib<name>.so and returns its path."""
    src = directory / f"{name}.c"
    src.write_text(textwrap.dedent(source))
    out = directory / f"lib{name}.so"
    cmd = [CC, "-std=c11", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC"]
    cmd += [f"-I{PKG / 'include'}", str(src), "-o", str(out)]
    if link_runtime:
        cmd += [f"-L{PKG / 'lib'}", f"-Wl,-rpath,{PKG / 'lib'}", "-lpackedfun"]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return str(out)


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    d = tmp_path_factory.mktemp("modlibs")
    return {
        "main": build_c(d, "pfmain", MAIN_SOURCE),
        "dep": build_c(d, "pfdep", DEP_SOURCE),
        "unresolved": build_c(d, "pfunresolved", UNRESOLVED_SOURCE, link_runtime=False),
        "system": build_c(d, "pfsystem", SYSTEM_SOURCE),
        "dir": d,
    }


@pytest.fixture
def mod(libs):
    return packedfun.load_module(libs["main"])


def loader_message(path: str) -> str:
    """What the dynamic loader itself says about `path` (ctypes reports dlerror() verbatim)."""
    with pytest.raises(OSError) as info:
        ctypes.CDLL(path)
    return str(info.value)


# ---- lookup and calls ---------------------------------------------------------------------------
def test_load_and_call(mod, libs):
    assert isinstance(mod, Module)
    assert mod.path == libs["main"]
    assert mod.add(1, 2) == 3
    assert mod["add"](40, 2) == 42
    assert mod.get_function("neg")(5) == -5
    assert isinstance(mod.add, packedfun.Function)
    assert libs["main"] in repr(mod)


def test_load_accepts_pathlike(libs):
    assert packedfun.load_module(Path(libs["main"])).add(2, 2) == 4


def test_contains(mod):
    assert "add" in mod
    assert "neg" in mod
    assert "nope" not in mod
    assert 3 not in mod
    mod["add"]
    assert "add" in mod


def test_missing_function_names_function_and_library(mod, libs):
    with pytest.raises(AttributeError) as info:
        _ = mod.does_not_exist
    assert "'does_not_exist'" in str(info.value)
    assert libs["main"] in str(info.value)
    with pytest.raises(AttributeError, match="does_not_exist"):
        mod["does_not_exist"]
    with pytest.raises(AttributeError, match="does_not_exist"):
        mod.get_function("does_not_exist")
    assert not hasattr(mod, "does_not_exist")
    with pytest.raises(TypeError):
        mod[1]


def test_dunder_and_private_names_are_not_looked_up(mod):
    assert not hasattr(mod, "__array_interface__")
    with pytest.raises(AttributeError):
        _ = mod._pf_missing
    assert "__packedfun_add" not in vars(mod)


def test_errors_from_module_functions(mod):
    with pytest.raises(TypeError, match="add: expected two ints"):
        mod.add(1, "two")


# ---- caching ------------------------------------------------------------------------------------
def test_attribute_is_cached_after_first_access(mod, monkeypatch):
    calls = []
    original = Module.__getattr__

    def counting(self, name):
        calls.append(name)
        return original(self, name)

    monkeypatch.setattr(Module, "__getattr__", counting)
    first = mod.add
    assert calls == ["add"]
    assert "add" in vars(mod) or "add" in vars(type(mod))  # stored (see test_module_listing)
    second = mod.add
    assert second is first
    assert calls == ["add"]  # the second access never reached __getattr__
    assert mod.add(2, 3) == 5
    assert calls == ["add"]


def test_item_access_is_cached(mod):
    assert mod["neg"] is mod["neg"]


def test_class_attributes_win_over_functions(mod):
    # `path` is Module's own attribute; a function of that name stays reachable through mod[name].
    assert mod.path.endswith("libpfmain.so")
    assert callable(Module.get_function)


# ---- docstrings ---------------------------------------------------------------------------------
def test_docstrings(mod):
    assert mod.add.__doc__ == "add(a, b): the sum."
    assert mod.get_function_doc("add") == "add(a, b): the sum."
    assert mod.get_function_doc("neg") is None
    assert mod.get_function_doc("does_not_exist") is None


# ---- entry function -----------------------------------------------------------------------------
def test_entry_function(mod):
    assert mod.entry_name == "add"
    assert mod(20, 22) == 42
    assert mod(1, 1) == 2  # cached entry


def test_no_entry_function_is_a_clear_error(libs):
    dep = packedfun.load_module(libs["dep"])
    assert dep.entry_name is None
    with pytest.raises(TypeError) as info:
        dep(1, 2)
    assert "__packedfun_main__" in str(info.value)
    assert libs["dep"] in str(info.value)


# ---- imports ------------------------------------------------------------------------------------
def test_imports(libs):
    main = packedfun.load_module(libs["main"])
    dep = packedfun.load_module(libs["dep"])
    assert main.imports == []
    with pytest.raises(AttributeError):
        main.get_function("sub")
    assert "sub" not in main
    main.import_module(dep)
    assert main.get_function("sub", query_imports=True)(5, 3) == 2
    assert main.get_function_doc("sub", query_imports=True) == "sub(a, b): the difference."
    assert main.get_function("sub", query_imports=True).__doc__ == "sub(a, b): the difference."
    imports = main.imports
    assert len(imports) == 1
    assert imports[0] == dep
    assert imports[0].path == libs["dep"]
    assert imports[0].sub(10, 1) == 9


def test_implements_function_and_same_as(libs):
    # apache-tvm-ffi's Module methods under the same names
    main = packedfun.load_module(libs["main"])
    dep = packedfun.load_module(libs["dep"])
    assert main.implements_function("add") and not main.implements_function("nope")
    main["neg"]  # cached in the instance: still answered the same
    assert main.implements_function("neg")
    assert not main.implements_function("sub")
    main.import_module(dep)
    assert not main.implements_function("sub")
    assert main.implements_function("sub", query_imports=True)
    with pytest.raises(TypeError, match="must be a str"):
        main.implements_function(3)
    assert main.same_as(main) and not main.same_as(dep) and not main.same_as("add")
    assert not main.same_as(packedfun.load_module(libs["main"]))  # as ==: another Module object


def test_import_keeps_dependency_alive(libs):
    main = packedfun.load_module(libs["main"])
    main.import_module(packedfun.load_module(libs["dep"]))
    gc.collect()
    (dep,) = main.imports
    assert dep.sub(3, 1) == 2


def test_import_cycle_and_bad_argument(libs):
    a = packedfun.load_module(libs["main"])
    b = packedfun.load_module(libs["dep"])
    a.import_module(b)
    with pytest.raises(ValueError, match="cycle"):
        b.import_module(a)
    with pytest.raises(TypeError, match="Module"):
        a.import_module(libs["dep"])


# ---- lifetime and repeated loads ---------------------------------------------------------------
def test_function_outlives_module(libs):
    m = packedfun.load_module(libs["main"])
    add = m.add
    ref = weakref.ref(m)
    del m
    gc.collect()
    assert ref() is None
    assert add(4, 5) == 9


def test_function_outlives_module_without_python_cache(libs):
    neg = packedfun.load_module(libs["main"]).get_function("neg")
    gc.collect()
    assert neg(7) == -7


def test_load_twice_registers_once(libs):
    first = packedfun.load_module(libs["main"])
    second = packedfun.load_module(libs["main"])
    assert first.add(1, 1) == second.add(1, 1) == 2
    names = packedfun.list_global_func_names()
    assert names.count("test_module.mul") == 1
    assert packedfun.get_global_func("test_module.mul")(6, 7) == 42


def test_loading_registers_globals(libs):
    packedfun.load_module(libs["main"])
    assert "test_module.mul" in packedfun.list_global_func_names()


# ---- loader errors ------------------------------------------------------------------------------
def test_missing_file(tmp_path):
    path = str(tmp_path / "no_such_library.so")
    with pytest.raises(FileNotFoundError) as info:  # an OSError
        packedfun.load_module(path)
    message = str(info.value)
    assert path in message
    assert loader_message(path) in message


def test_not_a_library(tmp_path):
    path = tmp_path / "not_a_library.so"
    path.write_text("this is plain text, not an ELF shared object\n" * 8)
    with pytest.raises(OSError) as info:
        packedfun.load_module(str(path))
    message = str(info.value)
    assert str(path) in message
    assert loader_message(str(path)) in message


def test_unresolved_symbol(libs):
    path = libs["unresolved"]
    with pytest.raises(OSError) as info:
        packedfun.load_module(path)
    message = str(info.value)
    assert path in message
    assert "pf_test_symbol_that_does_not_exist" in message
    assert loader_message(path) in message


def test_empty_path():
    with pytest.raises(OSError):
        packedfun.load_module("")


# ---- the system library ------------------------------------------------------------------------
def test_system_lib_basics():
    sys_lib = packedfun.system_lib()
    assert isinstance(sys_lib, Module)
    assert sys_lib.path == ""
    assert "system" in repr(sys_lib)
    assert "pf_test_never_defined" not in sys_lib
    with pytest.raises(AttributeError, match="system library"):
        _ = sys_lib.pf_test_never_defined
    assert sys_lib.imports == []


def test_system_lib_sees_globally_loaded_code(libs):
    assert "pf_test_sys_twice" not in packedfun.system_lib()
    ctypes.CDLL(libs["system"], mode=ctypes.RTLD_GLOBAL)
    sys_lib = packedfun.system_lib()
    assert "pf_test_sys_twice" in sys_lib
    assert sys_lib.pf_test_sys_twice(21) == 42


def test_module_equality_and_hash(libs):
    a = packedfun.load_module(libs["main"])
    b = packedfun.load_module(libs["main"])
    assert a == a
    assert a != b  # two loads, two Module objects over one mapped library
    assert hash(a) == hash(a)
    assert (a == 3) is False
