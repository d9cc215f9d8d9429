# Structural equality, hashing and first difference of packedfun values (computed in the runtime).
"""Compare values by content instead of identity.

>>> import packedfun
>>> a, b = packedfun.convert([1, {"k": "v"}]), packedfun.convert([1, {"k": "v"}])
>>> packedfun.structural_equal(a, b), packedfun.structural_hash(a) == packedfun.structural_hash(b)
(True, True)
>>> packedfun.structural_first_difference(a, packedfun.convert([1, {"k": "w"}]))
'root[1]["k"]'

The walk runs in the runtime (``PFStructuralEqual``/``PFStructuralHash`` in ``c_api.h``), without
recursion, so any nesting depth works and cycles terminate. Containers compare by content (their
type must match), reflected objects field by field (fields registered with
``PACKEDFUN_FIELD_NO_COMPARE`` are skipped), Functions, Tensors and Modules by identity.
"""

from __future__ import annotations

from ._backend import core
from ._graph import object_plan
from .container import Array, Dict, List, Map
from .object import type_info

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see __init__'s import cost)
if TYPE_CHECKING:
    from typing import Any, Callable

__all__ = [
    "AccessPath",
    "StructuralKey",
    "VisitInterrupt",
    "get_first_structural_mismatch",
    "structural_equal",
    "structural_first_difference",
    "structural_hash",
    "structural_mutate",
    "structural_walk",
]

_funcs: dict[str, Any] = {}


def _func(name: str) -> Any:
    func = _funcs.get(name)
    if func is None:
        func = core.get_global_func("packedfun." + name)
        if func is None:
            raise RuntimeError(
                f"the loaded packedfun runtime has no 'packedfun.{name}' (it predates ABI 1.3)"
            )
        _funcs[name] = func
    return func


#: Option bit of the runtime's structural walks (PACKEDFUN_STRUCTURAL_MAP_FREE_VARS).
_MAP_FREE_VARS = 1


def structural_equal(a: Any, b: Any, map_free_vars: bool = False) -> bool:
    """Whether ``a`` and ``b`` are equal by content.

    Variables (objects of a ``py_class(structural_eq="var")`` type) pair one to one: a pair met
    below a definition field (``field(structural_eq="def")``) is bound, and bound variables must
    then meet only each other, so ``fn(x){x}`` equals ``fn(y){y}``. An unbound variable equals
    only itself, unless ``map_free_vars``.

    Parameters
    ----------
    a, b : object
        packedfun values or anything :func:`packedfun.convert` accepts.
    map_free_vars : bool
        Bind variables on first meeting wherever they are met, so two terms equal up to a
        renaming of their free variables are equal too.

    Returns
    -------
    bool

    Raises
    ------
    TypeError
        For an object of a type declared not comparable (``py_class(structural_eq=None)``).
    """
    if map_free_vars:
        return bool(_func("structural_equal")(a, b, _MAP_FREE_VARS))
    return bool(_func("structural_equal")(a, b))


def structural_hash(value: Any, map_free_vars: bool = False) -> int:
    """A hash of ``value``'s content, equal for structurally equal values (non-negative int).

    A bound variable hashes by the order of its binding, an unbound one by its identity (with
    ``map_free_vars``, every variable is bound on first meeting), so values equal under the same
    ``map_free_vars`` hash alike.

    Parameters
    ----------
    value : object
        A packedfun value or anything :func:`packedfun.convert` accepts.
    map_free_vars : bool
        As :func:`structural_equal`'s.

    Returns
    -------
    int
    """
    if map_free_vars:
        return int(_func("structural_hash")(value, _MAP_FREE_VARS))
    return int(_func("structural_hash")(value))


def structural_first_difference(a: Any, b: Any) -> str | None:
    """The path of the first difference between ``a`` and ``b`` (depth first), or None if equal.

    Paths start at ``root`` and use ``[i]`` for sequence items, ``["key"]`` for map entries and
    ``.name`` for object fields, e.g. ``root.body[3].name``.

    Parameters
    ----------
    a, b : object
        packedfun values or anything :func:`packedfun.convert` accepts.

    Returns
    -------
    str or None
    """
    return _func("structural_first_difference")(a, b)


# ---- the structural toolkit: access paths, keys, walks and rebuilds ------------------------------


class AccessPath:
    """Where a value sits below a root: ``root.body[3].value``, ``root["key"]``.

    Immutable, printable (``str``), comparable and hashable by its steps; each step is
    ``("attr", name)``, ``("index", i)`` or ``("key", k)``, or, as the last step of one side of
    :func:`get_first_structural_mismatch`, the same item missing on that side:
    ``("attr_missing", name)``, ``("index_missing", i)``, ``("key_missing", k)``, printed as
    ``root[<missing:3>]``. C++ code gets the same paths from ``StructuralFirstMismatch``
    (``<packedfun/structural.h>``).
    """

    __slots__ = ("_parent", "_step", "_len", "_steps")

    def __init__(self, steps: tuple = ()) -> None:
        self._parent: AccessPath | None = None
        self._step: tuple | None = None
        self._len = 0
        self._steps: tuple | None = None
        for step in steps:  # a chain of one node per step, shared with the paths it extends
            self._parent, self._step, self._len = self._copy(), tuple(step), self._len + 1

    def _copy(self) -> AccessPath:
        c = AccessPath.__new__(AccessPath)
        c._parent, c._step, c._len, c._steps = self._parent, self._step, self._len, None
        return c

    def _extend(self, step: tuple) -> AccessPath:
        c = AccessPath.__new__(AccessPath)
        c._parent, c._step, c._len, c._steps = self, step, self._len + 1, None
        return c

    @property
    def steps(self) -> tuple:
        """The steps from the root, as a tuple (built on first use)."""
        if self._steps is None:
            out = []
            node: AccessPath | None = self
            while node is not None and node._step is not None:
                out.append(node._step)
                node = node._parent
            self._steps = tuple(reversed(out))
        return self._steps

    @classmethod
    def root(cls) -> AccessPath:
        """The empty path (the root itself)."""
        return cls()

    def attr(self, name: str) -> AccessPath:
        """This path followed by field ``name``."""
        return self._extend(("attr", name))

    def array_item(self, index: int) -> AccessPath:
        """This path followed by item ``index`` of a sequence."""
        return self._extend(("index", index))

    def map_item(self, key: Any) -> AccessPath:
        """This path followed by the entry ``key`` of a map."""
        return self._extend(("key", key))

    def attr_missing(self, name: str) -> AccessPath:
        """This path followed by field ``name``, which this side lacks."""
        return self._extend(("attr_missing", name))

    def array_item_missing(self, index: int) -> AccessPath:
        """This path followed by item ``index``, which this side's sequence lacks."""
        return self._extend(("index_missing", index))

    def map_item_missing(self, key: Any) -> AccessPath:
        """This path followed by the entry ``key``, which this side's map lacks."""
        return self._extend(("key_missing", key))

    @property
    def parent(self) -> AccessPath | None:
        """This path without its last step; None for the root."""
        return self._parent if self._step is not None else None

    @property
    def depth(self) -> int:
        """The number of steps (``len(path)``)."""
        return self._len

    @property
    def step(self) -> Any:
        """The last step as an :class:`~packedfun.access_path.AccessStep`; None for the root."""
        return self.to_steps()[-1] if self._step is not None else None

    def to_steps(self) -> tuple:
        """The steps from the root as :class:`AccessStep` records (a ``kind`` from
        :class:`AccessKind` and a ``key``): tvm-ffi's form of :attr:`steps`."""
        kind, step = _step_types()
        return tuple(step(kind(_KIND_CODES[k]), v) for k, v in self.steps)

    def is_prefix_of(self, other: AccessPath) -> bool:
        """Whether ``other`` starts with every step of this path."""
        return self.steps == other.steps[: len(self)]

    @classmethod
    def parse(cls, text: str) -> AccessPath:
        """The path written as :func:`structural_first_difference` writes it."""
        import json
        import re

        if not text.startswith("root"):
            raise ValueError(f"an access path starts with 'root': {text!r}")
        steps: list = []
        pattern = re.compile(
            r"\.(?:<missing:)?(\w+)>?|\[(?:<missing:)?(-?\d+)>?\]"
            r'|\[(?:<missing:)?("(?:[^"\\]|\\.)*")>?\]|\[([^\]]*)\]'
        )
        pos = 4
        while pos < len(text):
            m = pattern.match(text, pos)
            if m is None:
                raise ValueError(f"cannot read the access path {text!r} at offset {pos}")
            missing = "_missing" if "<missing:" in m.group(0) else ""
            if m.group(1) is not None:
                steps.append(("attr" + missing, m.group(1)))
            elif m.group(2) is not None:
                steps.append(("index" + missing, int(m.group(2))))
            elif m.group(3) is not None:
                steps.append(("key" + missing, json.loads(m.group(3))))
            else:
                steps.append(("key", m.group(4)))
            pos = m.end()
        return cls(tuple(steps))

    def __str__(self) -> str:
        # Written by the runtime, which writes C++'s AccessPath::ToString the same way.
        return _func("access_path_str")([[_KIND_CODES[k], v] for k, v in self.steps])

    def __repr__(self) -> str:
        return f"AccessPath({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AccessPath) and self.steps == other.steps

    def __hash__(self) -> int:
        return hash(self.steps)

    def __len__(self) -> int:
        return self._len


def get_first_structural_mismatch(
    a: Any, b: Any, map_free_vars: bool = False
) -> tuple[AccessPath, AccessPath] | None:
    """The access paths of the first difference between ``a`` and ``b`` (depth first), one per
    side, or None when they are structurally equal. Both sides name the same position; when one
    side lacks the item there (a shorter sequence, a map without the key), that side's last step
    is a missing one: ``get_first_structural_mismatch([1, 2], [1, 2, 3])`` is
    ``(AccessPath('root[<missing:2>]'), AccessPath('root[2]'))``.

    Returns
    -------
    tuple of AccessPath, or None
    """
    flags = (_MAP_FREE_VARS,) if map_free_vars else ()
    sides = _func("structural_first_mismatch")(a, b, *flags)
    if sides is None:
        return None
    lhs, rhs = (
        AccessPath(tuple((_KIND_NAMES[int(kind)], value) for kind, value in side)) for side in sides
    )
    return lhs, rhs


#: Step kinds by name and by the runtime's number (PFStructuralFirstMismatch).
_KIND_CODES = {
    "attr": 0,
    "index": 1,
    "key": 2,
    "attr_missing": 3,
    "index_missing": 4,
    "key_missing": 5,
}
_KIND_NAMES = {code: name for name, code in _KIND_CODES.items()}
_STEP_TYPES: tuple = ()


def _step_types() -> tuple:
    """``(AccessKind, AccessStep)``, tvm-ffi's step records, made on first use (``enum`` is not
    imported by ``import packedfun``)."""
    global _STEP_TYPES
    if not _STEP_TYPES:
        import collections
        import enum

        AccessKind = enum.IntEnum(  # noqa: N806 - the class's own name
            "AccessKind",
            [
                ("ATTR", 0),
                ("ARRAY_ITEM", 1),
                ("MAP_ITEM", 2),
                ("ATTR_MISSING", 3),
                ("ARRAY_ITEM_MISSING", 4),
                ("MAP_ITEM_MISSING", 5),
            ],
            module=__name__,
        )  # the numbers are _KIND_CODES', tvm-ffi's and the runtime's
        AccessKind.__doc__ = "The kind of one access step."
        AccessStep = collections.namedtuple("AccessStep", ["kind", "key"], module=__name__)  # noqa: N806
        AccessStep.__doc__ = "One step of an AccessPath: its ``kind`` (AccessKind) and its ``key``."
        _STEP_TYPES = (AccessKind, AccessStep)
    return _STEP_TYPES


def __getattr__(name: str) -> Any:
    if name in ("AccessKind", "AccessStep"):
        return _step_types()[name == "AccessStep"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class StructuralKey:
    """A dict/set key that compares by structure: ``StructuralKey(a) == StructuralKey(b)`` when
    ``structural_equal(a, b)``; hashes by :func:`structural_hash` (computed once)."""

    __slots__ = ("value", "_hash")

    def __init__(self, value: Any) -> None:
        self.value = value
        self._hash = structural_hash(value)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StructuralKey):
            return NotImplemented
        return self._hash == other._hash and structural_equal(self.value, other.value)

    def __repr__(self) -> str:
        return f"StructuralKey({self.value!r})"

    @property
    def key(self) -> Any:
        """The wrapped value (tvm-ffi's name for :attr:`value`)."""
        return self.value


class VisitInterrupt(Exception):
    """Raised by a visitor of :func:`structural_walk` to end the walk early (not an error).

    ``VisitInterrupt(payload)`` carries ``payload`` as :attr:`value` (tvm-ffi's spelling)."""

    @property
    def value(self) -> Any:
        """The first argument it was raised with (None without arguments)."""
        return self.args[0] if self.args else None


_LEAF_TYPES = (type(None), bool, int, float, str, bytes)


def _fields_of(type_index: int) -> list:
    info = type_info(type_index)
    return [f["name"] for i in info["ancestors"] for f in type_info(i)["fields"]]


def _children(path: AccessPath, value: Any) -> list:
    """(path, child) pairs of ``value``: sequence items, map entries' values, reflected fields."""
    if isinstance(value, _LEAF_TYPES) or not isinstance(value, core.Object):
        return []
    if isinstance(value, (core.Array, core.List)):
        return [(path.array_item(i), x) for i, x in enumerate(value)]
    if isinstance(value, (core.Map, core.Dict)):
        return [(path.map_item(k), x) for k, x in value.items()]
    if isinstance(value, (core.Function, core.Tensor)):
        return []
    return [(path.attr(n), getattr(value, n)) for n in _fields_of(value.type_index)]


def _identity(value: Any) -> Any:
    """A key naming a native object (visited once), or None for plain values."""
    return value.handle if isinstance(value, core.Object) and value.handle else None


def structural_walk(root: Any, visit: Callable[[AccessPath, Any], Any], order: str = "pre") -> None:
    """Calls ``visit(path, value)`` on ``root`` and every value below it: sequence items, map
    values and reflected fields (of C++- and Python-defined types alike).

    Iterative (any depth), and each native object is visited once (shared subtrees once, cycles
    end). In ``"pre"`` order a visitor returning False skips that value's children; in ``"post"``
    order children come before their parent. A visitor raising :class:`VisitInterrupt` ends the
    walk.

    Raises
    ------
    ValueError
        For an unknown ``order``.
    """
    if order not in ("pre", "post"):
        raise ValueError(f"structural_walk: order must be 'pre' or 'post', not {order!r}")
    seen: set = set()
    stack: list = [(AccessPath(), root, False)]
    try:
        while stack:
            path, value, expanded = stack.pop()
            if expanded:
                visit(path, value)
                continue
            key = _identity(value)
            if key is not None:
                if key in seen:
                    continue
                seen.add(key)
            if order == "pre":
                if visit(path, value) is False:
                    continue
            else:
                stack.append((path, value, True))
            kids = _children(path, value)
            stack.extend((p, v, False) for p, v in reversed(kids))
    except VisitInterrupt:
        return


def _rebuild(value: Any, new_children: list) -> Any:
    if isinstance(value, core.Array):
        return Array(new_children)
    if isinstance(value, core.List):
        return List(new_children)
    if isinstance(value, (core.Map, core.Dict)):
        items = dict(zip(list(value.keys()), new_children))
        return Map(items) if isinstance(value, core.Map) else Dict(items)
    _, names, ctor, ctor_fields, setters = object_plan(value.type_index)
    obj = ctor(*[new_children[j] for j in ctor_fields])
    for name in setters:
        setattr(obj, name, new_children[names.index(name)])
    return obj


def _same(new: Any, old: Any) -> bool:
    """Whether a child came back unchanged: the same native object, or an equal plain value."""
    key = _identity(old)
    if key is not None:
        return _identity(new) == key
    return type(new) is type(old) and (new is old or new == old)


def structural_mutate(root: Any, fn: Callable[[Any], Any]) -> Any:
    """A copy of ``root`` where every value ``v`` below it (and ``root``) becomes ``fn(v)``,
    bottom-up: ``fn`` sees a value after its children were mutated, and returns it unchanged (the
    same object) or a replacement.

    A container or reflected object none of whose children changed is kept (the same native
    object, shared); one with a changed child is rebuilt (containers anew, objects through their
    constructor, as :func:`copy.copy` rebuilds them). Iterative; a shared subtree is mutated
    once; an object met again while its own children are being mutated (a cycle) is kept as is.
    """
    done: dict = {}
    active: set = set()
    results: list = []
    stack: list = [(root, None)]
    while stack:
        value, kids = stack.pop()
        key = _identity(value)
        if kids is None:
            if key is not None and key in done:
                results.append(done[key])
                continue
            if key is not None and key in active:
                results.append(value)
                continue
            children = [v for _, v in _children(AccessPath(), value)]
            if key is not None:
                active.add(key)
            stack.append((value, len(children)))
            stack.extend((c, None) for c in reversed(children))
            continue
        new = results[len(results) - kids :] if kids else []
        del results[len(results) - kids :]
        old = [v for _, v in _children(AccessPath(), value)] if kids else []
        changed = any(not _same(n, o) for n, o in zip(new, old))
        out = fn(_rebuild(value, new) if changed else value)
        if key is not None:
            active.discard(key)
            done[key] = out
        results.append(out)
    return results[0]
