# `tvm_ffi._ffi_api` under the switch: tvm-ffi's namespace of `ffi.*` helpers, on packedfun's own.
"""What ``import tvm_ffi._ffi_api`` gives under :mod:`packedfun.tvm_ffi_compat`.

apache-tvm-ffi's ``tvm_ffi._ffi_api`` holds its ``ffi.*`` global functions; packages and tests
import a few of them as the operations behind its dataclasses. Here ``DeepCopy`` is packedfun's
:func:`copy.deepcopy`; ``ReprPrint`` is tvm-ffi's printer for values that can reach it (packedfun's
``repr`` for others); ``RecursiveEq``, ``RecursiveHash`` and the orderings follow tvm-ffi's rules
(:mod:`packedfun._tvm_ffi_recursive`); any other name is the global function ``ffi.<name>``
(apache-tvm-ffi's own C++ functions, which packedfun's registry sees once its library is loaded).
"""

from __future__ import annotations

import copy
from typing import Any

from . import _tvm_ffi_core as _core
from . import _tvm_ffi_recursive as _recursive
from .container import Array
from .registry import get_global_func
from .tensor import Tensor

__all__ = [
    "DeepCopy",
    "RecursiveEq",
    "RecursiveGe",
    "RecursiveGt",
    "RecursiveHash",
    "RecursiveLe",
    "RecursiveLt",
    "ReprPrint",
]

#: A deep copy of containers and objects (shared parts stay shared, cycles kept).
DeepCopy = copy.deepcopy


def ReprPrint(value: Any) -> str:  # noqa: N802 (tvm-ffi's name)
    """The printed form of ``value`` as tvm-ffi's printer writes it (its ``ffi.ReprPrint``, when
    apache-tvm-ffi's library is in the process and the value can go to it); otherwise, and for a
    value of packedfun's own types, which have no tvm-ffi form, ``repr(value)``. An object of a
    ``py_class`` whose body defines ``__ffi_repr__(self, fn_repr)`` prints as that hook returns,
    given this function to print the parts it chooses (tvm-ffi's printer dispatches the same);
    one without prints as tvm-ffi prints it: ``type.key(field=..., ...)``, each field printed by
    this function."""
    hook = _core.repr_hook(value)
    if hook is not None:
        text = hook(value, ReprPrint)
        if not isinstance(text, str):
            raise TypeError(
                f"__ffi_repr__ of {type(value).__qualname__} returned "
                f"{type(text).__name__}, expected str"
            )
        return text
    text = _core.print_fields(value, ReprPrint)  # a py_class of the switch's: as tvm-ffi prints
    if text is not None:
        return text
    printer = get_global_func("ffi.ReprPrint", allow_missing=True)
    if printer is not None:
        try:
            if isinstance(value, Tensor):
                # An argument tensor reaches tvm-ffi as a DLTensor* view, which its printer names
                # only by kind; an item of an Array is a Tensor object: print "(<item>,)" and cut.
                text = printer(Array([value]))
                return text[1 : text.rindex(",)")]
            return printer(value)
        except TypeError as exc:
            if "no tvm-ffi equivalent" not in str(exc):  # the printer's own error
                raise
    return repr(value)


#: Equality by content (fields of reflected objects, items of containers).
RecursiveEq = _recursive.recursive_eq
#: The hash that agrees with :data:`RecursiveEq`.
RecursiveHash = _recursive.recursive_hash
RecursiveLt = _recursive.recursive_lt
RecursiveLe = _recursive.recursive_le
RecursiveGt = _recursive.recursive_gt
RecursiveGe = _recursive.recursive_ge


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    func = get_global_func("ffi." + name, allow_missing=True)
    if func is None:
        raise AttributeError(
            f"module 'tvm_ffi._ffi_api' has no attribute {name!r} (no global function 'ffi.{name}')"
        )
    return func
