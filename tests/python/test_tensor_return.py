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
// The first argument back as it is (the second only picks the caller's framework).
pf::Any first(pf::Any a, pf::Any b) { return a; }
pf::Tensor head(pf::Array<pf::Tensor> xs) { return xs[0]; }
// `n` ones from the environment's allocator (the caller's framework's, when it has one).
pf::Tensor ones_for(pf::Any unused, int64_t n) {
  pf::Tensor out = pf::Tensor::FromEnvAlloc({n}, DLDataType{kDLFloat, 32, 1});
  for (int64_t i = 0; i < n; ++i) static_cast<float*>(out->data)[i] = 1.0f;
  return out;
}
"""


@pytest.fixture(scope="module")
def m(tmp_path_factory):
    cache = tmp_path_factory.mktemp("tensor-return-cache")
    return cpp.load_inline(
        "tensor_return",
        cpp_sources=SOURCE,
        functions=["first_row", "pair_of", "nested", "ndim", "first", "head", "ones_for"],
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


def test_returned_containers_stay_containers_and_read_tensors_as_torch(m):
    a, b = torch.zeros(2), torch.ones(3)
    out = m.pair_of(a, b)
    assert type(out) is packedfun.Array and len(out) == 3
    assert type(out[0]) is torch.Tensor and out[0].data_ptr() == a.data_ptr()
    assert out[1] == 7
    assert type(out[2]) is torch.Tensor and out[2].data_ptr() == b.data_ptr()
    first, seven, last = out  # iteration, unpacking
    assert type(first) is torch.Tensor and seven == 7 and type(last) is torch.Tensor
    assert [type(x) for x in out[::2]] == [torch.Tensor, torch.Tensor]  # a slice too
    inner, alone = m.nested(a)
    assert type(inner) is packedfun.Array and type(inner[0]) is torch.Tensor
    assert inner[0].data_ptr() == a.data_ptr()
    assert type(alone) is torch.Tensor


def test_maps_dicts_and_lists_read_their_tensors_as_torch(m):
    t = torch.arange(3.0)
    d = m.first(packedfun.Dict({"t": t, "n": 1, "box": [t]}), t)
    assert type(d) is packedfun.Dict
    assert type(d["t"]) is torch.Tensor and d["t"].data_ptr() == t.data_ptr()
    assert type(d.get("t")) is torch.Tensor and d["n"] == 1
    assert type(d["box"]) is packedfun.Array and type(d["box"][0]) is torch.Tensor
    assert {k: type(v) for k, v in d.items()}["t"] is torch.Tensor
    assert torch.Tensor in [type(v) for v in d.values()]
    assert type(d.pop("t")) is torch.Tensor and "t" not in d
    lst = m.first(packedfun.List([t, 2]), t)
    assert type(lst) is packedfun.List and type(lst[0]) is torch.Tensor
    assert type(lst.pop(0)) is torch.Tensor and list(lst) == [2]
    mp = testing.echo({"x": [t]})  # a torch tensor inside a dict argument picks torch too
    assert type(mp) is packedfun.Map and type(mp["x"][0]) is torch.Tensor


def test_a_returned_container_passed_back_keeps_the_framework(m):
    t = torch.arange(4.0)
    out = m.pair_of(t, t)
    again = testing.echo(out)  # no torch argument: the container remembers torch
    assert type(again) is packedfun.Array and type(again[0]) is torch.Tensor
    got = m.head(packedfun.Array([out[0]]))  # a fresh Array (from torch tensors) remembers none
    assert type(got) is packedfun.Tensor
    got = m.head(m.first([t], t))  # an element read through a function call
    assert type(got) is torch.Tensor and got.data_ptr() == t.data_ptr()


def test_top_level_arrays_pick_the_framework_before_nested_ones(m):
    x = np.arange(3, dtype=np.float32)
    t = torch.arange(3.0)
    out = m.first([x], t)  # the NumPy array is converted; the torch argument decides
    assert type(out[0]) is torch.Tensor
    out = m.first(t, [x])
    assert type(out) is torch.Tensor
    assert type(testing.echo([x])[0]) is np.ndarray  # only nested: NumPy


def test_containers_without_a_framework_keep_packedfun_tensors():
    made = packedfun.from_dlpack(np.zeros(3, dtype=np.float32))
    out = testing.echo([made, 1])
    assert type(out) is packedfun.Array and type(out[0]) is packedfun.Tensor
    with packedfun.tensor_return("packedfun"):
        out = testing.echo([torch.zeros(2)])
    assert type(out[0]) is packedfun.Tensor
    assert type(testing.echo(out)[0]) is packedfun.Tensor


def test_nested_arrays_install_their_frameworks_allocator(m):
    x = torch.zeros(2)
    activities = [torch.profiler.ProfilerActivity.CPU]
    with torch.profiler.profile(activities=activities, profile_memory=True) as prof:
        out = m.ones_for({"x": [x]}, 1000)
    allocated = sum(e.cpu_memory_usage for e in prof.events() if e.cpu_memory_usage > 0)
    assert type(out) is torch.Tensor and out.tolist() == [1.0] * 1000
    assert allocated >= 4000  # torch's CPU allocator made the 1000 float32s
    out = m.ones_for([np.zeros(1, dtype=np.float32)], 5)
    assert type(out) is np.ndarray and out.tolist() == [1.0] * 5
    out = m.ones_for([1, 2], 3)  # no array at all: the runtime's own allocation
    assert type(out) is packedfun.Tensor


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
