# A module's exports listed from its library: every function becomes an attribute of its class.
"""``PFModuleListFunctions`` and what :class:`packedfun.Module` does with it.

On first attribute access a module whose exports can be listed moves to a class of its own,
without ``__getattr__``, that holds every exported function, so CPython's method-call fast path
applies to ``mod.fn(...)``; the behaviour seen by users stays that of :class:`Module`.
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
    # _core: on the instance's own class; ctypes (no fast descriptor): on the instance.
    assert {"add", "neg"} <= set(vars(mod)) | set(vars(type(mod)))
    assert getattr(type(mod), "neg", mod.neg) is mod.neg and mod.neg(4) == -4
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


def test_each_listed_module_has_its_own_class(libs):
    first = packedfun.load_module(libs["main"])
    second = packedfun.load_module(libs["main"])
    dep = packedfun.load_module(libs["dep"])
    assert first.add(1, 2) == second.add(1, 2) == 3 and dep.sub(3, 1) == 2
    assert type(first) is not type(second) and not hasattr(dep, "add")
    assert first.add is not second.add  # as before: each Module looks its functions up itself
    assert isinstance(dep, Module) and isinstance(first, Module)


def test_module_functions_called_as_attributes_keep_their_arguments(libs):
    mod = packedfun.load_module(libs["main"])
    assert mod.neg(5) == -5
    for _ in range(100):  # long enough for the interpreter to specialize the call
        assert mod.add(2, 40) == 42
    with pytest.raises(TypeError):
        mod.add(1)
    add = mod.add
    assert add(3, 4) == 7 and mod.add(3, 4) == 7


def test_instance_attributes_still_shadow_exports(libs):
    mod = packedfun.load_module(libs["main"])
    assert mod.add(1, 1) == 2
    mod.add = mod.neg  # an instance attribute wins over the class's, as on any object
    assert mod.add(3) == -3 and mod["add"](1, 1) == 2


def test_module_function_descriptor_drops_the_module():
    descr_type = core.ModuleFunctionDescriptor
    func = packedfun.convert(lambda *args: args)
    descr = descr_type(func, "f")
    assert descr.__get__(object()) is func and descr.__get__(None, type) is func
    assert descr("the module", 1, 2) == (1, 2)
    with pytest.raises(TypeError, match="expected the module first"):
        descr()
    with pytest.raises(TypeError):
        descr_type(lambda: 0, "f")
