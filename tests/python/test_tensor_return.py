# Tensor results come back as they came in: torch → torch, NumPy → NumPy (both backends).
import threading

import numpy as np
import packedfun
import pytest
import suite
from packedfun import testing

cpp = suite.require("packedfun.cpp")
torch = suite.require("torch")

SOURCE = r"""
namespace pf = packedfun;
// A new tensor (not an argument's view): the first row of a 2-d input, as its own Tensor.
pf::Tensor first_row(pf::Tensor x) {
  pf::Tensor out = pf::Tensor::Empty({x->shape[1]}, x->dtype);
  const float* src = static_cast<const float*>(x->data);
  float* dst = static_cast<float*>(out->data);
  for (int64_t i = 0; i < x->shape[1]; ++i) dst[i] = src[i];
  return out;
}
pf::Tuple<pf::Tensor, int64_t, pf::Tensor> pair_of(pf::Tensor a, pf::Tensor b) {
  return pf::Tuple<pf::Tensor, int64_t, pf::Tensor>(a, 7, b);
}
pf::Array<pf::Any> nested(pf::Tensor a) {
  return pf::Array<pf::Any>{pf::Any(pf::Array<pf::Tensor>{a}), pf::Any(a)};
}
int64_t ndim(pf::TensorView x) { return x->ndim; }
"""


@pytest.fixture(scope="module")
def m(tmp_path_factory):
    cache = tmp_path_factory.mktemp("tensor-return-cache")
    return cpp.load_inline(
        "tensor_return",
        cpp_sources=SOURCE,
        functions=["first_row", "pair_of", "nested", "ndim"],
        build_directory=cache,
    )


def test_torch_echo_returns_the_same_tensor():
    t = torch.arange(6.0).reshape(2, 3)
    out = testing.echo(t)
    assert type(out) is torch.Tensor
    assert out.data_ptr() == t.data_ptr()
    out[0, 0] = 42.0
    assert t[0, 0] == 42.0


def test_torch_new_tensor_result_is_torch(m):
    t = torch.arange(6.0, dtype=torch.float32).reshape(2, 3)
    row = m.first_row(t)
    assert type(row) is torch.Tensor
    assert row.tolist() == [0.0, 1.0, 2.0]
    row[0] = 5.0  # a fresh tensor: the input is untouched
    assert t[0, 0] == 0.0


def test_tensors_inside_tuples_and_nested_arrays(m):
    a, b = torch.zeros(2), torch.ones(3)
    out = m.pair_of(a, b)
    assert isinstance(out, tuple) and len(out) == 3
    assert type(out[0]) is torch.Tensor and out[0].data_ptr() == a.data_ptr()
    assert out[1] == 7
    assert type(out[2]) is torch.Tensor and out[2].data_ptr() == b.data_ptr()
    inner, alone = m.nested(a)
    assert isinstance(inner, tuple) and type(inner[0]) is torch.Tensor
    assert type(alone) is torch.Tensor


def test_numpy_in_numpy_out(m):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = testing.echo(x)
    assert type(out) is np.ndarray and np.shares_memory(out, x)
    row = m.first_row(x)
    assert type(row) is np.ndarray and row.tolist() == [0.0, 1.0, 2.0]
    pair = m.pair_of(x, x)
    assert type(pair[0]) is np.ndarray and np.shares_memory(pair[0], x)


def test_read_only_numpy_comes_back_read_only():
    x = np.arange(3, dtype=np.float32)
    x.flags.writeable = False
    out = testing.echo(x)
    assert type(out) is np.ndarray and not out.flags.writeable


def test_non_tensor_results_and_no_tensor_arguments_are_unchanged(m):
    t = torch.zeros(2, 2)
    assert m.ndim(t) == 2
    made = packedfun.from_dlpack(np.zeros(3, dtype=np.float32))
    assert type(testing.echo(made)) is packedfun.Tensor  # a packedfun.Tensor in stays one
    assert list(testing.echo([1, 2])) == [1, 2]


def test_switch_keeps_packedfun_tensors(m):
    t = torch.zeros(3)
    with packedfun.tensor_return("packedfun"):
        out = testing.echo(t)
        pair = m.pair_of(t, t)
    assert type(out) is packedfun.Tensor
    assert type(pair) is packedfun.Array and type(pair[0]) is packedfun.Tensor
    assert type(testing.echo(t)) is torch.Tensor  # restored on exit
    previous = packedfun.set_tensor_return("packedfun")
    try:
        assert previous == "framework"
        assert type(testing.echo(np.zeros(2))) is packedfun.Tensor
    finally:
        packedfun.set_tensor_return(previous)
    with pytest.raises(ValueError, match="mode must be 'framework' or 'packedfun'"):
        packedfun.set_tensor_return("torch")


def test_switch_is_per_thread():
    t = torch.zeros(1)
    seen = []
    with packedfun.tensor_return("packedfun"):
        worker = threading.Thread(target=lambda: seen.append(type(testing.echo(t))))
        worker.start()
        worker.join()
    assert seen == [torch.Tensor]
