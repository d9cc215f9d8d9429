# DLPack structs built by hand with ctypes, for the hostile-input property tests.
"""A producer is trusted for memory (every DLPack consumer must trust it that far): the data,
shape and strides arrays built here are real and stay alive; every field value is hostile."""

from __future__ import annotations

import ctypes

__all__ = [
    "DLTensor",
    "Managed",
    "ManagedVersioned",
    "address",
    "capsule",
    "capsule_named_zero",
    "deleted",
    "on_delete",
    "versioned",
]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device_type", ctypes.c_int32),
        ("device_id", ctypes.c_int32),
        ("ndim", ctypes.c_int32),
        ("code", ctypes.c_uint8),
        ("bits", ctypes.c_uint8),
        ("lanes", ctypes.c_uint16),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class Managed(ctypes.Structure):
    """The legacy (unversioned) DLManagedTensor, exported in a capsule named ``dltensor``."""

    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]


class ManagedVersioned(ctypes.Structure):
    _fields_ = [
        ("major", ctypes.c_uint32),
        ("minor", ctypes.c_uint32),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", DELETER),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", DLTensor),
    ]


deleted: list = []
on_delete = DELETER(lambda ptr: deleted.append(ptr))  # records each deleter call
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_zeroed: list = []  # zeroed structs behind named capsules, kept for the life of the process


def address(struct) -> int:
    return ctypes.addressof(struct)


def versioned(major, minor, flags, ndim, shape, code, bits, lanes, device_type):
    """A DLManagedTensorVersioned over a real 4 KiB buffer and real 8-entry shape/strides arrays
    (ndim above 8 is clamped to 8: the producer is trusted for memory). Returns (struct, keep)."""
    buffer = (ctypes.c_uint8 * 4096)()
    shape_arr = (ctypes.c_int64 * 8)(*shape)
    stride_arr = (ctypes.c_int64 * 8)(*[1] * 8)
    m = ManagedVersioned()
    m.major, m.minor, m.flags = major, minor, flags
    m.deleter = on_delete
    t = m.dl_tensor
    t.data = ctypes.addressof(buffer)
    t.device_type, t.device_id, t.ndim = device_type, 0, min(ndim, 8)
    t.code, t.bits, t.lanes = code, bits, lanes
    t.shape = ctypes.cast(shape_arr, ctypes.POINTER(ctypes.c_int64))
    t.strides = ctypes.cast(stride_arr, ctypes.POINTER(ctypes.c_int64))
    keep = (buffer, shape_arr, stride_arr)
    m._keep = keep  # lives as long as the struct
    return m, keep


def capsule(struct, name: bytes):
    return _capsule_new(ctypes.addressof(struct), name, None)


def capsule_named_zero(name: bytes):
    """A capsule called `name` around a zeroed versioned struct (NULL deleter, NULL data)."""
    zero = ManagedVersioned()
    _zeroed.append(zero)
    return capsule(zero, name)
