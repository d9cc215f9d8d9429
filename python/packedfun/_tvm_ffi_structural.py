# `tvm_ffi.structural` under the switch: tvm-ffi's typed-callback structural toolkit.
"""What ``import tvm_ffi.structural`` gives under :mod:`packedfun.tvm_ffi_compat`.

packedfun's own toolkit (:mod:`packedfun.structural`) walks with one ``visit(path, value)``
function and visits each shared object once; tvm-ffi's dispatches typed callbacks
(``(type, callback)`` entries, the first match wins), visits every occurrence as a tree, and has
the class forms ``StructuralVisitor`` / ``StructuralMutator``. This module gives tvm-ffi's forms
over packedfun's values: the children of a value are those structural equality compares (sequence
items, map values, the compared fields of a reflected object, as the runtime lists them), and a
value below a definition field (``field(structural_eq="def")``) is visited in a definition
region. Everything else (``structural_equal``, ``StructuralKey``, ``AccessPath``, ...) is
packedfun's own.

Differences from tvm-ffi (see docs/migration-from-tvm-ffi.md): a cycle is refused with
``ValueError`` (tvm-ffi's walk does not end); values are never mutated in place (there is no
``Object._move``), so ``inplace_mode`` is always ``InplaceMode.DISALLOW``; a field defining
variables reports ``DefRegionKind.DEF_PATTERN`` whatever its spelling.
"""

from __future__ import annotations

import enum
import typing

from . import structural as _structural
from ._backend import core
from ._tvm_ffi_recursive import recursive_eq
from .registry import get_global_func, register_global_func
from .structural import (
    AccessPath,
    StructuralKey,
    VisitInterrupt,
    get_first_structural_mismatch,
    structural_equal,
    structural_first_difference,
    structural_hash,
)

__all__ = [
    "AccessPath",
    "DefRegionKind",
    "InplaceMode",
    "StructuralKey",
    "StructuralMutator",
    "StructuralVisitor",
    "VisitInterrupt",
    "WalkOrder",
    "WalkResult",
    "get_first_structural_mismatch",
    "structural_equal",
    "structural_first_difference",
    "structural_hash",
    "structural_map",
    "structural_mutate",
    "structural_visit",
    "structural_walk",
]


class WalkOrder(enum.IntEnum):
    """Whether a walk's callbacks run before (PREORDER) or after (POSTORDER) the children."""

    PREORDER = 0
    POSTORDER = 1


class WalkResult(enum.IntEnum):
    """What a pre-order walk callback may return: ADVANCE into the children, or SKIP them."""

    ADVANCE = 0
    SKIP = 1


class InplaceMode(enum.IntEnum):
    """The ``inplace_mode`` a ``structural_mutate`` callback may take (always DISALLOW here)."""

    DISALLOW = 0
    ALLOW = 1


class DefRegionKind(enum.IntEnum):
    """Whether a value is visited below a field that defines variables."""

    NONE = 0
    DEF_PATTERN = 1
    DEF_SIMPLE = 2


# ---- children as structural equality sees them ---------------------------------------------------

_LEAVES = _structural._LEAF_TYPES
_same = _structural._same  # a child came back unchanged: the same object, or an equal value
_fields_cache: dict = {}
_kind_cache: dict = {}
_ANY = object()  # a callback entry matching every value


def _structural_fields(type_index: int) -> list:
    fields = _fields_cache.get(type_index)
    if fields is None:
        rows = _structural._func("type_structural_fields")(type_index)
        fields = _fields_cache[type_index] = [(str(name), bool(d)) for name, d in rows]
    return fields


def _structural_kind(type_index: int) -> int:
    kind = _kind_cache.get(type_index)
    if kind is None:
        kind = _kind_cache[type_index] = int(_structural._func("type_structural_kind")(type_index))
    return kind


def _children(value: typing.Any) -> list:
    """``[(child, is_def), ...]`` of ``value``: sequence items, map values, compared fields."""
    if isinstance(value, _LEAVES) or not isinstance(value, core.Object):
        return []
    if isinstance(value, (core.Array, core.List)):
        return [(x, False) for x in value]
    if isinstance(value, (core.Map, core.Dict)):
        return [(x, False) for x in value.values()]
    if value.type_index < 64 or isinstance(value, (core.Function, core.Tensor)):
        return []
    return [(getattr(value, n), d) for n, d in _structural_fields(value.type_index)]


def _rebuild(value: typing.Any, new: list) -> typing.Any:
    if isinstance(value, (core.Array, core.List, core.Map, core.Dict)):
        return _structural._rebuild(value, new)
    changed = dict(zip([n for n, _ in _structural_fields(value.type_index)], new))
    names = _structural._fields_of(value.type_index)
    return _structural._rebuild(value, [changed.get(n, getattr(value, n)) for n in names])


class _Active:
    """The objects open on the current path: meeting one again is a cycle, refused."""

    def __init__(self, api: str) -> None:
        self.api = api
        self.open: set[int] = set()

    def enter(self, value: typing.Any) -> int | None:
        if not isinstance(value, core.Object) or isinstance(value, _LEAVES) or not value.handle:
            return None
        key = value.handle
        if key in self.open:
            name = type(value).__name__
            raise ValueError(
                f"{self.api}: the value has a cycle (a {name} contains itself); structural "
                "walks follow trees and DAGs only"
            )
        self.open.add(key)
        return key

    def leave(self, key: int | None) -> None:
        if key is not None:
            self.open.discard(key)


# ---- callback entries --------------------------------------------------------------------------


def _entries(callbacks: typing.Any, api: str) -> list:
    """``[(match_type, fn), ...]`` from a callback, a ``(type, fn)`` entry (types may be a
    tuple), or a sequence of entries."""
    out: list = []

    def add(entry: tuple) -> None:
        types, fn = entry
        for t in types if isinstance(types, tuple) else (types,):
            out.append((_match_type(t, api), fn))

    if callable(callbacks):
        out.append((_ANY, callbacks))
    elif isinstance(callbacks, tuple) and len(callbacks) == 2 and callable(callbacks[1]):
        add(callbacks)
    elif isinstance(callbacks, (list, tuple)):
        for entry in callbacks:
            if not (isinstance(entry, tuple) and len(entry) == 2 and callable(entry[1])):
                raise TypeError(f"{api}: callbacks in a sequence are (type, callback) tuples")
            add(entry)
    else:
        raise TypeError(
            f"{api}: callbacks are a callable, a (type, callback) entry, a "
            "((type1, type2, ...), callback) entry or a sequence of entries"
        )
    return out


def _match_type(t: typing.Any, api: str) -> typing.Any:
    if t is typing.Any or t is object:
        return _ANY
    if t in (bool, int, float, str, bytes, type(None)) or (
        isinstance(t, type) and issubclass(t, core.Object)
    ):
        return t
    raise TypeError(f"{api}: a callback type is a builtin (int, float, str, bytes, bool, None), "
                    f"typing.Any/object or an object class, not {t!r}")  # fmt: skip


def _matches(t: typing.Any, value: typing.Any) -> bool:
    if t is _ANY:
        return True
    if t is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if t is type(None):
        return value is None
    return isinstance(value, t)


def _first(entries: list, value: typing.Any) -> typing.Any:
    for t, fn in entries:
        if _matches(t, value):
            return fn
    return None


def _order(order: typing.Any, api: str) -> int:
    if isinstance(order, WalkOrder):
        return int(order)
    if order in ("pre", "post"):
        return int(WalkOrder.PREORDER if order == "pre" else WalkOrder.POSTORDER)
    raise ValueError(f"{api}: order is 'pre', 'post' or a WalkOrder, not {order!r}")


def _entries_with_kind(callbacks: typing.Any, with_kind: typing.Any, api: str) -> list:
    """Both callback lists as one: ``[(type, fn, takes_kind), ...]``, plain ones first."""
    plain = [(t, fn, False) for t, fn in _entries(callbacks, api)] if callbacks != () else []
    kinded = [(t, fn, True) for t, fn in _entries(with_kind, api)] if with_kind != () else []
    return plain + kinded


def _call(entries: list, value: typing.Any, kind: int) -> tuple:
    """(matched, result) of the first entry matching ``value``."""
    for t, fn, takes_kind in entries:
        if _matches(t, value):
            return True, fn(value, DefRegionKind(kind)) if takes_kind else fn(value)
    return False, None


# ---- structural_walk -----------------------------------------------------------------------------


def structural_walk(
    root: typing.Any,
    callbacks: typing.Any = (),
    with_def_region_kind: typing.Any = (),
    order: typing.Any = "post",
) -> VisitInterrupt | None:
    """Calls the first matching callback on ``root`` and every value below it (each occurrence;
    post-order by default). A pre-order callback returning ``WalkResult.SKIP`` skips the value's
    children; one returning (or raising) a :class:`VisitInterrupt` ends the walk, which returns
    it. ``with_def_region_kind`` callbacks also get the value's :class:`DefRegionKind`.

    Raises
    ------
    ValueError
        For a cyclic value or an unknown ``order``.
    """
    pre = _order(order, "structural_walk") == WalkOrder.PREORDER
    entries = _entries_with_kind(callbacks, with_def_region_kind, "structural_walk")
    active = _Active("structural_walk")

    def walk(value: typing.Any, kind: int) -> VisitInterrupt | None:
        key = active.enter(value)
        try:
            if pre:
                _, r = _call(entries, value, kind)
                if isinstance(r, VisitInterrupt):
                    return r
                if isinstance(r, WalkResult) and r == WalkResult.SKIP:
                    return None
            for child, is_def in _children(value):
                r = walk(child, DefRegionKind.DEF_PATTERN if is_def else kind)
                if r is not None:
                    return r
            if not pre:
                _, r = _call(entries, value, kind)
                if isinstance(r, VisitInterrupt):
                    return r
            return None
        finally:
            active.leave(key)

    try:
        return walk(root, DefRegionKind.NONE)
    except VisitInterrupt as raised:
        return raised


# ---- structural_visit ----------------------------------------------------------------------------


class _InDefRegion:
    """The definition region a visitor or mutator is in, and running code in another."""

    _kind: DefRegionKind

    def def_region_kind(self) -> DefRegionKind:
        """The definition region the visit or mutation is in."""
        return self._kind

    def with_def_region_kind(
        self, kind: int, callback: typing.Callable[[], typing.Any]
    ) -> typing.Any:
        """Runs ``callback()`` in definition region ``kind``."""
        saved, self._kind = self._kind, DefRegionKind(kind)
        try:
            return callback()
        finally:
            self._kind = saved

    def _child(self, step: typing.Callable[[typing.Any], typing.Any], child: typing.Any,
               is_def: bool) -> typing.Any:  # fmt: skip
        """``step(child)``, in a definition region when ``child`` sits in a definition field."""
        if not is_def:
            return step(child)
        return self.with_def_region_kind(DefRegionKind.DEF_PATTERN, lambda: step(child))


class StructuralVisitor(_InDefRegion):
    """The visitor that :func:`structural_visit` hands its callbacks: ``visit`` dispatches a
    value to its callback (or its default descent), ``default_visit`` descends into a value's
    children without its own callback."""

    def __init__(self, entries: list) -> None:
        self._entries = entries
        self._kind = DefRegionKind.NONE
        self._active = _Active("structural_visit")

    def visit(self, value: typing.Any) -> VisitInterrupt | None:
        """Visits ``value``: its matching callback, else its children; returns the interrupt
        that ended the visit, or None."""
        fn = _first(self._entries, value)
        if fn is None:
            return self.default_visit(value)
        key = self._active.enter(value)
        try:
            r = fn(value, self)
        finally:
            self._active.leave(key)
        return r if isinstance(r, VisitInterrupt) else None

    def default_visit(self, value: typing.Any) -> VisitInterrupt | None:
        """Visits the children of ``value`` (each through :meth:`visit`)."""
        key = self._active.enter(value)
        try:
            for child, is_def in _children(value):
                r = self._child(self.visit, child, is_def)
                if r is not None:
                    return r
            return None
        finally:
            self._active.leave(key)


def structural_visit(root: typing.Any, callbacks: typing.Any = ()) -> VisitInterrupt | None:
    """Visits ``root`` with callbacks ``fn(value, visitor)`` that own the descent into their
    value (``visitor.visit(child)``, ``visitor.default_visit(value)``); an unmatched value's
    children are visited. Returns the :class:`VisitInterrupt` a callback returned, or None."""
    visitor = StructuralVisitor(_entries(callbacks, "structural_visit"))
    try:
        return visitor.visit(root)
    except VisitInterrupt as raised:
        return raised


# ---- structural_mutate and structural_map ----------------------------------------------------


class StructuralMutator(_InDefRegion):
    """The mutator that :func:`structural_mutate` hands its callbacks: ``mutate`` dispatches a
    value to its callback (or its default mutation), ``default_mutate`` rebuilds a value from its
    mutated children (the value itself when none changed)."""

    def __init__(self, entries: list, api: str = "structural_mutate") -> None:
        self._entries = entries
        self._kind = DefRegionKind.NONE
        self._remap: dict = {}
        self._active = _Active(api)

    def mutate(self, value: typing.Any) -> typing.Any:
        """``value`` mutated: its matching callback's result, else its default mutation."""
        for t, fn, takes_mode in self._entries:
            if _matches(t, value):
                if takes_mode:
                    return fn(value, self, int(InplaceMode.DISALLOW))
                return fn(value, self)
        return self.default_mutate(value)

    def default_mutate(self, value: typing.Any) -> typing.Any:
        """``value`` with each child mutated (:meth:`mutate`); ``value`` itself when no child
        changed, else a copy."""
        kids = _children(value)
        if not kids:
            return value
        key = self._active.enter(value)
        try:
            new = [self._child(self.mutate, child, is_def) for child, is_def in kids]
        finally:
            self._active.leave(key)
        if all(_same(n, o) for n, (o, _) in zip(new, kids)):
            return value
        return _rebuild(value, new)

    def var_remap_get(self, var: typing.Any) -> typing.Any:
        """The replacement recorded for ``var`` (a variable or DAG object), or None."""
        entry = self._remap.get(_remap_key(var))
        return entry[1] if entry is not None else None

    def var_remap_set(self, var: typing.Any, mapped_value: typing.Any) -> None:
        """Records ``mapped_value`` as the replacement of ``var``."""
        self._remap[_remap_key(var)] = (var, mapped_value)


def _remap_key(var: typing.Any) -> int:
    if not isinstance(var, core.Object) or isinstance(var, _LEAVES):
        raise TypeError(f"var_remap: expected an object, not {type(var).__name__}")
    return var.handle


def _takes_mode(fn: typing.Any) -> bool:
    import inspect

    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    try:
        signature.bind(None, None, 0)
        return True
    except TypeError:
        try:
            signature.bind(None, None)
        except TypeError as exc:
            raise TypeError("structural_mutate: a callback takes (value, mutator) or "
                            "(value, mutator, inplace_mode)") from exc  # fmt: skip
        return False


def structural_mutate(root: typing.Any, callbacks: typing.Any = ()) -> typing.Any:
    """``root`` mutated by callbacks ``fn(value, mutator[, inplace_mode])`` that own the
    mutation of their value (``mutator.mutate(child)``, ``mutator.default_mutate(value)``); their
    result is final. An unmatched value is rebuilt from its mutated children (kept when none
    changed). The source is never changed (``inplace_mode`` is always DISALLOW)."""
    entries = [(t, fn, _takes_mode(fn)) for t, fn in _entries(callbacks, "structural_mutate")]
    return StructuralMutator(entries).mutate(root)


def structural_map(
    root: typing.Any,
    callbacks: typing.Any = (),
    with_def_region_kind: typing.Any = (),
    order: typing.Any = "post",
) -> typing.Any:
    """``root`` mapped by replacement callbacks, ``post(D(pre(x)))`` at every occurrence: the
    first matching callback runs before (PREORDER) or after (POSTORDER, the default) the value's
    default descent ``D``, which rebuilds it from its mapped children (kept when none changed).
    ``D`` of a variable or DAG object is computed once and reused, so a variable stays one object
    in the result. ``with_def_region_kind`` callbacks also get the :class:`DefRegionKind`.

    Raises
    ------
    ValueError
        For a cyclic value or an unknown ``order``.
    """
    pre = _order(order, "structural_map") == WalkOrder.PREORDER
    entries = _entries_with_kind(callbacks, with_def_region_kind, "structural_map")
    active = _Active("structural_map")
    remap: dict = {}

    def descend(value: typing.Any, kind: int) -> typing.Any:
        kids = _children(value)
        if not kids:
            return value
        shared = _structural_kind(value.type_index) in (2, 3) if value.type_index >= 64 else False
        if shared and value.handle in remap:
            return remap[value.handle][1]
        key = active.enter(value)
        try:
            new = [one(c, DefRegionKind.DEF_PATTERN if d else kind) for c, d in kids]
        finally:
            active.leave(key)
        out = value if all(_same(n, o) for n, (o, _) in zip(new, kids)) else _rebuild(value, new)
        if shared:
            remap[value.handle] = (value, out)
        return out

    def one(value: typing.Any, kind: int) -> typing.Any:
        if pre:
            matched, r = _call(entries, value, kind)
            if matched:
                value = r
        value = descend(value, kind)
        if not pre:
            matched, r = _call(entries, value, kind)
            if matched:
                value = r
        return value

    return one(root, DefRegionKind.NONE)


#: The names the switch puts on the ``tvm_ffi`` (packedfun) module: tvm-ffi's top-level forms.
_TOP_LEVEL = (
    "DefRegionKind",
    "InplaceMode",
    "StructuralMutator",
    "StructuralVisitor",
    "WalkOrder",
    "WalkResult",
    "structural_map",
    "structural_mutate",
    "structural_visit",
    "structural_walk",
)


def _attach(module: typing.Any) -> None:
    """Called by the switch's ``install()``: tvm-ffi's top-level structural names on ``module``
    (packedfun, as ``tvm_ffi``), and the global ``ffi.RecursiveEq`` when no library gave one."""
    for name in _TOP_LEVEL:
        setattr(module, name, globals()[name])
    if get_global_func("ffi.RecursiveEq", allow_missing=True) is None:
        register_global_func("ffi.RecursiveEq", recursive_eq)


def _detach(module: typing.Any) -> None:
    """Called by the switch's ``uninstall()``: undoes :func:`_attach`'s attributes."""
    for name in _TOP_LEVEL:
        if module.__dict__.get(name) is globals()[name]:
            delattr(module, name)
