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
from .registry import get_global_func

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


#: tvm-ffi's printer (``_tvm_ffi_core.repr_print``): py_class hooks and forms, else tvm-ffi's own.
ReprPrint = _core.repr_print


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
