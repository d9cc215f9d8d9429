# ctypes backend: tensor results go back as they came in (the _core twin is tensor_return.c).
"""A call with a torch tensor argument returns its tensor results as torch tensors, one with a
NumPy array as NumPy arrays (also those read from a returned Array/List/Map/Dict, which remembers
the framework); a thread's ``_keep_tensor_results(True)`` keeps ``packedfun.Tensor``."""

from __future__ import annotations

import ctypes
import sys
import threading

# Imported by values.py after the rest of the binding (its last line), so all of it is loaded.
from .abi import LIB
from .containers import Array, Dict, List, Map, for_framework
from .tensor import DLTensor, from_dlpack

__all__ = ["_keep_tensor_results", "result_framework", "convert_result", "call_allocator"]

_local = threading.local()


def _keep_tensor_results(keep) -> bool:
    """Sets this thread's switch (true: keep packedfun.Tensor results); returns the previous."""
    previous = getattr(_local, "keep", False)
    _local.keep = bool(keep)
    return previous


def _nested(value, torch, numpy):
    """The module of the first torch tensor / NumPy array inside a list/tuple/dict (depth first,
    without recursion: nests as deep as the conversion takes), or None."""
    stack = [iter(value.values() if isinstance(value, dict) else value)]
    while stack:
        item = next(stack[-1], _END)
        if item is _END:
            stack.pop()
            continue
        kind = type(item)
        if torch is not None and kind is torch.Tensor:
            return torch
        if numpy is not None and kind is numpy.ndarray:
            return numpy
        if isinstance(item, (list, tuple, dict)):
            stack.append(iter(item.values() if isinstance(item, dict) else item))
    return None


_END = object()


def _framework(args: tuple, nested: bool):
    """The module (torch or numpy) of the first tensor among ``args``, else (``nested``) the
    framework a container argument remembers or that of an array inside a list/tuple/dict."""
    torch = sys.modules.get("torch")
    numpy = sys.modules.get("numpy")
    for arg in args:
        kind = type(arg)
        if torch is not None and kind is torch.Tensor:
            return torch
        if numpy is not None and kind is numpy.ndarray:
            return numpy
        if nested and isinstance(arg, (Array, List, Map, Dict)):
            remembered = getattr(arg, "_pf_framework", None)
            if remembered is not None:
                return remembered
    if nested and (torch is not None or numpy is not None):
        for arg in args:
            if isinstance(arg, (list, tuple, dict)):
                found = _nested(arg, torch, numpy)
                if found is not None:
                    return found
    return None


def result_framework(args: tuple):
    """The module (torch or numpy) whose tensor came first in ``args`` (or that a container
    argument remembers, or of an array inside a list/tuple/dict argument), or None."""
    if getattr(_local, "keep", False):
        return None
    return _framework(args, True)


def convert_result(value, framework):
    """``value`` as a Tensor in ``framework``, or a container remembering it; else unchanged."""
    return for_framework(value, framework)


# ---- the environment of a call with array arguments: the framework's allocator ----------------
_SetError = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p)
_Allocator = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, _SetError
)
_NUMPY_KINDS = {0: "i", 1: "u", 2: "f", 5: "c", 6: "b"}  # DLDataTypeCode -> NumPy kind


def _numpy_allocate(proto_addr, out, ctx, set_error) -> int:
    """DLPack's allocator over numpy.empty: the new ndarray owns the memory."""
    try:
        proto = DLTensor.from_address(proto_addr)
        kind = _NUMPY_KINDS.get(proto.dtype.code)
        if proto.device.device_type != 1 or kind is None or proto.dtype.lanes != 1:
            set_error(ctx, b"ValueError", b"the NumPy allocator makes CPU tensors of NumPy dtypes")
            return -1
        numpy = sys.modules["numpy"]
        shape = tuple(proto.shape[i] for i in range(proto.ndim))
        arr = numpy.empty(shape, dtype=f"{kind}{proto.dtype.bits // 8}")
        tensor = from_dlpack(arr)
        return LIB.PFTensorToDLPackVersioned(tensor._pf_handle, out)
    except Exception as exc:  # errors cross the C boundary as set_error, never as exceptions
        set_error(ctx, b"MemoryError", str(exc).encode())
        return -1


_numpy_allocator = _Allocator(_numpy_allocate)
_NUMPY_ALLOCATOR_ADDR = ctypes.cast(_numpy_allocator, ctypes.c_void_p).value
_torch_allocator_addr: list = []


def _torch_allocator(torch) -> int | None:
    """Address of torch's exchange-API allocator (read once from its capsule)."""
    if not _torch_allocator_addr:
        api = ctypes.PyDLL(None)  # not ctypes.pythonapi: its argtypes are everyone's
        api.PyCapsule_GetPointer.restype = ctypes.c_void_p
        api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
        table = api.PyCapsule_GetPointer(
            torch.Tensor.__dlpack_c_exchange_api__, b"dlpack_exchange_api"
        )
        # DLPackExchangeAPI: a 16-byte header, then managed_tensor_allocator.
        _torch_allocator_addr.append(ctypes.c_void_p.from_address(table + 16).value)
    return _torch_allocator_addr[0]


def call_allocator(args: tuple) -> int | None:
    """The allocator to install for a call with these arguments (an address), or None: that of
    the first torch tensor / NumPy array among them, else of one inside a list/tuple/dict."""
    framework = _framework(args, False)
    if framework is None:
        torch = sys.modules.get("torch")
        numpy = sys.modules.get("numpy")
        for arg in args:
            if isinstance(arg, (list, tuple, dict)):
                framework = _nested(arg, torch, numpy)
                if framework is not None:
                    break
    if framework is None:
        return None
    return (
        _NUMPY_ALLOCATOR_ADDR
        if framework is sys.modules.get("numpy")
        else _torch_allocator(framework)
    )
