# Tests that tensors kept by native code (Tensor parameters, Any, callbacks) keep their producer.
import gc
import itertools
import os
import sys
import time
import tracemalloc
import weakref

import pytest
import suite

np = suite.require("numpy")
pf = suite.require("packedfun")
import packedfun.testing  # noqa: E402,F401  (registers testing.*)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tensor_build  # noqa: E402

FUNCS = ["keep_view", "view_readonly", "kept_readonly", "keep_in_thread", "drop_go", "dropped"]
NDIM_FUNCS = ["tensor_ndim", "tensor_keep"]
echo = pf.get_global_func("testing.echo")
store = pf.get_global_func("testing.store_value")
load = pf.get_global_func("testing.load_value")
clear = pf.get_global_func("testing.clear_value")
apply = pf.get_global_func("testing.apply")


def _fixture(name):
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", name)


@pytest.fixture(scope="module")
def m():
    return tensor_build.load("pf_test_tensor_lifetime", _fixture("tensor_lifetime.cc"), FUNCS)


@pytest.fixture(scope="module")
def funcs():
    return tensor_build.load("pf_test_tensor_funcs", _fixture("tensor_funcs.cc"),
                             ["tensor_ndim", "tensor_shape_at", "tensor_stride_at", "tensor_data",
                              "tensor_dtype", "tensor_device", "tensor_keep", "tensor_empty",
                              "tensor_empty_2d", "tensor_sum_f32", "tensor_readonly"])  # fmt: skip


def _collect():
    for _ in range(3):
        gc.collect()


@pytest.fixture(autouse=True)
def _clear_stored():
    # These tests are about the packedfun.Tensor a call keeps or returns: results stay one
    # (test_tensor_return.py covers tensors coming back as the caller's framework).
    with pf.tensor_return("packedfun"):
        yield
    clear()


# ---- NumPy ---------------------------------------------------------------------------------------
def test_echo_numpy_keeps_array_alive_and_shares_memory():
    arr = np.arange(6, dtype="float32").reshape(2, 3)
    ref = weakref.ref(arr)
    t = echo(arr)
    assert isinstance(t, pf.Tensor)
    assert t.shape == (2, 3) and t.strides == (3, 1) and t.data_ptr == arr.ctypes.data
    arr[1, 2] = 42.0  # writes are shared both ways
    view = np.from_dlpack(t)
    assert view[1, 2] == 42.0
    view[0, 0] = -1.0
    assert arr[0, 0] == -1.0
    del arr, view
    _collect()
    assert ref() is not None, "the kept Tensor must keep the NumPy array alive"
    assert np.from_dlpack(t).tolist() == [[-1.0, 1.0, 2.0], [3.0, 4.0, 42.0]]
    del t
    _collect()
    assert ref() is None, "the array must die with the last Tensor over it"


def test_stored_numpy_argument_survives_the_call():
    arr = np.arange(5, dtype="int64")
    ref = weakref.ref(arr)
    store(arr)
    del arr
    _collect()
    assert ref() is not None
    t = load()
    assert isinstance(t, pf.Tensor) and np.from_dlpack(t).tolist() == [0, 1, 2, 3, 4]
    del t
    clear()
    _collect()
    assert ref() is None


def test_tensor_parameter_and_from_view_keep_the_array(m, funcs):
    arr = np.ones(3, dtype="float64")
    ref = weakref.ref(arr)
    kept = [funcs.tensor_keep(arr), m.keep_view(arr)]
    del arr
    _collect()
    assert ref() is not None
    assert all(np.from_dlpack(t).tolist() == [1.0, 1.0, 1.0] for t in kept)
    del kept
    _collect()
    assert ref() is None


def test_keep_view_of_a_tensor_object_is_the_object(m):
    t = pf.from_dlpack(np.zeros(2))
    assert m.keep_view(t).same_as(t)


def test_python_callback_keeps_a_numpy_argument():
    kept = []
    arr = np.arange(4, dtype="float32")
    ref = weakref.ref(arr)
    apply(kept.append, arr)  # C++ hands the argument on to the Python callback
    del arr
    _collect()
    assert ref() is not None and isinstance(kept[0], pf.Tensor)
    assert np.from_dlpack(kept[0]).tolist() == [0.0, 1.0, 2.0, 3.0]
    kept.clear()
    _collect()
    assert ref() is None


def test_tensor_kept_in_an_array_container():
    arr = np.arange(3, dtype="int32")
    ref = weakref.ref(arr)
    box = pf.get_global_func("testing.echo")([arr]) if hasattr(pf, "Array") else None
    if box is None:
        pytest.skip("containers are not available")
    del arr
    _collect()
    assert ref() is not None
    assert np.from_dlpack(box[0]).tolist() == [0, 1, 2]
    del box
    _collect()
    assert ref() is None


def test_last_reference_dropped_on_a_native_thread(m):
    arr = np.arange(8, dtype="float32")
    ref = weakref.ref(arr)
    m.keep_in_thread(arr)
    del arr
    _collect()
    assert ref() is not None
    m.drop_go()
    deadline = time.monotonic() + 10
    while not m.dropped() and time.monotonic() < deadline:
        time.sleep(0.005)  # releases the GIL, which the thread's release needs
    assert m.dropped()
    _collect()
    assert ref() is None


def test_many_promotions_release_everything():
    arr = np.zeros(16, dtype="float32")
    ref = weakref.ref(arr)
    for _ in range(200):
        t = echo(arr)
        assert t.shape == (16,)
    del t, arr
    _collect()
    assert ref() is None


# ---- read-only arrays ----------------------------------------------------------------------------
def _readonly(n=4):
    arr = np.arange(n, dtype="float32")
    arr.flags.writeable = False
    return arr


def test_read_only_flag_is_kept_on_a_kept_tensor(m, funcs):
    arr = _readonly()
    t = echo(arr)
    assert t.readonly
    assert not np.from_dlpack(t).flags.writeable, "a kept read-only tensor must stay read-only"
    assert funcs.tensor_readonly(arr) == 1 and m.kept_readonly(arr) == 1
    assert m.keep_view(arr).readonly
    store(arr)
    assert load().readonly


def test_read_only_flag_is_visible_on_a_view(m):
    assert m.view_readonly(_readonly()) == 1
    assert m.view_readonly(np.zeros(2)) == 0
    assert m.kept_readonly(np.zeros(2)) == 0
    assert not echo(np.zeros(2)).readonly


# ---- the TensorView fast path --------------------------------------------------------------------
def test_tensor_view_fast_path_allocates_nothing_in_steady_state(funcs):
    arr = np.zeros(4, dtype="float32")
    f = funcs.tensor_ndim
    for _ in range(100):
        f(arr)
    _collect()
    if pf._backend.core.__name__ != "packedfun._core":
        # ctypes builds a few ctypes objects per call; no keeper may outlive its call.
        from packedfun._ctypes import values as ctypes_values

        held = len(ctypes_values._handles)
        for _ in range(2000):
            assert f(arr) == 1
        _collect()
        assert len(ctypes_values._handles) <= held
        return
    count = pf._backend.core._tensor_scratch_allocations
    made = count()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in itertools.repeat(None, 5000):
            assert f(arr) == 1
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 1024, f"{grown} bytes still allocated after 5000 calls"
    assert count() == made, "the steady state must reuse scratch records"


@pytest.mark.deselect_if(
    pf.BACKEND != "_core",
    reason="a _core property: only the compiled backend pools scratch records",
)
def test_promoted_scratch_records_are_recycled():
    count = pf._backend.core._tensor_scratch_allocations
    arr = np.zeros(3)
    kept = [echo(arr) for _ in range(50)]  # each keeps its own record alive
    del kept
    _collect()
    made = count()
    for _ in range(200):
        echo(arr)
    assert count() == made, "released records must go back to the free list"


def test_view_of_a_deleted_array_is_never_read(funcs):
    # The borrowed view is only valid during the call; nothing may outlive it unowned.
    arr = np.arange(4, dtype="float32")
    assert funcs.tensor_sum_f32(arr) == 6.0
    t = funcs.tensor_keep(arr)
    del arr
    _collect()
    assert funcs.tensor_sum_f32(t) == 6.0


# ---- torch ---------------------------------------------------------------------------------------
def test_echo_torch_keeps_tensor_alive_and_shares_memory(m, funcs):
    torch = suite.require("torch")
    x = torch.arange(5, dtype=torch.float32)
    ref = weakref.ref(x)
    kept = [echo(x), funcs.tensor_keep(x), m.keep_view(x)]
    x[0] = 7.0
    assert all(torch.from_dlpack(t)[0].item() == 7.0 for t in kept)
    torch.from_dlpack(kept[0])[4] = -2.0
    assert x[4].item() == -2.0
    store(x)
    del x
    _collect()
    assert ref() is not None, "the kept Tensor must keep the torch tensor alive"
    assert torch.from_dlpack(load()).tolist() == [7.0, 1.0, 2.0, 3.0, -2.0]
    clear()
    del kept
    _collect()
    assert ref() is None


def test_torch_last_reference_dropped_on_a_native_thread(m):
    torch = suite.require("torch")
    x = torch.ones(3)
    ref = weakref.ref(x)
    m.keep_in_thread(x)
    del x
    _collect()
    assert ref() is not None
    m.drop_go()
    deadline = time.monotonic() + 10
    while not m.dropped() and time.monotonic() < deadline:
        time.sleep(0.005)
    assert m.dropped()
    _collect()
    assert ref() is None
