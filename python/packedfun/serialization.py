# apache-tvm-ffi's JSON graph format for packedfun values: the switch's `tvm_ffi.serialization`.
"""apache-tvm-ffi's JSON graph text (``tvm_ffi.serialization`` under the switch).

packedfun's own JSON is :mod:`packedfun.serialize`; this module reads and writes tvm-ffi's format
instead, so documents written by tvm-ffi load here and the other way round:
``{"root_index": i, "nodes": [{"type": T, "data": D}, ...], "metadata": {...}}``. Every value is a
node, written once (equal values and the same object share one node); ``T`` is ``"None"``,
``"bool"``, ``"int"``, ``"float"``, ``"DataType"``, ``"Device"``, ``"ffi.String"``,
``"ffi.Bytes"`` (base64), ``"ffi.Array"``/``"ffi.List"`` (node indices),
``"ffi.Map"``/``"ffi.Dict"`` (key and value indices alternating), ``"ffi.Shape"`` or an object's
type key, whose ``D`` maps field names to values: fields declared ``None``, ``bool``, ``int``,
``float`` or dtype hold the value itself, other fields a node index. A variant of an enum
(:class:`packedfun.dataclasses.Enum`) is its index: the integer of an ``IntEnum``, the string
index of any other, and it loads as the class's own variant.

The walk and the rebuild are packedfun's (:mod:`packedfun._graph`): objects are rebuilt through
their reflected constructors, as :func:`packedfun.serialize.from_json` does.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any

from . import _graph
from ._backend import core
from ._py_enum import Enum, IntEnum
from .object import _class_for, type_info
from .tensor import device, dtype

__all__ = ["from_json_graph_str", "to_json_graph_str"]

_CONTAINER_KEYS = {
    "A": "ffi.Array",
    "L": "ffi.List",
    "M": "ffi.Map",
    "D": "ffi.Dict",
    "S": "ffi.Shape",
}
_CONTAINER_KINDS = {v: k for k, v in _CONTAINER_KEYS.items()}
# Field static types whose values a node holds inline (kPFTypeNone, Int, Bool, Float, DataType).
_INLINE_TYPES = {0: "None", 1: "int", 2: "bool", 3: "float", 5: "DataType"}


def _no_tensor(tensor: Any, meta: tuple) -> Any:
    raise TypeError("to_json_graph_str: cannot serialize type `ffi.Tensor` (a tensor)")


def _field_types(type_key: str) -> list[int]:
    """The declared (static) type index of each field of ``type_key``, ancestors' first."""
    info = type_info(core.type_key_to_index(type_key))
    return [f["static_type_index"] for i in info["ancestors"] for f in type_info(i)["fields"]]


def _enum_class(type_key: str) -> type | None:
    """The Python enum class (:class:`packedfun.dataclasses.Enum`) of ``type_key``, or None."""
    try:
        cls = _class_for(core.type_key_to_index(type_key))
    except Exception:  # an unknown type key: no enum (the caller says what is wrong)
        return None
    return cls if isinstance(cls, type) and issubclass(cls, Enum) else None


def _enum_index_field(cls: type) -> str:
    """tvm-ffi writes an IntEnum variant as its integer index, any other variant as its string."""
    return "_int_index" if issubclass(cls, IntEnum) else "_str_index"


def _leaf_node(v: Any) -> dict:
    if v is None:
        return {"type": "None"}
    if isinstance(v, dtype):  # before str: packedfun's dtype is a str
        return {"type": "DataType", "data": str(v)}
    if isinstance(v, device):
        return {"type": "Device", "data": [v.device_type, v.device_id]}
    if isinstance(v, bool):
        return {"type": "bool", "data": v}
    if isinstance(v, int):
        return {"type": "int", "data": v}
    if isinstance(v, float):
        return {"type": "float", "data": v}
    if isinstance(v, str):
        return {"type": "ffi.String", "data": v}
    if isinstance(v, bytes):
        return {"type": "ffi.Bytes", "data": base64.b64encode(v).decode("ascii")}
    raise TypeError(f"to_json_graph_str: cannot serialize a {type(v).__name__} value")


def _leaf_key(v: Any) -> tuple:
    """Equal leaves share one node; True, 1 and 1.0 (and 0.0 and -0.0) do not."""
    return (type(v).__name__, repr(v))


class _Writer:
    def __init__(self, table: list) -> None:
        self.table = table
        self.nodes: list = []
        self.leaves: dict = {}
        self.done: dict[int, int] = {}  # table index -> node index

    def value(self, v: Any) -> int:
        """The node index of a leaf value or of a table reference that is done already."""
        if type(v) is tuple:
            return self.done[v[0]]
        key = _leaf_key(v)
        index = self.leaves.get(key)
        if index is None:
            index = self.leaves[key] = len(self.nodes)
            self.nodes.append(_leaf_node(v))
        return index

    def emit(self, start: int) -> int:
        """Writes table node ``start`` after every node it refers to (no recursion)."""
        active = {start}
        stack = [(start, iter(self._refs(start)))]
        while stack:
            i, refs = stack[-1]
            ref = next(refs, None)
            if ref is None:
                stack.pop()
                active.discard(i)
                node = self._node(self.table[i])  # its leaves first
                self.done[i] = len(self.nodes)
                self.nodes.append(node)
            elif ref not in self.done:
                if ref in active:
                    raise ValueError(
                        "Cycle detected during serialization: a container or object contains itself"
                    )
                active.add(ref)
                stack.append((ref, iter(self._refs(ref))))
        return self.done[start]

    def _refs(self, i: int) -> list[int]:
        node = self.table[i]
        items = node[2] if node[0] == "O" else node[1] if node[0] != "S" else []
        return [v[0] for v in items if type(v) is tuple]

    def _node(self, node: tuple) -> dict:
        kind = node[0]
        if kind == "S":
            return {"type": "ffi.Shape", "data": list(node[1])}
        if kind in _CONTAINER_KEYS:
            return {"type": _CONTAINER_KEYS[kind], "data": [self.value(v) for v in node[1]]}
        key, values = node[1], node[2]
        _, names, _, _, _ = _graph.object_plan(core.type_key_to_index(key))
        enum = _enum_class(key)
        if enum is not None:  # a variant is its index: the integer one of an IntEnum
            return {"type": key, "data": values[names.index(_enum_index_field(enum))]}
        data: dict[str, Any] = {}
        for name, static, v in zip(names, _field_types(key), values):
            if static in _INLINE_TYPES and type(v) is not tuple:
                data[name] = str(v) if isinstance(v, dtype) else v
            else:
                data[name] = self.value(v)
        return {"type": key, "data": data}


def to_json_graph_str(obj: Any, metadata: dict[str, Any] | None = None) -> str:
    """The JSON graph text of ``obj`` (tvm-ffi's format).

    Parameters
    ----------
    obj : object
        The root value: a packedfun value or anything :func:`packedfun.convert` takes.
    metadata : dict, optional
        Written as the document's ``"metadata"`` (JSON values only).

    Returns
    -------
    str

    Raises
    ------
    TypeError
        For a value with no JSON form (a tensor, a function, an object type that cannot be rebuilt
        from its reflected fields), naming it.
    ValueError
        For a container that contains itself.
    """
    if not isinstance(obj, core.Object) and isinstance(obj, (list, dict, tuple)):
        obj = core.convert(obj)
    if isinstance(obj, float) and not math.isfinite(obj):
        raise ValueError(f"to_json_graph_str: {obj!r} has no JSON form")
    table, root = _graph.flatten(obj, _no_tensor)
    writer = _Writer(table)
    index = writer.emit(root[0]) if type(root) is tuple else writer.value(root)
    doc: dict[str, Any] = {"root_index": index, "nodes": writer.nodes}
    if metadata is not None:
        doc["metadata"] = metadata
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


def _malformed(what: str) -> ValueError:
    return ValueError(f"Invalid JSON Object Graph: {what}")


class _Reader:
    """tvm-ffi's nodes as a packedfun value table (:func:`packedfun._graph.rebuild`)."""

    def __init__(self, nodes: list) -> None:
        self.nodes = nodes
        self.table: list = []
        self.slot: dict[int, int] = {}  # node index -> table index (containers and objects)
        for i, node in enumerate(nodes):
            if not isinstance(node, dict) or not isinstance(node.get("type"), str):
                raise _malformed(f"node {i} is not an object with a string `type`")
            if node["type"] in _CONTAINER_KINDS or not (
                _is_leaf_type(node["type"]) or _enum_class(node["type"]) is not None
            ):
                self.slot[i] = len(self.table)
                self.table.append(None)
        for i, t in self.slot.items():
            self.table[t] = self._entry(nodes[i])

    def ref(self, index: Any) -> Any:
        """The table value of node ``index``: a leaf's value or a reference ``(t,)``."""
        if type(index) is not int or not 0 <= index < len(self.nodes):
            raise _malformed(f"invalid node index {index!r}")
        if index in self.slot:
            return (self.slot[index],)
        return _leaf_value(self.nodes[index])

    def _entry(self, node: dict) -> tuple:
        key, data = node["type"], node.get("data")
        kind = _CONTAINER_KINDS.get(key)
        if kind == "S":
            if not isinstance(data, list) or not all(type(d) is int for d in data):
                raise _malformed("a Shape's data must be a list of integers")
            return ("S", data)
        if kind is not None:
            if not isinstance(data, list):
                raise _malformed(f"the data of a {key} must be a list of node indices")
            if kind in ("M", "D") and len(data) % 2:
                raise _malformed(
                    "Map/Dict data must contain an even number of [key, value] entries, got "
                    f"{len(data)}"
                )
            return (kind, [self.ref(i) for i in data])
        return ("O", key, self._fields(key, data))

    def _fields(self, key: str, data: Any) -> list:
        try:
            index = core.type_key_to_index(key)
        except Exception:
            raise TypeError(f"from_json_graph_str: unknown type key `{key}`") from None
        _, names, _, _, _ = _graph.object_plan(index)
        if not isinstance(data, dict):
            raise _malformed(f"the data of a `{key}` node must be an object of fields")
        values = []
        for name, static in zip(names, _field_types(key)):
            if name not in data:
                raise TypeError(f"Required field `{name}` not set in type `{key}`")
            v = data[name]
            if static in _INLINE_TYPES:
                values.append(dtype(v) if static == 5 else v)
            else:
                values.append(self.ref(v))
        return values


def _is_leaf_type(key: str) -> bool:
    return key in ("None", "bool", "int", "float", "DataType", "Device", "ffi.String", "ffi.Bytes")


def _leaf_value(node: dict) -> Any:
    key, data = node["type"], node.get("data")
    enum: Any = _enum_class(key) if not _is_leaf_type(key) else None
    if enum is not None:
        want_type = int if _enum_index_field(enum) == "_int_index" else str
        if type(data) is not want_type:
            raise _malformed(f"the data of a `{key}` variant is {data!r}")
        try:
            return enum.get(data)
        except KeyError:
            raise ValueError(f"from_json_graph_str: enum `{key}` has no variant {data!r}") from None
    data_any: Any = data
    want: dict[str, type | tuple[type, ...]] = {
        "bool": bool,
        "int": int,
        "float": (int, float),
        "DataType": str,
        "ffi.String": str,
    }
    if key == "None":
        return None
    if key in want:
        if not isinstance(data, want[key]) or (key == "int" and isinstance(data, bool)):
            raise _malformed(f"the data of a {key} node is {data!r}")
        if key == "DataType":
            return dtype(data)
        return float(data_any) if key == "float" else data
    if key == "ffi.Bytes":
        if not isinstance(data, str):
            raise _malformed("the data of an ffi.Bytes node must be base64 text")
        return base64.b64decode(data, validate=True)
    if not isinstance(data, list) or len(data) != 2 or not all(type(x) is int for x in data):
        raise _malformed(
            "Device data must be an array of [device_type, device_id], got " + repr(data)
        )
    return device(*data)


def from_json_graph_str(json_str: str) -> Any:
    """The value that :func:`to_json_graph_str` (or apache-tvm-ffi) wrote.

    Parameters
    ----------
    json_str : str
        JSON graph text.

    Returns
    -------
    object
        New native containers and objects; leaves as Python values.

    Raises
    ------
    ValueError
        For text that is not JSON or not a JSON graph (no integer ``root_index``, no ``nodes``
        list, a node index out of range, a node of the wrong shape).
    TypeError
        For an object type that is not registered in this process or cannot be rebuilt, or that
        lacks a required field.
    """
    try:
        doc = json.loads(json_str)
    except RecursionError:
        raise ValueError("from_json_graph_str: the JSON text is nested too deeply") from None
    if not isinstance(doc, dict):
        raise _malformed("expected an object")
    root = doc.get("root_index")
    if type(root) is not int:
        raise _malformed("expected `root_index` integer field")
    if not isinstance(doc.get("nodes"), list):
        raise _malformed("expected `nodes` array field")
    reader = _Reader(doc["nodes"])
    top = reader.ref(root)
    if type(top) is not tuple:
        return top
    _graph.check_table(reader.table, top)
    try:
        return _graph.rebuild(reader.table, top, _no_tensor)
    except OverflowError as exc:
        raise ValueError(f"from_json_graph_str: {exc}") from exc
