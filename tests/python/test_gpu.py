# CUDA paths on a real GPU: DLPack zero-copy from torch, CuPy and JAX, the caller's stream (also
# under CUDA graph capture), the caller's allocator, load_inline with .cu sources, a kernel built
# for apache-tvm-ffi, eight threads on eight streams. Without a CUDA GPU every test skips ("no CUDA
# GPU"); tools/gpu_check/run.py runs this file on a lent GPU on both backends.
"""Every kernel here is in ``fixtures/gpu_kernels.cu`` (packedfun) or
``fixtures/tvm_ffi_gpu_kernels.cu`` (apache-tvm-ffi) and launches on the stream its caller's
environment names. Ordering checks make a wrong stream visible: the producer's stream first sleeps
(``torch.cuda._sleep``, tens of milliseconds) and then writes the input; a kernel that ran on any
other non-blocking stream reads the old input and the result is wrong."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading

import pytest
import suite

pf = suite.require("packedfun")
torch = suite.require("torch")

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = os.path.join(HERE, "fixtures", "gpu_kernels.cu")
TVM_KERNELS = os.path.join(HERE, "fixtures", "tvm_ffi_gpu_kernels.cu")
FUNCTIONS = ["add_one", "add_one_new", "add_one_twice_tmp", "stream_of", "address_of"]
N = 1 << 20
SLEEP_CYCLES = 50_000_000  # ~25-35 ms of GPU time on an H100: far longer than any launch

# Each test skips on its own (not the module): the GPU check's dry run sees every row's tests.
pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA GPU: the GPU check's tests need one"
)

# JAX takes 75% of the GPU's memory when first used unless told otherwise.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")


@pytest.fixture(scope="module")
def mod():
    import packedfun.cpp

    with open(KERNELS) as f:
        source = f.read()
    return packedfun.cpp.load_inline("gpu_check_kernels", cuda_sources=source, functions=FUNCTIONS)


def _late_input(stream, value: float):
    """A tensor that holds `value` only once `stream` has slept: a kernel on another stream reads
    zeros."""
    x = torch.zeros(N, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.stream(stream):
        torch.cuda._sleep(SLEEP_CYCLES)
        x.fill_(value)
    return x


def _expect_ones_plus(y, value: float) -> None:
    torch.cuda.synchronize()
    assert torch.equal(y, torch.full_like(y, value + 1)), y[:4]


# ---- DLPack: zero-copy in and out --------------------------------------------------------------


def test_torch_tensors_zero_copy_in_and_caller_type_out(mod):
    x = torch.arange(N, dtype=torch.float32, device="cuda")
    assert mod.address_of(x) == x.data_ptr()
    assert mod.address_of(x[8:]) == x[8:].data_ptr()
    view = pf.from_dlpack(x)
    assert mod.address_of(view) == x.data_ptr()
    y = mod.add_one_new(x)
    assert type(y) is torch.Tensor and y.device == x.device and y.dtype == torch.float32
    torch.cuda.synchronize()
    assert torch.equal(y, x + 1)
    back = torch.from_dlpack(view)
    assert back.data_ptr() == x.data_ptr() and back.device == x.device
    with pytest.raises(ValueError, match="must be a CUDA tensor"):
        mod.add_one(x.cpu(), x.cpu())


def test_cupy_arrays_zero_copy_and_producer_stream(mod):
    cupy = suite.require("cupy")
    x = cupy.arange(N, dtype=cupy.float32)
    y = cupy.zeros(N, dtype=cupy.float32)
    assert mod.address_of(x) == x.data.ptr
    mod.add_one(x, y)  # no stream set: the default stream, which CuPy's default stream is
    cupy.cuda.runtime.deviceSynchronize()
    assert bool((y == x + 1).all())
    view = pf.from_dlpack(y)
    assert cupy.from_dlpack(view).data.ptr == y.data.ptr  # out as the caller's type, no copy
    # The producer's stream protocol: CuPy writes x on its stream after a sleep; packedfun's kernel
    # runs on another stream (use_stream). DLPack asks the consumer to name its stream in
    # __dlpack__(stream=...) so that the producer orders its pending work before it.
    producer = torch.cuda.Stream()
    consumer = torch.cuda.Stream()
    x[...] = 0
    cupy.cuda.runtime.deviceSynchronize()
    with cupy.cuda.ExternalStream(producer.cuda_stream):
        with torch.cuda.stream(producer):
            torch.cuda._sleep(SLEEP_CYCLES)
        x[...] = 5
        with pf.use_stream("cuda:0", consumer):
            mod.add_one(x, y)
    cupy.cuda.runtime.deviceSynchronize()
    assert bool((y == 6).all()), "the consumer's kernel ran before the producer's write"


def test_jax_arrays_zero_copy_in(mod):
    jax = suite.require("jax")
    import jax.numpy as jnp

    gpus = [d for d in jax.devices() if d.platform == "gpu"]
    if not gpus:
        pytest.fail("JAX sees no GPU although torch does: install jax's CUDA plugin", pytrace=False)
    with jax.default_device(gpus[0]):
        a = jnp.ones((2048, 2048), dtype=jnp.float32)
        x = (a @ a).reshape(-1)[:N] / 2048.0  # all ones, computed asynchronously
    assert mod.address_of(x) == x.unsafe_buffer_pointer()
    y = torch.zeros(N, device="cuda")
    mod.add_one(x, y)  # JAX hands the buffer over once its computation is done
    torch.cuda.synchronize()
    assert torch.equal(y, torch.full_like(y, 2.0))
    back = jax.dlpack.from_dlpack(pf.from_dlpack(y))
    assert back.unsafe_buffer_pointer() == y.data_ptr()


# ---- the caller's stream -----------------------------------------------------------------------


def test_kernel_runs_on_torch_current_stream(mod):
    s = torch.cuda.Stream()
    x = _late_input(s, 3.0)
    y = torch.zeros_like(x)
    with torch.cuda.stream(s):
        seen = mod.stream_of(x)
        if pf.BACKEND == "_core":
            mod.add_one(x, y)
        else:  # docs/streams-and-allocators.md: the ctypes backend does not read torch's stream
            assert seen == 0
            with pf.use_stream("cuda:0", s):
                mod.add_one(x, y)
    if pf.BACKEND == "_core":
        assert seen == s.cuda_stream
    s.synchronize()
    _expect_ones_plus(y, 3.0)


@pytest.mark.parametrize("form", ["use_stream", "use_raw_stream", "raw int", "StreamContext"])
def test_use_stream_forms_order_the_launch(mod, form):
    s = torch.cuda.Stream()
    x = _late_input(s, 7.0)
    y = torch.zeros_like(x)
    pfx = pf.from_dlpack(x)  # a packedfun.Tensor: no torch stream lookup, only use_stream's
    pfy = pf.from_dlpack(y)
    handle = s if form != "raw int" else s.cuda_stream
    manager = {
        "use_stream": pf.use_stream,
        "raw int": pf.use_stream,
        "use_raw_stream": pf.use_raw_stream,
        "StreamContext": pf.StreamContext,
    }[form]
    with manager("cuda:0", handle):
        assert mod.stream_of(pfx) == s.cuda_stream
        mod.add_one(pfx, pfy)
    assert mod.stream_of(pfx) == 0
    _expect_ones_plus(y, 7.0)


def test_launch_is_captured_by_a_cuda_graph(mod):
    x = torch.full((N,), 1.0, device="cuda")
    y = torch.zeros_like(x)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up outside the capture, as torch asks
        mod.add_one(x, y)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        capture = torch.cuda.current_stream()
        if pf.BACKEND == "_core":  # torch's current stream, the capture stream, is the callee's
            mod.add_one(x, y)
        else:
            with pf.use_stream("cuda:0", capture):
                mod.add_one(x, y)
    y.zero_()
    x.fill_(41.0)
    graph.replay()
    _expect_ones_plus(y, 41.0)
    x.fill_(-2.0)
    graph.replay()
    _expect_ones_plus(y, -2.0)


# ---- the caller's allocator --------------------------------------------------------------------


def _allocations() -> int:
    return torch.cuda.memory_stats().get("allocation.all.allocated", 0)


def test_outputs_and_temporaries_come_from_torchs_caching_allocator(mod):
    x = torch.arange(N, dtype=torch.float32, device="cuda")
    mod.add_one_twice_tmp(x)  # warm
    torch.cuda.synchronize()
    before = _allocations()
    y = mod.add_one_twice_tmp(x)
    assert _allocations() - before == 2  # the temporary and the result, both torch's
    torch.cuda.synchronize()
    assert torch.equal(y, 2 * (x + 1))
    assert torch.cuda.memory_stats()["active.all.current"] >= 2  # x and y alive, tmp freed
    # The caching allocator keeps a freed block for the stream it was allocated on: a result made
    # on stream s and dropped is reused by the next allocation of its size on s.
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        z = mod.add_one_new(x)
        ptr = z.data_ptr()
        del z
        again = torch.empty(N, device="cuda")
        assert again.data_ptr() == ptr
    s.synchronize()


# ---- load_inline with .cu sources --------------------------------------------------------------


def test_load_inline_cu_cold_then_warm(tmp_path):
    import packedfun.cpp

    source = open(KERNELS).read()
    paths = [
        packedfun.cpp.build_inline(
            "gpu_check_cold", cuda_sources=source, functions=FUNCTIONS, build_directory=tmp_path
        )
        for _ in range(2)
    ]
    assert paths[0] == paths[1]  # the second is a cache hit
    log = open(os.path.join(os.path.dirname(paths[0]), "build.log")).read()
    assert "nvcc" in log
    m = pf.load_module(paths[0])
    x = torch.arange(10, dtype=torch.float32, device="cuda")
    y = m.add_one_new(x)
    torch.cuda.synchronize()
    assert torch.equal(y, x + 1)


# ---- a kernel built for apache-tvm-ffi ---------------------------------------------------------

_TVM_BUILD = """
import sys
import tvm_ffi.cpp
print(tvm_ffi.cpp.build_inline("pf_gpu_tvm_kernels", cuda_sources=open(sys.argv[1]).read(),
                               build_directory=sys.argv[2]))
"""


def test_tvm_ffi_kernel_runs_on_the_callers_stream():
    import importlib.util

    if importlib.util.find_spec("tvm_ffi") is None:
        suite.require("tvm_ffi")
    from packedfun.cpp import _build

    env = dict(os.environ)
    # tvm-ffi guesses CUDA_HOME from nvcc's directory (/usr/local for /usr/local/bin/nvcc): name it
    env.setdefault("CUDA_HOME", _build.cuda_home(_build.find_nvcc()))
    work = tempfile.mkdtemp(prefix="pf_gpu_tvm_")
    proc = subprocess.run([sys.executable, "-c", _TVM_BUILD, TVM_KERNELS, work], env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    lib = proc.stdout.strip().splitlines()[-1]
    m = pf.load_module(lib)
    s = torch.cuda.Stream()
    x = _late_input(s, 11.0)
    y = torch.zeros_like(x)
    # packedfun.Tensor arguments: the stream is use_stream's on both backends, mirrored into
    # tvm-ffi's environment (with torch tensors the compiled backend takes torch's current stream)
    pfx, pfy = pf.from_dlpack(x), pf.from_dlpack(y)
    with pf.use_stream("cuda:0", s):
        assert m.tensor_stream(pfx) == s.cuda_stream
        m.add_one(pfx, pfy)
    _expect_ones_plus(y, 11.0)
    if pf.BACKEND == "_core":  # and torch's current stream, which the compiled backend reads
        x2 = _late_input(s, 12.0)
        with torch.cuda.stream(s):
            assert m.tensor_stream(x2) == s.cuda_stream
            m.add_one(x2, y)
        _expect_ones_plus(y, 12.0)


# ---- threads -----------------------------------------------------------------------------------


def test_eight_threads_each_on_its_own_stream(mod):
    streams = [torch.cuda.Stream() for _ in range(8)]
    inputs = [_late_input(s, float(i)) for i, s in enumerate(streams)]
    outputs: list = [None] * 8
    seen: list = [None] * 8
    errors: list = []
    barrier = threading.Barrier(8)

    def work(i: int) -> None:
        try:
            barrier.wait()
            with torch.cuda.stream(streams[i]), pf.use_stream("cuda:0", streams[i]):
                seen[i] = mod.stream_of(inputs[i])
                for _ in range(50):
                    outputs[i] = mod.add_one_new(inputs[i])
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    assert seen == [s.cuda_stream for s in streams]
    for i, y in enumerate(outputs):
        _expect_ones_plus(y, float(i))


def test_torch_stream_objects_name_their_stream(mod):
    # torch.Stream (torch.accelerator.current_stream()) by its native_handle, torch.cuda.Stream by
    # its cuda_stream: both name the same stream to use_stream.
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        generic = torch.accelerator.current_stream()
    assert generic.native_handle == s.cuda_stream
    for i, obj in enumerate([generic, s]):
        x = _late_input(s, 20.0 + i)
        y = torch.zeros_like(x)
        with pf.use_stream("cuda:0", obj):
            assert pf.current_stream("cuda:0") == s.cuda_stream
            mod.add_one(pf.from_dlpack(x), pf.from_dlpack(y))
        _expect_ones_plus(y, 20.0 + i)
