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
