# Tests of packedfun.Function: calling C++ functions with every argument kind, repr, identity.
import ctypes
import enum
import gc
import sys

import packedfun
import pytest
from packedfun import testing


def test_get_global_func_returns_function():
    f = packedfun.get_global_func("testing.echo")
    assert isinstance(f, packedfun.Function)
    assert isinstance(f, packedfun.Object)
    assert "testing.echo" in repr(f)
    assert f.handle != 0
    assert f.type_index == 68  # kPFTypeFunction


def test_same_as_and_hash():
    f = packedfun.get_global_func("testing.echo")
    g = packedfun.get_global_func("testing.echo")
    h = packedfun.get_global_func("testing.nop")
    assert f.same_as(g) and f == g and hash(f) == hash(g)
    assert not f.same_as(h) and f != h
    assert not f.same_as("testing.echo")


def test_nop_takes_any_arguments():
    assert testing.nop() is None
    assert testing.nop(1, 2.0, "three", b"four", None, True) is None
    assert testing.nop(*range(20)) is None  # more than the stack-allocated arguments


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        False,
        0,
        1,
        -1,
        2**63 - 1,
        -(2**63),
        0.0,
        -2.5,
        1e300,
        "",
        "x",
        "héllo ✓",
        "a" * 7,
        "a" * 8,
        "a" * 1000,
        b"",
        b"\x00\xff\x01",
        b"12345678",
    ],
)
def test_echo_round_trips(value):
    result = testing.echo(value)
    assert result == value
    assert type(result) is type(value)


def test_echo_nan_and_inf():
    assert testing.echo(float("inf")) == float("inf")
    nan = testing.echo(float("nan"))
    assert nan != nan


def test_embedded_nul_survives():
    s = "a\x00b\x00"
    assert testing.echo(s) == s
    assert testing.str_len(s) == 4
    assert testing.echo("\x00") == "\x00"
    assert testing.bytes_len(b"\x00\x00\x00") == 3


def test_typed_functions():
    assert testing.add_int(40, 2) == 42
    assert testing.add3_int(1, 2, 3) == 6
    assert testing.echo_float(1.25) == 1.25
    assert testing.str_len("hello") == 5
    assert testing.str_concat("foo", "bar") == "foobar"
    assert testing.bytes_len(b"abc") == 3
    assert testing.echo_string("a\x00" * 10) == "a\x00" * 10
    assert testing.echo_bytes(b"\xff" * 10) == b"\xff" * 10
    assert testing.echo_bool(True) is True


def test_typed_argument_errors_name_function_position_and_types():
    with pytest.raises(TypeError, match=r"testing\.add_int.*argument 1.*int.*float"):
        testing.add_int(1, 2.5)
    with pytest.raises(TypeError, match=r"testing\.str_len.*argument 0"):
        testing.str_len(3)


def test_int_subclasses_and_bytearray():
    class Color(enum.IntEnum):
        RED = 7

    assert testing.add_int(Color.RED, 1) == 8
    assert type(testing.echo(Color.RED)) is int
    assert testing.echo(bytearray(b"ab\x00")) == b"ab\x00"


def test_int_overflow_names_function_and_argument():
    with pytest.raises(OverflowError, match=r"testing\.echo.*argument 0: int too large for uint64"):
        testing.echo(2**64)
    with pytest.raises(OverflowError, match=r"argument 1: int too small for int64"):
        testing.nop(0, -(2**63) - 1)
    with pytest.raises(OverflowError, match="argument 2"):
        testing.add3_int(1, 2, 2**100)


def test_lone_surrogate_raises_unicode_encode_error():
    with pytest.raises(UnicodeEncodeError):
        testing.echo("ab\ud800")
    with pytest.raises(UnicodeEncodeError):
        testing.nop(1, "\udfff")


def test_invalid_utf8_result_raises_unicode_decode_error():
    with pytest.raises(UnicodeDecodeError):
        testing.return_invalid_utf8()
    with pytest.raises(UnicodeDecodeError):
        testing.return_invalid_utf8_long()


@pytest.mark.parametrize("n", [0, 1, 7, 8, 100, 100000])
def test_make_string(n):
    s = testing.make_string(n)
    assert isinstance(s, str) and len(s) == n


def test_keyword_arguments_rejected():
    with pytest.raises(TypeError, match="keyword"):
        testing.echo(x=1)


def test_function_argument_comes_back_as_same_native_function():
    f = packedfun.get_global_func("testing.add_int")
    g = testing.echo(f)
    assert isinstance(g, packedfun.Function)
    assert g.same_as(f)
    assert g(1, 2) == 3


def test_c_void_p():
    assert testing.echo(ctypes.c_void_p(1234)).value == 1234
    assert testing.echo(ctypes.c_void_p(None)) is None


def test_function_wraps_python_callable():
    f = packedfun.Function(lambda a, b: a * b)
    assert f(6, 7) == 42
    assert packedfun.Function(f) is f
    assert "lambda" in repr(f)
    with pytest.raises(TypeError):
        packedfun.Function(42)


def test_function_attributes():
    f = packedfun.get_global_func("testing.echo")
    assert f.registry_name == "testing.echo"
    f.__doc__ = "doc"
    f.__name__ = "renamed"
    assert f.__doc__ == "doc" and f.__name__ == "renamed"
    assert testing.echo.__name__ == "echo"


def test_no_reference_leak_on_calls():
    if not hasattr(sys, "getrefcount"):
        pytest.skip("platform: this Python has no sys.getrefcount")
    obj = object()
    s = "some string"
    b = b"some bytes"
    before = [sys.getrefcount(x) for x in (obj, s, b)]
    for _ in range(1000):
        testing.echo(obj)
        testing.nop(obj, s, b, 1, 2.0, None)
    gc.collect()
    assert [sys.getrefcount(x) for x in (obj, s, b)] == before


def test_failed_conversion_releases_earlier_temporaries():
    obj = object()
    before = sys.getrefcount(obj)
    for _ in range(100):
        with pytest.raises(OverflowError):
            testing.nop(obj, lambda: None, 2**64)
    assert sys.getrefcount(obj) == before


@pytest.mark.deselect_if(packedfun.BACKEND != "_core", reason="a _core property")
def test_pod_arguments_do_not_allocate():
    import itertools
    import tracemalloc

    nop, echo = testing.nop, testing.echo
    nop(1, 2.5, None, True)
    echo(None)
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        for _ in itertools.repeat(None, 2000):
            nop(1, 2.5, None, True, -7, 0.0)
            echo(None)
            echo(True)
        after, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert after - before < 64
    assert peak - before < 512


def test_object_base_behaviour():
    empty = packedfun.Object()
    assert empty.handle == 0 and empty.type_index == 0
    assert not empty.same_as(packedfun.Object())
    f = packedfun.get_global_func("testing.echo")
    assert f.type_key == "packedfun.Function"
    assert {f, packedfun.get_global_func("testing.echo")} == {f}


class _Jit:
    def __init__(self, metadata):
        self.metadata = metadata


class _JitFunction(packedfun.Function, _Jit):
    """A subclass with a mixin, as JIT frameworks write them: empty until __init__ moves a
    native Function in."""

    def __init__(self, func, metadata):
        _Jit.__init__(self, metadata)
        self.__move_handle_from__(func)


def test_function_subclass_takes_a_native_function_by_move():
    source = packedfun.get_global_func("testing.echo")
    handle = source.handle
    f = _JitFunction(source, metadata=128)
    assert isinstance(f, _JitFunction) and isinstance(f, packedfun.Function)
    assert f.metadata == 128 and f.handle == handle and f(5) == 5
    assert f.registry_name == "testing.echo"  # the name moves with the function
    with pytest.raises(ValueError, match="released"):  # the source is left empty
        source(1)
    back = testing.echo(f)  # passed to native code as its native Function
    assert type(back) is packedfun.Function and back.handle == handle and back(7) == 7
    assert testing.apply(f, 3) == 3
    f.__move_handle_from__(f)  # from itself: nothing changes
    assert f(6) == 6


def test_function_subclass_instance_is_empty_until_moved_into():
    class Bare(packedfun.Function):
        pass

    empty = Bare()
    assert isinstance(empty, Bare)
    with pytest.raises(ValueError, match="released"):
        empty(1)
    with pytest.raises(ValueError, match="released"):
        empty()
    with pytest.raises(TypeError, match="expects a Function, got int"):
        empty.__move_handle_from__(1)
    empty.__move_handle_from__(packedfun.Function(lambda x: x * 2))
    assert empty(4) == 8


def test_function_subclass_keeps_a_moved_python_callable_alive():
    calls = []

    def body(x):
        calls.append(x)
        return x + 1

    wrapper = packedfun.Function(body)
    f = _JitFunction(wrapper, metadata=None)
    del wrapper, body
    gc.collect()
    assert f(1) == 2 and calls == [1]
    kept = testing.echo([f])  # native code holds the function; the subclass wrapper goes
    del f
    gc.collect()
    assert kept[0](2) == 3 and calls == [1, 2]


def test_object_use_count_sees_the_references_containers_hold():
    use_count = packedfun.get_global_func("testing.object_use_count")  # tvm-ffi's testing name
    inner = packedfun.convert((1, 2, 3))
    assert use_count(inner) == 1  # the wrapper's own: an argument is borrowed
    outer = testing.echo([inner, {"k": inner}])
    assert use_count(inner) == 3 and use_count(outer) == 1
    assert use_count(outer[1]) == 2  # outer's and the temporary wrapper's
    del outer
    gc.collect()
    assert use_count(inner) == 1
    assert use_count(5) == 0 and use_count("x") == 0 and testing.use_count(inner) == 1
