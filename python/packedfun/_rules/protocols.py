# apache-tvm-ffi's conversion protocols: a class defining one of these methods converts through it.
"""The rule both bindings apply to an argument (or element, or callback result) of a class that
defines one of apache-tvm-ffi's conversion methods, checked once per class and before the
callable rule (so a callable such a class stays what its method says):

- ``__tvm_ffi_object__()``: the object it returns (``packedfun.Module`` defines it: its handle);
- ``__tvm_ffi_opaque_ptr__()``: an opaque pointer at that address;
- ``__dlpack_data_type__()``: the dtype of the ``(code, bits, lanes)`` it returns;
- ``__dlpack_device__()`` (without ``__dlpack__``, which makes an array): the ``(type, index)``
  device;
- ``__tvm_ffi_int__()`` / ``__tvm_ffi_float__()``: that int / float;
- ``__tvm_ffi_value__()``: the value it returns, converted by the whole rule again (nested
  protocol values, inside containers too);
- ``__cuda_stream__()`` (the CUDA stream protocol, ``(version, handle)``): an opaque pointer at
  the stream's handle;
- a NumPy dtype (``numpy.dtype(...)``, ml_dtypes' included) or a torch dtype: the package's
  ``dtype`` of the same type.
"""

from __future__ import annotations

import operator
import weakref

__all__ = ["has_protocol", "protocol_value", "set_classes"]

_NAMES = (
    "__tvm_ffi_object__",
    "__tvm_ffi_opaque_ptr__",
    "__dlpack_data_type__",
    "__dlpack_device__",
    "__tvm_ffi_int__",
    "__tvm_ffi_float__",
    "__tvm_ffi_value__",
    "__cuda_stream__",
)
#: The foreign dtype classes that convert as the package's dtype, by (module, class name).
_FOREIGN_DTYPES = (("numpy", "dtype"), ("torch", "dtype"))
#: How deep ``__tvm_ffi_value__`` may nest before the value is refused (a cycle).
_MAX_DEPTH = 64
_classes: dict = {}
_known: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def set_classes(dtype, device) -> None:
    """The package's ``dtype`` and ``device`` classes (``packedfun.tensor`` sets them)."""
    _classes["dtype"], _classes["device"] = dtype, device


def _protocol_of(cls) -> str | None:
    for name in _NAMES:
        if hasattr(cls, name) and not (name == "__dlpack_device__" and hasattr(cls, "__dlpack__")):
            return name
    for base in getattr(cls, "__mro__", ()):
        if (base.__module__, base.__name__) in _FOREIGN_DTYPES:
            return "dtype"
    return None


def has_protocol(cls) -> bool:
    """Whether instances of ``cls`` convert through one of the methods above."""
    try:
        return _known[cls]
    except (KeyError, TypeError):
        pass
    found = _protocol_of(cls) is not None
    try:
        _known[cls] = found
    except TypeError:  # a class that cannot be weakly referenced: asked every time
        pass
    return found


def protocol_value(value):
    """What ``value`` converts as: a value the rest of the rule knows (an object, a
    ``ctypes.c_void_p``, a dtype, a device, an int, a float, or what ``__tvm_ffi_value__`` gave).

    Raises
    ------
    TypeError
        When ``__tvm_ffi_value__`` values nest more than 64 deep, or a method returns a value of
        the wrong shape.
    """
    for _ in range(_MAX_DEPTH):
        name = _protocol_of(type(value))
        if name is None:
            return value
        if name == "__tvm_ffi_value__":
            value = value.__tvm_ffi_value__()
            continue
        if name == "__tvm_ffi_object__":
            return value.__tvm_ffi_object__()
        if name == "__tvm_ffi_opaque_ptr__":
            import ctypes  # not at import time: `import packedfun` does not load ctypes

            return ctypes.c_void_p(operator.index(value.__tvm_ffi_opaque_ptr__()))
        if name == "__dlpack_data_type__":
            return _classes["dtype"].from_dlpack_data_type(tuple(value.__dlpack_data_type__()))
        if name == "__dlpack_device__":
            device_type, index = value.__dlpack_device__()
            return _classes["device"](int(device_type), int(index))
        if name == "__tvm_ffi_int__":
            return operator.index(value.__tvm_ffi_int__())
        if name == "__cuda_stream__":
            import ctypes

            return ctypes.c_void_p(operator.index(value.__cuda_stream__()[1]))
        if name == "dtype":
            return _classes["dtype"](value)
        return float(value.__tvm_ffi_float__())
    raise TypeError(
        f"{type(value).__name__}.__tvm_ffi_value__ values nest more than {_MAX_DEPTH} deep"
    )
