# Tests of Python <-> FFI value conversion: convert(), opaque objects, identity and lifetime.
import gc
import sys
import weakref

import packedfun
import pytest
from packedfun import testing


class Payload:
    """An arbitrary Python object (not callable)."""


@pytest.mark.parametrize("value", [None, True, 3, -4.5, "text", "a\x00b", b"\x00bytes"])
def test_convert_keeps_plain_values(value):
    result = packedfun.convert(value)
    assert result == value and type(result) is type(value)


def test_convert_bytearray_becomes_bytes():
    assert packedfun.convert(bytearray(b"xy")) == b"xy"


def test_convert_callable_becomes_function():
    f = packedfun.convert(lambda x: x + 1)
    assert isinstance(f, packedfun.Function)
    assert f(1) == 2
    g = packedfun.get_global_func("testing.echo")
    assert packedfun.convert(g).same_as(g)


def test_convert_other_objects_come_back_identical():
    for obj in (object(), Payload(), 1 + 2j):
        assert packedfun.convert(obj) is obj


def test_opaque_object_round_trip_identity():
    obj = Payload()
    assert testing.echo(obj) is obj
    plain = object()
    assert testing.echo(plain) is plain
    assert testing.apply(lambda x: x, obj) is obj


def test_opaque_travels_through_nested_calls():
    obj = Payload()
    out = testing.apply(lambda x: testing.apply(lambda y: testing.echo(y), x), obj)
    assert out is obj


def test_opaque_refcount_balanced():
    obj = Payload()
    before = sys.getrefcount(obj)
    for _ in range(200):
        assert testing.echo(obj) is obj
        testing.apply(lambda x: x, obj)
    assert sys.getrefcount(obj) == before


def test_object_stays_alive_while_native_code_holds_it():
    class Callable:
        def __call__(self):
            return "alive"

    obj = Callable()
    ref = weakref.ref(obj)
    packedfun.register_global_func("test_convert.holder", obj, override=True)
    del obj
    gc.collect()
    assert ref() is not None  # the registry (C++) keeps it
    assert testing.call_global("test_convert.holder") == "alive"
    assert packedfun.remove_global_func("test_convert.holder")
    gc.collect()
    assert ref() is None


def test_opaque_object_kept_by_cpp_comes_back_identical():
    obj = Payload()
    ref = weakref.ref(obj)
    testing.store_value(obj)
    try:
        del obj
        gc.collect()
        assert ref() is not None  # C++ holds the only reference
        assert testing.load_value() is ref()
    finally:
        testing.clear_value()
    gc.collect()
    assert ref() is None


def test_function_wrapper_keeps_callable_alive():
    def make():
        return lambda: "x"

    cb = make()
    ref = weakref.ref(cb)
    f = packedfun.convert(cb)
    del cb
    gc.collect()
    assert ref() is not None and f() == "x"
    del f
    gc.collect()
    assert ref() is None


def test_typed_parameter_rejects_python_object_naming_its_type():
    with pytest.raises(TypeError, match="Payload"):
        testing.typed_int_only(Payload())
    with pytest.raises(TypeError):
        testing.typed_int_only("not an int")
    with pytest.raises(TypeError):
        testing.add_int(1, 2.5)
