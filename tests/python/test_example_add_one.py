# Runs examples/add_one: the add_one_cpu kernel on NumPy and torch; the CUDA version compiles.
import os
import shutil
import subprocess
import sys

import pytest
import suite

np = suite.require("numpy")
pf = suite.require("packedfun")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tensor_build  # noqa: E402

EXAMPLE = os.path.join(tensor_build.ROOT, "examples", "add_one")


@pytest.fixture(scope="module")
def mod():
    try:
        import packedfun.cpp as cpp
    except ImportError:
        cpp = None
    src = os.path.join(EXAMPLE, "add_one.cc")
    if cpp is not None and hasattr(cpp, "load"):
        return cpp.load("example_add_one", [src])
    return pf.load_module(tensor_build._direct_build("example_add_one", src, []))


def test_numpy(mod):
    x = np.arange(5, dtype="float32")
    y = np.zeros_like(x)
    mod.add_one_cpu(x, y)
    np.testing.assert_array_equal(y, x + 1)
    strided = np.zeros(10, dtype="float32")
    mod.add_one_cpu(x[::-1], strided[::2])
    np.testing.assert_array_equal(strided[::2], x[::-1] + 1)


def test_torch(mod):
    torch = suite.require("torch")
    x = torch.arange(5, dtype=torch.float32)
    y = torch.empty_like(x)
    mod.add_one_cpu(x, y)
    torch.testing.assert_close(y, x + 1)


def test_clear_errors(mod):
    x = np.arange(4, dtype="float32")
    with pytest.raises(RuntimeError, match="x must be float32, got float64"):
        mod.add_one_cpu(x.astype("float64"), x)
    with pytest.raises(RuntimeError, match="y must be a 1-d tensor, got ndim=2"):
        mod.add_one_cpu(x, x.reshape(2, 2))
    with pytest.raises(RuntimeError, match="same shape, got 4 and 3"):
        mod.add_one_cpu(x, x[:3])
    with pytest.raises(TypeError, match="add_one_cpu: argument 1: expected Tensor, got int"):
        mod.add_one_cpu(x, 1)
    with pytest.raises(TypeError, match=r"add_one_cpu\(\) missing 1 required positional argument"):
        mod.add_one_cpu(x)


def _nvcc():
    return shutil.which("nvcc") or (
        "/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None
    )


def test_cuda_version_compiles(tmp_path):
    nvcc = _nvcc()
    if nvcc is None:
        pytest.skip("nvcc not found")
    include = os.path.join(os.path.dirname(pf.__file__), "include")
    out = tmp_path / "add_one_cuda.o"
    cmd = [nvcc, "-std=c++17", "-c", "-Xcompiler", "-fPIC", "-I", include,
           os.path.join(EXAMPLE, "add_one_cuda.cu"), "-o", str(out)]  # fmt: skip
    result = subprocess.run(cmd, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert out.stat().st_size > 0


def test_cuda_kernel_runs_on_a_gpu():
    torch = suite.require("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    import packedfun.cpp as cpp

    mod = cpp.load("example_add_one_cuda", [os.path.join(EXAMPLE, "add_one_cuda.cu")])
    x = torch.arange(1000, dtype=torch.float32, device="cuda")
    y = torch.empty_like(x)
    mod.add_one_cuda(x, y)
    torch.cuda.synchronize()
    torch.testing.assert_close(y, x + 1)
    with pytest.raises(RuntimeError, match="must be a CUDA tensor"):
        mod.add_one_cuda(x.cpu(), y)
