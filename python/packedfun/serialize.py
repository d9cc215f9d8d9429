# JSON of packedfun value graphs: to_json / from_json through reflection (no code is ever loaded).
"""JSON for graphs of containers, reflected objects and CPU tensors.

The text is ``{"packedfun_json": 1, "root": V, "nodes": [N, ...]}``. Each native container,
object or tensor is one node, written once however often it is reached (cycles included); a value
``V`` is a JSON scalar, ``{"ref": i}`` (node ``i``), ``{"bytes": base64}``, ``{"float": "nan"}``
(non-finite floats), ``{"dtype": "float32"}``, ``{"device": [type, id]}`` or
``{"function": name}`` (a registered global function). Nodes are ``{"type": "Array"|"List",
"items": [V]}``, ``{"type": "Map"|"Dict", "items": [k0, v0, ...]}``, ``{"type": "Shape", "dims":
[...]}``, ``{"type": "Tensor", ..., "data": base64}`` (CPU tensors inline) and ``{"type":
<type key>, "fields": {name: V}}`` for reflected objects.

:func:`from_json` only builds types already registered in the process, through their reflected
``__create__`` constructors, and resolves functions by registry name: it never loads a library.
The format depends only on type keys and field names, so it is stable across processes and
versions of the same ABI major.
"""

from __future__ import annotations

import base64
import json
import math

from . import _graph
from ._backend import core
from ._pickle import _check_tensor_dtype, _make_tensor, _tensor_data
from .tensor import device, dtype

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see __init__'s import cost)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["to_json", "from_json"]

_FORMAT = 1
_BUILTIN = {"A": "Array", "L": "List", "M": "Map", "D": "Dict"}
_BUILTIN_KIND = {v: k for k, v in _BUILTIN.items()}


def _encode_value(v: Any) -> Any:
    if type(v) is tuple:
        return {"ref": v[0]}
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else {"float": repr(v)}
    if isinstance(v, bytes):
        return {"bytes": base64.b64encode(v).decode("ascii")}
    if isinstance(v, dtype):
        return {"dtype": str(v)}
    if isinstance(v, device):
        return {"device": [v.device_type, v.device_id]}
    if isinstance(v, core.Function):
        name = v.registry_name or _registry_name_of(v)
        if name and core.get_global_func(name) is not None:
            return {"function": name}
        raise TypeError(f"to_json: {v!r} is not a registered global function; it has no JSON form")
    raise TypeError(f"to_json: a {type(v).__name__} value has no JSON form")


def _registry_name_of(func: Any) -> str | None:
    """The global name ``func`` is registered under (a linear search of the registry), or None."""
    for name in core.list_global_func_names():
        found = core.get_global_func(name)
        if found is not None and found.same_as(func):
            return name
    return None


def _tensor_bytes(tensor: Any, meta: tuple) -> bytes:
    _check_tensor_dtype(tensor)
    return _tensor_data(tensor, meta).view.tobytes()


def _encode_node(node: tuple) -> dict:
    kind = node[0]
    if kind in _BUILTIN:
        return {"type": _BUILTIN[kind], "items": [_encode_value(v) for v in node[1]]}
    if kind == "S":
        return {"type": "Shape", "dims": list(node[1])}
    if kind == "T":
        dt, shape, strides, offset, readonly = node[1]
        data = base64.b64encode(node[2]).decode("ascii")
        return {
            "type": "Tensor",
            "dtype": dt,
            "shape": list(shape),
            "strides": list(strides),
            "offset": offset,
            "readonly": readonly,
            "data": data,
        }
    key, values = node[1], node[2]
    _, names, _, _, _ = _graph.object_plan(core.type_key_to_index(key))
    return {"type": key, "fields": {n: _encode_value(v) for n, v in zip(names, values)}}


def to_json(value: Any, indent: int | None = None) -> str:
    """The JSON text of ``value`` (a packedfun value or anything :func:`packedfun.convert` takes).

    Parameters
    ----------
    value : object
        The root value.
    indent : int, optional
        Passed to :func:`json.dumps`.

    Returns
    -------
    str

    Raises
    ------
    TypeError
        For values with no JSON form (a non-CPU tensor, a function without a registry name, an
        object type that cannot be rebuilt from its reflected fields), naming it.
    """
    if not isinstance(value, core.Object) and isinstance(value, (list, dict, tuple)):
        value = core.convert(value)
    nodes, root = _graph.flatten(value, _tensor_bytes)
    doc = {
        "packedfun_json": _FORMAT,
        "root": _encode_value(root),
        "nodes": [_encode_node(n) for n in nodes],
    }
    return json.dumps(doc, indent=indent, allow_nan=False)


def _malformed(what: str, v: Any) -> ValueError:
    text = repr(v)
    return ValueError(f"from_json: malformed {what}: {text[:200]}")


def _payload(tag: str, payload: Any, kind: type | tuple) -> Any:
    """`payload` checked to be of `kind` (bool is no int here)."""
    if not isinstance(payload, kind) or (isinstance(payload, bool) and kind is int):
        raise _malformed(f"{tag!r} value", payload)
    return payload


def _decode_value(v: Any) -> Any:
    if not isinstance(v, dict):
        if isinstance(v, list):
            raise ValueError("from_json: a bare JSON list is not a value (arrays are nodes)")
        return v
    if len(v) != 1:
        raise ValueError(f"from_json: malformed value {v!r}")
    ((tag, payload),) = v.items()
    if tag == "ref":
        return (_payload(tag, payload, int),)
    if tag == "bytes":
        return base64.b64decode(_payload(tag, payload, str), validate=True)
    if tag == "float":
        return float(_payload(tag, payload, str))
    if tag == "dtype":
        return dtype(_payload(tag, payload, str))
    if tag == "device":
        pair = _payload(tag, payload, list)
        if len(pair) != 2 or not all(type(x) is int for x in pair):
            raise _malformed("'device' value", payload)
        return device(*pair)
    if tag == "function":
        func = core.get_global_func(_payload(tag, payload, str))
        if func is None:
            raise ValueError(f"from_json: no global function {payload!r} is registered")
        return func
    raise ValueError(f"from_json: unknown value tag {tag!r}")


def _node_field(node: dict, key: str, kind: type) -> Any:
    """`node[key]`, which must exist and be of `kind`: ValueError naming the node otherwise."""
    if key not in node:
        raise ValueError(f"from_json: a {node['type']!r} node has no {key!r}")
    value = node[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _malformed(f"{key!r} of a {node['type']!r} node", value)
    return value


def _int_list(node: dict, key: str) -> list:
    items = _node_field(node, key, list)
    if not all(type(x) is int for x in items):
        raise _malformed(f"{key!r} of a {node['type']!r} node", items)
    return items


def _decode_node(node: Any) -> tuple:
    if not isinstance(node, dict) or not isinstance(node.get("type"), str):
        raise ValueError(f"from_json: malformed node {node!r}")
    kind = node["type"]
    if kind in _BUILTIN_KIND:
        items = _node_field(node, "items", list)
        if _BUILTIN_KIND[kind] in ("M", "D") and len(items) % 2:
            raise ValueError(
                f"from_json: a {kind} node's items alternate keys and values: "
                f"{len(items)} items is an odd count"
            )
        return (_BUILTIN_KIND[kind], [_decode_value(v) for v in items])
    if kind == "Shape":
        return ("S", _int_list(node, "dims"))
    if kind == "Tensor":
        meta = (
            _node_field(node, "dtype", str),
            tuple(_int_list(node, "shape")),
            tuple(_int_list(node, "strides")),
            _node_field(node, "offset", int),
            _node_field(node, "readonly", bool),
        )
        data = base64.b64decode(_node_field(node, "data", str), validate=True)
        return ("T", meta, data)
    index = _graph._object_index(kind)
    _, names, _, _, _ = _graph.object_plan(index)
    fields = node.get("fields")
    if not isinstance(fields, dict) or set(fields) != set(names):
        raise ValueError(f"from_json: a {kind!r} node needs exactly the fields {names}")
    return ("O", kind, [_decode_value(fields[n]) for n in names])


def from_json(text: str | bytes) -> Any:
    """The value that :func:`to_json` wrote: new native containers, objects and tensors.

    Parameters
    ----------
    text : str or bytes
        JSON text produced by :func:`to_json`.

    Returns
    -------
    object

    Raises
    ------
    ValueError
        For malformed text (truncated, a node or value of the wrong shape, a tensor whose layout
        does not fit its data), an unknown format version, an unknown function name.
    TypeError
        For an object type that is not registered in this process or cannot be rebuilt.
    """
    try:
        doc = json.loads(text)
    except RecursionError:  # nesting deeper than the interpreter's recursion limit
        raise ValueError("from_json: the JSON text is nested too deeply") from None
    if not isinstance(doc, dict) or doc.get("packedfun_json") != _FORMAT:
        raise ValueError("from_json: not a packedfun JSON document of format 1")
    try:
        return _from_document(doc)
    except (OverflowError, BufferError) as exc:
        # A value out of its range (a Shape dimension, a device id, an element past uint64) or a
        # tensor dtype no buffer can hold: the document is malformed, and says so as documented.
        raise ValueError(f"from_json: {exc}") from exc


def _from_document(doc: dict) -> Any:
    nodes = doc.get("nodes", [])
    if not isinstance(nodes, list):
        raise _malformed("'nodes' (a list expected)", nodes)
    nodes = [_decode_node(n) for n in nodes]
    root = _decode_value(doc.get("root"))
    for node in nodes:
        refs = node[2] if node[0] == "O" else node[1] if node[0] in _BUILTIN else []
        for v in [root, *refs]:
            if type(v) is tuple and not 0 <= v[0] < len(nodes):
                raise ValueError(f"from_json: reference {v[0]} outside the {len(nodes)} nodes")
    if type(root) is tuple and not 0 <= root[0] < len(nodes):
        raise ValueError("from_json: the root refers to a missing node")
    return _graph.rebuild(nodes, root, _make_tensor)
