# ctypes mirrors of the C ABI in include/packedfun/c_api.h and the loader of libpackedfun.so.
"""The C ABI of ``libpackedfun`` seen from :mod:`ctypes`.

This module holds nothing but the ``Structure`` mirrors of the ABI structs, the type-index
constants and the ``argtypes``/``restype`` of every entry point; the ctypes backend
(:mod:`packedfun._ctypes.backend`) builds on it. It is private: import it only from the backend.
"""

from __future__ import annotations

import ctypes
import os
import sys
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    Union,
    c_char,
    c_char_p,
    c_double,
    c_int,
    c_int32,
    c_int64,
    c_size_t,
    c_uint8,
    c_uint16,
    c_uint32,
    c_uint64,
    c_void_p,
)

__all__ = ["LIB", "LIB_PATH", "PFAny", "PFByteArray", "SafeCall", "FreeHandle"]

# ---- type indices (PFTypeIndex) ------------------------------------------------------------------
kPFTypeAny = -1
kPFTypeNone = 0
kPFTypeInt = 1
kPFTypeBool = 2
kPFTypeFloat = 3
kPFTypeOpaquePtr = 4
kPFTypeDataType = 5
kPFTypeDevice = 6
kPFTypeDLTensorPtr = 7
kPFTypeRawStr = 8
kPFTypeStrView = 9
kPFTypeBytesView = 10
kPFTypeSmallStr = 11
kPFTypeSmallBytes = 12
kPFTypeUInt64 = 13  # ABI 1.4: an int in [2**63, 2**64)
kPFTypeStaticObjectBegin = 64
kPFTypeObject = 64
kPFTypeString = 65
kPFTypeBytes = 66
kPFTypeError = 67
kPFTypeFunction = 68
kPFTypeOpaque = 69
kPFTypeShape = 70
kPFTypeTensor = 71
kPFTypeArray = 72
kPFTypeMap = 73
kPFTypeList = 74
kPFTypeDict = 75
kPFTypeModule = 76
kPFTypeDynamicBegin = 128

# The zero_padding of a StrView/BytesView whose data[size] is NUL: the callee may use
# the bytes as a C string without copying them.
PACKEDFUN_VIEW_NUL_TERMINATED = 0x50464E54

PACKEDFUN_FIELD_READONLY = 1
PACKEDFUN_METHOD_STATIC = 1


# ---- DLPack --------------------------------------------------------------------------------------
class DLDataType(Structure):
    """DLPack's ``DLDataType``: type code, bits per lane, lanes."""

    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLDevice(Structure):
    """DLPack's ``DLDevice``: device type and ordinal."""

    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


# ---- values --------------------------------------------------------------------------------------
class PFByteArray(Structure):
    """A borrowed run of bytes (``data`` is never owned)."""

    _fields_ = [("data", c_char_p), ("size", c_size_t)]


class _PFAnyPad(Union):
    _fields_ = [("small_len", c_uint32), ("zero_padding", c_uint32)]


class _PFAnyValue(Union):
    _fields_ = [
        ("v_int64", c_int64),
        ("v_float64", c_double),
        ("v_ptr", c_void_p),
        ("v_c_str", c_char_p),
        ("v_obj", c_void_p),
        ("v_dtype", DLDataType),
        ("v_device", DLDevice),
        ("v_bytes", c_char * 8),
    ]


class PFAny(Structure):
    """The 16-byte tagged value every argument and result travels as."""

    _anonymous_ = ("_pad", "_value")
    _fields_ = [("type_index", c_int32), ("_pad", _PFAnyPad), ("_value", _PFAnyValue)]


PFAnyPtr = POINTER(PFAny)
# args and result arrive as plain addresses: the backend reads them with from_address/struct.
SafeCall = CFUNCTYPE(c_int, c_void_p, c_void_p, c_int32, c_void_p)
FreeHandle = CFUNCTYPE(None, c_void_p)
_ObjectDeleter = CFUNCTYPE(None, c_void_p)


# ---- objects -------------------------------------------------------------------------------------
class PFObject(Structure):
    """The header at the start of every object."""

    _fields_ = [
        ("ref_count", c_uint64),
        ("type_index", c_int32),
        ("flags", c_uint32),
        ("deleter", _ObjectDeleter),
    ]


class PFBytesObject(Structure):
    """kPFTypeString / kPFTypeBytes: contents follow, NUL-terminated."""

    _fields_ = [("header", PFObject), ("bytes", PFByteArray)]


class PFFunctionObject(Structure):
    """kPFTypeFunction: ``safe_call(self, args, n, result)``."""

    _fields_ = [("header", PFObject), ("safe_call", c_void_p), ("self", c_void_p)]


class PFErrorObject(Structure):
    """kPFTypeError: kind, message, optional cause object."""

    _fields_ = [
        ("header", PFObject),
        ("kind", PFByteArray),
        ("message", PFByteArray),
        ("cause", c_void_p),
    ]


class PFOpaqueObject(Structure):
    """kPFTypeOpaque: a foreign handle and the function that frees it."""

    _fields_ = [("header", PFObject), ("handle", c_void_p), ("free_handle", c_void_p)]


class PFShapeObject(Structure):
    """kPFTypeShape: an immutable run of int64."""

    _fields_ = [("header", PFObject), ("data", POINTER(c_int64)), ("size", c_int64)]


class PFSeqObject(Structure):
    """kPFTypeArray / kPFTypeList: owned elements (``data`` moves on List mutation)."""

    _fields_ = [
        ("header", PFObject),
        ("data", PFAnyPtr),
        ("size", c_int64),
        ("capacity", c_int64),
    ]


# ---- reflection ----------------------------------------------------------------------------------
PFFieldGetter = CFUNCTYPE(c_int, c_void_p, PFAnyPtr)
PFFieldSetter = CFUNCTYPE(c_int, c_void_p, PFAnyPtr)


class PFFieldInfo(Structure):
    """One reflected field."""

    _fields_ = [
        ("name", PFByteArray),
        ("doc", PFByteArray),
        ("offset", c_int64),
        ("flags", c_int32),
        ("static_type_index", c_int32),
        ("getter", c_void_p),
        ("setter", c_void_p),
    ]


class PFMethodInfo(Structure):
    """One reflected method."""

    _fields_ = [
        ("name", PFByteArray),
        ("doc", PFByteArray),
        ("method", c_void_p),
        ("flags", c_int32),
        ("reserved", c_int32),
    ]


class PFTypeInfo(Structure):
    """Everything the runtime knows of one type."""

    _fields_ = [
        ("type_index", c_int32),
        ("depth", c_int32),
        ("type_key", PFByteArray),
        ("ancestors", POINTER(c_int32)),
        ("num_fields", c_int32),
        ("num_methods", c_int32),
        ("fields", POINTER(PFFieldInfo)),
        ("methods", POINTER(PFMethodInfo)),
        ("doc", PFByteArray),
    ]


# ---- loading -------------------------------------------------------------------------------------
if sys.platform == "darwin":
    _LIB_NAME = "libpackedfun.dylib"
elif sys.platform == "win32":
    _LIB_NAME = "packedfun.dll"
else:
    _LIB_NAME = "libpackedfun.so"


def _package_library() -> str:
    """The runtime library next to this package (``lib/``, in-tree and installed alike)."""
    lib_dir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib")
    path = os.path.join(lib_dir, _LIB_NAME)
    if not os.path.exists(path):
        raise ImportError(
            f"packedfun: cannot find the runtime library {_LIB_NAME} in {lib_dir}; "
            "build the project (cmake --build build/dev) or install the package"
        )
    return path


class _DlInfo(Structure):
    _fields_ = [
        ("dli_fname", c_char_p),
        ("dli_fbase", c_void_p),
        ("dli_sname", c_char_p),
        ("dli_saddr", c_void_p),
    ]


def _path_of(lib: ctypes.CDLL) -> str:
    """The file a loaded library came from (dladdr on one of its symbols)."""
    try:
        dladdr = ctypes.CDLL(None).dladdr
        dladdr.argtypes = [c_void_p, POINTER(_DlInfo)]
        info = _DlInfo()
        if dladdr(ctypes.cast(lib.PFGetABIVersion, c_void_p), ctypes.byref(info)):
            return os.fsdecode(info.dli_fname)
    except (AttributeError, OSError):
        pass
    return lib._name


def _open(name: str, extra_mode: int = 0) -> ctypes.CDLL:
    # PyDLL: the runtime's entry points keep the GIL, as under ``_core``. Each is short, and any of
    # them may drop the last reference to a Python object, whose deleter must not wait for a GIL
    # this thread gave up (at interpreter exit that wait ends the thread mid-C++: an abort).
    # Calls of Functions choose per their GIL policy (CALL_RAW / CALL_RELEASED below).
    return ctypes.PyDLL(name, mode=ctypes.RTLD_GLOBAL | extra_mode)


def _load():
    """The process's one runtime: the copy already loaded (e.g. by ``_core`` or an extension,
    found by soname) if there is one, else the package's ``lib/`` copy, with RTLD_GLOBAL."""
    noload = getattr(os, "RTLD_NOLOAD", 0)
    if noload:
        try:
            lib = _open(_LIB_NAME, noload)
            return lib, _LIB_NAME
        except OSError:
            pass
    path = _package_library()
    return _open(path), path


LIB, _OPENED_AS = _load()
LIB_PATH = _path_of(LIB)

_P = c_void_p  # PFObject* and other opaque pointers travel as plain addresses
_BA = POINTER(PFByteArray)
_PP = POINTER(c_void_p)

# name: (restype, argtypes)
_SIGNATURES = {
    "PFObjectIncRef": (None, [_P]),
    "PFObjectDecRef": (None, [_P]),
    "PFOpaqueObjectCreate": (c_int, [_P, FreeHandle, _PP]),
    "PFAnyViewToOwned": (c_int, [_P, _P]),
    "PFAnyRelease": (None, [_P]),
    "PFTypeKeyToIndex": (c_int, [_BA, POINTER(c_int32)]),
    "PFTypeGetInfo": (c_int, [c_int32, POINTER(POINTER(PFTypeInfo))]),
    "PFTypeRegister": (c_int, [_BA, c_int32, POINTER(c_int32)]),
    "PFTypeRegisterField": (c_int, [c_int32, POINTER(PFFieldInfo)]),
    "PFTypeRegisterMethod": (c_int, [c_int32, POINTER(PFMethodInfo)]),
    "PFTypeSetDoc": (c_int, [c_int32, _BA]),
    "PFTypeIsInstance": (c_int, [c_int32, c_int32]),
    "PFTypeListKeys": (c_int, [_P, POINTER(c_int32)]),
    "PFTypeGetNumSlots": (c_int, [c_int32, POINTER(c_int32)]),
    "PFObjectGetBindingRef": (c_void_p, [_P]),
    "PFObjectExchangeBindingRef": (c_int, [_P, _P, _P]),
    "PFFunctionCreate": (c_int, [_P, SafeCall, FreeHandle, _PP]),
    "PFFunctionCall": (c_int, [_P, _P, c_int32, _P]),
    "PFFunctionSetGlobal": (c_int, [_BA, _P, c_int, _BA]),
    "PFFunctionGetGlobal": (c_int, [_BA, _PP]),
    "PFFunctionGetGlobalDoc": (c_int, [_BA, _P]),
    "PFFunctionListGlobalNames": (c_int, [_P]),
    "PFFunctionRemoveGlobal": (c_int, [_BA, POINTER(c_int)]),
    "PFFunctionSetMetadata": (c_int, [_P, _BA]),
    "PFFunctionGetMetadata": (c_int, [_P, _P]),
    "PFErrorCreate": (c_int, [_BA, _BA, _BA, _P, _PP]),
    "PFErrorSetRaised": (None, [_P]),
    "PFErrorSetRaisedFromCStr": (c_int, [c_char_p, c_char_p]),
    "PFErrorMoveFromRaised": (None, [_PP]),
    "PFErrorGetBacktrace": (c_int, [_P, _BA]),
    "PFErrorAppendBacktrace": (c_int, [_P, _BA]),
    "PFStringCreate": (c_int, [_BA, _P]),
    "PFBytesCreate": (c_int, [_BA, _P]),
    "PFArrayCreate": (c_int, [_P, c_int64, _P]),
    "PFShapeCreate": (c_int, [POINTER(c_int64), c_int64, _PP]),
    "PFListCreate": (c_int, [_P, c_int64, _P]),
    "PFListAppend": (c_int, [_P, _P]),
    "PFListSetItem": (c_int, [_P, c_int64, _P]),
    "PFListInsert": (c_int, [_P, c_int64, _P]),
    "PFListPop": (c_int, [_P, c_int64, _P]),
    "PFListClear": (c_int, [_P]),
    "PFMapCreate": (c_int, [_P, c_int64, _P]),
    "PFMapSize": (c_int, [_P, POINTER(c_int64)]),
    "PFMapGetItem": (c_int, [_P, _P, _P, POINTER(c_int)]),
    "PFMapItems": (c_int, [_P, _P]),
    "PFMapIterNext": (c_int, [_P, _P, _P, _P, _P]),
    "PFMapReadEntries": (c_int, [_P, _P, _P, c_int64, _P]),
    "PFMapCreateDistinct": (c_int, [_P, c_int64, _P]),
    "PFDictCreate": (c_int, [_P, c_int64, _P]),
    "PFDictSetItem": (c_int, [_P, _P, _P]),
    "PFDictDelItem": (c_int, [_P, _P]),
    "PFDictClear": (c_int, [_P]),
    "PFTensorFromDLPack": (c_int, [_P, _PP]),
    "PFTensorFromDLPackVersioned": (c_int, [_P, _PP]),
    "PFTensorToDLPack": (c_int, [_P, _PP]),
    "PFTensorToDLPackVersioned": (c_int, [_P, _PP]),
    "PFTensorEmpty": (c_int, [POINTER(c_int64), c_int32, DLDataType, DLDevice, _PP]),
    "PFTensorIsReadOnly": (c_int, [_P, POINTER(c_int)]),
    "PFDataTypeFromString": (c_int, [_BA, POINTER(DLDataType)]),
    "PFDataTypeToString": (c_int, [DLDataType, _P]),
    "PFModuleLoadFromFile": (c_int, [_BA, _PP]),
    "PFModuleGetSystemLib": (c_int, [_PP]),
    "PFModuleGetFunction": (c_int, [_P, _BA, c_int, _PP]),
    "PFModuleImport": (c_int, [_P, _P]),
    "PFModuleGetImports": (c_int, [_P, _P]),
    "PFModuleGetPath": (c_int, [_P, _P]),
    "PFModuleGetFunctionDoc": (c_int, [_P, _BA, c_int, _P]),
    "PFModuleGetEntryName": (c_int, [_P, _P]),
    "PFModuleSetTVMFFILibrary": (c_int, [_BA]),
    "PFModuleListFunctions": (c_int, [_P, c_int, _P]),
    "PFGetABIVersion": (c_uint32, []),
    "PFEnvSetStream": (c_int, [c_int32, c_int32, _P, _PP]),
    "PFEnvGetStream": (_P, [c_int32, c_int32]),
    "PFEnvSetTensorAllocator": (c_int, [_P, _PP]),
    "PFEnvTensorAlloc": (c_int, [POINTER(c_int64), c_int32, DLDataType, DLDevice, _PP]),
    "PFFunctionSetGILPolicy": (c_int, [_P, c_int32]),
    "PFFunctionGetGILPolicy": (c_int, [_P, POINTER(c_int32)]),
    "PFEnvSetLockHooks": (c_int, [_P, _P, _P, _P, _P]),
    "PFEnvReleaseCallerLock": (_P, []),
    "PFEnvAcquireCallerLock": (None, [_P]),
    "PFEnvCheckSignals": (c_int, []),
    "PFEnvSetGuardedCall": (c_int, [_P, _P]),
    "PFEnvCloseLock": (c_int, [c_int32]),
}


def _declare(lib: ctypes.CDLL) -> None:
    """Sets argtypes/restype of every entry point the runtime exports (missing ones are skipped so
    a partial runtime still loads; calling one then fails with AttributeError)."""
    for name, (restype, argtypes) in _SIGNATURES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            continue
        fn.restype = restype
        fn.argtypes = argtypes


_declare(LIB)

#: PFFunctionCall without argtypes, for the hot path: ctypes' per-argument ``from_param`` costs
#: more than the call itself. Callers pass (c_void_p, bytes | None, int, byref(PFAny)) exactly.
#: Loaded through PyDLL, so the GIL stays held during the call as in ``_core`` (see
#: docs/internals/python-backends.md); callbacks re-enter through ctypes' PyGILState_Ensure.
CALL_RAW = ctypes.PyDLL(_OPENED_AS, mode=ctypes.RTLD_GLOBAL).PFFunctionCall
CALL_RAW.restype = c_int

#: The same call through CDLL, which releases the GIL around it: the default GIL policy
#: (kPFGILRelease); CALL_RAW serves Functions whose flags say PACKEDFUN_FUNCTION_FLAG_GIL_HOLD.
CALL_RELEASED = ctypes.CDLL(_OPENED_AS, mode=ctypes.RTLD_GLOBAL).PFFunctionCall
CALL_RELEASED.restype = c_int


def byte_array(data: bytes) -> PFByteArray:
    """A PFByteArray viewing ``data`` (which the caller keeps alive while the view is used)."""
    return PFByteArray(data, len(data))


def read_bytes(view: PFByteArray) -> bytes:
    """The bytes a PFByteArray points at (copied)."""
    size = view.size
    if not size:
        return b""
    return ctypes.string_at(c_void_p.from_address(ctypes.addressof(view)).value or 0, size)
