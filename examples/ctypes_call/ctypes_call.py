# Calls packed functions through plain ctypes over the C ABI alone: no packedfun Python code at all.
"""Standalone demonstration that ``include/packedfun/c_api.h`` is usable from any plain C FFI.

The script loads ``libpackedfun.so`` and ``libpackedfun_testing.so`` with :func:`ctypes.CDLL`,
looks functions up in the global registry (``PFFunctionGetGlobal``), packs arguments into
``PFAny`` structs, calls them (``PFFunctionCall``), reads the results, hands a Python callback to
C++ (``PFFunctionCreate``) and reads a C++ error back (``PFErrorMoveFromRaised``) - exactly what
the original PackedFunc ``base.py`` did with ``ctypes.CDLL``. It never imports ``packedfun``.

Usage::

    python examples/ctypes_call/ctypes_call.py [LIBDIR]

LIBDIR is the directory holding the two libraries; by default the ``lib/`` directory of the
``packedfun`` package (located without importing it), else ``python/packedfun/lib`` of this tree.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import sys
from ctypes import (
    POINTER,
    Structure,
    Union,
    byref,
    c_char,
    c_double,
    c_int,
    c_int32,
    c_int64,
    c_size_t,
    c_uint32,
    c_void_p,
)

# ---- the ABI structs we need (see c_api.h) -------------------------------------------------------
kPFTypeNone, kPFTypeInt, kPFTypeBool, kPFTypeFloat = 0, 1, 2, 3
kPFTypeStrView, kPFTypeSmallStr, kPFTypeString = 9, 11, 65


class PFByteArray(Structure):
    _fields_ = [("data", c_void_p), ("size", c_size_t)]


class PFAnyValue(Union):
    _fields_ = [
        ("v_int64", c_int64),
        ("v_float64", c_double),
        ("v_ptr", c_void_p),
        ("v_bytes", c_char * 8),
    ]


class PFAny(Structure):
    _fields_ = [("type_index", c_int32), ("small_len", c_uint32), ("value", PFAnyValue)]


class PFObject(Structure):
    _fields_ = [
        ("ref_count", ctypes.c_uint64),
        ("type_index", c_int32),
        ("flags", c_uint32),
        ("deleter", c_void_p),
    ]


class PFBytesObject(Structure):
    _fields_ = [("header", PFObject), ("bytes", PFByteArray)]


class PFErrorObject(Structure):
    _fields_ = [
        ("header", PFObject),
        ("kind", PFByteArray),
        ("message", PFByteArray),
        ("cause", c_void_p),
    ]


SafeCall = ctypes.CFUNCTYPE(c_int, c_void_p, POINTER(PFAny), c_int32, POINTER(PFAny))
Deleter = ctypes.CFUNCTYPE(None, c_void_p)


# ---- loading -------------------------------------------------------------------------------------
def find_lib_dir() -> str:
    if len(sys.argv) > 1:
        return sys.argv[1]
    spec = importlib.util.find_spec("packedfun")  # locates the package without running it
    if spec is not None and spec.submodule_search_locations:
        candidate = os.path.join(list(spec.submodule_search_locations)[0], "lib")
        if os.path.isdir(candidate):
            return candidate
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(here, "..", "..", "python", "packedfun", "lib")


LIB_DIR = find_lib_dir()
# RTLD_GLOBAL: the testing library resolves its PF* symbols against this one copy of the runtime.
LIB = ctypes.CDLL(os.path.join(LIB_DIR, "libpackedfun.so"), mode=ctypes.RTLD_GLOBAL)
ctypes.CDLL(os.path.join(LIB_DIR, "libpackedfun_testing.so"), mode=ctypes.RTLD_GLOBAL)

LIB.PFFunctionGetGlobal.argtypes = [POINTER(PFByteArray), POINTER(c_void_p)]
LIB.PFFunctionCall.argtypes = [c_void_p, POINTER(PFAny), c_int32, POINTER(PFAny)]
LIB.PFFunctionCreate.argtypes = [c_void_p, SafeCall, Deleter, POINTER(c_void_p)]
LIB.PFObjectDecRef.argtypes = [c_void_p]
LIB.PFObjectDecRef.restype = None
LIB.PFAnyRelease.argtypes = [POINTER(PFAny)]
LIB.PFAnyRelease.restype = None
LIB.PFErrorMoveFromRaised.argtypes = [POINTER(c_void_p)]
LIB.PFErrorMoveFromRaised.restype = None
LIB.PFGetABIVersion.restype = ctypes.c_uint32


# ---- values --------------------------------------------------------------------------------------
def byte_array(data: bytes) -> PFByteArray:
    """A PFByteArray viewing ``data`` (the caller keeps ``data`` alive)."""
    return PFByteArray(ctypes.cast(ctypes.c_char_p(data), c_void_p), len(data))


def read(view: PFByteArray) -> bytes:
    return ctypes.string_at(view.data, view.size) if view.size else b""


def to_any(value, keep: list) -> PFAny:
    """A borrowed PFAny for a Python int/float/str/bool/None (``keep`` holds the str views)."""
    out = PFAny()
    if value is None:
        out.type_index = kPFTypeNone
    elif isinstance(value, bool):
        out.type_index, out.value.v_int64 = kPFTypeBool, int(value)
    elif isinstance(value, int):
        out.type_index, out.value.v_int64 = kPFTypeInt, value
    elif isinstance(value, float):
        out.type_index, out.value.v_float64 = kPFTypeFloat, value
    elif isinstance(value, str):
        data = value.encode("utf-8")
        view = byte_array(data)
        keep += [data, view]
        out.type_index, out.value.v_ptr = kPFTypeStrView, ctypes.addressof(view)
    else:
        raise TypeError(f"this example passes only None/bool/int/float/str, not {value!r}")
    return out


def from_any(value: PFAny):
    """The Python value of an owned result; releases it."""
    t = value.type_index
    if t == kPFTypeNone:
        return None
    if t == kPFTypeInt:
        return value.value.v_int64
    if t == kPFTypeBool:
        return bool(value.value.v_int64)
    if t == kPFTypeFloat:
        return value.value.v_float64
    if t == kPFTypeSmallStr:
        return ctypes.string_at(ctypes.addressof(value) + 8, value.small_len).decode()
    if t == kPFTypeString:
        text = read(PFBytesObject.from_address(value.value.v_ptr).bytes).decode()
        LIB.PFAnyRelease(byref(value))
        return text
    LIB.PFAnyRelease(byref(value))
    return f"<object of type index {t}>"


def last_error() -> str:
    err = c_void_p()
    LIB.PFErrorMoveFromRaised(byref(err))
    e = PFErrorObject.from_address(err.value or 0)
    text = f"{read(e.kind).decode()}: {read(e.message).decode()}"
    LIB.PFObjectDecRef(err)
    return text


def get_global(name: str) -> int:
    data = name.encode()
    out = c_void_p()
    if LIB.PFFunctionGetGlobal(byref(byte_array(data)), byref(out)) != 0 or not out.value:
        raise LookupError(f"no global function {name!r}")
    return out.value


def call(func: int, *args):
    """Calls a Function (a PFObject address) the packed way and returns (ok, value-or-error)."""
    keep: list = []
    packed = (PFAny * max(len(args), 1))(*[to_any(a, keep) for a in args])
    result = PFAny()  # zeroed: None
    if LIB.PFFunctionCall(func, packed, len(args), byref(result)) != 0:
        return False, last_error()
    return True, from_any(result)


# ---- a Python callback seen by C++ as a packed function ------------------------------------------
@SafeCall
def py_square(self, args, num_args, result):
    x = args[0].value.v_int64
    result[0].type_index, result[0].value.v_int64 = kPFTypeInt, x * x
    return 0


@Deleter
def py_square_deleter(self):
    print("  (C++ released the Python callback)")


def main() -> None:
    abi = LIB.PFGetABIVersion()
    print(f"packedfun ABI {abi >> 16}.{abi & 0xFFFF} loaded from {os.path.abspath(LIB_DIR)}")
    echo = get_global("testing.echo")
    for value in (42, 2.5, True, None, "hello, packed world"):
        ok, got = call(echo, value)
        print(f"testing.echo({value!r}) -> {got!r}")
    nop = get_global("testing.nop")
    ok, got = call(nop, 1, 2, 3)
    print(f"testing.nop(1, 2, 3) -> {got!r}")
    raise_error = get_global("testing.test_raise_error")
    ok, got = call(raise_error, "ValueError", "bad value from C++")
    print(f"testing.test_raise_error -> failed={not ok}: {got}")
    square = c_void_p()
    if LIB.PFFunctionCreate(None, py_square, py_square_deleter, byref(square)) != 0:
        raise RuntimeError(last_error())
    apply = get_global("testing.apply")
    keep: list = []
    args = (PFAny * 2)(PFAny(), to_any(7, keep))
    square_address = square.value or 0
    args[0].type_index = PFObject.from_address(square_address).type_index  # kPFTypeFunction
    args[0].value.v_ptr = square_address
    result = PFAny()
    if LIB.PFFunctionCall(apply, args, 2, byref(result)) != 0:
        raise RuntimeError(last_error())
    print(f"testing.apply(py_square, 7) -> {from_any(result)!r}")
    LIB.PFObjectDecRef(square)
    for func in (echo, nop, raise_error, apply):
        LIB.PFObjectDecRef(func)


if __name__ == "__main__":
    main()
