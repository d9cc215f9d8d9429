# packedfun: a packed-function FFI for Python and C++ (public Python API).
"""packedfun: call any function of any language through one packed calling convention.

The essentials::

    import packedfun
    f = packedfun.get_global_func("testing.echo")
    f("hello")                                   # -> "hello"

    @packedfun.register_global_func("demo.twice")
    def twice(x):
        return 2 * x
"""

from __future__ import annotations

from ._backend import BACKEND, core
from ._enum import enum_class
from ._pickle import UnresolvedFunction
from ._pickle import install as _install_pickle
from .container import Array, Dict, List, Map, Shape
from .error import Error, InternalError, register_error
from .module import Module, load_module, system_lib
from .object import register_object
from .registry import (
    convert_func,
    get_global_func,
    get_global_func_metadata,
    init_ffi_api,
    list_global_func_names,
    register_func,
    register_global_func,
    register_lazy_namespace,
    remove_global_func,
)
from .stream import StreamContext, current_stream, get_raw_stream, use_raw_stream, use_stream
from .structural import (
    StructuralKey,
    VisitInterrupt,
    get_first_structural_mismatch,
    structural_equal,
    structural_first_difference,
    structural_hash,
)
from .tensor import (
    Device,
    Tensor,
    _dl_device_type_class,
    device,
    dtype,
    from_dlpack,
    set_tensor_return,
    tensor_return,
)

_install_pickle()


def _import_testing() -> object:
    import importlib

    return importlib.import_module(".testing", __name__)


# The testing library (packedfun.testing) loads on the first lookup of a "testing.*" name, so a
# bare `import packedfun` opens no library yet `get_global_func("testing.echo")` works, as
# `import tvm_ffi` does with tvm_ffi.testing.
register_lazy_namespace("testing", _import_testing)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from .serialize import from_json, to_json
    from .tensor import DLDeviceType


_DTYPE_CONSTANTS = frozenset(
    ["bool", "bfloat16", "float16", "float32", "float64", "float4_e2m1fn", "float4_e2m1fnx2"]
    + [f"{k}{b}" for k in ("int", "uint") for b in (8, 16, 32, 64)]
    + ["float6_e2m3fn", "float6_e3m2fn"]
    + [
        f"float8_{v}"
        for v in (
            "e3m4",
            "e4m3",
            "e4m3b11fnuz",
            "e4m3fn",
            "e4m3fnuz",
            "e5m2",
            "e5m2fnuz",
            "e8m0fnu",
        )
    ]  # fmt: skip
)


#: Submodules that apache-tvm-ffi's ``import tvm_ffi`` imports, so code reaches them as attributes
#: (``tvm_ffi.serialization.to_json_graph_str``): here imported on first access.
_SUBMODULES = frozenset(
    ("cpp", "testing", "libinfo", "access_path", "serialization", "dataclasses", "structural")
)


def __getattr__(name: str) -> object:
    # Names whose modules cost more to import than they are used: loaded on first access, so
    # `import packedfun` imports no more of the standard library than its calls need (enum, json,
    # inspect, typing, ctypes and pickle load when first used).
    if name in ("to_json", "from_json", "serialize"):
        import importlib  # not `from . import serialize`: its hasattr check would call back here

        serialize = importlib.import_module(".serialize", __name__)  # binds packedfun.serialize

        return serialize if name == "serialize" else getattr(serialize, name)
    if name == "method":  # apache-tvm-ffi's top-level name for dataclasses.method
        from .dataclasses import method

        return method
    if name in _SUBMODULES:  # as `import tvm_ffi` gives them
        import importlib

        return importlib.import_module(f".{name}", __name__)  # binds packedfun.<name> too
    if name in _DTYPE_CONSTANTS:  # apache-tvm-ffi's module-level dtypes: packedfun.float32, ...
        return dtype(name)
    if name == "DLDeviceType":
        return _dl_device_type_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__version__ = "0.1.0"

#: Base class of every wrapper of a native object.
Object = core.Object  # the same class as packedfun.object.Object
#: A packed function: callable with positional arguments.
Function = core.Function


def convert(value):
    """The FFI form of ``value``.

    Callables become :class:`Function`; ``None``, ``bool``, ``int``, ``float``, ``str``,
    ``bytes`` and :class:`Object` keep their kind; any other object comes back as itself.

    Parameters
    ----------
    value : object
        Any Python value.

    Returns
    -------
    object
    """
    return core.convert(value)


__all__ = [
    "Array",
    "BACKEND",
    "Dict",
    "List",
    "Map",
    "Shape",
    "register_object",
    "DLDeviceType",
    "Device",
    "Error",
    "Function",
    "InternalError",
    "Module",
    "Object",
    "Tensor",
    "UnresolvedFunction",
    "__version__",
    "convert",
    "convert_func",
    "device",
    "dtype",
    "enum_class",
    "from_dlpack",
    "use_stream",
    "current_stream",
    "use_raw_stream",
    "StreamContext",
    "get_raw_stream",
    "set_tensor_return",
    "tensor_return",
    "get_global_func",
    "get_global_func_metadata",
    "init_ffi_api",
    "list_global_func_names",
    "load_module",
    "register_error",
    "register_func",
    "register_global_func",
    "register_lazy_namespace",
    "remove_global_func",
    "StructuralKey",
    "VisitInterrupt",
    "get_first_structural_mismatch",
    "method",
    "structural_equal",
    "structural_first_difference",
    "structural_hash",
    "system_lib",
    "from_json",
    "to_json",
]
