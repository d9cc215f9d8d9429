# Tests of Python callables called from C++: arguments, results, nesting, errors, lifetime, threads.
import ctypes
import gc
import sys
import threading
import traceback
import weakref

import packedfun
import pytest
from packedfun import testing
from packedfun._backend import core


def test_apply_calls_python_with_converted_arguments():
    seen = []

    def cb(*args):
        seen.append(args)
        return len(args)

    assert testing.apply(cb, None, True, 7, 2.5, "s\x00t", b"b\x00") == 6
    assert seen == [(None, True, 7, 2.5, "s\x00t", b"b\x00")]
    assert [type(x) for x in seen[0]] == [type(None), bool, int, float, str, bytes]


def test_callback_receives_functions():
    assert testing.apply(lambda g: g(21, 21), packedfun.get_global_func("testing.add_int")) == 42


def test_callback_results():
    assert testing.apply(lambda: None) is None
    assert testing.apply(lambda: "a" * 100) == "a" * 100
    assert testing.apply(lambda: b"\x00\x01") == b"\x00\x01"
    f = testing.apply(lambda: lambda x: x * 3)
    assert isinstance(f, packedfun.Function) and f(5) == 15


@pytest.mark.parametrize(
    "value", [0, 1, -1, 2**30 - 1, 2**30, -(2**30), 2**31, 2**40, -(2**62), 2**63 - 1, -(2**63)]
)
def test_callback_int_arguments_and_results_of_every_size(value):
    # Small ints (one internal digit) and larger ones take different steps on the way in and out.
    seen = []

    def cb(*args):
        seen.append(args)
        return args[0]

    got = testing.apply(cb, value, value)
    assert got == value and type(got) is int
    assert seen == [(value, value)] and [type(x) for x in seen[0]] == [int, int]
    assert testing.apply(lambda: value) == value
    assert testing.apply_typed(lambda: value) == value


def test_callback_results_that_look_like_ints():
    class MyInt(int):
        pass

    assert testing.apply(lambda: True) is True
    assert testing.apply(lambda: False) is False
    assert testing.apply(lambda x: x, True) is True
    got = testing.apply(lambda: MyInt(5))
    assert got == 5 and type(got) is int
    with pytest.raises(OverflowError):
        testing.apply(lambda: 2**64)


def test_many_callback_arguments():
    assert testing.apply(lambda *a: sum(a), *range(30)) == sum(range(30))


def test_nested_python_cpp_python_cpp_python():
    def inner():
        return testing.apply(lambda: "deep")

    def middle():
        return testing.apply(inner)

    assert testing.apply(middle) == "deep"
    depth = testing.apply(lambda: testing.apply(lambda: testing.apply(lambda: testing.echo(3))))
    assert depth == 3


def test_call_global_calls_python_registered_function():
    @packedfun.register_global_func("test_callback.add", override=True)
    def add(a, b):
        return a + b

    try:
        assert testing.call_global("test_callback.add", 2, 3) == 5
        assert testing.call_global("test_callback.add", "x", "y") == "xy"
    finally:
        packedfun.remove_global_func("test_callback.add")


def test_exception_in_callback_is_the_same_object():
    err = KeyError("original")

    def cb():
        raise err

    try:
        testing.apply(cb)
    except KeyError as caught:
        assert caught is err
        names = [frame.name for frame in traceback.extract_tb(caught.__traceback__)]
        assert "cb" in names
    else:
        pytest.fail("no exception")


def test_exception_through_nested_callbacks_is_the_same_object():
    class Custom(Exception):
        pass

    err = Custom("deep failure")

    def raiser():
        raise err

    try:
        testing.apply(lambda: testing.apply(lambda: testing.apply(raiser)))
    except Custom as caught:
        assert caught is err
        assert "raiser" in [f.name for f in traceback.extract_tb(caught.__traceback__)]
    else:
        pytest.fail("no exception")


def test_callback_result_overflow():
    with pytest.raises(OverflowError, match="int too large for uint64"):
        testing.apply(lambda: 2**64)


def test_callback_refcounts_balanced():
    def cb(x):
        return x

    obj = object()
    before = (sys.getrefcount(cb), sys.getrefcount(obj))
    for _ in range(500):
        testing.apply(cb, obj)
    assert (sys.getrefcount(cb), sys.getrefcount(obj)) == before


def test_failing_callback_releases_everything():
    class Big:
        pass

    def run():
        big = Big()
        ref = weakref.ref(big)

        def cb(x):
            raise ValueError("nope")

        try:
            testing.apply(cb, big)
        except ValueError:
            pass
        else:
            pytest.fail("the callback's ValueError did not arrive: nothing was checked")
        return ref

    gc.disable()
    try:
        ref = run()
        assert ref() is None
    finally:
        gc.enable()


def test_callbacks_from_other_python_threads():
    results = []

    def worker(i):
        results.append(testing.apply(lambda x: x * 2, i))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [i * 2 for i in range(8)]


def _runtime():
    """libpackedfun through ctypes.CDLL, whose calls release the GIL."""
    lib = ctypes.CDLL(core.LIB_PATH)
    ptr = ctypes.c_void_p
    lib.PFFunctionCall.argtypes = [ptr, ptr, ctypes.c_int32, ptr]
    return lib


def test_callback_and_release_without_the_gil():
    lib = _runtime()
    calls = []
    f = packedfun.Function(lambda: calls.append(threading.get_ident()) or 7)
    result = (ctypes.c_int64 * 2)()  # a PFAny holding None

    def call():
        assert lib.PFFunctionCall(f.handle, None, 0, result) == 0

    call()
    thread = threading.Thread(target=call)
    thread.start()
    thread.join()
    assert len(calls) == 2 and calls[0] != calls[1]
    assert result[0] == 1 and result[1] == 7  # kPFTypeInt, 7

    obj = type("Held", (), {})()
    ref = weakref.ref(obj)
    testing.store_value(obj)
    del obj
    clear = packedfun.get_global_func("testing.clear_value")
    assert lib.PFFunctionCall(clear.handle, None, 0, (ctypes.c_int64 * 2)()) == 0
    gc.collect()
    assert ref() is None


def test_callable_argument_kept_by_native_code_stays_valid():
    # Wrappers of callable arguments are recycled between calls; one that native code kept must
    # stay bound to its own callable, and the next call must get a different wrapper.
    def first(x):
        return x + 1

    def second(x):
        return x * 10

    testing.store_value(first)
    kept = testing.load_value()
    assert testing.apply(second, 4) == 40  # a later callable argument does not rebind `kept`
    assert testing.apply(kept, 4) == 5
    assert kept(2) == 3
    testing.clear_value()


def test_callable_argument_not_kept_is_released():
    class Target:
        def __call__(self, x):
            return x

    def make():
        target = Target()
        assert testing.apply(target, 3) == 3
        return weakref.ref(target)

    def plain(x):
        return -x

    ref = make()
    assert ref() is None  # the (recycled) wrapper dropped the callable after the call
    fn_ref = weakref.ref(plain)
    assert testing.apply(plain, 2) == -2
    del plain
    assert fn_ref() is None


def test_nested_callable_arguments():
    def inner(x):
        return x + 100

    def outer(x):
        return testing.apply(inner, x) * 2  # a second wrapper while the first is in use

    assert testing.apply(outer, 1) == 202
    assert testing.apply(outer, 2) == 204


# ---- the callback fast path: a wrapper that borrows its callable for the call ------------------


def test_kept_callable_argument_outlives_the_callers_references():
    # The recycled wrapper borrows the callable from the caller's arguments; one that native code
    # keeps takes its own reference when the call returns, so it works after the caller's go.
    def make():
        def cb(x):
            return x * 7

        testing.store_value(cb)
        return weakref.ref(cb)

    ref = make()
    gc.collect()
    assert ref() is not None  # held by the kept wrapper alone
    kept = testing.load_value()
    assert kept(3) == 21 and testing.apply(kept, 2) == 14
    del kept
    testing.clear_value()
    gc.collect()
    assert ref() is None  # and released with it


def test_kept_callable_argument_called_from_native_threads_after_the_call():
    calls = []

    def cb(i):
        calls.append(i)
        return i

    testing.store_value(cb)  # kept by C++ past the call that passed it
    del cb
    gc.collect()
    kept = testing.load_value()
    total, errors = testing.call_from_threads(kept, 4, 25, True)  # native threads, GIL not held
    assert (total, list(errors)) == (sum(range(100)), [])
    assert sorted(calls) == list(range(100))
    assert testing.call_on_thread_unlocked(lambda: "unlocked") == "unlocked"
    testing.clear_value()


def test_callable_argument_kept_then_the_call_fails():
    def cb():
        return 1

    def store_then_fail(f):
        testing.store_value(f)  # kept, and the outer call then raises
        raise KeyError("after keeping")

    with pytest.raises(KeyError, match="after keeping"):
        testing.apply(store_then_fail, cb)
    kept = testing.load_value()
    assert kept() == 1
    testing.clear_value()


@pytest.mark.parametrize("name", ["testing.apply", "testing.apply_typed"])
def test_callback_fast_path_kinds_of_callables(name):
    apply = packedfun.get_global_func(name)

    class Callable:
        def __call__(self):
            return "instance"

        def method(self):
            return "method"

    obj = Callable()
    assert apply(lambda: "lambda") == "lambda"
    assert apply(obj) == "instance"
    assert apply(obj.method) == "method"
    assert apply(dict) == {}  # a C callable: through PyObject_Vectorcall
    assert apply(packedfun.convert(lambda: 5)) == 5


def test_typed_apply_errors_keep_type_and_traceback():
    def failing():
        raise ValueError("from the callback")

    with pytest.raises(ValueError, match="from the callback") as info:
        testing.apply_typed(failing)
    frames = [f.name for f in traceback.extract_tb(info.value.__traceback__)]
    assert "failing" in frames
    with pytest.raises(TypeError, match=r"testing.apply_typed.*argument 0: expected Function"):
        testing.apply_typed(3)
    with pytest.raises(TypeError, match=r"expected 1 argument, got 2"):
        testing.apply_typed(failing, 1)
    assert testing.apply_typed(lambda: testing.apply_typed(lambda: "deep")) == "deep"


def test_unbounded_recursion_through_cpp_is_a_recursion_error(tmp_path):
    # Python -> C++ -> Python without end: the interpreter's recursion limit stops it (in a
    # child: a missing check would overflow the C stack).
    import subprocess

    code = (
        "import sys; sys.setrecursionlimit(400)\n"
        "from packedfun import testing\n"
        "def down(): return testing.apply_typed(down)\n"
        "try:\n    down()\n"
        "except Exception as e:\n"  # the ctypes backend: ctypes wraps it in an ArgumentError
        "    print(type(e).__name__, 'maximum recursion depth' in str(e))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-1] == "True", out.stdout
    if packedfun.BACKEND != "ctypes":
        assert out.stdout.split()[0] == "RecursionError"
