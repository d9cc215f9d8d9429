# Packing Python arguments into PFAny arrays for the ctypes backend (the Python -> native half).
"""Argument conversion of :mod:`packedfun._ctypes.backend`, following "Value conversion" in
docs/internals/python-backends.md and the wording of ``_core``'s messages. Arguments become the
bytes of a ``PFAny`` array; anything they point into (UTF-8 of a str, PFByteArray views, Functions
made from callables, Opaque objects) is appended to a ``temps`` list the caller keeps alive for
the duration of the call.
"""

from __future__ import annotations

import ctypes
import operator
import struct
import sys
from ctypes import addressof, c_void_p

from .._rules import messages as _msg
from .._rules import protocols as _protocols
from .._rules import signature as _signature
from . import abi as abi
from . import tensor as _tensor
from .abi import PFByteArray
from .values import (
    _FALSE,
    _INT64_MAX,
    _INT64_MIN,
    _NONE,
    _TRUE,
    _UINT64_MAX,
    Function,
    Object,
    _pack_float,
    _pack_int,
    _pack_ptr,
    function_metadata,
    make_opaque,
    to_function,
    wrap,
)


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
    try:
        return _pack_general(func, args, temps)
    except Exception as exc:
        pos = exc.__dict__.pop("_pf_arg_pos", -1) if hasattr(exc, "__dict__") else -1
        if pos >= 0:
            _name_argument(exc, func, pos)
        raise


def _pack_general(func, args: tuple, temps: list) -> bytes:
    parts: list = []
    append = parts.append
    pos = 0
    try:
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
                    data = _Packer(func, pos, temps).encode(value)  # raises, naming the argument
                append(_pack_ptr(abi.kPFTypeStrView, _NUL, view_address(data, temps)))
            elif value is None:
                append(_NONE)
            elif kind is Function:
                append(_pack_ptr(abi.kPFTypeFunction, 0, value._pf_handle))
            else:
                append(_Packer(func, pos, temps).pack(value))
    except Exception as exc:
        if hasattr(exc, "__dict__"):
            exc.__dict__["_pf_arg_pos"] = pos  # which argument failed, for pack_args
        raise
    return b"".join(parts)


def _name_argument(exc: Exception, func, pos: int) -> None:
    """Rewords the error of the argument that failed to convert to name its parameter (the
    shared wording of :func:`packedfun._rules.signature.name_argument_error`)."""
    text = function_metadata(func._pf_handle) if func._pf_handle else None
    _signature.name_argument_error(exc, func._pf_name, text, pos)


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
# Every view below is over a bytes object, whose buffer ends in a NUL: the callee may use it as a
# C string without a copy (PACKEDFUN_VIEW_NUL_TERMINATED, ABI 1.5).
_NUL = abi.PACKEDFUN_VIEW_NUL_TERMINATED
_pack_byte_array = struct.Struct("=QQ").pack


def view_address(data: bytes, temps: list) -> int:
    """Address of a PFByteArray viewing ``data`` (no copy); both are kept alive in ``temps``."""
    if _BYTES_OFFSET is not None:
        packed = _pack_byte_array(id(data) + _BYTES_OFFSET, len(data))
        temps.append(data)
        temps.append(packed)
        return id(packed) + _BYTES_OFFSET
    view = PFByteArray(data, len(data))
    temps.append(view)
    return addressof(view)


class ValuePath(str):
    """The path of an element inside a value that is not an argument (``convert``, a return
    value, a container constructor): ``"[1]['k']"``, shown as ``value[1]['k']``."""

    __slots__ = ()


def _arg_message(fname, pos, what: str) -> str:
    """The wording of _core's pfpy_arg_error: names the function and the argument position."""
    return _msg.text("AT_WHERE", _where(fname, pos), what)


def _where(fname, pos) -> str:
    """Where argument ``pos`` of ``fname`` is (_core's arg_where and element_where)."""
    if pos is None:
        return _msg.text("RETURN_WHERE", fname)
    if isinstance(pos, ValuePath):  # an element of a value (_core's convert_container.c)
        return _msg.text("VALUE_WHERE" if fname is None else "RETURN_VALUE_WHERE", pos)
    if fname is not None:
        return _msg.text("ARG_WHERE", fname, pos)
    return _msg.text("ARG_WHERE_UNNAMED", pos)


def _add_note(exc: BaseException, fname, pos) -> None:
    """Names the argument in ``exc``: a UnicodeEncodeError's reason gets ``"F: argument N: "`` in
    front (its message is made from it), other errors a note (Python 3.11+), as in ``_core``."""
    if isinstance(exc, UnicodeEncodeError) and pos is not None and not isinstance(pos, ValuePath):
        exc.reason = _arg_message(fname, pos, exc.reason)
        return
    if hasattr(exc, "add_note"):  # Python 3.11+
        if pos is None:
            exc.add_note(_msg.text("NOTE_RETURN"))
        elif isinstance(pos, ValuePath):
            exc.add_note(_msg.text("NOTE_VALUE", pos))
        else:
            exc.add_note(_msg.text("NOTE_ARGUMENT", pos, fname))


# NumPy scalars whose __float__ is no float value (complex, datetime64, timedelta64, void): they
# travel as the objects they are (as _core's is_numpy_not_real decides).
_NUMPY_NOT_REAL = ("complex", "clongdouble", "datetime64", "timedelta64", "void")


def _python_number(value):
    """The number rule (docs/calling.md): an object with ``__index__`` (NumPy integers) travels
    as int, ``numpy.bool_`` as bool, one with ``__float__`` (NumPy floats) as float; None for
    anything else. Nothing imports NumPy: the type's slots and name decide."""
    cls = type(value)
    if hasattr(cls, "__index__"):
        return operator.index(value)
    if cls.__module__ == "numpy" and cls.__name__ in ("bool_", "bool"):
        return bool(value)
    if cls.__module__ == "numpy" and cls.__name__.startswith(_NUMPY_NOT_REAL):
        return None  # its __float__ drops the imaginary part or the unit: an Opaque, as _core
    if hasattr(cls, "__float__"):
        return float(value)
    return None


class _Packer:
    """Converts one argument (recursively, for containers) to PFAny bytes. ``pos`` is the
    argument position (None for a return value); ``fname`` names the function in messages."""

    __slots__ = ("fname", "pos", "temps", "active", "python_keys")

    def __init__(self, func, pos, temps, python_keys=False):
        self.fname = getattr(func, "_pf_name", None) if func is not None else None
        self.pos = pos
        self.temps = temps
        self.active: set = set()
        # True: the value is for Python (convert(), a constructor, a value stored in a container),
        # so a dict key that would become a new object is refused (_rules.map_keys.refusal);
        # False for arguments and results, read by native code that may take keys by content.
        self.python_keys = python_keys

    def pack(self, value) -> bytes:
        if isinstance(value, str) and not (_tensor._classes and type(value) is _tensor._classes[0]):
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
        if isinstance(value, (list, tuple, dict)):  # -> Array / Map, nested
            return self.keep(_containers.pack_container(self, value))
        if _protocols.has_protocol(type(value)):  # before callable (packedfun.Module is one)
            # and the array probes, as in _core
            converted = _protocols.protocol_value(value)
            self.temps.append(converted)  # alive until the call returns: the slot may borrow it
            return self.pack(converted)
        packed = _tensor.pack_tensor_arg(value, self.fname, self.pos, self.temps)
        if packed is not None:  # an array, a dtype or a device
            return packed
        if callable(value):
            return self.keep(to_function(value))
        number = _python_number(value)
        if number is not None:
            return self.pack(number)
        return self.keep(wrap(make_opaque(value), abi.kPFTypeOpaque, Object))

    def pack_int(self, value: int) -> bytes:
        value = int(value)
        if _INT64_MIN <= value <= _INT64_MAX:
            return _pack_int(abi.kPFTypeInt, 0, value)
        if _INT64_MAX < value <= _UINT64_MAX:  # beyond int64
            return _pack_ptr(abi.kPFTypeUInt64, 0, value)
        what = _msg.text("INT_TOO_LARGE" if value > 0 else "INT_TOO_SMALL")
        raise OverflowError(_arg_message(self.fname, self.pos, what))

    def encode(self, value: str) -> bytes:
        try:
            return value.encode("utf-8")
        except UnicodeEncodeError as exc:
            _add_note(exc, self.fname, self.pos)
            raise

    def pack_view(self, tindex: int, data: bytes) -> bytes:
        return _pack_ptr(tindex, _NUL, view_address(data, self.temps))

    def keep(self, obj: Object) -> bytes:
        self.temps.append(obj)
        return _pack_ptr(obj._pf_tindex, 0, obj._pf_handle)


def new_packer(temps: list, fname=None, pos=None) -> _Packer:
    """A packer for a value that is not an argument of a Function (a container's element, a
    field's value): ``fname`` (a str or None) and ``pos`` name it in messages."""
    packer = _Packer(None, pos, temps, python_keys=True)
    packer.fname = fname
    return packer


def pack_value(value, temps: list, pos=None, python_keys=False) -> bytes:
    """One Python value as PFAny bytes (a view; temporaries go to ``temps``); ``python_keys`` as
    in :class:`_Packer` (True for ``convert``)."""
    return _Packer(None, pos, temps, python_keys).pack(value)


from . import containers as _containers  # noqa: E402  (imports this module)
