# tvm-ffi's JSON graph format and access-step records over packedfun's values (both backends).
"""``packedfun.serialization`` and ``packedfun.access_path`` are the switch's
``tvm_ffi.serialization`` and ``tvm_ffi.access_path``: tvm-ffi's document layout over packedfun's
values and tvm-ffi's step records over packedfun's own AccessPath."""

from __future__ import annotations

import json

import packedfun
import pytest
from packedfun import testing
from packedfun.access_path import AccessKind, AccessPath, AccessStep
from packedfun.object import type_info
from packedfun.serialization import from_json_graph_str, to_json_graph_str


def _doc(value, metadata=None) -> dict:
    return json.loads(to_json_graph_str(value, metadata))


def test_leaves_are_nodes_of_tvm_ffi_type_names():
    for value, type_key, data in [
        (True, "bool", True),
        (7, "int", 7),
        (2.5, "float", 2.5),
        ("héllo", "ffi.String", "héllo"),
        (packedfun.dtype("float32x4"), "DataType", "float32x4"),
        (packedfun.device("cuda", 1), "Device", [2, 1]),
    ]:
        doc = _doc(value)
        assert doc["nodes"][doc["root_index"]] == {"type": type_key, "data": data}
    assert _doc(None) == {"root_index": 0, "nodes": [{"type": "None"}]}
    assert from_json_graph_str(to_json_graph_str(b"\x00\xff")) == b"\x00\xff"


def test_containers_refer_to_shared_nodes_written_first():
    inner = packedfun.convert([1, 1])
    doc = _doc(packedfun.Dict({"a": inner, "b": inner, "t": True, "one": 1}))
    nodes, root = doc["nodes"], doc["nodes"][doc["root_index"]]
    assert root["type"] == "ffi.Dict" and doc["root_index"] == len(nodes) - 1
    keys = {nodes[k]["data"]: v for k, v in zip(root["data"][::2], root["data"][1::2])}
    assert keys["a"] == keys["b"]  # the same Array: one node
    assert nodes[keys["a"]] == {"type": "ffi.Array", "data": [keys["one"]] * 2}  # 1 once
    assert keys["t"] != keys["one"]  # True and 1 are different values
    back = from_json_graph_str(to_json_graph_str(packedfun.Dict({"a": inner, "b": inner})))
    assert isinstance(back, packedfun.Dict) and back["a"].same_as(back["b"])
    assert list(back["a"]) == [1, 1]


def _is_test_int_pair(value) -> bool:
    """An object of the native type testing.TestIntPair, whatever Python class is registered for
    it now (test_object.py registers its own earlier in a whole-suite run)."""
    index = getattr(type(value), "__pf_type_index__", None)
    return index is not None and type_info(index)["type_key"] == "testing.TestIntPair"


def test_objects_inline_their_pod_fields_and_round_trip():
    doc = _doc(testing.TestIntPair(3, -7), {"version": "1"})
    assert doc["metadata"] == {"version": "1"}
    assert doc["nodes"][doc["root_index"]] == {
        "type": "testing.TestIntPair",
        "data": {"a": 3, "b": -7},
    }
    back = from_json_graph_str(json.dumps(doc))
    assert _is_test_int_pair(back) and (back.a, back.b) == (3, -7)
    shape = from_json_graph_str(to_json_graph_str(packedfun.Shape((2, 3))))
    assert isinstance(shape, packedfun.Shape) and list(shape) == [2, 3]


def test_a_document_written_by_tvm_ffi_loads():
    text = (
        '{"root_index":3,"nodes":[{"type":"int","data":1},{"type":"ffi.String","data":"k"},'
        '{"type":"ffi.Array","data":[0,0]},{"type":"ffi.Map","data":[1,2]}]}'
    )
    value = from_json_graph_str(text)
    assert isinstance(value, packedfun.Map) and list(value["k"]) == [1, 1]


@pytest.mark.parametrize(
    "text, error",
    [
        ("not json", ValueError),
        ("", ValueError),
        ("[]", ValueError),
        ('{"nodes": []}', ValueError),
        ('{"root_index": 0}', ValueError),
        ('{"root_index": 1, "nodes": [{"type": "None"}]}', ValueError),
        ('{"root_index": 0, "nodes": [{"type": "ffi.Array", "data": [5]}]}', ValueError),
        ('{"root_index": 0, "nodes": [{"type": "ffi.Map", "data": [0]}]}', ValueError),
        ('{"root_index": 0, "nodes": [{"type": "Device", "data": [1]}]}', ValueError),
        ('{"root_index": 0, "nodes": [{"type": "int", "data": "x"}]}', ValueError),
        ('{"root_index": 0, "nodes": [{"type": "no.such.Type", "data": {}}]}', TypeError),
        (
            '{"root_index": 0, "nodes": [{"type": "testing.TestIntPair", "data": {"a": 1}}]}',
            TypeError,
        ),
    ],  # fmt: skip
)
def test_malformed_documents_raise(text, error):
    with pytest.raises(error):
        from_json_graph_str(text)


def test_values_without_a_json_graph_form_raise():
    lst = packedfun.List([1])
    lst.append(lst)
    with pytest.raises(ValueError, match="Cycle"):
        to_json_graph_str(lst)
    del lst[1]  # a native cycle no collector frees on the ctypes backend (docs/concepts.md)
    with pytest.raises(TypeError, match="Tensor"):
        to_json_graph_str(packedfun.from_dlpack(__import__("numpy").zeros(2)))


def test_access_steps_are_tvm_ffi_records_of_packedfuns_paths():
    path = AccessPath.root().attr("body").array_item(2).map_item_missing("k")
    assert path.to_steps() == (
        AccessStep(AccessKind.ATTR, "body"),
        AccessStep(AccessKind.ARRAY_ITEM, 2),
        AccessStep(AccessKind.MAP_ITEM_MISSING, "k"),
    )
    assert path.step.kind is AccessKind.MAP_ITEM_MISSING and path.depth == 3
    assert path.parent == AccessPath.root().attr("body").array_item(2)
    assert AccessPath.root().parent is None and AccessPath.root().step is None
    assert AccessPath.root().to_steps() == ()
    lhs, rhs = packedfun.get_first_structural_mismatch([1, 2], [1, 3])
    assert isinstance(lhs, AccessPath) and rhs.to_steps() == (AccessStep(AccessKind.ARRAY_ITEM, 1),)


def test_enum_variants_are_their_index_and_load_as_the_same_variant():
    from packedfun.dataclasses import Enum, IntEnum, StrEnum, auto, py_class

    class Status(Enum, type_key="test_json_graph.Status"):
        READY = auto()

    class Priority(IntEnum, type_key="test_json_graph.Priority"):
        LOW = -9

    class Opcode(StrEnum, type_key="test_json_graph.Opcode"):
        ADD = "+"

    @py_class("test_json_graph.Holder")
    class Holder(packedfun.Object):
        priority: Priority
        opcode: Opcode

    for variant, data in [(Status.READY, "READY"), (Priority.LOW, -9), (Opcode.ADD, "+")]:
        text = to_json_graph_str(variant)
        doc = json.loads(text)
        assert doc["nodes"][doc["root_index"]] == {"type": variant.__pf_enum_key__, "data": data}
        assert from_json_graph_str(text).same_as(variant)
    back = from_json_graph_str(to_json_graph_str(Holder(priority=Priority.LOW, opcode=Opcode.ADD)))
    assert back.priority.same_as(Priority.LOW) and back.opcode.same_as(Opcode.ADD)
    with pytest.raises(ValueError, match="no variant"):
        from_json_graph_str(
            '{"root_index":0,"nodes":[{"type":"test_json_graph.Status","data":"X"}]}'
        )
    with pytest.raises(ValueError):
        from_json_graph_str(
            '{"root_index":0,"nodes":[{"type":"test_json_graph.Priority","data":"LOW"}]}'
        )


def test_tvm_ffi_spellings_of_structural_key_and_visit_interrupt():
    key = packedfun.StructuralKey({"a": [1, 2]})
    assert key.key is key.value
    assert packedfun.structural_equal(key.key, {"a": [1, 2]})
    assert packedfun.VisitInterrupt({"found": 2}).value == {"found": 2}
    assert packedfun.VisitInterrupt().value is None
    # packedfun's own walk and mutate keep their signatures in packedfun.structural only: tvm-ffi's
    # callback forms differ, so `tvm_ffi.structural_walk` is missing rather than different.
    assert not hasattr(packedfun, "structural_walk") and not hasattr(packedfun, "structural_mutate")


_TVM_FFI_CHILD = """
import sys
import tvm_ffi, tvm_ffi.testing
from tvm_ffi.serialization import from_json_graph_str, to_json_graph_str
if sys.argv[1] == "write":
    value = tvm_ffi.convert({"a": [1, 2.5, True, None, "x"], "b": tvm_ffi.Shape((2, 3)),
                             "c": tvm_ffi.dtype("float32"), "d": tvm_ffi.Device("cuda", 1)})
    print(to_json_graph_str([value, tvm_ffi.testing.TestIntPair(3, 4)], {"v": 1}))
else:
    value, pair = from_json_graph_str(sys.stdin.read())
    print(list(value["a"]), list(value["b"]), str(value["c"]), value["d"].index, pair.a, pair.b)
"""


def test_documents_interchange_with_apache_tvm_ffi():
    import importlib.util
    import os
    import subprocess
    import sys

    if importlib.util.find_spec("tvm_ffi") is None:
        pytest.skip("apache-tvm-ffi is not installed")
    env = {k: v for k, v in os.environ.items() if k != "PACKEDFUN_AS_TVM_FFI"}  # tvm-ffi itself

    def child(mode: str, text: str = "") -> str:
        proc = subprocess.run([sys.executable, "-c", _TVM_FFI_CHILD, mode], input=text,
                              capture_output=True, text=True, timeout=120, env=env)  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-3000:]
        return proc.stdout.strip()

    value, pair = from_json_graph_str(child("write"))  # written by tvm-ffi, read here
    assert list(value["a"]) == [1, 2.5, True, None, "x"] and list(value["b"]) == [2, 3]
    assert value["c"] == packedfun.dtype("float32") and value["d"].device_id == 1
    assert _is_test_int_pair(pair) and (pair.a, pair.b) == (3, 4)
    text = to_json_graph_str([value, testing.TestIntPair(5, 6)])  # written here, read by tvm-ffi
    assert child("read", text) == "[1, 2.5, True, None, 'x'] [2, 3] float32 1 5 6"
