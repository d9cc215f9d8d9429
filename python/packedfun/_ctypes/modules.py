# The ctypes backend's bindings of the PFModule* entry points beyond load and get_function.
"""Module entry points for :mod:`packedfun._ctypes.backend` (same names as in ``_core``)."""

from __future__ import annotations

import ctypes
from ctypes import byref, c_int32, c_void_p

from .._rules import messages as _msg
from . import abi as abi
from .abi import LIB, PFAny, PFByteArray
from .errors import raise_last_error
from .values import Object, take_any, tp_name, wrap

__all__ = [
    "module_system_lib",
    "module_get_path",
    "module_get_entry_name",
    "module_list_functions",
    "module_get_function_doc",
    "module_set_tvm_ffi_library",
    "module_import",
    "module_get_imports",
]


def _module_handle(obj, fn: str) -> int:
    """The address of the native Module wrapped by ``obj``; TypeError naming ``fn`` otherwise."""
    if isinstance(obj, Object) and obj._pf_handle and obj._pf_tindex == abi.kPFTypeModule:
        return obj._pf_handle
    raise TypeError(_msg.text("MODULE_EXPECTED", fn, tp_name(type(obj))))


def _check(rc: int, fname=None) -> None:
    if rc:
        raise_last_error(fname)


def _wrap_module(address: int):
    return wrap(address, c_int32.from_address(address + 8).value)


def module_system_lib():
    """The Module object over the running program (the system library)."""
    out = c_void_p()
    _check(LIB.PFModuleGetSystemLib(byref(out)))
    return _wrap_module(out.value)


def module_get_path(module) -> str:
    """The library path of ``module`` ("" for the system library)."""
    handle = _module_handle(module, "module_get_path")
    out = PFAny()
    _check(LIB.PFModuleGetPath(handle, byref(out)))
    return take_any(out)


def module_get_entry_name(module):
    """The name of the entry function of ``module``, or None."""
    handle = _module_handle(module, "module_get_entry_name")
    out = PFAny()
    _check(LIB.PFModuleGetEntryName(handle, byref(out)))
    return take_any(out)


def module_set_tvm_ffi_library(path) -> None:
    """Where libtvm_ffi is, for libraries built for Apache TVM FFI (None clears it)."""
    data = b"" if path is None else str(path).encode("utf-8")
    _check(LIB.PFModuleSetTVMFFILibrary(byref(PFByteArray(data, len(data)))))


def module_list_functions(module, query_imports=False):
    """The sorted names of the functions ``module`` exports, or None when they cannot be listed."""
    handle = _module_handle(module, "module_list_functions")
    out = PFAny()
    _check(LIB.PFModuleListFunctions(handle, 1 if query_imports else 0, byref(out)))
    return take_any(out)


def module_get_function_doc(module, name, query_imports=False):
    """The docstring of the function ``name`` of ``module``, or None."""
    handle = _module_handle(module, "module_get_function_doc")
    if not isinstance(name, str):
        raise TypeError(
            f"module_get_function_doc() argument 2 must be str, not {tp_name(type(name))}"
        )
    data = name.encode("utf-8")
    view = PFByteArray(data, len(data))
    out = PFAny()
    flag = 1 if query_imports else 0
    _check(LIB.PFModuleGetFunctionDoc(handle, byref(view), flag, byref(out)), name)
    return take_any(out)


def module_import(module, dependency) -> None:
    """Makes ``module`` import ``dependency``."""
    handle = _module_handle(module, "module_import")
    dep = _module_handle(dependency, "module_import")
    _check(LIB.PFModuleImport(handle, dep))


def module_get_imports(module) -> list:
    """The Module objects ``module`` imports, as a list."""
    handle = _module_handle(module, "module_get_imports")
    out = PFAny()
    _check(LIB.PFModuleGetImports(handle, byref(out)))
    try:
        seq = abi.PFSeqObject.from_address(out.v_obj)
        base = ctypes.cast(seq.data, c_void_p).value or 0
        result = []
        for i in range(seq.size):
            address = c_void_p.from_address(base + 16 * i + 8).value or 0
            LIB.PFObjectIncRef(address)
            result.append(_wrap_module(address))
        return result
    finally:
        LIB.PFAnyRelease(byref(out))
