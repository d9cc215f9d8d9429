# Tensors in Python: packedfun.Tensor, from_dlpack, and the dtype and device value types.
"""DLPack tensors shared zero-copy with NumPy, PyTorch, JAX and any other DLPack producer.

>>> import numpy as np, packedfun
>>> t = packedfun.from_dlpack(np.arange(4, dtype="float32"))
>>> t.shape, str(t.dtype), str(t.device)
((4,), 'float32', 'cpu:0')
>>> np.from_dlpack(t)                      # the same memory again
array([0., 1., 2., 3.], dtype=float32)
"""

from __future__ import annotations

import sys

from ._backend import core
from ._rules import protocols as _protocols

__all__ = [
    "DLDeviceType",  # noqa: F822 - made on first use by __getattr__ below
    "Device",
    "Tensor",
    "device",
    "dtype",
    "from_dlpack",
    "set_tensor_return",
    "tensor_return",
]

#: A DLPack tensor owned by packedfun (``__dlpack__``, ``shape``, ``strides``, ``dtype``, ...).
Tensor = core.Tensor


#: from_dlpack(x): a :class:`Tensor` sharing the memory of ``x``, without a copy (any
#: ``__dlpack__`` producer or a DLPack capsule). The backend's own function, bound directly:
#: a Python-level wrapper would cost more than the whole import (docstring in the backend).
from_dlpack = core.from_dlpack


#: DLPack's device types (``DLDeviceType`` in dlpack.h), by name. The IntEnum class
#: :class:`DLDeviceType` is built from it on first use (importing :mod:`enum` costs more than the
#: rest of this module).
_DEVICE_TYPES: dict[str, int] = {
    "cpu": 1,
    "cuda": 2,
    "cuda_host": 3,
    "opencl": 4,
    "vulkan": 7,
    "metal": 8,
    "vpi": 9,
    "rocm": 10,
    "rocm_host": 11,
    "ext_dev": 12,
    "cuda_managed": 13,
    "oneapi": 14,
    "webgpu": 15,
    "hexagon": 16,
    "maia": 17,
    "trn": 18,
}
_DEVICE_TYPE_NAMES = {v: k for k, v in _DEVICE_TYPES.items()}
# dlpack.h's own spellings, which apache-tvm-ffi's DLDeviceType uses: aliases of the members above.
_DLPACK_NAMES = ("kDLCPU", "kDLCUDA", "kDLCUDAHost", "kDLOpenCL", "kDLVulkan", "kDLMetal", "kDLVPI",
                 "kDLROCM", "kDLROCMHost", "kDLExtDev", "kDLCUDAManaged", "kDLOneAPI", "kDLWebGPU",
                 "kDLHexagon", "kDLMAIA", "kDLTrn")  # fmt: skip
_DL_DEVICE_TYPE: list = []


def _dl_device_type_class() -> type:
    if not _DL_DEVICE_TYPE:
        import enum

        members = list(_DEVICE_TYPES.items())
        members += zip(_DLPACK_NAMES, _DEVICE_TYPES.values())  # aliases: same values, come second
        cls = enum.IntEnum("DLDeviceType", members, module=__name__)  # type: ignore[misc]
        cls.__doc__ = (
            "DLPack's device types (``DLDeviceType`` in dlpack.h): ``DLDeviceType.cuda``, also "
            "by dlpack.h's name, ``DLDeviceType.kDLCUDA``."
        )
        _DL_DEVICE_TYPE.append(cls)
    return _DL_DEVICE_TYPE[0]


def __getattr__(name: str) -> object:
    if name == "DLDeviceType":
        return _dl_device_type_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class dtype(str):  # noqa: N801 - named like numpy.dtype / torch.dtype
    """A DLPack data type: ``dtype("float32")``, ``dtype("int8x4")``, ``dtype("bfloat16")``.

    A ``str`` that keeps the spelling it was given (``str(dtype("i32")) == "i32"``), so that it
    can be handed to NumPy, PyTorch or any array API as a dtype argument, and it equals the
    NumPy dtype of the same name (``dtype("float32") == numpy.dtype("float32")``). Two dtypes,
    or a dtype and a type name, compare by the type they denote: ``dtype("i32") == "int32"``.
    Parsing goes through the runtime, so every DLPack type code is understood (bool, int/uint of
    any width, float16/32/64, bfloat16, the float8/6/4 variants, complex64/128) with optional
    vector lanes. Passed to a function it arrives as a ``DLDataType``; a ``DLDataType`` result
    comes back spelt by its canonical name.

    Parameters
    ----------
    value : str, dtype, numpy.dtype or torch.dtype
        A type name, or a dtype to copy or convert.

    Raises
    ------
    TypeError
        When ``value`` is none of these.
    ValueError
        When the text is not a data type.
    """

    __slots__ = ("type_code", "bits", "lanes")
    type_code: int
    bits: int
    lanes: int

    def __new__(cls, value) -> dtype:
        if isinstance(value, dtype):
            self = str.__new__(cls, str.__str__(value))
            self.type_code, self.bits, self.lanes = value.type_code, value.bits, value.lanes
            return self
        if not isinstance(value, str):
            value = _foreign_dtype_name(value)
        self = str.__new__(cls, value)
        self.type_code, self.bits, self.lanes = _parse_dtype(value)
        return self

    def __getnewargs__(self) -> tuple:
        return (str.__str__(self),)

    @classmethod
    def _from_dl(cls, code: int, bits: int, lanes: int) -> dtype:
        try:
            name = _print_dtype(code, bits, lanes)
        except ValueError:  # e.g. imported by DLPack with a code this version does not know
            name = f"unknown(code={code}, bits={bits}, lanes={lanes})"
        self = str.__new__(cls, name)
        self.type_code, self.bits, self.lanes = code, bits, lanes
        return self

    @classmethod
    def from_dlpack_data_type(cls, dl_data_type: tuple) -> dtype:
        """The dtype of a DLPack ``(type_code, bits, lanes)`` triple (apache-tvm-ffi's name)."""
        code, bits, lanes = dl_data_type
        result = cls._from_dl(code, bits, lanes)
        result._dl_fields()
        return result

    @staticmethod
    def is_dtype(value) -> bool:
        """Whether ``value`` is a dtype or a string that parses as one."""
        if isinstance(value, dtype):
            return True
        try:
            dtype(value)
        except (TypeError, ValueError):
            return False
        return True

    def with_lanes(self, lanes: int) -> dtype:
        """This element type with ``lanes`` vector lanes: ``dtype("float32").with_lanes(4)``.

        Raises
        ------
        TypeError, ValueError, OverflowError
            When ``lanes`` is not an int in [1, 65535].
        """
        lanes = _check_field("with_lanes: lanes", lanes, 1, 65535)
        return dtype._from_dl(self.type_code, self.bits, lanes)

    @property
    def is_bool(self) -> bool:
        """Whether the elements are booleans."""
        return self.type_code == _KDL_BOOL

    @property
    def is_integer(self) -> bool:
        """Whether the elements are signed or unsigned integers."""
        return self.type_code in (_KDL_INT, _KDL_UINT)

    @property
    def is_float(self) -> bool:
        """Whether the elements are floating point (float, bfloat16, float8/6/4 variants)."""
        return self.type_code in _FLOAT_CODES

    @property
    def is_handle(self) -> bool:
        """Whether the elements are opaque handles."""
        return self.type_code == _KDL_HANDLE

    @property
    def itemsize(self) -> int:
        """Bytes per element (all lanes), rounded up for sub-byte types."""
        return (self.bits * self.lanes + 7) // 8

    def __str__(self) -> str:
        return str.__str__(self)  # the spelling it was given, as a plain str

    def __repr__(self) -> str:
        return f"dtype('{str.__str__(self)}')"

    def __eq__(self, other) -> bool:
        if isinstance(other, dtype):
            return (self.type_code, self.bits, self.lanes) == (
                other.type_code,
                other.bits,
                other.lanes,
            )
        if isinstance(other, str):
            if str.__eq__(self, other):
                return True
            try:
                return self == dtype(other)
            except (ValueError, TypeError):
                return False
        return NotImplemented  # numpy.dtype compares itself with the str

    def __ne__(self, other) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self) -> int:
        # The canonical name's str hash: a dtype finds a dict entry keyed by that plain name.
        name = self._canonical()
        return str.__hash__(name) if name is not None else hash((self.type_code, self.bits))

    def _canonical(self) -> str | None:
        try:
            return _print_dtype(self.type_code, self.bits, self.lanes)
        except (ValueError, TypeError, OverflowError):
            return None

    def _dl_fields(self) -> tuple:
        """``(type_code, bits, lanes)`` checked against DLDataType's uint8/uint8/uint16 fields."""
        return (
            _check_field("dtype.type_code", self.type_code, 0, 255),
            _check_field("dtype.bits", self.bits, 0, 255),
            _check_field("dtype.lanes", self.lanes, 0, 65535),
        )


class device:  # noqa: N801 - named like torch.device
    """A DLPack device: ``device("cpu")``, ``device("cuda:1")``, ``device("cuda", 1)``.

    Parameters
    ----------
    type : str, int or DLDeviceType
        The device type ("cpu", "cuda", ...) optionally followed by ":<id>".
    index : int, optional
        The device ordinal (default 0, or the one given after the colon).
    """

    __slots__ = ("device_type", "device_id")

    def __init__(self, type, index=None) -> None:  # noqa: A002 - mirrors torch.device
        if isinstance(type, str):
            name, sep, rest = type.partition(":")
            dev_type = _DEVICE_TYPES.get(name)
            if dev_type is None:
                raise ValueError(_unknown_device_message(name, type)) from None
            if sep:
                if index is not None or not rest.isdigit():
                    raise ValueError(f"cannot parse {type!r} as a device (expected 'cuda:1')")
                index = int(rest)
            elif index is not None:
                index = _check_field("device_id", index, 0, _INT32_MAX)
        else:
            dev_type = _device_type_of(type)
        self.device_type = int(dev_type)
        self.device_id = _check_field("device_id", 0 if index is None else index, 0, _INT32_MAX)

    @property
    def index(self) -> int:
        """The device ordinal (``device_id``), as ``torch.device.index`` names it."""
        return self.device_id

    def dlpack_device_type(self) -> int:
        """The DLPack device type code (``device_type``), e.g. 1 for CPU, 2 for CUDA."""
        return self.device_type

    @property
    def type(self) -> str:
        """The device type's name: "cpu", "cuda", ..."""
        name = _DEVICE_TYPE_NAMES.get(self.device_type)
        return name if name is not None else f"device_type({self.device_type})"

    @property
    def dl_device(self) -> tuple:
        """``(device_type, device_id)`` as ``__dlpack_device__`` returns it."""
        return (self.device_type, self.device_id)

    def __str__(self) -> str:
        return f"{self.type}:{self.device_id}"

    def __repr__(self) -> str:
        return f"device(type='{self.type}', index={self.device_id})"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            try:
                other = device(other)
            except ValueError:
                return False
        if not isinstance(other, device):
            return NotImplemented
        return self.dl_device == other.dl_device

    def __hash__(self) -> int:
        return hash(self.dl_device)

    def _dl_fields(self) -> tuple:
        """``(device_type, device_id)`` checked against DLDevice's int32 fields (the converters
        call it: an attribute set out of range after construction must not wrap either)."""
        return (
            _check_field("device_type", self.device_type, 0, _INT32_MAX),
            _check_field("device_id", self.device_id, 0, _INT32_MAX),
        )


#: apache-tvm-ffi's name for the device class.
Device = device


def _unknown_device_message(name: str, text: str) -> str:
    """The ValueError's text for an unknown device name: packedfun's, or under the tvm_ffi
    switch apache-tvm-ffi's exact ``Unknown device: <name>`` (code written for it matches it)."""
    if getattr(sys.modules.get("tvm_ffi"), "__name__", None) == __package__:  # the switch is on
        return f"Unknown device: {name}"
    return f"unknown device type {name!r} in {text!r}"


_INT32_MAX = 2**31 - 1


def _check_field(field: str, value, low: int, high: int) -> int:
    """``value`` as an int in ``[low, high]``: TypeError for a non-integer, OverflowError above
    ``high``, ValueError below ``low``; each names the field."""
    kind = type(value)
    if not isinstance(value, int) and hasattr(kind, "__index__") and "bool" not in kind.__name__:
        value = kind.__index__(value)  # an integer of another kind (numpy.int32): its value
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{field} must be an int, got {kind.__name__}")
    if value > high:
        raise OverflowError(f"{field} {value} does not fit (the largest is {high})")
    if value < low:
        raise ValueError(f"{field} {value} is out of range (the smallest is {low})")
    return int(value)


def _device_type_of(value) -> int:
    """The DLPack device type code of an int, naming the field when it is not one."""
    code = _check_field("device_type", value, 0, _INT32_MAX)
    if code not in _DEVICE_TYPE_NAMES:
        raise ValueError(f"device_type {code} is not a DLPack device type")
    return code


_TENSOR_RETURN_MODES = ("framework", "packedfun")


def set_tensor_return(mode: str) -> str:
    """Chooses, for the calling thread, what tensor results of a call become in Python.

    With ``"framework"`` (the default), a call that received a ``torch.Tensor`` argument returns
    its tensor results as ``torch.Tensor`` (sharing memory; the argument object itself when the
    function returned it unchanged), one that received a NumPy array returns NumPy arrays, and
    tensors at the top of a returned Array/List come back in a tuple/list. The first torch tensor
    or NumPy array among the positional arguments decides. With ``"packedfun"``, results stay
    :class:`Tensor`.

    Parameters
    ----------
    mode : str
        ``"framework"`` or ``"packedfun"``.

    Returns
    -------
    str
        The previous mode.

    Raises
    ------
    ValueError
        For any other mode.
    """
    if mode not in _TENSOR_RETURN_MODES:
        raise ValueError(
            f"set_tensor_return: mode must be 'framework' or 'packedfun', got {mode!r}"
        )
    previous = core._keep_tensor_results(mode == "packedfun")
    return "packedfun" if previous else "framework"


class tensor_return:  # noqa: N801 - used as a function: ``with tensor_return(...)``
    """``with tensor_return("packedfun"): f(x)`` — :func:`set_tensor_return` for one block
    (one call, or several), restored on exit.

    Parameters
    ----------
    mode : str
        ``"framework"`` or ``"packedfun"``.
    """

    __slots__ = ("_mode", "_previous")

    def __init__(self, mode: str) -> None:
        self._mode = mode
        self._previous: list[str] = []

    def __enter__(self) -> None:
        self._previous.append(set_tensor_return(self._mode))

    def __exit__(self, *exc: object) -> None:
        set_tensor_return(self._previous.pop())


_KDL_INT, _KDL_UINT, _KDL_HANDLE, _KDL_BOOL = 0, 1, 3, 6
#: kDLFloat, kDLBfloat and kDLFloat8_e3m4 .. kDLFloat4_e2m1fn.
_FLOAT_CODES = frozenset((2, 4, *range(7, 18)))
_SHORT_PREFIXES = (("bf", "bfloat"), ("fp", "float"), ("i", "int"), ("u", "uint"), ("f", "float"))


def _foreign_dtype_name(value) -> str:
    """The type name of a NumPy dtype (or scalar type) or a torch dtype; TypeError otherwise."""
    module = type(value).__module__ or ""
    if module.startswith("torch"):
        text = str(value)  # "torch.float32"
        return text[len("torch.") :] if text.startswith("torch.") else text
    if module.startswith("numpy") or (
        isinstance(value, type) and (value.__module__ or "").startswith("numpy")
    ):
        import numpy  # only reached with a NumPy value in hand

        return numpy.dtype(value).name
    raise TypeError(
        f"dtype() expects a str, a dtype or a NumPy/torch dtype, got {type(value).__name__}"
    )


def _expand_alias(text: str) -> str:
    """apache-tvm-ffi's short spellings: ``i32``, ``u8``, ``f16``, ``bf16``, ``f8_e4m3``,
    ``fp8_e5m2``, and PyTorch's ``float4_e2m1fn_x2`` for two lanes."""
    for short, full in _SHORT_PREFIXES:
        if text.startswith(short) and text[len(short) : len(short) + 1].isdigit():
            text = full + text[len(short) :]
            break
    head, sep, lanes = text.rpartition("_x")
    if sep and head and lanes.isdigit():
        text = f"{head}x{lanes}"
    return text


def _parse_dtype(text: str) -> tuple:
    try:
        return core._dtype_from_string(text)
    except ValueError:
        full = _expand_alias(text)
        if full == text:
            raise
    try:
        return core._dtype_from_string(full)
    except ValueError:
        raise ValueError(f"cannot parse {text!r} as a data type (read as {full!r})") from None


def _print_dtype(code: int, bits: int, lanes: int) -> str:
    return core._dtype_to_string(code, bits, lanes)


core._set_tensor_classes(dtype, device)
_protocols.set_classes(dtype, device)
