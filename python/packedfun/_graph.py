# Value graphs: packedfun values flattened to a node table (shared nodes once, cycles) and rebuilt.
"""The one walk behind pickling, copying and JSON of packedfun values.

:func:`flatten` turns a value into ``(nodes, root)``: every native container, reflected object and
tensor reachable from the value becomes one node of ``nodes`` (the same native object, reached
twice, is one node), and a reference to node ``i`` is the 1-tuple ``(i,)`` (native values never
arrive in Python as tuples, so the form is unambiguous). Leaves (None, bool, int, float, str,
bytes, dtype, device, Function) stay as they are. :func:`rebuild` makes new native values from a
table. Both walks use explicit stacks: nesting depth is limited by memory, not by the C stack.

Node forms: ``("A"|"L", [items])``, ``("M"|"D", [k0, v0, k1, v1, ...])``, ``("S", [ints])``,
``("O", type_key, [field values, all ancestors' fields, root first])``, ``("T", meta, data)``,
and ``("K", object)``: an object the caller of :func:`flatten` chose to keep as itself (``kept``),
which the table carries as a Python object (a deep copy copies it on its own terms).
Objects are rebuilt through reflection: the type's own ``__create__`` constructor, called with
the fields its docstring names (``"Point(x, y)"``; all fields in order when it names none), then
the remaining read-write fields are set.
"""

from __future__ import annotations

from ._backend import core
from .container import Array, Dict, List, Map, Shape
from .object import type_info

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see __init__'s import cost)
if TYPE_CHECKING:
    from typing import Any, Callable

__all__ = ["flatten", "rebuild", "object_plan", "tensor_meta"]

_KINDS = {72: "A", 74: "L", 73: "M", 75: "D", 70: "S"}  # kPFType* of the containers
_SIG_PATTERN = r"^\s*[\w.]*\(([\w\s,]*)\)"  # compiled on first use (import cost)
_plans: dict[int, tuple] = {}
# Type key -> a function from a rebuilt object to the object to use instead: the variants of a
# Python-defined enum are singletons, and a rebuilt variant is replaced by the class's own.
canonical: dict[str, Callable[[Any], Any]] = {}


def _info(type_index: int) -> dict:
    return type_info(type_index)


def object_plan(type_index: int) -> tuple:
    """How to rebuild objects of ``type_index``: ``(type_key, fields, ctor, ctor_fields, setters)``.

    Raises
    ------
    TypeError
        When the type cannot be rebuilt from its reflected state (the message says why).
    """
    plan = _plans.get(type_index)
    if plan is not None:
        return plan
    info = _info(type_index)
    key = info["type_key"]
    fields = [f for i in info["ancestors"] for f in _info(i)["fields"]]
    names = [f["name"] for f in fields]
    ctor = next((m for m in info["methods"] if m["name"] == "__create__"), None)
    if ctor is None:
        raise TypeError(
            f"cannot serialize a {key!r} object: the type has no __create__ constructor of its "
            "own, so it cannot be rebuilt from its reflected fields"
        )
    import re

    match = re.match(_SIG_PATTERN, ctor["doc"] or "")
    params = [p.strip() for p in match.group(1).split(",") if p.strip()] if match else names
    unknown = [p for p in params if p not in names]
    if unknown:
        raise TypeError(
            f"cannot serialize a {key!r} object: its constructor takes {unknown} which are not "
            "reflected fields"
        )
    rest = [f for f in fields if f["name"] not in params]
    readonly = [f["name"] for f in rest if f["readonly"]]
    if readonly:
        raise TypeError(
            f"cannot serialize a {key!r} object: read-only field(s) {readonly} are not "
            "arguments of its constructor"
        )
    plan = (key, names, ctor["func"], [names.index(p) for p in params], [f["name"] for f in rest])
    _plans[type_index] = plan
    return plan


def tensor_meta(tensor: Any) -> tuple:
    """``(dtype, shape, strides, offset, readonly, span_start, span_bytes)`` of a CPU tensor.

    The span is the smallest byte range that holds every element (strided views keep strides).

    Raises
    ------
    TypeError
        When the tensor is not on the CPU.
    """
    dev = tensor.device
    if dev.device_type != 1:
        raise TypeError(
            f"cannot serialize a Tensor on device {dev}: only CPU tensors travel by value"
        )
    shape, strides = tuple(tensor.shape), tuple(tensor.strides)
    item = tensor.dtype.itemsize
    lo = hi = 0
    if 0 not in shape:
        for n, s in zip(shape, strides):
            (lo, hi) = (lo + (n - 1) * s, hi) if s < 0 else (lo, hi + (n - 1) * s)
        span = (hi - lo) * item + item
    else:
        span = 0
    meta = (str(tensor.dtype), shape, strides, -lo * item, bool(tensor.readonly))
    return meta + (tensor.byte_offset + lo * item, span)


def flatten(
    root: Any, tensor_data: Callable[[Any, tuple], Any], kept: Callable[[Any], bool] | None = None
) -> tuple:
    """``(nodes, root_value)`` of ``root``; ``tensor_data(tensor, meta)`` gives a tensor's data; an
    object for which ``kept(obj)`` is true becomes a ``("K", obj)`` node, its fields not walked."""
    nodes: list = []
    seen: dict[int, tuple] = {}
    todo: list = []

    def enc(value: Any) -> Any:
        if not isinstance(value, core.Object) or isinstance(value, core.Function):
            return value
        ref = seen.get(value.handle)
        if ref is None:
            ref = seen[value.handle] = (len(nodes),)
            nodes.append(None)
            todo.append((ref[0], value))
        return ref

    top = enc(root)
    while todo:
        i, obj = todo.pop()
        nodes[i] = ("K", obj) if kept is not None and kept(obj) else _node(obj, enc, tensor_data)
    return nodes, top


def _node(obj: Any, enc: Callable, tensor_data: Callable) -> tuple:
    kind = _KINDS.get(obj.type_index)
    if kind == "S":
        return ("S", list(obj))
    if kind in ("A", "L"):
        return (kind, [enc(v) for v in obj])
    if kind in ("M", "D"):
        flat: list = []
        for k, v in obj.items():
            flat.append(enc(k))
            flat.append(enc(v))
        return (kind, flat)
    if isinstance(obj, core.Tensor):
        meta = tensor_meta(obj)
        return ("T", meta[:5], tensor_data(obj, meta))
    key, names, _, _, _ = object_plan(obj.type_index)
    return ("O", key, [enc(getattr(obj, name)) for name in names])


def _object_index(key: str) -> int:
    try:
        return core.type_key_to_index(key)
    except KeyError:
        raise TypeError(
            f"cannot rebuild a {key!r} object: no such type is registered in this process "
            "(load the library that defines it first)"
        ) from None


def _children(node: tuple) -> list:
    """Nodes that must exist before ``node`` is made (lists and dicts are made empty first)."""
    kind = node[0]
    if kind == "O":
        _, names, _, ctor_fields, _ = object_plan(_object_index(node[1]))
        if len(node[2]) != len(names):
            raise ValueError(
                f"cannot rebuild a {node[1]!r} object: {len(node[2])} field values for "
                f"{len(names)} fields"
            )
        data = [node[2][j] for j in ctor_fields]
    else:
        data = node[1] if kind in ("A", "M") else []
    return list(dict.fromkeys(v[0] for v in data if type(v) is tuple))


_ARITY = {"A": 2, "L": 2, "M": 2, "D": 2, "S": 2, "T": 3, "O": 3, "K": 2}


def _malformed(where: str, what: str) -> ValueError:
    return ValueError(f"malformed packedfun value graph: {where} {what}")


def check_table(nodes: Any, root: Any) -> None:
    """Raises ValueError naming the node when the table cannot be what :func:`flatten` made: a node
    that is not a non-empty list or tuple of a known kind and size, a reference that is not one
    index into the table (a negative one silently picked another node), a map with an odd number
    of items. Run before anything is built, by pickle and JSON alike."""
    if not isinstance(nodes, list):
        raise _malformed("the node table", f"is a {type(nodes).__name__}, not a list")
    count = len(nodes)

    def check_ref(value: Any, where: str) -> None:
        if type(value) is tuple and (
            len(value) != 1 or type(value[0]) is not int or not 0 <= value[0] < count
        ):
            raise _malformed(where, f"refers to {value!r}: not one of the {count} nodes")

    check_ref(root, "the root")
    for i, node in enumerate(nodes):
        where = f"node {i}"
        if not isinstance(node, (tuple, list)) or not node:
            raise _malformed(where, "is empty or not a node")
        kind = node[0]
        if type(kind) is not str or kind not in _ARITY:
            raise _malformed(where, f"has an unknown kind {kind!r}")
        if len(node) != _ARITY[kind]:
            raise _malformed(where, f"({kind}) has {len(node)} parts, not {_ARITY[kind]}")
        if kind == "T":
            continue
        if kind == "K":
            if not isinstance(node[1], core.Object) or isinstance(node[1], core.Function):
                raise _malformed(where, f"(K) holds a {type(node[1]).__name__}, not an object")
            continue
        items = node[2] if kind == "O" else node[1]
        if not isinstance(items, list):
            raise _malformed(where, f"({kind}) holds a {type(items).__name__}, not a list")
        if kind in ("M", "D") and len(items) % 2:
            raise _malformed(where, f"({kind}) has an odd number of items ({len(items)})")
        for value in items:
            check_ref(value, where)


def rebuild(nodes: list, root: Any, make_tensor: Callable[[tuple, Any], Any]) -> Any:
    """New native values for a node table made by :func:`flatten`; returns the root."""
    check_table(nodes, root)
    if type(root) is not tuple:
        return root
    built: list = [None] * len(nodes)
    for i, node in enumerate(nodes):
        if node[0] == "L":
            built[i] = List()
        elif node[0] == "D":
            built[i] = Dict()

    def dec(v: Any) -> Any:
        return built[v[0]] if type(v) is tuple else v

    for start in range(len(nodes)):
        if built[start] is None:
            _build_from(start, nodes, built, dec, make_tensor)
    for i, node in enumerate(nodes):
        kind = node[0]
        if kind == "L":
            built[i].extend([dec(v) for v in node[1]])
        elif kind == "D":
            data, target = node[1], built[i]
            for j in range(0, len(data), 2):
                target[dec(data[j])] = dec(data[j + 1])
        elif kind == "O":
            _, names, _, _, setters = object_plan(_object_index(node[1]))
            for name in setters:
                setattr(built[i], name, dec(node[2][names.index(name)]))
    return built[root[0]]


def _build_from(start: int, nodes: list, built: list, dec: Callable, make_tensor: Callable) -> None:
    """Makes node ``start`` and, first, every node it needs (depth first, one child at a time)."""
    stack, active = [(start, _children(nodes[start]), [0])], {start}
    while stack:
        i, kids, pos = stack[-1]
        while pos[0] < len(kids) and built[kids[pos[0]]] is not None:
            pos[0] += 1
        if pos[0] < len(kids):
            c = kids[pos[0]]
            if c in active:
                raise ValueError(
                    "cannot rebuild a cycle that passes only through immutable values "
                    "(Array, Map, or object fields set by the constructor)"
                )
            active.add(c)
            stack.append((c, _children(nodes[c]), [0]))
            continue
        stack.pop()
        active.discard(i)
        built[i] = _make(nodes[i], dec, make_tensor)


def _make(node: tuple, dec: Callable, make_tensor: Callable) -> Any:
    kind = node[0]
    if kind == "A":
        return Array([dec(v) for v in node[1]])
    if kind == "M":
        data = node[1]
        return Map({dec(data[j]): dec(data[j + 1]) for j in range(0, len(data), 2)})
    if kind == "S":
        return Shape(node[1])
    if kind == "T":
        return make_tensor(node[1], node[2])
    if kind == "K":
        return node[1]
    if kind == "O":
        _, names, ctor, ctor_fields, _ = object_plan(_object_index(node[1]))
        obj = ctor(*[dec(node[2][j]) for j in ctor_fields])
        to_canonical = canonical.get(node[1])
        return obj if to_canonical is None else to_canonical(obj)
    raise ValueError(f"unknown node kind {kind!r} in a packedfun value graph")
