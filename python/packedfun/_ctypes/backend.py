# The pure-Python (ctypes) backend of packedfun: the same names as packedfun._core over the C ABI.
"""A backend over :mod:`ctypes` and the C ABI alone (``include/packedfun/c_api.h``).

Selected with ``PACKEDFUN_BACKEND=ctypes`` (or when the compiled ``_core`` cannot be imported);
see ``docs/internals/python-backends.md`` for the interface both backends implement. Only
``packedfun._backend`` imports this module.
"""

from __future__ import annotations

import ctypes
import os
from ctypes import byref, c_int, c_int32, c_void_p

from .._rules import messages as _msg
from . import abi as abi
from . import cycles as _cycles
from .abi import LIB, PFAny, PFByteArray
from .containers import Array, Dict, List, Map, Shape
from .errors import (
    NativeNote,
    error_get_backtrace,
    install_lock_hooks,
    raise_last_error,
    set_error_factory,
    set_error_fast_path,
)
from .modules import *  # noqa: F403 (module entry points; see _ctypes.modules.__all__)
from .modules import __all__ as _module_names
from .objects import (
    ConstructorDescriptor,
    FieldDescriptor,
    MethodDescriptor,
    ModuleFunctionDescriptor,
    fast_construct,
    set_type_name,
    type_info,
    type_is_instance,
    type_key_to_index,
)
from .pack import pack_value as _pack_value
from .tensor import *  # noqa: F403 (tensor entry points; see _ctypes.tensor.__all__)
from .tensor import __all__ as _tensor_names
from .tensor_return import _keep_tensor_results as _keep_tensor_results
from .values import (
    Function,
    Object,
    borrow_any,
    function_metadata,
    make_function,
    set_object_factory,
    take_any,
    to_function,
    tp_name,
    wrap,
)

_cycles.install()  # cycles through native containers collect at full collections

__all__ = [
    "ABI_VERSION",
    "LIB_PATH",
    "Object",
    "Function",
    "get_global_func",
    "set_global_func",
    "list_global_func_names",
    "get_global_func_doc",
    "remove_global_func",
    "function_get_metadata",
    "function_flags",
    "function_set_metadata",
    "to_function",
    "convert",
    "set_error_factory",
    "set_error_fast_path",
    "error_get_backtrace",
    "NativeNote",
    "set_object_factory",
    "module_load",
    "module_get_function",
    "env_get_stream",
    "env_set_stream",
]
__all__ += _module_names
__all__ += [  # objects and containers (_ctypes/objects.py, _ctypes/containers.py)
    "type_key_to_index",
    "type_info",
    "type_is_instance",
    "FieldDescriptor",
    "MethodDescriptor",
    "ConstructorDescriptor",
    "ModuleFunctionDescriptor",
    "fast_construct",
    "set_type_name",
    "Array",
    "List",
    "Map",
    "Dict",
    "Shape",
]
__all__ += _tensor_names
__all__ += ["_keep_tensor_results"]

#: PFGetABIVersion() of the loaded runtime: (major << 16) | minor.
ABI_VERSION: int = LIB.PFGetABIVersion()
#: Path of the loaded libpackedfun shared library.
LIB_PATH: str = abi.LIB_PATH

_ABI_MAJOR = 1
if ABI_VERSION >> 16 != _ABI_MAJOR:
    raise ImportError(
        _msg.text(
            "ABI_MISMATCH",
            "packedfun._ctypes.backend",
            _ABI_MAJOR,
            ABI_VERSION >> 16,
            ABI_VERSION & 0xFFFF,
        )
    )


def _name_view(name, what: str = "name") -> PFByteArray:
    """A PFByteArray over the UTF-8 of ``name`` (which must be a str)."""
    if not isinstance(name, str):
        raise TypeError(_msg.text("NAME_NOT_STR", what, tp_name(type(name))))
    data = name.encode("utf-8")
    return PFByteArray(data, len(data))


def _check(rc: int, fname=None) -> None:
    if rc:
        raise_last_error(fname)


# ---- the global registry ------------------------------------------------------------------------
#: PACKEDFUN_FUNCTION_FLAG_NAMED_RESULT of PFObject.flags.
_NAMED_RESULT = 4


def get_global_func(name: str, named_result=None):
    """The global Function registered as ``name``, or None; ``named_result(func)`` replaces one
    whose metadata returns a type key (PACKEDFUN_FUNCTION_FLAG_NAMED_RESULT: maybe an enum)."""
    view = _name_view(name)
    out = c_void_p()
    _check(LIB.PFFunctionGetGlobal(byref(view), byref(out)), name)
    if not out.value:
        return None
    func = make_function(out.value, name)
    if named_result is not None and func._pf_flags & _NAMED_RESULT:
        return named_result(func)
    return func


def set_global_func(name: str, func, override: bool = False, doc=None) -> None:
    """Registers ``func`` (a Function or any callable) globally as ``name``."""
    view = _name_view(name)
    doc_view = None if doc is None else byref(_name_view(doc, "doc"))
    if not isinstance(func, Function) and not callable(func):
        raise TypeError(_msg.text("REGISTER_NOT_CALLABLE", tp_name(type(func))))
    func = to_function(func)
    rc = LIB.PFFunctionSetGlobal(byref(view), func._pf_handle, 1 if override else 0, doc_view)
    _check(rc, name)


def list_global_func_names() -> list:
    """Every registered global name, sorted."""
    out = PFAny()
    _check(LIB.PFFunctionListGlobalNames(byref(out)))
    if out.type_index not in (abi.kPFTypeArray, abi.kPFTypeList):
        LIB.PFAnyRelease(byref(out))
        raise RuntimeError(_msg.text("GLOBAL_NAMES_NOT_AN_ARRAY"))
    try:
        seq = abi.PFSeqObject.from_address(out.v_obj)
        base = ctypes.cast(seq.data, c_void_p).value or 0
        return [borrow_any(base + 16 * i) for i in range(seq.size)]
    finally:
        LIB.PFAnyRelease(byref(out))


def get_global_func_doc(name: str):
    """The docstring registered with ``name``, or None."""
    view = _name_view(name)
    out = PFAny()
    _check(LIB.PFFunctionGetGlobalDoc(byref(view), byref(out)), name)
    return take_any(out)


def function_get_metadata(func):
    """The JSON metadata record of ``func``, or None."""
    if not isinstance(func, Function):
        raise TypeError(
            _msg.text("FUNCTION_EXPECTED", "function_get_metadata", tp_name(type(func)))
        )
    return function_metadata(func._pf_handle)


def function_flags(func) -> int:
    """The PFObject.flags bits of ``func`` (PACKEDFUN_FUNCTION_FLAG_*)."""
    if not isinstance(func, Function):
        raise TypeError(_msg.text("FUNCTION_EXPECTED", "function_flags", tp_name(type(func))))
    return func._pf_flags


def function_set_metadata(func, text: str) -> None:
    """Attaches a JSON metadata record to ``func``."""
    if not isinstance(func, Function):
        raise TypeError(
            _msg.text("FUNCTION_EXPECTED", "function_set_metadata", tp_name(type(func)))
        )
    view = _name_view(text, "json")
    _check(LIB.PFFunctionSetMetadata(func._pf_handle, byref(view)))
    func.__dict__.pop("_pf_table", None)


def remove_global_func(name: str) -> bool:
    """Removes ``name``; returns whether it existed."""
    view = _name_view(name)
    removed = c_int(0)
    _check(LIB.PFFunctionRemoveGlobal(byref(view), byref(removed)), name)
    return bool(removed.value)


# ---- conversion ---------------------------------------------------------------------------------
def convert(value):
    """The FFI form of ``value``: callables become Functions, str/int/float/bytes/Objects come
    back unchanged in kind, other objects come back as themselves."""
    temps: list = []
    packed = _pack_value(value, temps, python_keys=True)
    owned = PFAny()
    _check(LIB.PFAnyViewToOwned(packed, byref(owned)))
    del temps
    return take_any(owned)


# ---- modules ------------------------------------------------------------------------------------
def module_load(path):
    """Loads a shared library (running its static registrations) and returns its Module object."""
    path = os.fsdecode(path)
    view = _name_view(path, "path")
    out = c_void_p()
    _check(LIB.PFModuleLoadFromFile(byref(view), byref(out)), path)
    return wrap(out.value, c_int32.from_address(out.value + 8).value)


def module_get_function(module, name, query_imports=False):
    """The Function ``name`` of ``module``, or None when it has none."""
    if not isinstance(module, Object):
        raise TypeError(
            f"module_get_function() argument 1 must be packedfun.Object, "
            f"not {tp_name(type(module))}"
        )
    if not isinstance(name, str):
        raise TypeError(f"module_get_function() argument 2 must be str, not {tp_name(type(name))}")
    handle = module._pf_handle
    if not handle or module._pf_tindex != abi.kPFTypeModule:
        raise TypeError(_msg.text("MODULE_GET_FUNCTION_EXPECTED"))
    view = _name_view(name)
    out = c_void_p()
    _check(
        LIB.PFModuleGetFunction(handle, byref(view), 1 if query_imports else 0, byref(out)), name
    )
    return make_function(out.value, name) if out.value else None


install_lock_hooks()


# ---- streams (packedfun.stream) -----------------------------------------------------------------


def env_get_stream(device_type: int, device_id: int) -> int:
    """This thread's stream handle for the device (0: the default stream)."""
    return LIB.PFEnvGetStream(device_type, device_id) or 0


def env_set_stream(device_type: int, device_id: int, handle: int) -> int:
    """Sets this thread's stream handle for the device (0: the default); returns the previous."""
    previous = c_void_p()
    _check(
        LIB.PFEnvSetStream(device_type, device_id, c_void_p(handle), byref(previous)), "use_stream"
    )
    return previous.value or 0
