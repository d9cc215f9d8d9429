"""Hostile value graphs: a pickle or JSON document whose node table is malformed raises ValueError
naming the node, before anything is built (a negative reference silently reused another node; a
reference past the table, an odd Map/Dict item count or an empty node raised a bare IndexError)."""

import pickle

import packedfun as pf
import pytest
from packedfun import _pickle


class _Graph:
    def __init__(self, nodes, root):
        self.nodes, self.root = nodes, root

    def __reduce__(self):
        return (_pickle._load_graph, (self.nodes, self.root))


def _load(nodes, root):
    return pickle.loads(pickle.dumps(_Graph(nodes, root)))


GOOD = ([("A", [(1,)]), ("A", [])], (0,))


@pytest.mark.parametrize(
    "nodes,root,where",
    [
        ([("A", [1]), ("A", [(-2,)])], (1,), "node 1"),  # negative: took another node
        ([("A", [1]), ("A", [(5,)])], (1,), "node 1"),  # past the table
        ([("A", [(0,)])], (7,), "the root"),
        ([("A", [(True,)])], (0,), "node 0"),
        ([("A", [(0, 1)])], (0,), "node 0"),
        ([("M", ["a", 1, "b"])], (0,), "node 0"),  # odd item count
        ([("D", ["a"])], (0,), "node 0"),
        ([()], (0,), "node 0"),  # empty node
        ([("A",)], (0,), "node 0"),
        ([("Q", [])], (0,), "node 0"),
        ([("A", "ab")], (0,), "node 0"),
        ([None], (0,), "node 0"),
    ],
)
def test_a_malformed_graph_raises_value_error_naming_the_node(nodes, root, where):
    with pytest.raises(ValueError, match=f"malformed packedfun value graph: {where}"):
        _load(nodes, root)


def test_a_well_formed_graph_still_loads():
    assert _load(*GOOD) == [[]]
    value = pf.convert({"a": [1, 2], "b": {"c": "d"}})
    assert pf.structural_equal(pickle.loads(pickle.dumps(value)), value)


def _doc(nodes, root=None):
    import json

    return json.dumps({"packedfun_json": 1, "root": root or {"ref": 0}, "nodes": nodes})


@pytest.mark.parametrize(
    "doc",
    [
        _doc([{"type": "Shape", "dims": [2**64]}]),  # was OverflowError
        _doc([{"type": "Array", "items": [2**70]}]),  # was OverflowError
        _doc([], {"device": [2, 2**40]}),  # was OverflowError
    ],
)
def test_from_json_out_of_range_values_raise_value_error(doc):
    with pytest.raises(ValueError, match="^from_json: "):
        pf.from_json(doc)


@pytest.mark.parametrize(
    "doc",
    [
        _doc([{"type": "Shape", "dims": [1, 2**63]}]),
        _doc([{"type": "Shape", "dims": [-(2**63) - 1]}]),
        _doc([{"type": "Array", "items": [2**64]}]),
        _doc([{"type": "List", "items": [-(2**63) - 1]}]),
        _doc([{"type": "Map", "items": ["k", 2**64]}]),
        _doc([], {"device": [1, 2**31]}),
        _doc([], {"device": [1, -1]}),
        _doc([], {"device": [2**64, 0]}),
    ],
)
def test_from_json_values_past_their_range_raise_value_error(doc):
    with pytest.raises(ValueError, match="^from_json: |device_id -1 is out of range"):
        pf.from_json(doc)


def _tensor_node(dtype, data="AAAAAAAAAAA="):
    node = {"type": "Tensor", "dtype": dtype, "shape": [1], "strides": [1], "offset": 0}
    return _doc([{**node, "readonly": False, "data": data}])


# NumPy's dtype parser takes all of these; a tensor written by packedfun has none of them. The
# first five raised BufferError or AttributeError from the rebuild, "float128" made an x87
# extended-precision tensor, "i8" (int8 here) an int64 one.
NO_TENSOR_DTYPES = ["datetime64", "timedelta64", ">i8", "<i8", "object", "void", "V8", "U2", "S8"]
NO_TENSOR_DTYPES += ["float128", "complex256", "bfloat16", "float8_e4m3fn", "int4", "int64x2", ""]


@pytest.mark.parametrize("dtype", NO_TENSOR_DTYPES)
def test_from_json_and_pickle_refuse_tensor_dtypes_no_tensor_travels_with(dtype):
    with pytest.raises(TypeError, match=f"cannot rebuild a Tensor of dtype '{dtype}'"):
        pf.from_json(_tensor_node(dtype, "A" * 44))  # 32 bytes: enough for any of them
    meta = (dtype, (1,), (1,), 0, False)
    with pytest.raises(TypeError, match=f"cannot rebuild a Tensor of dtype '{dtype}'"):
        _load([("T", meta, bytes(32))], (0,))


def test_tensor_dtypes_read_as_packedfun_names_them():
    np = pytest.importorskip("numpy")
    int8 = pf.from_json(_tensor_node("i8", "/w=="))  # packedfun's "i8" is int8 (NumPy: int64)
    assert int8.dtype == "int8" and np.from_dlpack(int8).tolist() == [-1]
    for name in ("bool", "int8", "uint16", "int32", "uint64", "float16", "float64", "complex128"):
        tensor = pf.from_dlpack(np.zeros(2, dtype=name))
        assert pf.from_json(pf.to_json(tensor)).dtype == name


def _plain_pickle(value, marker):
    data = pickle.dumps(pf.convert(value))
    assert data.count(marker) == 1
    return data


@pytest.mark.parametrize("value", [["abcd", 1], {"abcd": 1}, {1: "abcd"}, ("x", "abcd")])
@pytest.mark.parametrize(
    "bad", [b"\xff\xfe\xfd\xfc", b"a\xc3(b", b"\xed\xa0\x80a", b"\xf4\x90\x80\x80"]
)
def test_a_packed_container_with_a_str_that_is_not_utf8_fails_at_load(value, bad):
    # It unpickled, then failed on every read (UnicodeDecodeError); now the load refuses it.
    data = _plain_pickle(value, b"abcd").replace(b"abcd", bad)
    with pytest.raises(
        ValueError, match="container_unpack_plain: byte [0-9]+: a str that is not UTF-8"
    ):
        pickle.loads(data)


def test_a_packed_container_with_well_formed_text_and_any_bytes_still_loads():
    value = pf.convert(["é", "€", "𝄞", "\U0010ffff", "", b"\xff\xed\xa0\x80"])
    assert pickle.loads(pickle.dumps(value)) == value
