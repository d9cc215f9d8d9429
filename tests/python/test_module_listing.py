# A module's exports listed from its library: every function becomes a plain instance attribute.
"""``PFModuleListFunctions`` and what :class:`packedfun.Module` does with it.

On first attribute access a module whose exports can be listed stores every exported function on
the instance and moves to a class without ``__getattr__``, so CPython's attribute-load fast paths
apply to ``mod.fn``; the behaviour seen by users stays that of :class:`Module`.
"""

import packedfun
import pytest
from packedfun import Module
from packedfun._backend import core
from test_module import DEP_SOURCE, MAIN_SOURCE, build_c

CLASH_SOURCE = r"""
#include <packedfun/c_api.h>
static int one(PFAny* result) {
  result->type_index = kPFTypeInt;
  result->zero_padding = 0;
  result->v_int64 = 1;
  return 0;
}
PACKEDFUN_EXPORT int __packedfun_path(void* s, const PFAny* a, int32_t n, PFAny* r) {
  (void)s; (void)a; (void)n; return one(r);
}
PACKEDFUN_EXPORT int __packedfun_get_function(void* s, const PFAny* a, int32_t n, PFAny* r) {
  (void)s; (void)a; (void)n; return one(r);
}
PACKEDFUN_EXPORT int __packedfun_snake__case(void* s, const PFAny* a, int32_t n, PFAny* r) {
  (void)s; (void)a; (void)n; return one(r);
}
"""


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    d = tmp_path_factory.mktemp("listing")
    return {
        "main": build_c(d, "pflistmain", MAIN_SOURCE),
        "dep": build_c(d, "pflistdep", DEP_SOURCE),
        "clash": build_c(d, "pflistclash", CLASH_SOURCE),
    }


def test_list_functions_names_exports_only(libs):
    mod = packedfun.load_module(libs["main"])
    # Docstring and entry-name variables are data, not functions; static functions are not
    # exported; registered globals are not module exports.
    assert list(core.module_list_functions(mod.handle)) == ["add", "neg"]


def test_list_functions_with_imports(libs):
    mod = packedfun.load_module(libs["main"])
    dep = packedfun.load_module(libs["dep"])
    mod.import_module(dep)
    assert list(core.module_list_functions(mod.handle, True)) == ["add", "neg", "sub"]
    assert list(core.module_list_functions(mod.handle, False)) == ["add", "neg"]


def test_system_library_cannot_be_listed():
    assert core.module_list_functions(packedfun.system_lib().handle) is None
    with pytest.raises(TypeError, match="Module"):
        core.module_list_functions(packedfun.convert([1]))


def test_first_access_stores_every_function(libs):
    mod = packedfun.load_module(libs["main"])
    assert mod.add(2, 3) == 5
    assert set(vars(mod)) >= {"add", "neg"}
    assert vars(mod)["neg"] is mod.neg and mod.neg(4) == -4
    assert not hasattr(type(mod), "__getattr__")
    assert isinstance(mod, Module) and issubclass(type(mod), Module)
    assert type(mod).__name__ == "Module"
    assert mod.add.__doc__ == "add(a, b): the sum."
    assert mod["add"] is not None and "neg" in mod and "nope" not in mod
    assert mod(1, 2) == 3  # the entry function
    assert mod == mod and hash(mod) == hash(mod.handle)


def test_missing_names_after_listing_raise_attribute_error(libs):
    mod = packedfun.load_module(libs["main"])
    with pytest.raises(AttributeError, match=r"pflistmain.*'nope'|'nope'.*pflistmain"):
        _ = mod.nope  # the first access: the library is named
    with pytest.raises(AttributeError, match="nope"):
        _ = mod.nope
    with pytest.raises(AttributeError, match="nope"):
        mod.get_function("nope")


def test_names_that_clash_with_module_attributes_stay_reachable(libs):
    mod = packedfun.load_module(libs["clash"])
    assert mod.snake__case() == 1  # "<word>__" names are reserved only for lower-case kinds
    assert mod.path.endswith("libpflistclash.so")
    assert callable(mod.get_function) and mod.get_function("path")() == 1
    assert mod["get_function"]() == 1


def test_imported_functions_are_found_through_get_function(libs):
    mod = packedfun.load_module(libs["main"])
    dep = packedfun.load_module(libs["dep"])
    mod.import_module(dep)
    assert mod.add(1, 1) == 2
    assert mod.get_function("sub", query_imports=True)(5, 2) == 3
