# Tests of packedfun.cpp with cuda_sources: nvcc discovery, architectures, build-and-load, a kernel.
import ctypes
import os

import pytest
import suite

pf = suite.require("packedfun")
cpp = suite.require("packedfun.cpp")
from packedfun.cpp import _build, _probe  # noqa: E402

try:
    NVCC = _build.find_nvcc()
except cpp.CompilerNotFoundError:
    NVCC = None
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
_HAS_API = hasattr(pf, "load_module") and os.path.exists(
    os.path.join(cpp._package.include_dirs()[0], "packedfun", "packedfun.h")
)

KERNEL = r"""
__global__ void iota_plus(int64_t* out, int64_t n, int64_t offset) {
  int64_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i + offset;
}

// Fills a device buffer on the GPU and returns the sum, or -1 when CUDA fails.
int64_t gpu_iota_sum(int64_t n, int64_t offset) {
  int64_t* dev = nullptr;
  if (cudaMalloc(&dev, n * sizeof(int64_t)) != cudaSuccess) return -1;
  iota_plus<<<(n + 127) / 128, 128>>>(dev, n, offset);
  int64_t* host = new int64_t[n];
  cudaError_t err = cudaMemcpy(host, dev, n * sizeof(int64_t), cudaMemcpyDeviceToHost);
  int64_t sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += host[i];
  delete[] host;
  cudaFree(dev);
  return err == cudaSuccess ? sum : -1;
}
"""
CPP_PART = """
int64_t gpu_iota_sum(int64_t n, int64_t offset);
int64_t host_twice(int64_t x) { return 2 * x; }
"""


def _gpu_present() -> bool:
    try:
        import torch

        if torch.cuda.is_available():
            return True
    except ImportError:
        pass
    if NVCC is None:
        return False
    try:
        cudart = ctypes.CDLL(os.path.join(_build.cuda_home(NVCC), "lib64", "libcudart.so"))
    except OSError:
        return False
    count = ctypes.c_int(0)
    return cudart.cudaGetDeviceCount(ctypes.byref(count)) == 0 and count.value > 0


def test_arch_parsing_and_flags(monkeypatch, tmp_path):
    assert _build.parse_arch_list("sm_90;8.0, compute_80 90a") == ["80", "90", "90a"]
    with pytest.raises(ValueError, match="invalid CUDA architecture"):
        _build.parse_arch_list("sm_x")
    assert _build.cuda_arch_flags(["80", "90"]) == [
        "-gencode=arch=compute_80,code=sm_80",
        "-gencode=arch=compute_90,code=sm_90",
        "-gencode=arch=compute_90,code=compute_90",
    ]
    assert "-gencode=arch=compute_80,code=sm_80" in _build.cuda_arch_flags([])  # the default
    monkeypatch.setenv("PACKEDFUN_CUDA_ARCH", "sm_90")
    assert _probe.gpu_archs(str(tmp_path)) == ["90"]


def test_missing_nvcc_names_the_variables(monkeypatch, tmp_path):
    monkeypatch.setenv("PACKEDFUN_NVCC", str(tmp_path / "no-nvcc"))
    with pytest.raises(cpp.CompilerNotFoundError, match="PACKEDFUN_NVCC") as info:
        cpp.build_inline("cu", cuda_sources="int x;", build_directory=tmp_path)
    assert "nvcc" in str(info.value) and "CUDA_HOME" in str(info.value)


@pytest.fixture(scope="module")
def cuda_module(tmp_path_factory):
    if not _HAS_API:
        pytest.skip("packedfun.load_module or packedfun/packedfun.h is not available yet")
    cache = tmp_path_factory.mktemp("cpp-cuda-cache")
    path = cpp.build_inline(
        "cuda_iota",
        cpp_sources=CPP_PART,
        cuda_sources=KERNEL,
        functions=["gpu_iota_sum", "host_twice"],
        build_directory=cache,
    )
    return path, pf.load_module(path)


@needs_nvcc
def test_cuda_module_compiles_and_loads(cuda_module):
    path, mod = cuda_module
    assert mod.host_twice(21) == 42  # host code in the same library runs without a GPU
    assert "gpu_iota_sum" in mod
    log = open(os.path.join(os.path.dirname(path), "build.log")).read()
    assert "nvcc" in log and "-gencode=arch=compute_" in log and "-lcudart" in log


@needs_nvcc
def test_cuda_module_warm_hit_is_same_path(cuda_module):
    path, _ = cuda_module
    again = cpp.build_inline(
        "cuda_iota",
        cpp_sources=CPP_PART,
        cuda_sources=KERNEL,
        functions=["gpu_iota_sum", "host_twice"],
        build_directory=os.path.dirname(os.path.dirname(os.path.dirname(path))),
    )
    assert again == path


@needs_nvcc
def test_cuda_kernel_runs(cuda_module):
    if not _gpu_present():
        pytest.skip("no CUDA GPU: compile-and-load only")
    _, mod = cuda_module
    n = 1000
    assert mod.gpu_iota_sum(n, 5) == n * (n - 1) // 2 + 5 * n
