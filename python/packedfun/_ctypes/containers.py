# The ctypes backend's containers: Array/List/Map/Dict/Shape wrappers over the native objects.
"""Containers of :mod:`packedfun._ctypes.backend` (the interface is "Objects and
containers" in docs/internals/python-backends.md, the behaviour that of ``_core``'s
``src/python/container*.c`` and ``convert_container.c``).

``Array``/``List`` read the native ``PFSeqObject`` directly (``len`` and indexing never call the
runtime), ``Shape`` reads ``PFShapeObject``; ``Map``/``Dict`` go through ``PFMapSize``/
``PFMapGetItem``/``PFMapItems``; mutation goes through the ``PFList*``/``PFDict*`` entry points.
``pack_container`` turns Python lists/tuples (-> Array) and dicts (-> Map), nested to any depth,
into native containers for arguments and ``convert``.
"""

from __future__ import annotations

import functools
import struct
import sys
import threading
from ctypes import ArgumentError, addressof, byref, c_int, c_int64, c_uint64, c_void_p, string_at

from .._rules import map_keys as _map_keys
from .._rules import messages as _msg
from . import abi as abi
from .abi import LIB, PFAny
from .tensor import Tensor
from .values import (
    C_TYPES,
    Object,
    _pack_ptr,
    _ref,
    _wrappers,
    borrow_any,
    raise_last_error,
    take_any,
    tp_name,
    wrap,
)

__all__ = ["Array", "List", "Map", "Dict", "Shape", "CONTAINER_CLASSES", "pack_container"]

_unpack_seq = struct.Struct("=Qq").unpack  # (data, size) of a PFSeqObject / PFShapeObject
_unpack_dims: dict = {}  # ndim -> struct unpacking that many int64
_HEADER = 24  # sizeof(PFObject): data and size follow the header
_MISSING = object()


def _python_recursion(method):
    """``method`` raising RecursionError, as Python's own containers do, where a nest too deep for
    the recursion limit met it inside a ctypes call (which reports it as ArgumentError)."""

    @functools.wraps(method)
    def wrapper(*args):
        try:
            return method(*args)
        except ArgumentError as exc:
            if "RecursionError" not in str(exc):
                raise
            raise RecursionError(f"maximum recursion depth exceeded in {method.__name__}") from None

    return wrapper


def _seq_view(handle: int):
    """``(data address, size)`` of the PFSeqObject at ``handle`` (re-read: a List's data moves)."""
    return _unpack_seq(string_at(handle + _HEADER, 16)) if handle else (0, 0)


def _check(rc: int) -> None:
    if rc:
        raise_last_error()


def _as_index(key, overflow=IndexError) -> int:
    """``PyNumber_AsSsize_t(key, overflow)``: an int of Py_ssize_t range."""
    i = key.__index__()
    if not -(1 << 63) <= i < (1 << 63):
        raise overflow(f"cannot fit '{tp_name(type(key))}' into an index-sized integer")
    return i


def _is_index(key) -> bool:
    return hasattr(type(key), "__index__")


def _no_keywords(cls, kwargs) -> None:
    if kwargs:
        raise TypeError(_msg.text("NO_KEYWORDS", tp_name(cls)))


def _one_arg(value, temps: list, fname: str) -> bytes:
    """``value`` converted as argument 0 of ``fname`` (a value stored into a container)."""
    return _pack.new_packer(temps, fname, 0).pack(value)


def _take_if_unshared(self, made: Object, empty_only: bool = False) -> bool:
    """Puts ``made``'s object in place of ``self``'s when no one else holds it (this wrapper has
    its only reference: a List/Dict being constructed), as ``_core``'s list_init/dict_init do."""
    handle = self._pf_handle
    if handle and c_uint64.from_address(handle).value != 1:
        return False
    if handle and empty_only and len(self):
        return False
    self._pf_handle, made._pf_handle = made._pf_handle, 0
    self._pf_raw = made._pf_raw
    if handle:
        LIB.PFObjectDecRef(handle)
    return True


_REPR_OPEN = threading.local()


def _guarded_repr(self, again: str, show) -> str:
    """``show()``, or ``again`` when this native object's repr is already being made on this
    thread (a container met inside itself prints ``[...]``/``{...}``, as list and dict do). Keyed
    by the handle: each read makes a new wrapper (``_core``'s pfpy_repr_enter)."""
    open_handles = getattr(_REPR_OPEN, "handles", None)
    if open_handles is None:
        open_handles = _REPR_OPEN.handles = set()
    handle = self._pf_handle
    if handle in open_handles:
        return again
    open_handles.add(handle)
    try:
        return show()
    finally:
        open_handles.discard(handle)


def _handle(self, prefix: str) -> int:
    handle = self._pf_handle
    if not handle:
        raise ValueError(_msg.text("EMPTY_WRAPPER", prefix))
    return handle


def _native_new(cls, made: Object):
    """A new instance of ``cls`` taking over the reference of ``made`` (a fresh wrapper)."""
    self = object.__new__(cls)
    _wrappers[id(self)] = _ref(self)  # for cycles.py, as every wrapper (values.py)
    self._pf_handle, made._pf_handle = made._pf_handle, 0
    self._pf_tindex = made._pf_tindex
    self._pf_raw = made._pf_raw
    return self


def for_framework(value, framework):
    """``value`` (a call's result or a container's element) for ``framework`` (torch or numpy):
    a Tensor as the framework's tensor, an Array/List/Map/Dict remembering ``framework`` for the
    elements read from it (``_core``'s pfpy_tensor_element_for)."""
    if isinstance(value, Tensor):
        return framework.from_dlpack(value)
    if isinstance(value, (Array, List, _Mapping)):
        value._pf_framework = framework
    return value


def _element(self, value):
    """``value`` read from container ``self``: for the framework ``self`` remembers, if any."""
    framework = getattr(self, "_pf_framework", None)
    return value if framework is None else for_framework(value, framework)


# ---- sequences ----------------------------------------------------------------------------------
class _Sequence(Object):
    """What Array, List and Shape share (``_core``'s pfpy_seq_*): in-place element reads."""

    __slots__ = ("_pf_framework",)  # set by for_framework; unset: packedfun.Tensor elements

    def __new__(cls, *args, **kwargs):
        if issubclass(cls, List):  # empty: __init__ fills it, as a list's does
            return _native_new(cls, cls._pf_make(()))
        _no_keywords(cls, kwargs)
        if len(args) > 1:
            raise TypeError(_msg.text("AT_MOST_ONE_ARGUMENT", tp_name(cls), len(args)))
        items = tuple(args[0]) if args else ()
        return _native_new(cls, cls._pf_make(items))

    def _pf_element(self, data: int, i: int):
        return _element(self, borrow_any(data + 16 * i))

    def __len__(self) -> int:
        return _seq_view(self._pf_handle)[1]

    def __getitem__(self, key):
        if type(key) is int:
            data, size = _seq_view(self._pf_handle)
            i = key + size if key < 0 else key
            if not 0 <= i < size:
                raise IndexError(_msg.text("SEQ_INDEX_OUT_OF_RANGE", tp_name(type(self))))
            return self._pf_element(data, i)
        if isinstance(key, slice):
            return self._pf_slice(key)
        if _is_index(key):
            i = _as_index(key)
            data, size = _seq_view(self._pf_handle)
            if i < 0:
                i += size
            if not 0 <= i < size:
                raise IndexError(_msg.text("SEQ_INDEX_OUT_OF_RANGE", tp_name(type(self))))
            return self._pf_element(data, i)
        raise TypeError(_msg.text("SEQ_BAD_INDEX", tp_name(type(self)), tp_name(type(key))))

    def _pf_slice(self, key: slice):
        data, size = _seq_view(self._pf_handle)
        indices = range(*key.indices(size))
        if not self._pf_handle:
            return tuple(self._pf_element(data, i) for i in indices)
        items = b"".join(string_at(data + 16 * i, 16) for i in indices)
        create = LIB.PFListCreate if self._pf_tindex == abi.kPFTypeList else LIB.PFArrayCreate
        out = PFAny()
        _check(create(items or None, len(indices), byref(out)))
        return _element(self, take_any(out))

    def __iter__(self):
        i = 0
        while True:
            data, size = _seq_view(self._pf_handle)
            if i >= size:
                return
            yield self._pf_element(data, i)
            i += 1

    def __contains__(self, x) -> bool:
        return any(e is x or e == x for e in self)

    def index(self, x) -> int:
        """Position of the first element equal to ``x`` (ValueError if none)."""
        for i, e in enumerate(self):
            if e is x or e == x:
                return i
        raise ValueError(_msg.text("SEQ_NOT_IN", x, tp_name(type(self))))

    def count(self, x) -> int:
        """Number of elements equal to ``x``."""
        return sum(1 for e in self if e is x or e == x)

    def _pf_comparable(self, other) -> bool:
        return isinstance(other, (list, tuple, _Sequence)) or self is other

    @_python_recursion
    def __eq__(self, other):
        if not self._pf_comparable(other):
            return NotImplemented
        return list(self) == list(other)

    @_python_recursion
    def __ne__(self, other):
        if not self._pf_comparable(other):
            return NotImplemented
        return list(self) != list(other)

    @_python_recursion
    def __hash__(self):
        return hash(tuple(self))

    @_python_recursion
    def __repr__(self):
        return _guarded_repr(self, "[...]", lambda: repr(list(self)))


class Array(_Sequence):
    """An immutable native array (kPFTypeArray); Array(iterable) converts each element."""

    __slots__ = ()

    @staticmethod
    def _pf_make(items: tuple) -> Object:
        return make_sequence(items, LIB.PFArrayCreate)


class List(_Sequence):
    """A mutable native list (kPFTypeList); List(iterable) converts each element."""

    __slots__ = ()
    __hash__ = None  # type: ignore[assignment]

    @staticmethod
    def _pf_make(items: tuple) -> Object:
        return make_sequence(items, LIB.PFListCreate)

    def __init__(self, *args, **kwargs) -> None:
        """As ``list.__init__``: the list then holds the elements of ``args[0]`` (converted first:
        a bad element leaves it unchanged), also when called again on a live List."""
        _no_keywords(type(self), kwargs)
        if len(args) > 1:
            raise TypeError(_msg.text("AT_MOST_ONE_ARGUMENT", tp_name(type(self)), len(args)))
        made = make_sequence(tuple(args[0]) if args else (), LIB.PFListCreate)
        if _take_if_unshared(self, made):
            return
        handle = _handle(self, "packedfun.List")
        _check(LIB.PFListClear(handle))
        data, size = _seq_view(made._pf_handle)
        for i in range(size):  # a shared list is refilled in place: every holder sees it
            _check(LIB.PFListAppend(handle, string_at(data + 16 * i, 16)))

    def __setitem__(self, key, value) -> None:
        i = self._pf_index(key)
        handle = _handle(self, "packedfun.List")
        temps: list = []
        packed = _one_arg(value, temps, "packedfun.List")
        _check(LIB.PFListSetItem(handle, i, packed))

    def __delitem__(self, key) -> None:
        i = self._pf_index(key)
        _check(LIB.PFListPop(_handle(self, "packedfun.List"), i, None))

    @staticmethod
    def _pf_index(key) -> int:
        if not _is_index(key):
            raise TypeError(_msg.text("LIST_BAD_INDEX", tp_name(type(key))))
        return _as_index(key)

    def append(self, value) -> None:
        """Appends ``value`` (converted like an argument)."""
        handle = _handle(self, "packedfun.List")
        temps: list = []
        packed = _one_arg(value, temps, "packedfun.List")
        _check(LIB.PFListAppend(handle, packed))

    def insert(self, index, value) -> None:
        """Inserts ``value`` before ``index`` (clamped like list.insert)."""
        i = _as_index(index, OverflowError)
        handle = _handle(self, "packedfun.List")
        temps: list = []
        packed = _one_arg(value, temps, "packedfun.List")
        _check(LIB.PFListInsert(handle, i, packed))

    def pop(self, index=-1):
        """Removes and returns an element (IndexError when out of range)."""
        i = _as_index(index)
        out = PFAny()
        _check(LIB.PFListPop(_handle(self, "packedfun.List"), i, byref(out)))
        return _element(self, take_any(out))

    def clear(self) -> None:
        """Removes every element."""
        _check(LIB.PFListClear(_handle(self, "packedfun.List")))

    def extend(self, iterable) -> None:
        """Appends every element of ``iterable`` (a snapshot: extending by itself ends)."""
        for value in tuple(iterable):
            self.append(value)

    def __iadd__(self, other):
        self.extend(other)
        return self


class Shape(_Sequence):
    """An immutable tuple of int64 (kPFTypeShape), e.g. a tensor's shape."""

    __slots__ = ()

    @staticmethod
    def _pf_make(items: tuple) -> Object:
        return make_shape(items)

    def _pf_element(self, data: int, i: int):
        return c_int64.from_address(data + 8 * i).value

    def _pf_dims(self) -> tuple:
        data, size = _seq_view(self._pf_handle)
        if not size:
            return ()
        unpack = _unpack_dims.get(size)
        if unpack is None:
            unpack = _unpack_dims[size] = struct.Struct(f"={size}q").unpack
        return unpack(string_at(data, 8 * size))

    def _pf_slice(self, key: slice):
        return self._pf_dims()[key]

    def __iter__(self):
        return iter(self._pf_dims())

    def __hash__(self):
        return hash(self._pf_dims())

    def __repr__(self):
        return repr(self._pf_dims())


# ---- maps ---------------------------------------------------------------------------------------
def _key_hashable(key) -> None:
    """A key a dict refuses (a list, a dict, a tuple holding one...) raises the dict's TypeError:
    converted, it would become a new Array or Map equal to no stored key (as in _core)."""
    if type(key) is not str and type(key) is not int:
        hash(key)


def _check_key(key, packed: bytes) -> None:
    """Raises the refused-key TypeError (packedfun._rules.map_keys, shared with ``_core``),
    naming the key, for a lookup or a store of ``key`` converted into ``packed``."""
    if type(key) in _SELF_KEYS or isinstance(key, Object):  # kinds that convert to themselves
        return
    error = _key_refusal(key, packed, "packedfun.Map")
    if error is not None:
        raise error


def _key_refusal(key, packed: bytes, what: str | None) -> TypeError | None:
    """packedfun._rules.map_keys.refusal of ``key`` converted into ``packed`` (its PFAny)."""
    tindex = _unpack_tindex(packed)[0]
    converted = None
    if tindex < abi.kPFTypeStaticObjectBegin:  # an inline value is read back for the rule
        cell = PFAny.from_buffer_copy(packed)  # kept alive while read
        converted = borrow_any(addressof(cell))
    return _map_keys.refusal(key, tindex, converted, what)


_unpack_tindex = struct.Struct("=i").unpack_from
_SELF_KEYS = frozenset((str, int, float, bool, bytes, type(None)))


def _map_made(cls, args: tuple, kwargs: dict, create) -> Object | None:
    """The native container (``create``: PFMapCreate or PFDictCreate) of a Map/Dict
    constructor's arguments; None for a Dict given no entry. A Map or Dict source is copied
    entry by entry (``_core``'s map_copy): through a Python dict, two keys equal in Python but
    distinct natively (two Arrays with the same elements) would merge into one."""
    if len(args) == 1 and not kwargs and isinstance(args[0], _Mapping) and args[0]._pf_handle:
        entries = list(_native_entries(args[0]._pf_handle))
        out = PFAny()
        parts = b"".join(k + v for k, v in entries) or None
        _check(create(parts, len(entries), byref(out)))
        return wrap(out.v_obj, out.type_index, Object)
    merged = _map_source(cls, args, kwargs)
    if not merged and create is LIB.PFDictCreate:
        return None
    return make_mapping(merged, create)


def _map_source(cls, args: tuple, kwargs: dict) -> dict:
    """The entries of ``Map(...)``/``Dict(...)``'s arguments, as ``dict(*args, **kwargs)``."""
    if len(args) > 1:
        raise TypeError(_msg.text("AT_MOST_ONE_ARGUMENT", tp_name(cls), len(args)))
    merged = dict(args[0]) if args else {}
    merged.update(kwargs)
    return merged


class _Mapping(Object):
    """What Map and Dict share (``_core``'s container_map.c): reads through PFMap*."""

    __slots__ = ("_pf_framework",)  # as _Sequence's
    __hash__ = None  # type: ignore[assignment]

    def __new__(cls, *args, **kwargs):
        if issubclass(cls, Dict):  # empty: __init__ fills it, as a dict's does
            return _native_new(cls, make_mapping({}, LIB.PFDictCreate))
        return _native_new(cls, _map_made(cls, args, kwargs, LIB.PFMapCreate))

    def __len__(self) -> int:
        if not self._pf_handle:
            return 0
        size = c_int64()
        _check(LIB.PFMapSize(self._pf_handle, byref(size)))
        return size.value

    def _pf_lookup(self, key, default):
        handle = _handle(self, tp_name(type(self)))
        _key_hashable(key)
        temps: list = []
        packed = _one_arg(key, temps, "packedfun.Map")
        _check_key(key, packed)
        out = PFAny()
        found = c_int(0)
        _check(LIB.PFMapGetItem(handle, packed, byref(out), byref(found)))
        return _element(self, take_any(out)) if found.value else default

    def __getitem__(self, key):
        value = self._pf_lookup(key, _MISSING)
        if value is _MISSING:
            raise KeyError(key)
        return value

    def get(self, key, default=None):
        """get(key, default=None): the value of ``key``, or ``default``."""
        return self._pf_lookup(key, default)

    def __contains__(self, key) -> bool:
        return self._pf_lookup(key, _MISSING) is not _MISSING

    def _pf_items(self) -> list:
        """``[(key, value), ...]`` in iteration order (a snapshot)."""
        out = PFAny()
        _check(LIB.PFMapItems(_handle(self, tp_name(type(self))), byref(out)))
        try:
            data, size = _seq_view(out.v_obj)
            flat = [_element(self, borrow_any(data + 16 * i)) for i in range(size)]
        finally:
            LIB.PFAnyRelease(byref(out))
        return list(zip(flat[0::2], flat[1::2]))

    def keys(self) -> list:
        """A list of the keys, in iteration order."""
        return [k for k, _ in self._pf_items()]

    def values(self) -> list:
        """A list of the values, in iteration order."""
        return [v for _, v in self._pf_items()]

    def items(self) -> list:
        """A list of (key, value) pairs, in iteration order."""
        return self._pf_items()

    def _pf_iter(self, which: int):
        """Keys (0), values (1) or (key, value) pairs (2) straight from the entries (PFMapIterNext),
        raising RuntimeError when a Dict changes size meanwhile, as a dict does."""
        handle = _handle(self, tp_name(type(self)))
        size, cursor, found = len(self), c_int64(0), c_int(0)
        key, value = PFAny(), PFAny()
        args = (handle, byref(cursor), byref(key), byref(value), byref(found))
        while True:
            if len(self) != size:
                raise RuntimeError(_msg.text("MAP_CHANGED_SIZE", tp_name(type(self))))
            _check(LIB.PFMapIterNext(*args))
            if not found.value:
                return
            if which == 2:
                yield (
                    _element(self, borrow_any(addressof(key))),
                    _element(self, borrow_any(addressof(value))),
                )
            else:
                yield _element(self, borrow_any(addressof(value if which else key)))

    def _pf_iter_values(self):
        """An iterator over the values, in iteration order (no copy)."""
        return self._pf_iter(1)

    def _pf_iter_items(self):
        """An iterator over the (key, value) pairs, in iteration order (no copy)."""
        return self._pf_iter(2)

    def __iter__(self):  # not through keys(): packedfun.container's subclasses make it a view
        return self._pf_iter(0)

    def _pf_dict(self) -> dict:
        return dict(self._pf_items())

    @_python_recursion
    def __eq__(self, other):
        if isinstance(other, _Mapping):
            return self._pf_dict() == other._pf_dict()
        if isinstance(other, dict):
            return self._pf_dict() == other
        return NotImplemented

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    @_python_recursion
    def __repr__(self):
        return _guarded_repr(self, "{...}", lambda: repr(self._pf_dict()))


class Map(_Mapping):
    """An immutable native map (kPFTypeMap); Map(mapping) converts keys and values."""

    __slots__ = ()

    @staticmethod
    def _pf_create():
        return LIB.PFMapCreate


class Dict(_Mapping):
    """A mutable native dict (kPFTypeDict); Dict(mapping) converts keys and values."""

    __slots__ = ()

    @staticmethod
    def _pf_create():
        return LIB.PFDictCreate

    def __init__(self, *args, **kwargs) -> None:
        """As ``dict.__init__``: adds the entries of ``args[0]`` and ``kwargs`` (converted first:
        a bad one leaves the Dict unchanged), also when called again on a live Dict."""
        made = _map_made(type(self), args, kwargs, LIB.PFDictCreate)
        if made is None:
            return
        if _take_if_unshared(self, made, empty_only=True):
            return
        handle = _handle(self, tp_name(type(self)))
        for key, value in _native_entries(made._pf_handle):
            _check(LIB.PFDictSetItem(handle, key, value))

    def __setitem__(self, key, value) -> None:
        handle = _handle(self, tp_name(type(self)))
        _key_hashable(key)
        temps: list = []
        packed_key = _one_arg(key, temps, "packedfun.Map")
        _check_key(key, packed_key)
        packed_value = _one_arg(value, temps, "packedfun.Map")
        _check(LIB.PFDictSetItem(handle, packed_key, packed_value))

    def __delitem__(self, key) -> None:
        handle = _handle(self, tp_name(type(self)))
        _key_hashable(key)
        temps: list = []
        packed = _one_arg(key, temps, "packedfun.Map")
        _check_key(key, packed)
        if LIB.PFDictDelItem(handle, packed):
            # the runtime's KeyError names the key natively; Python's names it as is
            err = c_void_p()
            LIB.PFErrorMoveFromRaised(byref(err))
            LIB.PFObjectDecRef(err.value)
            raise KeyError(key)

    def clear(self) -> None:
        """Removes every entry."""
        _check(LIB.PFDictClear(_handle(self, tp_name(type(self)))))

    def pop(self, key, *default):
        """pop(key[, default]): removes ``key`` and returns its value."""
        if len(default) > 1:
            raise TypeError(_msg.text("POP_ARGUMENTS"))
        value = self._pf_lookup(key, _MISSING)
        if value is _MISSING:
            if default:
                return default[0]
            raise KeyError(key)
        del self[key]
        return value


def _native_entries(handle: int):
    """The (key, value) PFAny bytes of the map at ``handle`` (borrowed), in iteration order."""
    cursor, found, key, value = c_int64(0), c_int(0), PFAny(), PFAny()
    while True:
        _check(LIB.PFMapIterNext(handle, byref(cursor), byref(key), byref(value), byref(found)))
        if not found.value:
            return
        yield bytes(key), bytes(value)


for _cls in (Array, List, Map, Dict, Shape):
    _cls.__module__ = "packedfun"
    C_TYPES.add(_cls)

#: The wrapper class of each built-in container type index.
CONTAINER_CLASSES = {
    abi.kPFTypeArray: Array,
    abi.kPFTypeList: List,
    abi.kPFTypeMap: Map,
    abi.kPFTypeDict: Dict,
    abi.kPFTypeShape: Shape,
}


# ---- Python -> native containers ----------------------------------------------------------------
class _Frame:
    """One Python list/tuple/dict being converted: its elements' PFAny bytes so far, the
    temporaries they point into, and where the next element comes from."""

    __slots__ = ("value", "path", "create", "parts", "temps", "pending", "size", "index")

    def __init__(self, value, path, create) -> None:
        # Read as it was when its conversion began, from its storage (a subclass's __iter__,
        # __len__ or __getitem__ is not called, as in _core); a size change while its elements
        # convert raises RuntimeError after the element that made it (docs/calling.md).
        self.value = value
        self.path = path
        self.parts: list = []
        self.temps: list = []
        self.index = 0
        if isinstance(value, dict):
            self.create = create or LIB.PFMapCreate
            # key, then value, each under the key's path
            self.pending: list = list(dict.items(value))
        else:
            self.create = create or LIB.PFArrayCreate
            self.pending = list(list.__iter__(value) if isinstance(value, list) else
                                tuple.__iter__(value))  # fmt: skip
        self.size = len(self.pending)

    def next(self, packer):
        """``(element, path, is_key)`` of the next element, or None when every one is converted."""
        value, i = self.value, self.index
        is_dict = isinstance(value, dict)
        if i and not (is_dict and i & 1) and self._changed():
            kind = "dict" if is_dict else "list"
            what = _msg.text("CONTAINER_CHANGED_SIZE", kind)
            raise RuntimeError(_pack._arg_message(packer.fname, self.path, what))
        if i >= (2 * self.size if is_dict else self.size):
            return None
        self.index = i + 1
        if not is_dict:
            return self.pending[i], _subpath(self.path, f"[{i}]"), False
        key, item = self.pending[i >> 1]
        return (item if i & 1 else key), _subpath(self.path, f"[{key!r}]"), not i & 1

    def _changed(self) -> bool:
        value = self.value
        if isinstance(value, dict):
            return dict.__len__(value) != self.size
        return isinstance(value, list) and list.__len__(value) != self.size

    def finish(self) -> Object:
        out = PFAny()
        parts = b"".join(self.parts) if self.parts else None
        count = self.size if isinstance(self.value, dict) else len(self.parts)
        _check(self.create(parts, count, byref(out)))
        return wrap(out.v_obj, out.type_index, Object)  # a plain holder: no object factory


def pack_container(packer, value, create=None) -> Object:
    """A new native Array (list/tuple) or Map (dict), or the kind ``create`` makes, holding the
    converted elements of ``value``, nested containers converted the same way (iteratively, so
    the nesting limit is ``sys.getrecursionlimit()`` as in ``_core``, never this stack).
    ``packer`` (a :class:`packedfun._ctypes.pack._Packer`) converts the other elements with its
    ``pos`` set to the element's path (``0[3]['k']``; ``value[3]`` outside an argument); its
    ``active`` set holds the containers on the current path (met again: it contains itself).
    Elements converted before a failure are released with their frame."""
    root = _pack.ValuePath() if packer.pos is None else packer.pos
    outer_pos, outer_temps = packer.pos, packer.temps
    stack = [_enter(packer, value, root, create, 0)]
    try:
        while True:
            frame = stack[-1]
            item = frame.next(packer)
            if item is None:
                made = frame.finish()
                stack.pop()
                packer.active.discard(id(frame.value))
                if not stack:
                    return made
                stack[-1].temps.append(made)
                stack[-1].parts.append(_pack_ptr(made._pf_tindex, 0, made._pf_handle))
            elif item[2] and packer.python_keys:  # a dict key of a container Python reads
                frame.parts.append(_pack_key(packer, frame, item))
            elif isinstance(item[0], (list, tuple, dict)):
                stack.append(_enter(packer, item[0], item[1], None, len(stack)))
            else:
                packer.pos, packer.temps = item[1], frame.temps
                try:
                    frame.parts.append(packer.pack(item[0]))
                except Exception as exc:
                    _note_element_error(exc, packer.fname, item[1])
                    raise
    finally:
        packer.pos, packer.temps = outer_pos, outer_temps
        for frame in stack:
            packer.active.discard(id(frame.value))


def _pack_key(packer, frame: _Frame, item: tuple) -> bytes:
    """The PFAny of the dict key ``item[0]``, refused (packedfun._rules.map_keys) when conversion
    makes it a new object: a tuple, refused before its Array is built, or a callable or another
    object."""
    key, path = item[0], item[1]
    packer.pos, packer.temps = path, frame.temps
    if isinstance(key, (list, tuple, dict)):
        error = _map_keys.refusal(key, abi.kPFTypeArray, None)
    else:
        try:
            packed = packer.pack(key)
        except Exception as exc:
            _note_element_error(exc, packer.fname, path)
            raise
        if type(key) in _SELF_KEYS or isinstance(key, Object):
            return packed
        error = _key_refusal(key, packed, None)
        if error is None:
            return packed
    raise TypeError(_pack._arg_message(packer.fname, path, str(error)))


def _note_element_error(exc: Exception, fname, path) -> None:
    """Adds ``_core``'s note naming the element to an error its own message does not name."""
    if isinstance(exc, UnicodeEncodeError) and exc.reason.startswith(
        _pack._arg_message(fname, path, "")
    ):
        return  # a str's encode error: its reason names the path already
    if not hasattr(exc, "add_note"):  # Python < 3.11
        return
    if isinstance(exc, OverflowError) and str(exc).startswith(_pack._arg_message(fname, path, "")):
        return  # an int out of range: the message names the path already
    if not getattr(exc, "__notes__", None):  # a str's encode error has it already
        _pack._add_note(exc, fname, path)


def _enter(packer, value, path, create, depth: int) -> _Frame:
    if id(value) in packer.active:
        what = _msg.text("CONTAINER_CONTAINS_ITSELF")
        raise ValueError(_pack._arg_message(packer.fname, path, what))
    if depth >= sys.getrecursionlimit():
        raise RecursionError("maximum recursion depth exceeded" + _msg.text("CONTAINER_TOO_DEEP"))
    frame = _Frame(value, path, create)
    packer.active.add(id(value))
    return frame


def _subpath(pos, piece: str):
    """The path ``pos`` (an argument position, its path, or a ValuePath) extended by ``piece``."""
    if isinstance(pos, _pack.ValuePath):
        return _pack.ValuePath(pos + piece)
    return f"{pos}{piece}"


def make_sequence(items, create) -> Object:
    """A new Array or List (``create``: PFArrayCreate or PFListCreate) holding ``items``, as
    ``_core``'s constructors make it (errors name ``value[i]``)."""
    return pack_container(_pack.new_packer([]), tuple(items), create)


def make_mapping(mapping: dict, create) -> Object:
    """A new Map or Dict (``create``: PFMapCreate or PFDictCreate) of the pairs of ``mapping``."""
    return pack_container(_pack.new_packer([]), mapping, create)


def make_shape(items) -> Object:
    """A new Shape of the ints ``items`` (TypeError names a bad dimension)."""
    dims = []
    for i, d in enumerate(items):
        if isinstance(d, bool) or not _is_index(d):
            raise TypeError(_msg.text("SHAPE_DIM_NOT_INT", i, tp_name(type(d))))
        value = d.__index__()
        if not -(1 << 63) <= value < (1 << 63):
            size = "large" if value > 0 else "small"
            raise OverflowError(_msg.text("SHAPE_DIM_OVERFLOW", i, size))
        dims.append(value)
    out = c_void_p()
    _check(LIB.PFShapeCreate((c_int64 * len(dims))(*dims), len(dims), byref(out)))
    return wrap(out.value or 0, abi.kPFTypeShape, Object)


from . import pack as _pack  # noqa: E402  (imports this module at its end)
