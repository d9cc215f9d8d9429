# The ctypes backend's containers: Array/List/Map/Dict/Shape wrappers over the native objects.
"""Containers of :mod:`packedfun._ctypes_backend` (issue 3; the interface is "Objects and
containers" in docs/internals/python-backends.md).

``Array``/``List`` read the native ``PFSeqObject`` directly (``len`` and indexing never call the
runtime), ``Shape`` reads ``PFShapeObject``; ``Map``/``Dict`` go through ``PFMapSize``/
``PFMapGetItem``/``PFMapItems``; mutation goes through the ``PFList*``/``PFDict*`` entry points.
``pack_container`` turns Python lists/tuples (-> Array) and dicts (-> Map), nested to any depth,
into native containers for arguments and ``convert``.
"""

from __future__ import annotations

import operator
import struct
from ctypes import byref, c_int, c_int64, c_void_p, string_at

from . import _ctypes_abi as abi
from ._ctypes_abi import LIB, PFAny
from ._ctypes_values import Object, borrow_any, raise_last_error, take_any, tp_name, wrap

__all__ = ["Array", "List", "Map", "Dict", "Shape", "CONTAINER_CLASSES", "pack_container"]

_unpack_seq = struct.Struct("=Qq").unpack  # (data, size) of a PFSeqObject / PFShapeObject
_unpack_dims: dict = {}  # ndim -> struct unpacking that many int64
_HEADER = 24  # sizeof(PFObject): data and size follow the header
_MISSING = object()


def _seq_view(handle: int):
    """``(data address, size)`` of the PFSeqObject at ``handle`` (re-read: a List's data moves)."""
    return _unpack_seq(string_at(handle + _HEADER, 16)) if handle else (0, 0)


def _check(rc: int) -> None:
    if rc:
        raise_last_error()


def _index(index, kind: str) -> int:
    try:
        return operator.index(index)
    except TypeError:
        raise TypeError(
            f"{kind} indices must be integers or slices, not {tp_name(type(index))}"
        ) from None


def _pack_one(value, temps: list) -> bytes:
    return _pack.pack_value(value, temps)


def _adopt(self: Object, made: Object) -> None:
    """Moves the reference of ``made`` (a fresh wrapper) into ``self`` (being initialized)."""
    handle, made._pf_handle = made._pf_handle, 0
    old = self._pf_handle
    self._pf_handle, self._pf_tindex = handle, made._pf_tindex
    if old:
        LIB.PFObjectDecRef(old)


def _ne(self, other):
    result = self.__eq__(other)
    return result if result is NotImplemented else not result


# ---- sequences ----------------------------------------------------------------------------------
class _Sequence(Object):
    """What Array and List share: in-place reads of the PFSeqObject."""

    __slots__ = ()
    _pf_kind = "Array"
    _pf_create = "PFArrayCreate"

    def __init__(self, iterable=()):
        _adopt(self, make_sequence(list(iterable), getattr(LIB, self._pf_create)))

    def __len__(self) -> int:
        return _seq_view(self._pf_handle)[1]

    def __getitem__(self, index):
        data, size = _seq_view(self._pf_handle)
        if isinstance(index, slice):
            return self._slice(data, range(*index.indices(size)))
        i = _index(index, self._pf_kind)
        if i < 0:
            i += size
        if not 0 <= i < size:
            raise IndexError(f"{self._pf_kind} index out of range")
        return borrow_any(data + 16 * i)

    def _slice(self, data: int, indices: range):
        out = PFAny()
        if indices.step == 1:  # the owned elements are copied by the create call itself
            items = data + 16 * indices.start if len(indices) else None
        else:
            items = b"".join(string_at(data + 16 * i, 16) for i in indices)
        _check(getattr(LIB, self._pf_create)(items, len(indices), byref(out)))
        return take_any(out)

    def __iter__(self):
        i = 0
        while True:
            data, size = _seq_view(self._pf_handle)
            if i >= size:
                return
            yield borrow_any(data + 16 * i)
            i += 1

    def __reversed__(self):
        i = len(self) - 1
        while i >= 0:
            data, size = _seq_view(self._pf_handle)
            if i < size:
                yield borrow_any(data + 16 * i)
            i -= 1

    def __contains__(self, value) -> bool:
        return any(item is value or item == value for item in self)

    def index(self, value, start=0, stop=None) -> int:
        """The first index of ``value`` in ``[start, stop)`` (ValueError when absent)."""
        items = list(self)
        stop = len(items) if stop is None else stop
        for i in range(*slice(start, stop).indices(len(items))):
            if items[i] is value or items[i] == value:
                return i
        raise ValueError(f"{value!r} is not in {self._pf_kind}")

    def count(self, value) -> int:
        """How many elements equal ``value``."""
        return sum(1 for item in self if item is value or item == value)

    def __eq__(self, other):
        if isinstance(other, (list, tuple, _Sequence, Shape)):
            if isinstance(other, Object) and self.same_as(other):
                return True
            mine = list(self)
            return len(mine) == len(other) and all(a == b for a, b in zip(mine, other))
        return NotImplemented

    __ne__ = _ne

    def __repr__(self):
        return repr(list(self))


class Array(_Sequence):
    """Array(iterable=())

    An immutable sequence (kPFTypeArray), read in place: no copy is made."""

    __slots__ = ()

    def __hash__(self):
        return hash(tuple(self))


class List(_Sequence):
    """List(iterable=())

    A mutable sequence (kPFTypeList); writes go through the PFList* entry points."""

    __slots__ = ()
    _pf_kind = "List"
    _pf_create = "PFListCreate"
    __hash__ = None  # type: ignore[assignment]

    def __setitem__(self, index, value) -> None:
        index = _index(index, "List")
        temps: list = []
        packed = _pack_one(value, temps)
        _check(LIB.PFListSetItem(self._pf_handle, index, packed))

    def __delitem__(self, index) -> None:
        _check(LIB.PFListPop(self._pf_handle, _index(index, "List"), None))

    def insert(self, index, value) -> None:
        """Inserts ``value`` before ``index`` (clamped as ``list.insert``)."""
        index = _index(index, "List")
        temps: list = []
        packed = _pack_one(value, temps)
        _check(LIB.PFListInsert(self._pf_handle, index, packed))

    def append(self, value) -> None:
        """Appends ``value``."""
        temps: list = []
        packed = _pack_one(value, temps)
        _check(LIB.PFListAppend(self._pf_handle, packed))

    def extend(self, iterable) -> None:
        """Appends every element of ``iterable``."""
        for value in list(iterable):
            self.append(value)

    def pop(self, index=-1):
        """Removes and returns element ``index`` (default: the last)."""
        out = PFAny()
        _check(LIB.PFListPop(self._pf_handle, _index(index, "List"), byref(out)))
        return take_any(out)

    def clear(self) -> None:
        """Removes every element."""
        _check(LIB.PFListClear(self._pf_handle))


# ---- maps ---------------------------------------------------------------------------------------
def _map_items(handle: int) -> list:
    """``[(key, value), ...]`` of a Map or Dict in iteration order (a snapshot)."""
    out = PFAny()
    _check(LIB.PFMapItems(handle, byref(out)))
    try:
        data, size = _seq_view(out.v_obj)
        flat = [borrow_any(data + 16 * i) for i in range(size)]
    finally:
        LIB.PFAnyRelease(byref(out))
    return list(zip(flat[0::2], flat[1::2]))


class _Mapping(Object):
    """What Map and Dict share: lookups through the PFMap* entry points."""

    __slots__ = ()
    _pf_create = "PFMapCreate"
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, mapping_or_pairs=()):
        pairs = mapping_or_pairs
        if hasattr(pairs, "keys"):
            pairs = [(k, pairs[k]) for k in pairs.keys()]
        _adopt(self, make_mapping(list(pairs), getattr(LIB, self._pf_create)))

    def __len__(self) -> int:
        size = c_int64()
        _check(LIB.PFMapSize(self._pf_handle, byref(size)))
        return size.value

    def _lookup(self, key, default):
        temps: list = []
        try:
            packed = _pack_one(key, temps)
        except (OverflowError, UnicodeEncodeError):  # such a key cannot be in a native map
            return default
        out = PFAny()
        found = c_int(0)
        _check(LIB.PFMapGetItem(self._pf_handle, packed, byref(out), byref(found)))
        return take_any(out) if found.value else default

    def __getitem__(self, key):
        value = self._lookup(key, _MISSING)
        if value is _MISSING:
            raise KeyError(key)
        return value

    def get(self, key, default=None):
        """The value of ``key``, or ``default``."""
        return self._lookup(key, default)

    def __contains__(self, key) -> bool:
        return self._lookup(key, _MISSING) is not _MISSING

    def __iter__(self):
        return iter(self.keys())

    def keys(self) -> list:
        """The keys, in iteration order (a snapshot)."""
        return [k for k, _ in _map_items(self._pf_handle)]

    def values(self) -> list:
        """The values, in iteration order (a snapshot)."""
        return [v for _, v in _map_items(self._pf_handle)]

    def items(self) -> list:
        """The ``(key, value)`` pairs, in iteration order (a snapshot)."""
        return _map_items(self._pf_handle)

    def __eq__(self, other):
        if not isinstance(other, (dict, _Mapping)):
            return NotImplemented
        if isinstance(other, Object) and self.same_as(other):
            return True
        items = self.items()
        if len(items) != len(other):
            return False
        for key, value in items:
            theirs = other.get(key, _MISSING)
            if theirs is _MISSING or not (theirs is value or theirs == value):
                return False
        return True

    __ne__ = _ne

    def __repr__(self):
        return "{" + ", ".join(f"{k!r}: {v!r}" for k, v in self.items()) + "}"


class Map(_Mapping):
    """Map(mapping_or_pairs={})

    An immutable hash map (kPFTypeMap) read through PFMapSize/PFMapGetItem/PFMapItems."""

    __slots__ = ()


class Dict(_Mapping):
    """Dict(mapping_or_pairs={})

    A mutable hash map (kPFTypeDict); writes go through the PFDict* entry points."""

    __slots__ = ()
    _pf_create = "PFDictCreate"

    def __setitem__(self, key, value) -> None:
        temps: list = []
        packed_key = _pack_one(key, temps)
        packed_value = _pack_one(value, temps)
        _check(LIB.PFDictSetItem(self._pf_handle, packed_key, packed_value))

    def __delitem__(self, key) -> None:
        temps: list = []
        try:
            packed = _pack_one(key, temps)
        except (OverflowError, UnicodeEncodeError):
            raise KeyError(key) from None
        if LIB.PFDictDelItem(self._pf_handle, packed):
            raise_last_error()

    def pop(self, key, default=_MISSING):
        """Removes ``key`` and returns its value (``default``, or KeyError, when absent)."""
        value = self._lookup(key, _MISSING)
        if value is _MISSING:
            if default is _MISSING:
                raise KeyError(key)
            return default
        del self[key]
        return value

    def clear(self) -> None:
        """Removes every entry."""
        _check(LIB.PFDictClear(self._pf_handle))


# ---- shapes -------------------------------------------------------------------------------------
class Shape(Object):
    """Shape(iterable_of_ints=())

    An immutable run of int64 (kPFTypeShape) that behaves like a tuple of ints."""

    __slots__ = ()

    def __init__(self, iterable_of_ints=()):
        _adopt(self, make_shape(list(iterable_of_ints)))

    def _dims(self) -> tuple:
        data, size = _seq_view(self._pf_handle)
        if not size:
            return ()
        unpack = _unpack_dims.get(size)
        if unpack is None:
            unpack = _unpack_dims[size] = struct.Struct(f"={size}q").unpack
        return unpack(string_at(data, 8 * size))

    def __len__(self) -> int:
        return _seq_view(self._pf_handle)[1]

    def __getitem__(self, index):
        dims = self._dims()
        if isinstance(index, slice):
            return dims[index]
        i = _index(index, "Shape")
        if not -len(dims) <= i < len(dims):
            raise IndexError("Shape index out of range")
        return dims[i]

    def __iter__(self):
        return iter(self._dims())

    def __reversed__(self):
        return reversed(self._dims())

    def __contains__(self, value) -> bool:
        return value in self._dims()

    def index(self, value, *args) -> int:
        """The first index of ``value`` (ValueError when absent)."""
        return self._dims().index(value, *args)

    def count(self, value) -> int:
        """How many dimensions equal ``value``."""
        return self._dims().count(value)

    def __eq__(self, other):
        if isinstance(other, Shape):
            return self._dims() == other._dims()
        if isinstance(other, (tuple, list)):
            return self._dims() == tuple(other)
        return NotImplemented

    __ne__ = _ne

    def __hash__(self):
        return hash(self._dims())

    def __repr__(self):
        return f"packedfun.Shape({', '.join(map(str, self._dims()))})"


for _cls in (Array, List, Map, Dict, Shape):
    _cls.__module__ = "packedfun"

#: The wrapper class of each built-in container type index.
CONTAINER_CLASSES = {
    abi.kPFTypeArray: Array,
    abi.kPFTypeList: List,
    abi.kPFTypeMap: Map,
    abi.kPFTypeDict: Dict,
    abi.kPFTypeShape: Shape,
}



# ---- Python -> native containers ----------------------------------------------------------------
def pack_container(packer, value) -> Object:
    """A new native Array (list/tuple) or Map (dict) holding the converted elements of ``value``.
    ``packer`` is the :class:`packedfun._ctypes_pack._Packer` converting the whole argument: its
    ``pos`` grows into the element's path (``0[3]['k']``; a return value or ``convert`` counts as
    argument 0, as in ``_core``) while elements convert, and its ``active`` set holds the
    containers on that path (a container met again contains itself). The elements' temporaries
    are released when this returns."""
    pos = 0 if packer.pos is None else packer.pos
    key = id(value)
    if key in packer.active:
        raise ValueError(_pack._arg_message(packer.fname, pos, "container contains itself"))
    packer.active.add(key)
    outer_pos, outer_temps = packer.pos, packer.temps
    packer.temps = []
    try:
        if isinstance(value, dict):
            return _create(LIB.PFMapCreate, _pack_pairs(packer, pos, value), len(value))
        return _create(LIB.PFArrayCreate, _pack_items(packer, pos, value), len(value))
    finally:
        packer.pos, packer.temps = outer_pos, outer_temps
        packer.active.discard(key)


def _pack_items(packer, pos, items) -> list:
    parts = []
    size = len(items)
    for i in range(size):
        if len(items) != size:
            what = f"{'list' if isinstance(items, list) else 'tuple'} changed size during conversion"
            raise RuntimeError(_pack._arg_message(packer.fname, pos, what))
        packer.pos = f"{pos}[{i}]"
        parts.append(packer.pack(items[i]))
    return parts


def _pack_pairs(packer, pos, mapping) -> list:
    parts = []
    size = len(mapping)
    for k, v in list(mapping.items()):
        if len(mapping) != size:
            what = "dict changed size during conversion"
            raise RuntimeError(_pack._arg_message(packer.fname, pos, what))
        packer.pos = f"{pos}[{k!r}]"
        parts.append(packer.pack(k))
        parts.append(packer.pack(v))
    return parts


def _create(create, parts: list, count: int) -> Object:
    out = PFAny()
    _check(create(b"".join(parts) if parts else None, count, byref(out)))
    return wrap(out.v_obj, out.type_index)


def make_sequence(items: list, create) -> Object:
    """A new Array or List (``create``: PFArrayCreate or PFListCreate) holding ``items``."""
    packer = _pack.new_packer()
    parts = _pack_items(packer, 0, items)
    return _create(create, parts, len(parts))


def make_mapping(pairs: list, create) -> Object:
    """A new Map or Dict (``create``: PFMapCreate or PFDictCreate) of ``(key, value)`` pairs."""
    packer = _pack.new_packer()
    parts = []
    for k, v in pairs:
        packer.pos = f"0[{k!r}]"
        parts.append(packer.pack(k))
        parts.append(packer.pack(v))
    return _create(create, parts, len(pairs))


def make_shape(dims: list) -> Object:
    """A new Shape of ``dims`` (ints)."""
    values = [_index(d, "Shape dimension") for d in dims]
    out = c_void_p()
    _check(LIB.PFShapeCreate((c_int64 * len(values))(*values), len(values), byref(out)))
    return wrap(out.value, abi.kPFTypeShape)


from . import _ctypes_pack as _pack  # noqa: E402  (imports this module at its end)
