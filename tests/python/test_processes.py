# Tests that packedfun values, errors, functions and load_inline modules cross process boundaries.
import atexit
import concurrent.futures
import multiprocessing
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import packedfun
import pytest
from packedfun import cpp, testing

KERNEL = r"""
double total(packedfun::TensorView x) {
  if (x->ndim != 1) throw packedfun::Error("ValueError", "total: expected a 1-d array");
  double s = 0;
  for (int64_t i = 0; i < x->shape[0]; ++i) s += static_cast<double*>(x->data)[i];
  return s;
}
"""


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    os.environ["PACKEDFUN_CACHE_DIR"] = str(tmp_path_factory.mktemp("recv"))
    try:
        mod = cpp.load_inline(
            "ship_total", cpp_sources=KERNEL, functions="total", build_directory=cache
        )
    except cpp.CompilerNotFoundError:
        pytest.skip("no C++ compiler")
    yield mod
    os.environ.pop("PACKEDFUN_CACHE_DIR", None)


# Lists that hold themselves, made or received in this process: a purely native cycle, which no
# collector frees (docs/concepts.md). Broken at exit, so the sanitized run's leak check at exit
# sees only real leaks, in the parent and in the pool workers alike.
_SELF_HOLDING: list = []


@atexit.register
def _break_self_cycles():
    while _SELF_HOLDING:
        lst = _SELF_HOLDING.pop()
        if len(lst) == 3 and lst[2].same_as(lst):
            lst.pop()


def _values():
    pair = testing.TestIntPair(1, 2)
    lst = packedfun.List([1, "two"])
    lst.append(lst)
    _SELF_HOLDING.append(lst)
    return [
        packedfun.Array([1, 2.5, "s", b"b", None]),
        packedfun.Map({"a": packedfun.Array([pair, pair])}),
        packedfun.Dict({"k": 1}),
        packedfun.Shape([2, 3]),
        packedfun.dtype("float16"),
        packedfun.device("cuda:2"),
        pair,
        lst,
        packedfun.from_dlpack(np.arange(6, dtype="float32").reshape(2, 3)[:, ::2]),
        packedfun.get_global_func("testing.add_int"),
    ]


def _describe(value):
    """What the child sees, in plain Python terms."""
    if isinstance(value, packedfun.Tensor):
        return ("Tensor", value.shape, value.strides, np.from_dlpack(value).tolist())
    if isinstance(value, packedfun.Function):
        return ("Function", value(2, 3))
    if isinstance(value, packedfun.List):
        _SELF_HOLDING.append(value)
        return ("List", value[0], value[1], value[2].same_as(value))
    if getattr(value, "type_key", None) == "testing.TestIntPair":
        return ("Pair", value.a, value.b)
    if isinstance(value, packedfun.Map):
        arr = value["a"]
        return ("Map", arr[0].same_as(arr[1]), arr[0].a)
    return (type(value).__name__, repr(value))


def _echo(value):
    if isinstance(value, packedfun.List):
        _SELF_HOLDING.append(value)
    return value


def _call(func, *args):
    return func(*args)


def _check(results):
    values = _values()
    assert results == [_describe(v) for v in values]


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_values_functions_and_modules_through_multiprocessing(method, kernel):
    ctx = multiprocessing.get_context(method)
    with ctx.Pool(1) as pool:
        _check(pool.map(_describe, _values()))
        back = pool.map(_echo, _values())
        assert [_describe(v) for v in back] == [_describe(v) for v in _values()]
        assert pool.apply(_call, (kernel.total, np.arange(10.0))) == 45.0
        assert pool.apply(_call, (kernel.total, np.arange(4.0))) == 6.0
        with pytest.raises(ValueError, match="total: expected a 1-d array") as info:
            pool.apply(_call, (kernel.total, np.zeros((2, 2))))
        assert info.value.kind == "ValueError"
        with pytest.raises(ValueError, match="n must be >= 0"):
            pool.apply(_call, (testing.make_array, -1))


def test_process_pool_executor(kernel):
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=ctx) as ex:
        _check(list(ex.map(_describe, _values())))
        futures = [ex.submit(_call, kernel.total, np.full(8, float(i))) for i in range(4)]
        assert [f.result() for f in futures] == [8.0 * i for i in range(4)]
        with pytest.raises(ValueError, match="1-d array"):
            ex.submit(_call, kernel.total, np.zeros((1, 1))).result()


def test_module_ships_once_into_the_cache(kernel, tmp_path):
    data = pickle.dumps(kernel)
    first = pickle.loads(data)
    assert first.total(np.ones(3)) == 3.0
    received = os.path.join(os.environ["PACKEDFUN_CACHE_DIR"], "received")
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(received) for f in fs)
    assert any(f.endswith("ship_total.so") for f in files)
    assert pickle.loads(data) is first
    from packedfun.module import _received

    _received.clear()
    stats = {f: os.stat(f).st_mtime_ns for f in files}
    again = pickle.loads(data)
    assert again.total(np.ones(2)) == 2.0
    assert {f: os.stat(f).st_mtime_ns for f in files} == stats


def test_module_bytes_that_do_not_match_their_digest_are_refused():
    from packedfun.module import _load_shipped

    with pytest.raises(ValueError, match="do not match"):
        _load_shipped("evil", "0" * 64, b"not a library")


def test_system_library_module_does_not_pickle():
    with pytest.raises(TypeError, match="system library"):
        pickle.dumps(packedfun.system_lib())


def test_python_callable_function_pickles_as_the_callable():
    func = packedfun.convert(divmod)
    back = pickle.loads(pickle.dumps(func))
    assert isinstance(back, packedfun.Function) and back(7, 2) == [3, 1]
    with pytest.raises((AttributeError, pickle.PicklingError), match="lambda"):
        pickle.dumps(packedfun.convert(lambda x: x))  # as the lambda itself would
    with pytest.raises(TypeError, match="cannot pickle .*neither a registered"):
        pickle.dumps(testing.make_adder(3))  # a native closure has no name to travel by


def test_fork_after_threads_used_packedfun():
    script = textwrap.dedent(
        """
        import os, threading, packedfun
        from packedfun import testing
        def work():
            for i in range(2000):
                assert testing.add_int(i, 1) == i + 1
                packedfun.Array([i, "x"])
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads: t.start()
        for t in threads: t.join()
        pid = os.fork()
        if pid == 0:
            ok = testing.add_int(1, 2) == 3 and list(packedfun.Map({"a": 1}).keys()) == ["a"]
            os._exit(0 if ok else 3)
        _, status = os.waitpid(pid, 0)
        raise SystemExit(os.waitstatus_to_exitcode(status))
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], timeout=120, capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode()
