# Tests of pickle, copy and deepcopy of packedfun values (containers, objects, tensors, functions).
import copy
import pickle

import numpy as np
import packedfun
import pytest
import suite
from packedfun import _graph, _pickle, testing
from packedfun.object import type_info

PROTOCOLS = range(2, pickle.HIGHEST_PROTOCOL + 1)


def _ctor(key):
    info = type_info(packedfun._backend.core.type_key_to_index(key))
    return next(m["func"] for m in info["methods"] if m["name"] == "__create__")


def _pair(a, b):
    return _ctor("testing.TestIntPair")(a, b)


def _roundtrip(value, protocol):
    return pickle.loads(pickle.dumps(value, protocol))


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_containers_roundtrip_with_their_types(protocol):
    cases = [
        packedfun.Array([1, "x", 2.5, None, b"b", True]),
        packedfun.List([1, [2, 3], {"a": 1}]),
        packedfun.Map({"a": 1, "b": [1, 2]}),
        packedfun.Dict({"k": {"n": 1}}),
        packedfun.Shape([2, 3, 4]),
    ]
    for value in cases:
        back = _roundtrip(value, protocol)
        assert type(back) is type(value)
        assert not back.same_as(value)
        assert repr(back) == repr(value)
    back = _roundtrip(packedfun.Array([True, 1]), protocol)
    assert back[0] is True and type(back[1]) is int


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_dtype_device_roundtrip(protocol):
    for value in (
        packedfun.dtype("bfloat16"),
        packedfun.dtype("int8x4"),
        packedfun.device("cuda:1"),
    ):
        back = _roundtrip(value, protocol)
        assert back == value and type(back) is type(value)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_cycles_and_sharing_are_preserved(protocol):
    lst = packedfun.List([1])
    lst.append(lst)
    back = _roundtrip(lst, protocol)
    # Native cycles no collector frees (docs/concepts.md): broken before the test ends, or the
    # sanitized run's leak check at exit reports them.
    preserved = back[1].same_as(back) and back[0] == 1
    del lst[1], back[1]
    assert preserved
    dct = packedfun.Dict({"k": 1})
    dct["self"] = dct
    back = _roundtrip(dct, protocol)
    preserved = back["self"].same_as(back)
    del dct["self"], back["self"]
    assert preserved
    pair = _pair(1, 2)
    shared = packedfun.Array([pair, packedfun.Map({"p": pair}), pair])
    back = _roundtrip(shared, protocol)
    assert back[0].same_as(back[2]) and back[1]["p"].same_as(back[0])
    assert (back[0].a, back[0].b) == (1, 2)


def test_reflected_objects_roundtrip_through_fields_and_constructor():
    mutable = _ctor("testing.Mutable")(5, "name")
    mutable.ratio, mutable.small = 2.5, 7
    mutable.child = _ctor("testing.Base")(9)
    for back in (_roundtrip(mutable, 5), copy.deepcopy(mutable)):
        assert not back.same_as(mutable)
        assert (back.count, back.name, back.ratio, back.small) == (5, "name", 2.5, 7)
        assert back.child.value == 9 and not back.child.same_as(mutable.child)
    shallow = copy.copy(mutable)
    assert shallow.child.same_as(mutable.child) and shallow.ratio == 2.5
    derived = _ctor("testing.Derived")(3, "lbl")
    back = _roundtrip(derived, 4)
    assert type(back) is type(derived) and (back.value, back.label) == (3, "lbl")


def test_object_that_cannot_be_rebuilt_raises_type_error_naming_it():
    obj = testing.make_more_derived(1, "x", 2.0)
    with pytest.raises(TypeError, match=r"testing.MoreDerived.*no __create__"):
        pickle.dumps(obj)


def test_deeply_nested_array_pickles_without_recursion():
    deep = packedfun.Array([])
    for _ in range(20000):
        deep = packedfun.Array([deep])
    back = pickle.loads(pickle.dumps(deep, 5))
    depth = 0
    while len(back):
        back, depth = back[0], depth + 1
    assert depth == 20000


PLAIN = [0, -(2**63), 2**63 - 1, True, False, None, 2.5, -0.0, float("nan"), float("inf")]
PLAIN += ["", "abc", "long string \u00e9\u4e2d\U0001f600", "nul\x00inside", b"", b"\x00\xff"]
PLAIN += [b"longer bytes \x00 with a NUL"]


def _same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return repr(a) == repr(b)  # NaN and -0.0 by their bits
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_plain_containers_travel_packed_by_the_runtime(protocol):
    keys = [k for k in PLAIN if not isinstance(k, float)]
    for value in (
        packedfun.Array(PLAIN),
        packedfun.List(PLAIN),
        packedfun.Map({k: v for k, v in zip(keys, PLAIN)}),
        packedfun.Dict({k: v for k, v in zip(keys, reversed(PLAIN))}),
        packedfun.Array([]),
        packedfun.Dict({}),
    ):
        assert value.__reduce_ex__(protocol)[0] is _pickle._load_plain
        back = _roundtrip(value, protocol)
        assert type(back) is type(value) and not back.same_as(value)
        if isinstance(value, packedfun.Map) or isinstance(value, packedfun.Dict):
            assert list(back.keys()) == list(value.keys())  # insertion order kept
            pairs = zip(back.values(), value.values())
        else:
            pairs = zip(back, value)
        assert len(back) == len(value) and all(_same(a, b) for a, b in pairs)
    lst = packedfun.List([1, 2])
    copied = copy.deepcopy(lst)
    copied.append(3)
    assert list(lst) == [1, 2] and list(copied) == [1, 2, 3]


def test_containers_with_objects_take_the_value_graph_road():
    inner = packedfun.Array([1])
    for value in (packedfun.Array([1, inner]), packedfun.Map({"a": inner}), packedfun.Shape([2])):
        assert value.__reduce_ex__(5)[0] is not _pickle._load_plain
    back = _roundtrip(packedfun.List([inner, inner]), 5)
    assert back[0].same_as(back[1])


def test_packed_container_bytes_are_checked():
    good = packedfun.Array([1, "abc"]).__reduce_ex__(5)[1][0]
    with pytest.raises(ValueError, match="not a packed packedfun container"):
        _pickle._load_plain(b"junk" * 10)
    with pytest.raises(ValueError, match="ends early"):
        _pickle._load_plain(good[:-1])
    with pytest.raises(ValueError, match="trailing data"):
        _pickle._load_plain(good + b"\x00")
    with pytest.raises(ValueError, match="format version 9"):
        _pickle._load_plain(good[:3] + b"\x09" + good[4:])
    with pytest.raises(ValueError, match="bad header"):  # a count beyond the data
        _pickle._load_plain(good[:9] + (10**9).to_bytes(8, "little") + good[17:])
    with pytest.raises(ValueError, match="unknown element tag 42"):
        _pickle._load_plain(good[:17] + b"\x2a" + good[18:])
    with pytest.raises(TypeError, match="expected 1 argument of type bytes"):
        _pickle._load_plain("text")


def test_copy_is_shallow_and_deepcopy_deep():
    inner = packedfun.List([1])
    outer = packedfun.List([inner, 2])
    shallow, deep = copy.copy(outer), copy.deepcopy(outer)
    assert type(shallow) is packedfun.List and type(deep) is packedfun.List
    assert not shallow.same_as(outer) and shallow[0].same_as(inner)
    assert not deep[0].same_as(inner) and list(deep[0]) == [1]
    mapping = packedfun.Map({"a": inner})
    assert copy.copy(mapping)["a"].same_as(inner)
    assert not copy.deepcopy(mapping)["a"].same_as(inner)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_cpu_tensor_by_value_with_strides_and_readonly(protocol):
    base = np.arange(24, dtype="float32").reshape(4, 6)
    tensor = packedfun.from_dlpack(base[1:, ::2])
    back = _roundtrip(tensor, protocol)
    assert back.shape == tensor.shape and back.strides == tensor.strides
    assert back.dtype == tensor.dtype and back.readonly is False
    np.testing.assert_array_equal(np.from_dlpack(back), base[1:, ::2])
    ro = packedfun.from_dlpack(np.ndarray((3,), dtype="int64", buffer=b"\1" * 24))
    assert _roundtrip(ro, protocol).readonly is True
    empty = packedfun.from_dlpack(np.zeros((0, 3), dtype="int16"))
    assert _roundtrip(empty, protocol).shape == (0, 3)


def test_tensor_protocol5_out_of_band_is_the_tensor_memory():
    array = np.arange(1 << 16, dtype="float64")
    tensor = packedfun.from_dlpack(array)
    buffers = []
    data = pickle.dumps(tensor, 5, buffer_callback=buffers.append)
    assert len(data) < 1024 and len(buffers) == 1
    raw = buffers[0].raw()
    assert np.frombuffer(raw, dtype="float64").__array_interface__["data"][0] == array.ctypes.data
    back = pickle.loads(data, buffers=buffers)
    np.testing.assert_array_equal(np.from_dlpack(back), array)
    copied = copy.deepcopy(tensor)
    assert copied.data_ptr != tensor.data_ptr
    np.testing.assert_array_equal(np.from_dlpack(copied), array)


def test_tensor_with_non_numpy_dtype_is_refused():
    torch = suite.require("torch")
    tensor = packedfun.from_dlpack(torch.zeros(2, dtype=torch.bfloat16))
    with pytest.raises(TypeError, match="bfloat16"):
        pickle.dumps(tensor)


def test_non_cpu_tensor_is_refused_naming_the_device():
    class FakeCuda:
        device = packedfun.device("cuda:1")

    with pytest.raises(TypeError, match="cuda:1"):
        _graph.tensor_meta(FakeCuda())


def test_registry_function_pickles_by_name():
    echo = packedfun.get_global_func("testing.echo")
    back = _roundtrip(echo, 5)
    assert back.same_as(echo) and back(3) == 3
    assert copy.deepcopy(echo).same_as(echo)

    packedfun.register_global_func("test_pickle.tmp", lambda: 1)
    data = pickle.dumps(packedfun.get_global_func("test_pickle.tmp"))
    packedfun.remove_global_func("test_pickle.tmp")
    # Loading succeeds where the name is not registered; calling raises, naming it.
    missing = pickle.loads(data)
    assert "test_pickle.tmp" in repr(missing)
    with pytest.raises(ValueError, match="global function 'test_pickle.tmp' is not registered"):
        missing()
    with pytest.raises(ValueError, match="test_pickle.tmp"):
        testing.apply(missing)  # the same from C++ (it converts as a Python callable)
    assert pickle.loads(pickle.dumps(missing)).name == "test_pickle.tmp"  # travels as the name
    # Registered later, the same placeholder calls it.
    packedfun.register_global_func("test_pickle.tmp", lambda: 7)
    try:
        assert missing() == 7
        assert pickle.loads(pickle.dumps(missing)).same_as(
            packedfun.get_global_func("test_pickle.tmp")
        )
    finally:
        packedfun.remove_global_func("test_pickle.tmp")


def test_errors_keep_kind_message_and_backtrace():
    with pytest.raises(ValueError) as info:
        testing.make_array(-1)
    back = _roundtrip(info.value, 5)
    assert type(back) is ValueError and back.kind == "ValueError"
    assert str(back) == str(info.value)
    assert "Native backtrace" in str(back.__notes__[0])
    err = packedfun.Error("boom", "MyKind")
    back = _roundtrip(err, 2)
    assert type(back) is packedfun.Error and back.kind == "MyKind" and str(back) == "boom"
