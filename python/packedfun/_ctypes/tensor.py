# Tensors for the ctypes backend: packedfun.Tensor, DLPack capsules both ways, array arguments.
"""The tensor half of :mod:`packedfun._ctypes.backend`, matching ``src/python/tensor*.c``.

DLPack capsules are made and consumed through CPython's C API (a ctypes handle of its own);
NumPy arguments travel as a promotable ``DLTensor*`` (a ``PFDLTensorArg`` filled from
``__array_interface__``, no DLPack call, whose keeper is an Opaque object owning the array, so
native code that keeps the argument keeps the array alive), other producers (PyTorch, JAX, ...)
through ``__dlpack__`` into an owned Tensor kept for the call.
"""

from __future__ import annotations

import ctypes
import operator
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    byref,
    c_char_p,
    c_int,
    c_int32,
    c_int64,
    c_uint32,
    c_uint64,
    c_void_p,
    py_object,
)

from .._rules import messages as _msg
from .._rules import tensor_layout as _tensor_layout
from . import abi as abi
from .abi import LIB, DLDataType, DLDevice, PFAny
from .values import RAW_ORDER, Object, _pack_ptr, make_opaque, raise_last_error, take_any, wrap

__all__ = ["Tensor", "from_dlpack", "_set_tensor_classes", "_dtype_from_string",
           "_dtype_to_string", "_tensor_scratch_allocations"]  # fmt: skip


# ---- DLPack structs ------------------------------------------------------------------------------
class DLTensor(Structure):
    _fields_ = [
        ("data", c_void_p),
        ("device", DLDevice),
        ("ndim", c_int32),
        ("dtype", DLDataType),
        ("shape", POINTER(c_int64)),
        ("strides", POINTER(c_int64)),
        ("byte_offset", c_uint64),
    ]


_Deleter = CFUNCTYPE(None, c_void_p)


class DLManagedTensor(Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p), ("deleter", c_void_p)]


class DLPackVersion(Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class DLManagedTensorVersioned(Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", c_void_p),
        ("deleter", c_void_p),
        ("flags", c_uint64),
        ("dl_tensor", DLTensor),
    ]


class PFDLTensorArg(Structure):
    _fields_ = [
        ("tensor", DLTensor),
        ("keeper", c_void_p),
        ("flags", c_uint32),
        ("reserved", c_uint32),
    ]


_DLTENSOR_ARG_TAG = 0x50464454  # PACKEDFUN_DLTENSOR_ARG_TAG
_DLTENSOR_ARG_READ_ONLY = 1  # PACKEDFUN_DLTENSOR_ARG_READ_ONLY


class PFTensorObject(Structure):
    _fields_ = [("header", abi.PFObject), ("tensor", DLTensor)]


_LEGACY = b"dltensor"
_VERSIONED = b"dltensor_versioned"
_USED = {_LEGACY: b"used_dltensor", _VERSIONED: b"used_dltensor_versioned"}
_READ_ONLY = 1  # DLPACK_FLAG_BITMASK_READ_ONLY

# A handle of our own onto CPython's C API: setting argtypes on ctypes.pythonapi's functions would
# change them for every user of ctypes in the process (a test's PyCapsule_New with a NULL
# destructor failed, or not, depending on which module set its argtypes last).
_api = ctypes.PyDLL(None)
_CapsuleDestructor = CFUNCTYPE(None, c_void_p)
_api.PyCapsule_New.restype = py_object
_api.PyCapsule_New.argtypes = [c_void_p, c_char_p, _CapsuleDestructor]
_api.PyCapsule_IsValid.restype = c_int
_api.PyCapsule_IsValid.argtypes = [c_void_p, c_char_p]
_api.PyCapsule_GetPointer.restype = c_void_p
_api.PyCapsule_GetPointer.argtypes = [py_object, c_char_p]
_api.PyCapsule_SetName.restype = c_int
_api.PyCapsule_SetName.argtypes = [py_object, c_char_p]
_api.PyCapsule_GetName.restype = c_char_p
_api.PyCapsule_GetName.argtypes = [py_object]
# For capsule destructors, which get the dying capsule's address (never a new reference to it).
_get_pointer_raw = _api["PyCapsule_GetPointer"]
_get_pointer_raw.restype = c_void_p
_get_pointer_raw.argtypes = [c_void_p, c_char_p]


def _run_deleter(managed: int, offset: int) -> None:
    deleter = c_void_p.from_address(managed + offset).value
    if deleter:
        _Deleter(deleter)(managed)


def _capsule_destructor(capsule: int, name: bytes, offset: int) -> None:
    # A consumer renamed the capsule (used_dltensor*) when it took ownership: nothing to do then.
    if _api.PyCapsule_IsValid(capsule, name):
        _run_deleter(_get_pointer_raw(capsule, name), offset)


_VERSIONED_DELETER_OFFSET = DLManagedTensorVersioned.deleter.offset
_LEGACY_DELETER_OFFSET = DLManagedTensor.deleter.offset
_destroy_versioned = _CapsuleDestructor(
    lambda c: _capsule_destructor(c, _VERSIONED, _VERSIONED_DELETER_OFFSET)
)
_destroy_legacy = _CapsuleDestructor(
    lambda c: _capsule_destructor(c, _LEGACY, _LEGACY_DELETER_OFFSET)
)


# ---- the Tensor class ----------------------------------------------------------------------------
class Tensor(Object):
    """A DLPack tensor owned by packedfun, sharing memory with its producer."""

    __slots__ = ()

    def __new__(cls, x=None):
        if x is None:
            return Object.__new__(cls)
        return from_dlpack(x)

    def _dl(self) -> DLTensor:
        if not self._pf_handle:
            raise ValueError(_msg.text("TENSOR_EMPTY"))
        return PFTensorObject.from_address(self._pf_handle).tensor

    @property
    def shape(self) -> tuple:
        t = self._dl()
        return tuple(t.shape[i] for i in range(t.ndim))

    @property
    def strides(self) -> tuple:
        t = self._dl()
        return tuple(t.strides[i] for i in range(t.ndim))

    @property
    def ndim(self) -> int:
        return self._dl().ndim

    def numel(self) -> int:
        """Number of elements."""
        n = 1
        for extent in self.shape:
            n *= extent
        return n

    @property
    def size(self) -> int:
        """Number of elements; also callable: ``size(dim)`` is the extent of axis ``dim``."""
        return _tensor_layout.size_of(self)

    def is_contiguous(self) -> bool:
        """Whether the layout is compact row-major (dimensions of extent 1 may have any stride)."""
        return _tensor_layout.tensor_is_contiguous(self)  # the definition both backends share

    @property
    def dtype(self):
        d = self._dl().dtype
        return dtype_to_py(d.code, d.bits, d.lanes)

    @property
    def device(self):
        d = self._dl().device
        return device_to_py(d.device_type, d.device_id)

    @property
    def data_ptr(self) -> int:
        """Address of the data (before byte_offset); also callable: ``data_ptr()``."""
        return _tensor_layout.data_ptr_of(self._dl().data or 0)

    @property
    def byte_offset(self) -> int:
        return self._dl().byte_offset

    @property
    def readonly(self) -> bool:
        out = c_int()
        if LIB.PFTensorIsReadOnly(self._pf_handle, byref(out)):
            raise_last_error("Tensor")
        return bool(out.value)

    def __repr__(self) -> str:
        if not self._pf_handle:
            return _msg.text("TENSOR_REPR_EMPTY")
        return _msg.text("TENSOR_REPR", self.shape, self.dtype, self.device, self._pf_handle)

    def __dlpack_device__(self) -> tuple:
        d = self._dl().device
        return (d.device_type, d.device_id)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        t = self._dl()
        if t.device.device_type == 1 and stream is not None:
            raise BufferError(_msg.text("DLPACK_CPU_STREAM"))
        if copy:
            raise BufferError(_msg.text("DLPACK_COPY"))
        if dl_device is not None and _device_pair(dl_device) != self.__dlpack_device__():
            raise BufferError(
                _msg.text("DLPACK_OTHER_DEVICE", self.__dlpack_device__(), tuple(dl_device))
            )
        out = c_void_p()
        if _wants_versioned(max_version):
            if LIB.PFTensorToDLPackVersioned(self._pf_handle, byref(out)):
                raise_last_error("__dlpack__")
            return _new_capsule(
                out.value, _VERSIONED, _destroy_versioned, _VERSIONED_DELETER_OFFSET
            )
        if self.readonly:
            raise BufferError(_msg.text("DLPACK_READONLY_LEGACY"))
        if LIB.PFTensorToDLPack(self._pf_handle, byref(out)):
            raise_last_error("__dlpack__")
        return _new_capsule(out.value, _LEGACY, _destroy_legacy, _LEGACY_DELETER_OFFSET)


def _new_capsule(ptr: int, name: bytes, destructor, offset: int):
    try:
        return _api.PyCapsule_New(ptr, name, destructor)
    except BaseException:
        _run_deleter(ptr, offset)
        raise


def _device_pair(dl_device) -> tuple:
    try:
        if not isinstance(dl_device, tuple) or len(dl_device) != 2:
            raise TypeError
        if not all(isinstance(v, int) for v in dl_device):  # as _core's PyLong_Check
            raise TypeError
        return dl_device
    except TypeError:
        raise TypeError(_msg.text("DLPACK_DEVICE_ARG")) from None


def _wants_versioned(max_version) -> bool:
    """None, or exactly a (major, minor) tuple of ints (versioned when major >= 1), as NumPy."""
    if max_version is None:
        return False
    try:
        if not isinstance(max_version, tuple):
            raise TypeError
        major, _minor = (operator.index(v) for v in max_version)
    except (TypeError, ValueError):
        raise TypeError(_msg.text("DLPACK_MAX_VERSION", max_version)) from None
    return major >= 1


def wrap_tensor(handle: int) -> Tensor:
    """A Tensor taking over one reference to ``handle``."""
    t = Object.__new__(Tensor)
    t._pf_handle = handle
    t._pf_raw = handle.to_bytes(8, RAW_ORDER)
    t._pf_tindex = abi.kPFTypeTensor
    return t


# ---- from_dlpack ---------------------------------------------------------------------------------
def _from_capsule(capsule) -> Tensor:
    out = c_void_p()
    for name, entry in ((_VERSIONED, LIB.PFTensorFromDLPackVersioned),
                        (_LEGACY, LIB.PFTensorFromDLPack)):  # fmt: skip
        if _api.PyCapsule_IsValid(id(capsule), name):
            ptr = _api.PyCapsule_GetPointer(capsule, name)
            _api.PyCapsule_SetName(capsule, _USED[name])  # consumed exactly once, from here on
            if entry(ptr, byref(out)):  # the runtime ran the deleter on failure
                raise_last_error("from_dlpack")
            return wrap_tensor(out.value or 0)
    raw: bytes = _api.PyCapsule_GetName(capsule) or b"<unnamed>"
    text = raw.decode(errors="replace")
    if raw in _USED.values():
        raise ValueError(_msg.text("CAPSULE_CONSUMED", text))
    raise ValueError(_msg.text("CAPSULE_NOT_DLPACK", text))


def from_dlpack(x, **layout) -> Tensor:
    """A Tensor sharing the memory of ``x`` (a __dlpack__ producer or a DLPack capsule).

    ``require_alignment`` / ``require_contiguous`` are checked by the shared Python layer.
    """
    tensor = _from_dlpack(x)
    if not layout:
        return tensor
    return _tensor_layout.require_layout(tensor, **layout)


def _from_dlpack(x) -> Tensor:
    if type(x) is Tensor:
        return x
    if type(x).__name__ == "PyCapsule":
        return _from_capsule(x)
    if _is_numpy(x):
        return _from_numpy(x)
    capsule = _tensor_layout.producer_capsule(x, (1, 3))
    if type(capsule).__name__ != "PyCapsule":
        raise TypeError(
            _msg.text(
                "FROM_DLPACK_NOT_A_CAPSULE", _msg.type_name(type(x)), _msg.type_name(type(capsule))
            )
        )
    return _from_capsule(capsule)


def _from_numpy(x) -> Tensor:
    """A Tensor sharing NumPy array ``x``'s memory and keeping ``x`` alive through an Opaque, as
    ``_core``'s own import of an array does. NumPy's capsule only describes the array here: its
    deleter leaves the array alive once the interpreter is finalizing (it checks
    ``Py_IsInitialized()``, already 0 while the interpreter drops module globals), so a Tensor
    that owned the capsule and was still alive at exit leaked its array."""
    _check_numpy_dtype(x, "from_dlpack")
    try:
        capsule = x.__dlpack__(max_version=(1, 3))
    except TypeError:  # NumPy before 2.0: legacy capsules only
        capsule = x.__dlpack__()
    arg = PFDLTensorArg()
    if _api.PyCapsule_IsValid(id(capsule), _VERSIONED):
        versioned = DLManagedTensorVersioned.from_address(
            _api.PyCapsule_GetPointer(capsule, _VERSIONED)
        )
        arg.tensor = versioned.dl_tensor
        arg.flags = _DLTENSOR_ARG_READ_ONLY if versioned.flags & _READ_ONLY else 0
    else:
        legacy = DLManagedTensor.from_address(_api.PyCapsule_GetPointer(capsule, _LEGACY))
        arg.tensor = legacy.dl_tensor
    arg.keeper = keeper = make_opaque(x)
    view = _pack_ptr(abi.kPFTypeDLTensorPtr, _DLTENSOR_ARG_TAG, ctypes.addressof(arg))
    out = PFAny()
    try:  # the Tensor copies the metadata and takes its own reference to the keeper
        failed = LIB.PFAnyViewToOwned(view, byref(out))
    finally:
        LIB.PFObjectDecRef(keeper)
    if failed:
        raise_last_error("from_dlpack")
    return wrap_tensor(out.v_obj)  # the capsule, never consumed, gives NumPy's record back


# ---- arguments -----------------------------------------------------------------------------------
_TYPESTR = {"b": 6, "i": 0, "u": 1, "f": 2, "c": 5}  # kind -> DLDataTypeCode


def _is_numpy(x) -> bool:
    return any(c.__module__ == "numpy" and c.__name__ == "ndarray" for c in type(x).__mro__)


def _numpy_dtype_error(x, where: str, why: str) -> BufferError:
    return BufferError(f"{where}: " + _msg.text("NUMPY_ARRAY_REFUSED", x.dtype, _msg.text(why)))


def _check_numpy_dtype(x, where: str) -> tuple:
    typestr = x.__array_interface__["typestr"]
    order, kind = typestr[0], typestr[1]
    if order == ">":
        raise _numpy_dtype_error(x, where, "NUMPY_BYTE_SWAPPED")
    code = _TYPESTR.get(kind)
    size = int(typestr[2:] or 0) if code is not None else 0  # "<M8[D]": a datetime has a unit
    if code is None or (kind == "c" and size not in (8, 16)) or (kind == "f" and size > 8):
        raise _numpy_dtype_error(x, where, "NUMPY_NO_DLPACK_TYPE")
    return code, size


def _numpy_dltensor(x, where: str, keep: list) -> int:
    """Address of a PFDLTensorArg viewing NumPy array ``x`` (its storage appended to ``keep``)."""
    code, size = _check_numpy_dtype(x, where)
    iface = x.__array_interface__
    ndim = len(iface["shape"])
    dims = (c_int64 * (2 * ndim or 1))()
    for i, extent in enumerate(iface["shape"]):
        dims[i] = extent
    for i, stride in enumerate(x.strides):
        if stride % size:
            raise _numpy_dtype_error(x, where, "NUMPY_ODD_STRIDE")
        dims[ndim + i] = stride // size
    arg = PFDLTensorArg()
    t = arg.tensor
    t.data = iface["data"][0]
    t.device = DLDevice(1, 0)
    t.ndim = ndim
    t.dtype = DLDataType(code, size * 8, 1)
    t.shape = ctypes.cast(dims, POINTER(c_int64))
    t.strides = ctypes.cast(ctypes.byref(dims, 8 * ndim), POINTER(c_int64))
    keeper = wrap(make_opaque(x), abi.kPFTypeOpaque, Object)
    arg.keeper = keeper._pf_handle
    arg.flags = 0 if x.flags.writeable else _DLTENSOR_ARG_READ_ONLY
    keep += (x, dims, arg, keeper)
    return ctypes.addressof(arg)


def pack_tensor_arg(value, fname, pos, temps: list):
    """PFAny bytes of ``value`` when it is an array, dtype or device; else None."""
    if _is_numpy(value) and pos is not None:
        where = _msg.text("ARG_WHERE", fname, pos) if fname else _msg.text("ARG_WHERE_UNNAMED", pos)
        arg = _numpy_dltensor(value, where, temps)
        return _pack_ptr(abi.kPFTypeDLTensorPtr, _DLTENSOR_ARG_TAG, arg)
    kind = type(value)
    if _classes and kind is _classes[0]:
        any_ = PFAny(type_index=abi.kPFTypeDataType)
        any_.v_dtype = DLDataType(*value._dl_fields())
        return bytes(any_)
    if _classes and kind is _classes[1]:
        any_ = PFAny(type_index=abi.kPFTypeDevice)
        any_.v_device = DLDevice(*value._dl_fields())
        return bytes(any_)
    if hasattr(kind, "__dlpack__"):
        tensor = from_dlpack(value)
        temps.append(tensor)
        return _pack_ptr(abi.kPFTypeTensor, 0, tensor._pf_handle)
    return None


def _tensor_scratch_allocations() -> int:
    """Always 0: this backend pools no scratch records (``_core`` counts its own)."""
    return 0


# ---- dtype and device values ---------------------------------------------------------------------
_classes: list = []


def _set_tensor_classes(dtype_cls, device_cls) -> None:
    _classes[:] = [dtype_cls, device_cls]


def dtype_to_py(code: int, bits: int, lanes: int):
    if not _classes:
        return (code, bits, lanes)
    return _classes[0]._from_dl(code, bits, lanes)


def device_to_py(device_type: int, device_id: int):
    if not _classes:
        return (device_type, device_id)
    return _classes[1](device_type, device_id)


def _dtype_from_string(text: str) -> tuple:
    if not isinstance(text, str):
        raise TypeError(_msg.text("DTYPE_NOT_STR", _msg.type_name(type(text))))
    out = DLDataType()
    if LIB.PFDataTypeFromString(abi.byte_array(text.encode("utf-8")), byref(out)):
        raise_last_error("dtype")
    return (out.code, out.bits, out.lanes)


def _dtype_to_string(code: int, bits: int, lanes: int) -> str:
    if not (0 <= code <= 255 and 0 <= bits <= 255 and 0 <= lanes <= 65535):
        raise ValueError(_msg.text("DTYPE_INVALID", code, bits, lanes))
    out = PFAny()
    if LIB.PFDataTypeToString(DLDataType(code, bits, lanes), byref(out)):
        raise_last_error("dtype")
    return take_any(out)
