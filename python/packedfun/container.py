# The native containers as Python collections: Array, List, Map, Dict and Shape.
"""Containers: Python views over native Array, List, Map, Dict and Shape objects (no copy).

Each class subclasses the backend's native wrapper (length, indexing, iteration, mutation go
straight to the native object) and the matching :mod:`collections.abc` class, which adds the
remaining mixin methods (``keys()`` views, ``remove``, ``setdefault``, ...).
"""

from __future__ import annotations

from collections.abc import (
    ItemsView,
    KeysView,
    Mapping,
    MutableMapping,
    MutableSequence,
    Sequence,
    ValuesView,
)

from ._backend import core
from ._missing import MISSING as MISSING  # importable from here, as from tvm_ffi.container
from .object import _register_builtin

__all__ = ["Array", "Dict", "List", "Map", "Shape"]


def _concatenable(other) -> bool:
    """Whether ``+`` of a native sequence takes ``other``: a sequence, but not a string."""
    return isinstance(other, (Sequence, core.Array, core.List)) and not isinstance(other, str)


class Array(core.Array, Sequence):  # type: ignore[misc]
    """An immutable native array; ``Array([1, 2])`` converts each element.

    ``Array + list``, ``list + Array`` and ``Array + Array`` concatenate into a new Array.
    """

    __slots__ = ()

    def __add__(self, other):
        return Array([*self, *other]) if _concatenable(other) else NotImplemented

    def __radd__(self, other):
        return Array([*other, *self]) if _concatenable(other) else NotImplemented


class List(core.List, MutableSequence):  # type: ignore[misc]
    """A mutable native list; ``List([1, 2])`` converts each element.

    Slices assign and delete as on a Python ``list`` (``lst[1:3] = [7, 8, 9]``). ``List + list``
    and ``list + List`` concatenate into a new List (``lst += items`` extends in place).
    """

    __slots__ = ()

    def __add__(self, other):
        return List([*self, *other]) if _concatenable(other) else NotImplemented

    def __radd__(self, other):
        return List([*other, *self]) if _concatenable(other) else NotImplemented

    def __setitem__(self, key, value):
        if type(key) is not slice:
            return core.List.__setitem__(self, key, value)
        items = list(self)
        items[key] = value  # the list rules: a wrong-sized extended slice raises ValueError
        self._replace_all(items)

    def __delitem__(self, key):
        if type(key) is not slice:
            return core.List.__delitem__(self, key)
        items = list(self)
        del items[key]
        self._replace_all(items)

    def _replace_all(self, items: list) -> None:
        converted = List(items)  # converts every element first: a bad one leaves self unchanged
        while len(self):
            self.pop()
        for item in converted:
            self.append(item)


class Shape(core.Shape, Sequence):  # type: ignore[misc]
    """An immutable tuple of int64 (a tensor shape); compares and hashes like a tuple.

    ``+`` and ``*`` give a plain ``tuple``, as on a tuple (``shape + (1,)``, ``2 * shape``).
    """

    __slots__ = ()

    def __add__(self, other):
        return (*self, *other) if isinstance(other, (tuple, core.Shape)) else NotImplemented

    def __radd__(self, other):
        return (*other, *self) if isinstance(other, (tuple, core.Shape)) else NotImplemented

    def __mul__(self, count):
        return tuple(self) * count if isinstance(count, int) else NotImplemented

    __rmul__ = __mul__


class _NativeValues(ValuesView):
    """Values in iteration order straight from the native map's entries: no copy and no lookup
    per key (a NaN key, found by no lookup, still has its value listed, as in a dict)."""

    __slots__ = ()

    def __iter__(self):
        return self._mapping._pf_iter_values()  # type: ignore[attr-defined]


class _NativeItems(ItemsView):
    """(key, value) pairs in iteration order straight from the native map (see _NativeValues)."""

    __slots__ = ()

    def __iter__(self):
        return self._mapping._pf_iter_items()  # type: ignore[attr-defined]


class _MapViews:
    __slots__ = ()

    def keys(self) -> KeysView:
        """A view of the keys."""
        return KeysView(self)  # type: ignore[arg-type]

    def values(self) -> ValuesView:
        """A view of the values."""
        return _NativeValues(self)  # type: ignore[arg-type]

    def items(self) -> ItemsView:
        """A view of the (key, value) pairs."""
        return _NativeItems(self)  # type: ignore[arg-type]


class Map(_MapViews, core.Map, Mapping):  # type: ignore[misc]
    """An immutable native map; ``Map({"a": 1})`` converts keys and values."""

    __slots__ = ()


class Dict(_MapViews, core.Dict, MutableMapping):  # type: ignore[misc]
    """A mutable native dict; ``Dict({"a": 1})`` converts keys and values."""

    __slots__ = ()

    def popitem(self) -> tuple:
        """Removes and returns the last inserted (key, value) pair, as ``dict.popitem`` does
        (the ``MutableMapping`` default would pop the first). Raises KeyError when empty."""
        items = super(_MapViews, self).items()  # type: ignore[misc]
        if not items:
            raise KeyError("popitem(): dictionary is empty")
        key, value = items[-1]
        del self[key]
        return key, value


# kPFTypeShape, kPFTypeArray, kPFTypeMap, kPFTypeList, kPFTypeDict
for _index, _cls in ((70, Shape), (72, Array), (73, Map), (74, List), (75, Dict)):
    _register_builtin(_index, _cls)
del _index, _cls
