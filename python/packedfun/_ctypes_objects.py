# The ctypes backend's object system: type-table reads, class dispatch, reflected fields and methods.
"""Reflection of :mod:`packedfun._ctypes_backend` (issue 3), over ``PFTypeGetInfo`` alone.

Fields are read and written through the ``PFFieldGetter``/``PFFieldSetter`` of their
``PFFieldInfo`` (called at ``handle + offset``), methods are the Functions of ``PFMethodInfo``.
Type indices without a registered Python class wrap as the built-in container classes or as
``Object``.
"""

from __future__ import annotations

from ctypes import POINTER, byref, c_int32

from . import _ctypes_abi as abi
from ._ctypes_abi import LIB, PFAny, PFByteArray
from ._ctypes_values import (
    Object,
    make_function,
    raise_last_error,
    take_any,
    tp_name,
)

_IncRef = LIB.PFObjectIncRef
_TypeGetInfo = LIB.PFTypeGetInfo


def default_class(tindex: int) -> type:
    """The class of objects of ``tindex`` when no Python class is registered for it."""
    return _containers.CONTAINER_CLASSES.get(tindex, Object)


# ---- the type table ------------------------------------------------------------------------------
def _info(tindex: int):
    """The PFTypeInfo of ``tindex`` (IndexError from the runtime when unknown)."""
    out = POINTER(abi.PFTypeInfo)()
    if _TypeGetInfo(tindex, byref(out)):
        raise_last_error()
    return out.contents


def _text(view) -> str:
    return abi.read_bytes(view).decode("utf-8")


def type_key_to_index(type_key: str) -> int:
    """The type index of ``type_key`` (KeyError from the runtime when unknown)."""
    if not isinstance(type_key, str):
        raise TypeError(f"type key must be a str, got {tp_name(type(type_key))}")
    data = type_key.encode("utf-8")
    view = PFByteArray(data, len(data))
    out = c_int32()
    if LIB.PFTypeKeyToIndex(byref(view), byref(out)):
        raise_last_error()
    return out.value


def type_index_to_key(tindex: int) -> str:
    """The type key of ``tindex``."""
    return _text(_info(tindex).type_key)


def type_ancestors(tindex: int) -> list:
    """``[root, ..., tindex]``: the type's ancestors by depth, the type itself last."""
    info = _info(tindex)
    return [info.ancestors[d] for d in range(info.depth + 1)]


def type_is_instance(tindex: int, base: int) -> bool:
    """Whether ``tindex`` is ``base`` or derives from it (O(1) in the runtime)."""
    return bool(LIB.PFTypeIsInstance(tindex, base))


def type_doc(tindex: int) -> str:
    """The docstring of the type ("" when none)."""
    return _text(_info(tindex).doc)


def type_fields(tindex: int) -> list:
    """The type's own reflected fields as :class:`FieldInfo` (not its parents')."""
    info = _info(tindex)
    return [FieldInfo(tindex, info.fields[i]) for i in range(info.num_fields)]


def type_methods(tindex: int) -> list:
    """The type's own methods as ``(name, doc, Function, is_static)`` (not its parents')."""
    info = _info(tindex)
    result = []
    for i in range(info.num_methods):
        method = info.methods[i]
        _IncRef(method.method)
        func = make_function(method.method, _text(method.name))
        is_static = bool(method.flags & abi.PACKEDFUN_METHOD_STATIC)
        result.append((_text(method.name), _text(method.doc), func, is_static))
    return result


# ---- fields -------------------------------------------------------------------------------------
class FieldInfo:
    """One reflected field: reads and writes it on objects through its getter/setter."""

    __slots__ = ("type_index", "name", "doc", "offset", "readonly", "static_type_index",
                 "_getter", "_setter")

    def __init__(self, tindex: int, info) -> None:
        self.type_index = tindex
        self.name = _text(info.name)
        self.doc = _text(info.doc)
        self.offset = info.offset
        self.static_type_index = info.static_type_index
        self.readonly = bool(info.flags & abi.PACKEDFUN_FIELD_READONLY) or not info.setter
        self._getter = abi.PFFieldGetter(info.getter)
        self._setter = abi.PFFieldSetter(info.setter) if info.setter else None

    def get(self, obj: Object):
        """The field's value on ``obj``."""
        handle = _field_owner(obj, self)
        out = PFAny()
        if self._getter(handle + self.offset, byref(out)):
            raise_last_error()
        return take_any(out)

    def set(self, obj: Object, value) -> None:
        """Writes ``value`` (converted as an argument) into the field of ``obj``."""
        handle = _field_owner(obj, self)
        if self._setter is None:
            raise AttributeError(f"field '{self.name}' of {type_index_to_key(self.type_index)} "
                                 "is read-only")
        temps: list = []
        packed = _pack.pack_value(value, temps)
        view = PFAny.from_buffer_copy(packed)
        if self._setter(handle + self.offset, byref(view)):
            raise_last_error()


def _field_owner(obj, field: FieldInfo) -> int:
    """The handle of ``obj`` after checking that it has ``field``."""
    if not isinstance(obj, Object) or not obj._pf_handle:
        raise TypeError(f"field '{field.name}' needs a non-empty packedfun.Object, "
                        f"got {tp_name(type(obj))}")
    if not type_is_instance(obj._pf_tindex, field.type_index):
        raise TypeError(f"field '{field.name}' of {type_index_to_key(field.type_index)} read on "
                        f"an object of type {type_index_to_key(obj._pf_tindex)}")
    return obj._pf_handle


from . import _ctypes_containers as _containers  # noqa: E402
from . import _ctypes_pack as _pack  # noqa: E402
