# Streams and the caller's allocator seen by native code: use_stream, env_stream, env_ones.
import ctypes
import threading

import numpy as np
import packedfun
import pytest
import suite
from packedfun import testing


def test_callee_sees_the_stream_set_for_its_device():
    cuda0 = packedfun.device("cuda:0")
    assert testing.env_stream(cuda0) == 0
    with packedfun.use_stream("cuda:0", 0xABC0):
        assert testing.env_stream(cuda0) == 0xABC0
        assert testing.env_stream(packedfun.device("cuda:1")) == 0
        assert packedfun.current_stream("cuda:0") == 0xABC0
        with packedfun.use_stream(cuda0, 0xDEF0):
            assert testing.env_stream(cuda0) == 0xDEF0
        assert testing.env_stream(cuda0) == 0xABC0
    assert testing.env_stream(cuda0) == 0


def test_stream_objects_and_threads():
    class FakeTorchStream:
        cuda_stream = 0x5000

    seen = []
    with packedfun.use_stream("cuda:2", FakeTorchStream()):
        assert testing.env_stream(packedfun.device("cuda:2")) == 0x5000
        worker = threading.Thread(
            target=lambda: seen.append(testing.env_stream(packedfun.device("cuda:2")))
        )
        worker.start()
        worker.join()
    assert seen == [0]  # per thread


def test_bad_streams_and_devices_raise():
    with pytest.raises(TypeError, match="stream must be an int handle"):
        with packedfun.use_stream("cuda:0", "fast"):
            pass
    with pytest.raises(OverflowError, match="does not fit in a pointer"):
        with packedfun.use_stream("cuda:0", 2**64):
            pass
    with pytest.raises(OverflowError, match="device_id"):
        with packedfun.use_stream("cuda:4294967297", 1):
            pass
    assert packedfun.current_stream("cuda:0") == 0


def test_env_alloc_without_framework_allocator_uses_the_runtime():
    out = testing.env_ones(4)
    assert np.from_dlpack(out).tolist() == [1.0] * 4


def _torch_bytes_allocated(f):
    torch = suite.require("torch")
    activities = [torch.profiler.ProfilerActivity.CPU]
    with torch.profiler.profile(activities=activities, profile_memory=True) as prof:
        result = f()
    return sum(e.cpu_memory_usage for e in prof.events() if e.cpu_memory_usage > 0), result


def test_outputs_come_from_torchs_allocator_when_called_with_torch():
    torch = suite.require("torch")
    x = torch.zeros(2)
    allocated, out = _torch_bytes_allocated(lambda: testing.env_ones_like(x, 1000))
    assert type(out) is torch.Tensor and out.tolist() == [1.0] * 1000
    assert allocated >= 4000  # torch's CPU allocator made the 1000 float32s
    allocated, out = _torch_bytes_allocated(lambda: testing.env_ones(1000))
    assert allocated == 0  # no torch argument: the runtime's own allocation


def test_outputs_come_from_numpy_when_called_with_numpy():
    import tracemalloc

    x = np.zeros(1, dtype=np.float32)
    tracemalloc.start()
    try:
        out = testing.env_ones_like(x, 250_000)
        numpy_domain = tracemalloc.DomainFilter(True, np.lib.tracemalloc_domain)
        traced = tracemalloc.take_snapshot().filter_traces([numpy_domain])
        numpy_bytes = sum(stat.size for stat in traced.statistics("filename"))
    finally:
        tracemalloc.stop()
    assert type(out) is np.ndarray and out.shape == (250_000,) and out[-1] == 1.0
    assert numpy_bytes >= 1_000_000  # the output's memory is NumPy's


def test_many_calls_with_framework_allocators():
    torch = suite.require("torch")
    x, a = torch.zeros(1), np.zeros(1, dtype=np.float32)
    outs = [testing.env_ones_like(x, 3) for _ in range(2000)]
    outs += [testing.env_ones_like(a, 3) for _ in range(2000)]
    assert all(float(o.sum()) == 3.0 for o in outs)
    # the allocator is only installed for the call: afterwards the runtime allocates again
    assert type(testing.env_ones(2)) is packedfun.Tensor


def _torch_current_work_stream():
    """torch's DLPackExchangeAPI.current_work_stream, the function the compiled backend calls for
    the first GPU torch argument of a call (tensor_return.c), read from torch's own capsule."""
    torch = suite.require("torch")
    capsule = torch.Tensor.__dlpack_c_exchange_api__
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    api = get_pointer(capsule, b"dlpack_exchange_api")
    major = ctypes.c_uint32.from_address(api).value
    assert major == 1, f"DLPackExchangeAPI major version {major}: the layout below is 1's"
    # the header (version: two uint32, prev_api), managed_tensor_allocator, the three
    # to/from-PyObject functions, then current_work_stream
    address = ctypes.c_void_p.from_address(api + 8 + 8 + 4 * 8).value
    assert address, "torch's exchange API has no current_work_stream"
    prototype = ctypes.PYFUNCTYPE(  # called with the GIL held; -1 comes with a Python error
        ctypes.c_int, ctypes.c_int, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p)
    )
    return torch, prototype(address)


def test_torch_current_work_stream_on_cpu_torch():
    # CPU-only torch has no CUDA stream object, so its lookup is tested as far as its API goes:
    # torch's real function answers NULL for the CPU, as DLPack specifies, and a call with a CPU
    # torch tensor (which takes the torch allocator path) leaves the caller's streams alone: the
    # lookup is for GPU arguments only. The GPU form is the next test.
    torch, current_work_stream = _torch_current_work_stream()
    out = ctypes.c_void_p(0xDEAD)
    assert current_work_stream(1, 0, ctypes.byref(out)) == 0  # kDLCPU
    assert out.value is None
    with packedfun.use_stream("cuda:0", 0xABC0):
        seen = testing.apply(lambda t: packedfun.current_stream("cuda:0"), torch.zeros(2))
    assert seen == 0xABC0


def test_torch_current_stream_is_the_callees_stream_on_a_gpu():
    torch, current_work_stream = _torch_current_work_stream()
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU: torch's current CUDA stream needs one (the CPU form runs)")
    x = torch.zeros(2, device="cuda:0")
    stream = torch.cuda.Stream(device="cuda:0")
    out = ctypes.c_void_p()
    with torch.cuda.stream(stream):
        assert current_work_stream(2, 0, ctypes.byref(out)) == 0  # kDLCUDA
        assert out.value == stream.cuda_stream != 0
        seen = testing.apply(lambda t: packedfun.current_stream("cuda:0"), x)
    # docs/streams-and-allocators.md: the compiled backend sets torch's current stream for the
    # call; the ctypes backend sets torch's allocator only.
    assert seen == (stream.cuda_stream if packedfun.BACKEND == "_core" else 0)
    assert testing.apply(lambda t: packedfun.current_stream("cuda:0"), x) == 0  # default stream


def test_torch_stream_objects_on_cpu_torch():
    # torch's own stream objects, as CPU-only torch makes them: torch.Stream (what
    # torch.accelerator.current_stream() returns on a GPU) carries its handle as native_handle,
    # which CPU torch refuses to read; torch.cpu.current_stream() has no handle at all. Each is
    # refused with a TypeError naming it, and the caller's slot is untouched. The GPU form
    # (torch.Stream and torch.cuda.Stream with real handles) is in test_gpu.py.
    torch = suite.require("torch")
    generic = torch.Stream(device="cpu")
    with pytest.raises(RuntimeError):
        generic.native_handle  # noqa: B018 - torch's own answer on the CPU
    with packedfun.use_stream("cuda:0", 0xABC0):
        with pytest.raises(TypeError, match=r"got Stream \(native_handle: .*native handle"):
            packedfun.use_stream("cuda:0", generic)
        with pytest.raises(TypeError, match="got Stream$"):
            packedfun.use_stream("cuda:0", torch.cpu.current_stream())
        assert packedfun.current_stream("cuda:0") == 0xABC0

    class CudaLike(torch.Stream):  # torch.Stream's handle path, with the value a GPU would give
        @property
        def native_handle(self):
            return 0x5150

    with packedfun.use_stream("cuda:0", CudaLike(device="cpu")):
        assert packedfun.current_stream("cuda:0") == 0x5150
    assert packedfun.current_stream("cuda:0") == 0
