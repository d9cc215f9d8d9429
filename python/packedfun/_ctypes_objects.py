# The ctypes backend's object system: type-table reads, class dispatch, reflected fields and methods.
"""Reflection of :mod:`packedfun._ctypes_backend` (issue 3), over ``PFTypeGetInfo`` alone.

Fields are read and written through the ``PFFieldGetter``/``PFFieldSetter`` of their
``PFFieldInfo`` (called at ``handle + offset``), methods are the Functions of ``PFMethodInfo``.
Type indices without a registered Python class wrap as the built-in container classes or as
``Object``.
"""

from __future__ import annotations

from ctypes import POINTER, byref, c_int32
from types import MethodType

from . import _ctypes_abi as abi
from ._ctypes_abi import LIB, PFAny, PFByteArray
from ._ctypes_values import (
    Function,
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


def type_is_instance(tindex: int, base: int) -> bool:
    """Whether ``tindex`` is ``base`` or derives from it (O(1) in the runtime)."""
    return bool(LIB.PFTypeIsInstance(tindex, base))


def type_info(tindex: int) -> dict:
    """Everything PFTypeGetInfo says of ``tindex``, as a fresh dict (the type's OWN fields and
    methods only; IndexError from the runtime for an unknown index)."""
    info = _info(tindex)
    fields = []
    for i in range(info.num_fields):
        field = info.fields[i]
        fields.append({
            "name": _text(field.name),
            "doc": _text(field.doc),
            "readonly": bool(field.flags & abi.PACKEDFUN_FIELD_READONLY) or not field.setter,
            "static_type_index": field.static_type_index,
        })
    methods = []
    for i in range(info.num_methods):
        method = info.methods[i]
        name = _text(method.name)
        _IncRef(method.method)
        methods.append({
            "name": name,
            "doc": _text(method.doc),
            "is_static": bool(method.flags & abi.PACKEDFUN_METHOD_STATIC),
            "func": make_function(method.method, name),
        })
    return {
        "type_index": info.type_index,
        "type_key": _text(info.type_key),
        "depth": info.depth,
        "ancestors": tuple(info.ancestors[d] for d in range(info.depth + 1)),
        "doc": _text(info.doc),
        "fields": fields,
        "methods": methods,
    }


# ---- descriptors --------------------------------------------------------------------------------
class FieldDescriptor:
    """FieldDescriptor(type_index, name)

    Data descriptor of one reflected field of ``type_index`` (its own field ``name``): reads
    and writes go through the field's getter and setter every time."""

    __slots__ = ("type_index", "readonly", "__name__", "__doc__", "_offset", "_getter",
                 "_setter", "_type_key")

    def __init__(self, type_index: int, name: str) -> None:
        info = _info(type_index)
        for i in range(info.num_fields):
            field = info.fields[i]
            if _text(field.name) == name:
                break
        else:
            raise KeyError(f"{_text(info.type_key)} has no field '{name}'")
        self.type_index = type_index
        self.__name__ = name
        self.__doc__ = _text(field.doc) or None
        self.readonly = bool(field.flags & abi.PACKEDFUN_FIELD_READONLY) or not field.setter
        self._offset = field.offset
        self._getter = abi.PFFieldGetter(field.getter)
        self._setter = None if self.readonly else abi.PFFieldSetter(field.setter)
        self._type_key = _text(info.type_key)

    def _address(self, obj) -> int:
        """Where the field lives in ``obj`` (after checking that ``obj`` has it)."""
        if not isinstance(obj, Object):
            raise TypeError(f"field '{self.__name__}' of {self._type_key} needs a "
                            f"packedfun.Object, got {tp_name(type(obj))}")
        handle = obj._pf_handle
        if not handle:
            raise ValueError(f"field '{self.__name__}' of {self._type_key} read on an empty "
                             "object")
        tindex = obj._pf_tindex
        if tindex != self.type_index and not LIB.PFTypeIsInstance(tindex, self.type_index):
            raise TypeError(f"field '{self.__name__}' of {self._type_key} read on an object "
                            f"of type {type_index_to_key(tindex)}")
        return handle + self._offset

    def __get__(self, obj, cls=None):
        if obj is None:
            return self
        out = PFAny()
        if self._getter(self._address(obj), byref(out)):
            raise_last_error()
        return take_any(out)

    def __set__(self, obj, value) -> None:
        address = self._address(obj)
        if self._setter is None:
            raise AttributeError(f"field '{self.__name__}' of {self._type_key} is read-only")
        temps: list = []
        view = PFAny.from_buffer_copy(_pack.pack_value(value, temps))
        if self._setter(address, byref(view)):
            raise_last_error()

    def __delete__(self, obj) -> None:
        raise AttributeError(f"field '{self.__name__}' of {self._type_key} cannot be deleted")

    def __repr__(self):
        return f"<packedfun.FieldDescriptor '{self.__name__}' of {self._type_key}>"


class MethodDescriptor:
    """MethodDescriptor(func, name, doc=None)

    An instance method: binds like a Python function, calling ``func(self, *args)``."""

    __slots__ = ("__func__", "__name__", "__doc__")

    def __init__(self, func, name: str, doc=None) -> None:
        if not isinstance(func, Function):
            raise TypeError(
                f"MethodDescriptor expects a packedfun.Function, got {tp_name(type(func))}"
            )
        self.__func__ = func
        self.__name__ = name
        self.__doc__ = doc

    def __get__(self, obj, cls=None):
        return self if obj is None else MethodType(self, obj)

    def __call__(self, self_obj, *args):
        return self.__func__(self_obj, *args)

    def __repr__(self):
        return f"<packedfun.MethodDescriptor '{self.__name__}'>"


class ConstructorDescriptor:
    """ConstructorDescriptor(ctor)

    Used as a class's ``__init__``: fills the new wrapper with the object ``ctor(*args)``
    returns (``self.__init_handle_by_constructor__(ctor, *args)``)."""

    __slots__ = ("__func__", "__doc__")

    def __init__(self, ctor) -> None:
        if not isinstance(ctor, Function):
            raise TypeError(
                f"ConstructorDescriptor expects a packedfun.Function, got {tp_name(type(ctor))}"
            )
        self.__func__ = ctor
        self.__doc__ = None

    def __get__(self, obj, cls=None):
        return self if obj is None else MethodType(self, obj)

    def __call__(self, self_obj, *args) -> None:
        self_obj.__init_handle_by_constructor__(self.__func__, *args)

    @property
    def __name__(self) -> str:
        return "__init__"


for _cls in (FieldDescriptor, MethodDescriptor, ConstructorDescriptor):
    _cls.__module__ = "packedfun"

from . import _ctypes_containers as _containers  # noqa: E402
from . import _ctypes_pack as _pack  # noqa: E402
