# ctypes backend: tensor results go back as they came in (the _core twin is tensor_return.c).
"""A call with a torch tensor argument returns its tensor results as torch tensors, one with a
NumPy array as NumPy arrays (tensors inside a returned Array/List too, as a tuple/list); a
thread's ``_keep_tensor_results(True)`` keeps ``packedfun.Tensor``."""

from __future__ import annotations

import sys
import threading

__all__ = ["_keep_tensor_results", "result_framework", "convert_result"]

_local = threading.local()


def _keep_tensor_results(keep) -> bool:
    """Sets this thread's switch (true: keep packedfun.Tensor results); returns the previous."""
    previous = getattr(_local, "keep", False)
    _local.keep = bool(keep)
    return previous


def result_framework(args: tuple):
    """The module (torch or numpy) whose tensor came first in ``args``, or None."""
    if getattr(_local, "keep", False):
        return None
    torch = sys.modules.get("torch")
    numpy = sys.modules.get("numpy")
    for arg in args:
        kind = type(arg)
        if torch is not None and kind is torch.Tensor:
            return torch
        if numpy is not None and kind is numpy.ndarray:
            return numpy
    return None


def convert_result(value, framework):
    """``value`` with its tensors (alone, or at the top of an Array/List) in ``framework``."""
    from .containers import Array, List
    from .tensor import Tensor

    if isinstance(value, Tensor):
        return framework.from_dlpack(value)
    if isinstance(value, (Array, List)) and any(isinstance(x, Tensor) for x in value):
        items = [convert_result(x, framework) for x in value]
        return items if isinstance(value, List) else tuple(items)
    return value
