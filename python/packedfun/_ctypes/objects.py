# The ctypes backend's object system: type table, class dispatch, reflected fields and methods.
"""Reflection of :mod:`packedfun._ctypes.backend`, over ``PFTypeGetInfo`` alone.

Fields are read and written through the ``PFFieldGetter``/``PFFieldSetter`` of their
``PFFieldInfo`` (called at ``handle + offset``), methods are the Functions of ``PFMethodInfo``.
Type indices without a registered Python class wrap as the built-in container classes or as
``Object``.
"""

from __future__ import annotations

import operator
from ctypes import POINTER, byref, c_int32, c_void_p
from types import MethodType
from typing import Any

from .._rules import messages as _msg
from .._rules import signature as _signature
from . import abi as abi
from .abi import LIB, PFAny, PFByteArray
from .values import (
    C_TYPES,
    RAW_ORDER,
    Function,
    Object,
    already_initialized,
    bind,
    make_function,
    raise_last_error,
    take_any,
    tp_name,
)

_IncRef = LIB.PFObjectIncRef
_DecRef = LIB.PFObjectDecRef
_IsInstance = LIB.PFTypeIsInstance
_TypeGetInfo = LIB.PFTypeGetInfo


def default_class(tindex: int) -> type:
    """The class of objects of ``tindex`` when no Python class is registered for it."""
    return _containers.CONTAINER_CLASSES.get(tindex, Object)


# ---- the type table ------------------------------------------------------------------------------
def _info(tindex: int):
    """The PFTypeInfo of ``tindex`` (IndexError from the runtime when unknown)."""
    out = POINTER(abi.PFTypeInfo)()
    if _TypeGetInfo(operator.index(tindex), byref(out)):
        raise_last_error()
    return out.contents


def _text(view) -> str:
    return abi.read_bytes(view).decode("utf-8", "replace")


def type_key_to_index(type_key: str) -> int:
    """The type index of ``type_key`` (KeyError when unknown)."""
    if not isinstance(type_key, str):
        raise TypeError(_msg.text("TYPE_KEY_NOT_STR"))
    data = type_key.encode("utf-8")
    view = PFByteArray(data, len(data))
    out = c_int32()
    if LIB.PFTypeKeyToIndex(byref(view), byref(out)):
        err = c_void_p()
        LIB.PFErrorMoveFromRaised(byref(err))
        _DecRef(err.value)
        raise KeyError(_msg.text("TYPE_KEY_UNKNOWN", type_key))
    return out.value


def type_is_instance(tindex: int, base: int) -> bool:
    """Whether ``tindex`` is ``base`` or derives from it (O(1) in the runtime)."""
    return bool(LIB.PFTypeIsInstance(tindex, base))


def type_info(tindex: int) -> dict:
    """Everything PFTypeGetInfo says of ``tindex``, as a fresh dict (the type's OWN fields and
    methods only; IndexError from the runtime for an unknown index)."""
    info = _info(tindex)
    type_key = _text(info.type_key)
    fields = []
    for i in range(info.num_fields):
        field = info.fields[i]
        fields.append(
            {
                "name": _text(field.name),
                "doc": _text(field.doc),
                "readonly": bool(field.flags & abi.PACKEDFUN_FIELD_READONLY) or not field.setter,
                "static_type_index": field.static_type_index,
                "offset": field.offset,
            }
        )
    methods = []
    for i in range(info.num_methods):
        method = info.methods[i]
        name = _text(method.name)
        _IncRef(method.method)
        methods.append(
            {
                "name": name,
                "doc": _text(method.doc),
                "is_static": bool(method.flags & abi.PACKEDFUN_METHOD_STATIC),
                "func": make_function(method.method, f"{type_key}.{name}"),
            }
        )
    return {
        "type_index": info.type_index,
        "type_key": type_key,
        "depth": info.depth,
        "ancestors": tuple(info.ancestors[d] for d in range(info.depth + 1)),
        "doc": _text(info.doc),
        "fields": fields,
        "methods": methods,
    }


# ---- descriptors --------------------------------------------------------------------------------
class FieldDescriptor:
    """FieldDescriptor(type_index, name): reads/writes a reflected field of an object.

    A data descriptor for the own field ``name`` of ``type_index``; every read and write goes
    through the field's getter/setter (``PFFieldInfo``) at ``handle + offset``."""

    # slots make the attributes visible on the class, as _core's members are
    __slots__ = ("type_index", "readonly", "_offset", "_getter", "_setter", "__dict__")

    def __init__(self, type_index: int, name: str) -> None:
        if not isinstance(name, str):
            raise TypeError(
                f"FieldDescriptor() argument 'name' must be str, not {tp_name(type(name))}"
            )
        info = _info(type_index)
        type_key = _text(info.type_key)
        for i in range(info.num_fields):
            field = info.fields[i]
            if _text(field.name) == name:
                break
        else:
            raise KeyError(_msg.text("TYPE_HAS_NO_FIELD", type_key, name))
        self.type_index = type_index
        self.readonly = bool(field.flags & abi.PACKEDFUN_FIELD_READONLY) or not field.setter
        self.__name__ = name
        self.__qualname__ = f"{type_key}.{name}"
        self.__doc__ = _text(field.doc) or None  # no docstring: None, as on a Python attribute
        self._offset = field.offset
        self._getter = abi.PFFieldGetter(field.getter)
        self._setter = None if self.readonly else abi.PFFieldSetter(field.setter)

    def _target(self, obj) -> int:
        """The handle of ``obj`` when it has this field (TypeError/ValueError otherwise)."""
        if not isinstance(obj, Object):
            raise TypeError(_msg.text("FIELD_NOT_AN_OBJECT", self.__qualname__, tp_name(type(obj))))
        handle = obj._pf_handle
        if not handle:
            raise ValueError(_msg.text("FIELD_OBJECT_EMPTY", self.__qualname__))
        tindex = obj._pf_tindex
        if tindex != self.type_index and not _IsInstance(tindex, self.type_index):
            raise TypeError(_msg.text("FIELD_WRONG_TYPE", self.__qualname__, tindex))
        return handle

    def __get__(self, obj, cls=None):
        if obj is None:
            return self
        out = PFAny()
        if self._getter(self._target(obj) + self._offset, byref(out)):
            raise_last_error(self.__qualname__)
        return take_any(out)

    def __set__(self, obj, value) -> None:
        if self.readonly:
            raise AttributeError(_msg.text("FIELD_READONLY", self.__name__, tp_name(type(obj))))
        address = self._target(obj) + self._offset
        temps: list = []
        packed = _pack.new_packer(temps, self.__qualname__, 0).pack(value)
        setter = self._setter
        assert setter is not None  # read-only fields have none and were refused above
        if setter(address, PFAny.from_buffer_copy(packed)):
            try:
                raise_last_error(self.__qualname__)
            except (TypeError, OverflowError) as exc:
                # The setter says what it expected; name the field in front of it.
                raise type(exc)(f"{self.__qualname__}: {exc}") from None

    def __delete__(self, obj) -> None:
        raise AttributeError(_msg.text("FIELD_NOT_DELETABLE", self.__name__, tp_name(type(obj))))

    def __repr__(self):
        return f"<packedfun field {self.__qualname__}>"


class MethodDescriptor:
    """MethodDescriptor(func, name, doc=None): a reflected instance method.

    Binds like a Python function: ``obj.method(*args)`` calls ``func(obj, *args)``."""

    __slots__ = ("__func__", "__dict__")

    def __init__(self, func, name: str, doc=None) -> None:
        _check_function(type(self), func)
        if not isinstance(name, str):
            raise TypeError(
                f"MethodDescriptor() argument 'name' must be str, not {tp_name(type(name))}"
            )
        self.__func__ = func
        self.__name__ = name
        self.__doc__ = doc

    def __get__(self, obj, cls=None):
        return self if obj is None else MethodType(self, obj)

    @property
    def __signature__(self):
        return _signature.method_signature(self.__func__, isinstance(self, ConstructorDescriptor))

    def __call__(self, *args, **kwargs):
        return self.__func__(*args, **kwargs)

    def __repr__(self):
        return _msg.text("METHOD_REPR", self.__name__, self.__func__)


class ConstructorDescriptor(MethodDescriptor):
    """ConstructorDescriptor(ctor): an __init__ that fills the instance from ctor(*args)."""

    __slots__ = ()

    def __init__(self, ctor) -> None:
        _check_function(type(self), ctor)
        self.__func__ = ctor
        self.__name__ = "__init__"
        self.__doc__ = _signature.function_doc(ctor)

    def __call__(self, *args, **kwargs):
        if not args or not isinstance(args[0], Object):
            raise TypeError(_msg.text("METHOD_NEEDS_OBJECT", self.__name__))
        if args[0]._pf_handle:
            raise already_initialized(args[0])
        made = self.__func__(*args[1:], **kwargs)
        if not isinstance(made, Object) or not made._pf_handle:
            raise TypeError(
                _msg.text("CONSTRUCTOR_MADE_NO_OBJECT", self.__name__, tp_name(type(made)))
            )
        target = args[0]
        handle = made._pf_handle
        _IncRef(handle)
        del made
        old = target._pf_handle
        target._pf_handle, target._pf_tindex = handle, c_int32.from_address(handle + 8).value
        target._pf_raw = handle.to_bytes(8, RAW_ORDER)
        if old:
            _DecRef(old)
        bind(target)


def fast_construct(cls) -> None:
    """``_core`` calls a reflected class's constructor straight from the class call; here the
    class call keeps CPython's own path through ``__init__`` (nothing faster to install)."""
    if not (isinstance(cls, type) and issubclass(cls, Object)):
        raise TypeError(_msg.text("FAST_CONSTRUCT_NOT_A_CLASS"))


def set_type_name(cls, name: str) -> None:
    """``_core`` makes ``name`` the class's ``tp_name``, which CPython's own messages print. Here
    :func:`tp_name` (this backend's messages) reads it from the class, and a ``__getattr__`` hook
    raises the AttributeError CPython raises there (unless the class defines its own)."""
    if not (isinstance(cls, type) and issubclass(cls, Object)):
        raise TypeError(_msg.text("SET_TYPE_NAME_NOT_A_CLASS"))
    if not isinstance(name, str):
        raise TypeError(_msg.text("TYPE_NAME_NOT_STR"))
    if "\0" in name:
        raise ValueError(_msg.text("TYPE_NAME_NUL"))
    named: Any = cls  # attributes of our own on a user's class
    named._pf_tp_name = (cls.__name__, name)
    if cls.__dict__.get("__getattr__", _missing_attribute) is _missing_attribute:
        named.__getattr__ = _missing_attribute


def _missing_attribute(self, name: str):
    """``__getattr__`` of the classes :func:`set_type_name` named (called only after the normal
    lookup failed): CPython's message, with the name ``_core`` would show."""
    err = AttributeError(f"'{tp_name(type(self)):.100}' object has no attribute '{name}'")
    err.name, err.obj = name, self  # as Python 3.10+ sets them, for "did you mean" hints
    try:
        raise err
    finally:
        # The traceback holds this frame: a local naming the error would make a cycle (error ->
        # traceback -> frame -> error) that keeps `self` and the caller's frames alive until a
        # collection, and so outlive a `del` (getattr(obj, name, default) swallows the error).
        del err


class ModuleFunctionDescriptor:
    """ModuleFunctionDescriptor(func, name): a module's function as a class attribute of its
    Module. Reading it gives ``func``; calling it through the class drops the module argument.
    ``_core``'s twin is a method descriptor that CPython calls without a bound method; here
    ``mod.name`` reads ``func`` through ``__get__`` and calls it (same results, no fast call)."""

    __slots__ = ("__func__", "__name__")

    def __init__(self, func, name) -> None:
        _check_function(ModuleFunctionDescriptor, func)
        if not isinstance(name, str):
            raise TypeError(
                f"ModuleFunctionDescriptor() argument 'name' must be str, not {tp_name(type(name))}"
            )
        self.__func__ = func
        self.__name__ = name

    def __get__(self, obj, cls=None):
        return self.__func__

    def __call__(self, *args, **kwargs):
        if not args:
            raise TypeError(_msg.text("MODULE_FUNCTION_NEEDS_MODULE", self.__name__))
        return self.__func__(*args[1:], **kwargs)

    def __repr__(self) -> str:
        return f"<packedfun module function {self.__name__} of {self.__func__!r}>"


def _check_function(cls, func) -> None:
    if not isinstance(func, Function):
        raise TypeError(_msg.text("DESCRIPTOR_NEEDS_FUNCTION", tp_name(cls), tp_name(type(func))))


for _cls in (FieldDescriptor, MethodDescriptor, ConstructorDescriptor):
    _cls.__module__ = "packedfun._core"  # named as _core's C types are
    C_TYPES.add(_cls)

from . import containers as _containers  # noqa: E402
from . import pack as _pack  # noqa: E402
