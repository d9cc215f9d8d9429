# Object wrappers, Python <-> PFAny conversion and error translation of the ctypes backend.
"""The machinery of :mod:`packedfun._ctypes_backend`: wrappers owning native objects, packing of
Python arguments into ``PFAny`` arrays, unpacking of results, Python callables and Python objects
handed to native code, and errors crossing the boundary in both directions.

Python objects handed to native code (callables behind a Function, any other object behind an
Opaque) are kept in ``_handles`` under an integer id; that id is the native ``self``/``handle`` and
the one ``free_handle`` callback drops the entry when the native object dies, so each Python
object lives exactly as long as the native object that owns it.
"""

from __future__ import annotations

import ctypes
import itertools
import struct
import sys
from ctypes import addressof, byref, c_int32, c_void_p, string_at

from . import _ctypes_abi as abi
from ._ctypes_abi import LIB, PFAny, PFByteArray

_IncRef = LIB.PFObjectIncRef
_DecRef = LIB.PFObjectDecRef
_CallRaw = abi.CALL_RAW
_ViewToOwned = LIB.PFAnyViewToOwned
_AnyRelease = LIB.PFAnyRelease

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1

_pack_int = struct.Struct("=iIq").pack
_pack_float = struct.Struct("=iId").pack
_pack_ptr = struct.Struct("=iIQ").pack
_unpack_int = struct.Struct("=iIq").unpack_from
_unpack_ptr = struct.Struct("=iIQ").unpack_from
_unpack_float = struct.Struct("=iId").unpack_from
_unpack_view = struct.Struct("=QQ").unpack_from
_NONE = _pack_int(abi.kPFTypeNone, 0, 0)
_TRUE = _pack_int(abi.kPFTypeBool, 0, 1)
_FALSE = _pack_int(abi.kPFTypeBool, 0, 0)

# ---- Python objects owned by native objects ------------------------------------------------------
_handles: dict = {}
_next_id = itertools.count(1)


def _free_handle(key):
    try:
        _handles.pop(key, None)
    except Exception:  # interpreter shutdown: module globals may already be gone
        pass


_free_handle_c = abi.FreeHandle(_free_handle)
#: address of the free_handle callback; an Opaque whose free_handle is this one is ours.
FREE_HANDLE_ADDR = ctypes.cast(_free_handle_c, c_void_p).value


def hold(obj) -> int:
    """Stores ``obj`` under a fresh id (the native ``self``/``handle``) and returns the id."""
    key = next(_next_id)
    _handles[key] = obj
    return key


def make_opaque(obj) -> int:
    """A new Opaque object (new ref, as an address) owning a reference to ``obj``."""
    key = hold(obj)
    out = c_void_p()
    if LIB.PFOpaqueObjectCreate(key, _free_handle_c, byref(out)):
        _handles.pop(key, None)
        raise_last_error()
    return out.value


def opaque_payload(handle: int):
    """``(True, obj)`` when ``handle`` is an Opaque made by this backend, else ``(False, None)``."""
    if c_int32.from_address(handle + 8).value != abi.kPFTypeOpaque:
        return False, None
    op = abi.PFOpaqueObject.from_address(handle)
    if op.free_handle != FREE_HANDLE_ADDR:
        return False, None
    return True, _handles.get(op.handle)


# ---- object wrappers -----------------------------------------------------------------------------
class Object:
    """Base class of every FFI object wrapper; holds one reference to the native object."""

    __slots__ = ("_pf_handle", "_pf_tindex", "__weakref__")

    def __new__(cls, *args, **kwargs):
        self = object.__new__(cls)
        self._pf_handle = 0
        self._pf_tindex = abi.kPFTypeNone
        return self

    def __del__(self):
        handle = getattr(self, "_pf_handle", 0)
        if handle:
            self._pf_handle = 0
            try:
                _DecRef(handle)
            except Exception:  # interpreter shutdown
                pass

    @property
    def handle(self) -> int:
        """Address of the native PFObject (0 when empty)."""
        return self._pf_handle

    @property
    def type_index(self) -> int:
        """The native object's most derived type index."""
        return self._pf_tindex

    @property
    def type_key(self) -> str:
        """Type key of the native object ("None" when empty)."""
        return type_key_of(self._pf_handle)

    def same_as(self, other) -> bool:
        """Whether ``other`` wraps the same native object."""
        if self is other:
            return True
        if not isinstance(other, Object):
            return False
        return self._pf_handle != 0 and self._pf_handle == other._pf_handle

    def __eq__(self, other):
        if not isinstance(other, Object):
            return NotImplemented
        return self.same_as(other)

    def __ne__(self, other):
        if not isinstance(other, Object):
            return NotImplemented
        return not self.same_as(other)

    def __hash__(self):
        addr = self._pf_handle or id(self)
        rotated = ((addr >> 4) | (addr << 60)) & 0xFFFFFFFFFFFFFFFF
        if rotated >= 1 << 63:
            rotated -= 1 << 64
        return -2 if rotated == -1 else rotated

    def __repr__(self):
        return f"<{tp_name(type(self))} {type_key_of(self._pf_handle)} at {self._pf_handle:#x}>"

    def __init_handle_by_constructor__(self, ctor, *args):
        """Fills this wrapper with the object that ``ctor(*args)`` returns."""
        if not isinstance(ctor, Function):
            raise TypeError("__init_handle_by_constructor__ expects a packedfun.Function first")
        result = ctor(*args)
        if not isinstance(result, Object) or not result._pf_handle:
            raise TypeError(
                f"constructor {ctor!r} returned {type(result).__name__}, expected an object"
            )
        handle = result._pf_handle
        _IncRef(handle)
        del result
        old = self._pf_handle
        self._pf_handle = handle
        self._pf_tindex = c_int32.from_address(handle + 8).value
        if old:
            _DecRef(old)


_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE


def tp_name(cls: type) -> str:
    """What ``Py_TYPE(o)->tp_name`` is in C: the bare name of classes defined in Python, the
    dotted name of types defined in C (builtins bare); packedfun's wrappers count as C types."""
    if cls in (Object, Function):
        return f"packedfun.{cls.__name__}"
    if cls.__flags__ & _HEAPTYPE or cls.__module__ == "builtins":
        return cls.__name__
    return f"{cls.__module__}.{cls.__name__}"


def type_key_of(handle: int) -> str:
    """The type key of the object at ``handle`` ("None" for 0)."""
    if not handle:
        return "None"
    tindex = c_int32.from_address(handle + 8).value
    info = ctypes.POINTER(abi.PFTypeInfo)()
    if LIB.PFTypeGetInfo(tindex, byref(info)) or not info:
        err = c_void_p()
        LIB.PFErrorMoveFromRaised(byref(err))
        _DecRef(err.value)
        return f"<type {tindex}>"
    return abi.read_bytes(info.contents.type_key).decode("utf-8", "replace")


class Function(Object):
    """Function(callable)

    A packed function: a native function of any language called with positional arguments.
    Function(callable) wraps a Python callable."""

    __slots__ = ("_pf_name", "_pf_cptr", "__dict__")

    def __new__(cls, *args, **kwargs):
        if kwargs or len(args) != 1:
            if not kwargs:
                raise TypeError(f"Function() takes exactly one argument ({len(args)} given)")
            raise TypeError("Function() takes no keywords")
        callable_ = args[0]
        if isinstance(callable_, Function):
            return callable_
        if not callable(callable_):
            raise TypeError(f"Function() expects a callable, got {type(callable_).__name__}")
        return to_function(callable_)

    def __call__(self, *args, **kwargs):
        if kwargs:
            raise _kwargs_error(self._pf_name)
        result = PFAny()
        if args:
            temps: list = []
            packed = pack_args(self, args, temps)
            if _CallRaw(self._pf_cptr, packed, len(args), byref(result)):
                _raise_with_arg_types(self._pf_name, args, packed)
            del temps
        elif _CallRaw(self._pf_cptr, None, 0, byref(result)):
            raise_last_error(self._pf_name)
        return take_any(result)

    def __repr__(self):
        name = self._pf_name
        if name is not None:
            return f"<packedfun.Function '{name}' at {self._pf_handle:#x}>"
        ours, callable_ = wrapped_callable(self._pf_handle)
        if ours:
            return f"<packedfun.Function wrapping {callable_!r} at {self._pf_handle:#x}>"
        return f"<packedfun.Function at {self._pf_handle:#x}>"

    @property
    def __name__(self):
        name = self.__dict__.get("__name__")
        if name is not None:
            return name
        if self._pf_name is not None:
            return self._pf_name
        ours, callable_ = wrapped_callable(self._pf_handle)
        if ours:
            return callable_.__name__
        return "Function"

    @__name__.setter
    def __name__(self, value):
        if not isinstance(value, str):
            raise TypeError("__name__ must be a str")
        self.__dict__["__name__"] = value

    @__name__.deleter
    def __name__(self):
        del self.__dict__["__name__"]

    @property
    def registry_name(self):
        """The global name this Function was looked up by, or None."""
        return self._pf_name


def _raise_with_arg_types(fname, args: tuple, packed: bytes):
    """Raises the pending native error; a native TypeError about arguments that travelled as
    Opaque objects gets their Python type names added (native code cannot know them)."""
    try:
        raise_last_error(fname)
    except TypeError as exc:
        _name_opaque_args(exc, args, packed)
        raise


def _name_opaque_args(exc: TypeError, args: tuple, packed: bytes) -> None:
    message = exc.args[0] if len(exc.args) == 1 else None
    if "kind" not in getattr(exc, "__dict__", {}) or not isinstance(message, str):
        return
    opaque = []
    for i, arg in enumerate(args):
        tindex, _, handle = _unpack_ptr(packed, 16 * i)
        if tindex == abi.kPFTypeOpaque and opaque_payload(handle) == (True, arg):
            opaque.append(i)
    named = [i for i in opaque if f"argument {i}" in message] or opaque
    if named:
        parts = "; ".join(
            f"argument {i} is a Python object of type '{tp_name(type(args[i]))}'" for i in named
        )
        exc.args = (f"{message} ({parts})",)


def _kwargs_error(name) -> TypeError:
    if name is not None:
        return TypeError(f"{name}() takes no keyword arguments")
    return TypeError("packedfun.Function takes no keyword arguments")


def wrapped_callable(handle: int):
    """``(True, callable)`` when the Function at ``handle`` wraps a Python callable of ours."""
    if not handle:
        return False, None
    func = abi.PFFunctionObject.from_address(handle)
    if func.safe_call != SAFE_CALL_ADDR:
        return False, None
    return True, _handles.get(func.self)


Function.__module__ = Object.__module__ = "packedfun"

_object_factory = None
_class_cache: dict = {}


def set_object_factory(factory) -> None:
    """Installs ``factory(type_index) -> class | None`` used to wrap returned objects."""
    global _object_factory
    if factory is not None and not callable(factory):
        raise TypeError("object factory must be callable or None")
    _object_factory = factory
    _class_cache.clear()


def class_for(tindex: int) -> type:
    """The Python class for objects of ``tindex`` (positive answers of the factory cached)."""
    cls = _class_cache.get(tindex)
    if cls is not None:
        return cls
    factory = _object_factory
    if factory is None:
        return Object
    cls = factory(tindex)
    if cls is None:
        return Object
    if not (isinstance(cls, type) and issubclass(cls, Object)):
        raise TypeError(
            f"object factory returned {cls!r} for type index {tindex}, "
            "expected a subclass of packedfun.Object"
        )
    _class_cache[tindex] = cls
    return cls


def wrap(handle: int, tindex: int, cls=None):
    """A wrapper of the registered class for ``tindex`` taking over one reference to ``handle``."""
    if cls is None:
        if tindex == abi.kPFTypeFunction:
            return make_function(handle)
        try:
            cls = class_for(tindex)
        except BaseException:
            _DecRef(handle)
            raise
    obj = object.__new__(cls)
    obj._pf_handle = handle
    obj._pf_tindex = tindex
    return obj


def make_function(handle: int, name=None) -> Function:
    """A Function wrapper taking over one reference to ``handle``."""
    func = object.__new__(Function)
    func._pf_handle = handle
    func._pf_tindex = abi.kPFTypeFunction
    func._pf_name = name
    func._pf_cptr = c_void_p(handle)
    return func


# ---- calling ------------------------------------------------------------------------------------
def pack_args(func, args: tuple, temps: list) -> bytes:
    """The PFAny array of ``args`` as bytes; temporaries it points into are appended to temps."""
    signature = tuple(map(type, args))
    packer = _signature_packers.get(signature, _MISSING)
    if packer is _MISSING:
        packer = _new_signature_packer(signature)
    if packer is not None:
        try:
            return packer(args)
        except struct.error:  # an int outside int64: the general path raises the right error
            pass
    parts = []
    append = parts.append
    for pos, value in enumerate(args):
        kind = type(value)
        if kind is int and _INT64_MIN <= value <= _INT64_MAX:
            append(_pack_int(abi.kPFTypeInt, 0, value))
        elif kind is float:
            append(_pack_float(abi.kPFTypeFloat, 0, value))
        elif kind is str:
            try:
                data = value.encode("utf-8")
            except UnicodeEncodeError:
                data = _Packer(func, pos, temps).encode(value)  # raises with the note added
            append(_pack_ptr(abi.kPFTypeStrView, 0, view_address(data, temps)))
        elif value is None:
            append(_NONE)
        elif kind is Function:
            append(_pack_ptr(abi.kPFTypeFunction, 0, value._pf_handle))
        else:
            append(_Packer(func, pos, temps).pack(value))
    return b"".join(parts)


# Argument lists made only of int/float/bool/None/Function (the common case) are packed by one
# struct call generated per signature of argument types.
_MISSING = object()
_signature_packers: dict = {}
_POD_LAYOUT = {
    int: ("iIq", abi.kPFTypeInt, "a[{}]"),
    float: ("iId", abi.kPFTypeFloat, "a[{}]"),
    bool: ("iIq", abi.kPFTypeBool, "a[{}]"),
    type(None): ("iIq", abi.kPFTypeNone, "0"),
}


def _new_signature_packer(signature: tuple):
    fmt = ["="]
    exprs = []
    for i, kind in enumerate(signature):
        if kind is Function:
            fmt.append("iIQ")
            exprs += [str(abi.kPFTypeFunction), "0", f"a[{i}]._pf_handle"]
            continue
        layout = _POD_LAYOUT.get(kind)
        if layout is None:
            packer = None
            break
        fmt.append(layout[0])
        exprs += [str(layout[1]), "0", layout[2].format(i)]
    else:
        source = f"lambda a: _pack({', '.join(exprs)})"
        packer = eval(source, {"_pack": struct.Struct("".join(fmt)).pack})  # noqa: S307
    if len(_signature_packers) > 1024:
        _signature_packers.clear()
    _signature_packers[signature] = packer
    return packer


def _bytes_data_offset():
    """Offset of a bytes object's data from its id() when that is its address (CPython lays the
    bytes inline); verified against ctypes once, else None."""
    probe = b"packedfun offset probe"
    offset = sys.getsizeof(b"") - 1
    actual = ctypes.cast(ctypes.c_char_p(probe), c_void_p).value
    return offset if actual == id(probe) + offset else None


_BYTES_OFFSET = _bytes_data_offset()
_pack_byte_array = struct.Struct("=QQ").pack


def view_address(data: bytes, temps: list) -> int:
    """Address of a PFByteArray viewing ``data`` (no copy); both are kept alive in ``temps``."""
    if _BYTES_OFFSET is not None:
        view = _pack_byte_array(id(data) + _BYTES_OFFSET, len(data))
        temps.append(data)
        temps.append(view)
        return id(view) + _BYTES_OFFSET
    view = PFByteArray(data, len(data))
    temps.append(view)
    return addressof(view)


def _arg_message(fname, pos, what: str) -> str:
    """The wording of _core's pfpy_arg_error: names the function and the argument position."""
    if pos is None:
        return f"{fname}: return value: {what}"
    if fname is not None:
        return f"{fname}: argument {pos}: {what}"
    return f"packedfun.Function argument {pos}: {what}"


def _add_note(exc: BaseException, fname, pos) -> None:
    if hasattr(exc, "add_note"):  # Python 3.11+
        if pos is None:
            exc.add_note("while converting a return value")
        else:
            exc.add_note(f"while converting argument {pos} of {fname}")


class _Packer:
    """Converts one argument (recursively, for containers) to PFAny bytes. ``pos`` is the
    argument position (None for a return value); ``fname`` names the function in messages."""

    __slots__ = ("fname", "pos", "temps", "active")

    def __init__(self, func, pos, temps):
        self.fname = getattr(func, "_pf_name", None) if func is not None else None
        self.pos = pos
        self.temps = temps
        self.active: set = set()

    def pack(self, value) -> bytes:
        if isinstance(value, str):
            return self.pack_view(abi.kPFTypeStrView, self.encode(value))
        if isinstance(value, bool):
            return _TRUE if value else _FALSE
        if isinstance(value, int):
            return self.pack_int(value)
        if isinstance(value, float):
            return _pack_float(abi.kPFTypeFloat, 0, value)
        if value is None:
            return _NONE
        if isinstance(value, Object):
            handle = value._pf_handle
            return _pack_ptr(value._pf_tindex, 0, handle) if handle else _NONE
        if isinstance(value, (bytes, bytearray)):
            return self.pack_view(abi.kPFTypeBytesView, bytes(value))
        if isinstance(value, c_void_p):
            return _pack_ptr(abi.kPFTypeOpaquePtr, 0, value.value or 0)
        if callable(value):
            return self.keep(to_function(value))
        return self.keep(wrap(make_opaque(value), abi.kPFTypeOpaque, Object))

    def pack_int(self, value: int) -> bytes:
        value = int(value)
        if not _INT64_MIN <= value <= _INT64_MAX:
            what = "int too large for int64" if value > 0 else "int too small for int64"
            raise OverflowError(_arg_message(self.fname, self.pos, what))
        return _pack_int(abi.kPFTypeInt, 0, value)

    def encode(self, value: str) -> bytes:
        try:
            return value.encode("utf-8")
        except UnicodeEncodeError as exc:
            _add_note(exc, self.fname, self.pos)
            raise

    def pack_view(self, tindex: int, data: bytes) -> bytes:
        return _pack_ptr(tindex, 0, view_address(data, self.temps))

    def keep(self, obj: Object) -> bytes:
        self.temps.append(obj)
        return _pack_ptr(obj._pf_tindex, 0, obj._pf_handle)


def pack_value(value, temps: list, pos=None) -> bytes:
    """One Python value as PFAny bytes (a view; temporaries go to ``temps``)."""
    return _Packer(None, pos, temps).pack(value)


def to_function(value) -> Function:
    """``value`` as a Function: a Function unchanged, a Python callable wrapped."""
    if isinstance(value, Function):
        return value
    if not callable(value):
        raise TypeError(f"expected a callable, got {type(value).__name__}")
    key = hold(value)
    out = c_void_p()
    if LIB.PFFunctionCreate(key, _safe_call_c, _free_handle_c, byref(out)):
        _handles.pop(key, None)
        raise_last_error()
    return make_function(out.value)


# ---- results ------------------------------------------------------------------------------------
def take_any(value: PFAny):
    """The Python value of an owned PFAny (its reference is consumed)."""
    tindex, _, payload = _unpack_int(value)
    if tindex == abi.kPFTypeInt:
        return payload
    if tindex == abi.kPFTypeNone:
        return None
    if tindex >= abi.kPFTypeStaticObjectBegin:
        return take_object(payload & 0xFFFFFFFFFFFFFFFF, tindex)
    if tindex == abi.kPFTypeFloat:
        return _unpack_float(value)[2]
    if tindex == abi.kPFTypeBool:
        return payload != 0
    return _pod_to_python(value, tindex)


def take_object(handle: int, tindex: int):
    """The Python value of an object, consuming one reference to ``handle``."""
    if tindex == abi.kPFTypeString or tindex == abi.kPFTypeBytes:
        try:
            data = string_at(*_unpack_view(string_at(handle + 24, 16)))
        finally:
            _DecRef(handle)
        return data.decode("utf-8") if tindex == abi.kPFTypeString else data
    if tindex == abi.kPFTypeOpaque:
        ours, payload = opaque_payload(handle)
        if ours:
            _DecRef(handle)
            return payload
    return wrap(handle, tindex)


def _pod_to_python(value: PFAny, tindex: int):
    if tindex == abi.kPFTypeSmallStr or tindex == abi.kPFTypeSmallBytes:
        data = string_at(addressof(value) + 8, value.small_len)
        return data.decode("utf-8") if tindex == abi.kPFTypeSmallStr else data
    if tindex == abi.kPFTypeOpaquePtr:
        ptr = value.v_ptr
        return c_void_p(ptr) if ptr else None
    if tindex in (abi.kPFTypeRawStr, abi.kPFTypeStrView, abi.kPFTypeBytesView):
        return _borrowed_text(value, tindex)
    if tindex == abi.kPFTypeDataType:
        dtype = value.v_dtype
        return (dtype.code, dtype.bits, dtype.lanes)
    if tindex == abi.kPFTypeDevice:
        device = value.v_device
        return (device.device_type, device.device_id)
    if tindex == abi.kPFTypeDLTensorPtr:
        owned = PFAny()
        if _ViewToOwned(byref(value), byref(owned)):
            raise_last_error()
        return take_any(owned)
    raise TypeError(f"packedfun: cannot convert a value of type index {tindex}")


def _borrowed_text(value: PFAny, tindex: int):
    if tindex == abi.kPFTypeRawStr:
        return string_at(value.v_ptr).decode("utf-8")
    data = string_at(*_unpack_view(string_at(value.v_ptr, 16))) if value.v_ptr else b""
    return data.decode("utf-8") if tindex == abi.kPFTypeStrView else data


def borrow_any(address: int):
    """The Python value of a borrowed PFAny at ``address`` (objects gain a reference)."""
    value = PFAny.from_address(address)
    tindex = value.type_index
    if tindex >= abi.kPFTypeStaticObjectBegin:
        handle = value.v_obj
        _IncRef(handle)
        return take_object(handle, tindex)
    return take_any(value)


# ---- Python callables called from native code ---------------------------------------------------
def _safe_call(key, args, num_args, result):
    try:
        func = _handles[key]
        pyargs = [borrow_any(args + 16 * i) for i in range(num_args)]
        ret = func(*pyargs)
        if ret is not None:
            store_result(ret, result)
        return 0
    except BaseException as exc:  # noqa: B036 - every exception must cross as an Error
        return _errors.raise_into_native(exc)


_safe_call_c = abi.SafeCall(_safe_call)
#: address of the trampoline; a Function whose safe_call is this one wraps a Python callable.
SAFE_CALL_ADDR = ctypes.cast(_safe_call_c, c_void_p).value


def store_result(value, result: int) -> None:
    """Writes ``value`` as an owned PFAny at address ``result`` (which holds None)."""
    temps: list = []
    packed = _Packer(None, None, temps).pack(value)
    if _ViewToOwned(packed, result):
        del temps
        raise_last_error()


def raise_last_error(fname=None):
    """Raises the pending native error (see :func:`packedfun._ctypes_errors.raise_last_error`)."""
    _errors.raise_last_error(fname)


# The error half lives in its own module and imports from this one, so it is bound last.
from . import _ctypes_errors as _errors  # noqa: E402
