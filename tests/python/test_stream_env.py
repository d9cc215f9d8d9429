# Streams and the caller's allocator seen by native code: use_stream, env_stream, env_ones.
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
