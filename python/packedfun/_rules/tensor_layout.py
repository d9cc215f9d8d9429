# The tensor layout rules both bindings apply: from_dlpack's keyword checks, is_contiguous().
"""``from_dlpack(..., require_alignment=, require_contiguous=)`` and ``Tensor.is_contiguous()``.

One definition of "contiguous" (compact row-major; a tensor with a zero extent is contiguous) for
both bindings: ``_core`` calls these from C (``src/python/tensor.c``), the ctypes binding from
``_ctypes/tensor.py``. Imports nothing from the rest of the package.
"""

from __future__ import annotations

import operator

from . import backend as _backend
from . import messages as _msg

__all__ = ["require_layout", "tensor_is_contiguous", "is_contiguous", "producer_capsule"]

#: DLPack device types whose producers take a stream: kDLCUDA, kDLROCM, kDLCUDAManaged.
_STREAM_DEVICES = (2, 10, 13)
#: DLPack's stream value for CUDA's legacy default stream (0 is ambiguous there, so not allowed).
_CUDA_LEGACY_DEFAULT = 1


def consumer_stream(producer) -> int | None:
    """The ``stream=`` a consumer passes to ``producer.__dlpack__``: None for data on a device
    without streams; for CUDA and ROCm data, the stream the calling thread runs packedfun's work on
    (``use_stream``/``use_raw_stream``, else the default stream), so that the producer orders its
    pending work on the data before it (DLPack's stream protocol)."""
    device = getattr(producer, "__dlpack_device__", None)
    if device is None:
        return None
    device_type, device_id = device()
    if int(device_type) not in _STREAM_DEVICES:
        return None
    handle = _backend.core.env_get_stream(int(device_type), int(device_id))
    if handle == 0 and int(device_type) != 10:
        return _CUDA_LEGACY_DEFAULT
    return handle


def producer_capsule(producer, max_version: tuple):
    """``producer.__dlpack__(...)`` as packedfun asks for it (both bindings, for every producer
    they do not import by a faster route): ``max_version``, and the consumer's stream for device
    data; a producer predating versioned DLPack (a TypeError on the keyword) is asked again
    without ``max_version``."""
    method = getattr(producer, "__dlpack__", None)
    if method is None:
        raise TypeError(_msg.text("FROM_DLPACK_NO_PRODUCER", _msg.type_name(type(producer))))
    stream = consumer_stream(producer)
    extra = {} if stream is None else {"stream": stream}
    try:
        return method(max_version=max_version, **extra)
    except TypeError:
        return method(**extra)


def require_layout(tensor, *, require_alignment: int = 0, require_contiguous: bool = False):
    """``from_dlpack``'s keyword checks, shared by both backends; returns ``tensor``.

    Raises
    ------
    ValueError
        When the data address is not a multiple of ``require_alignment``, or the layout is not
        compact row-major while ``require_contiguous`` is true.
    TypeError
        When an option has the wrong type.
    """
    if isinstance(require_alignment, bool) or not isinstance(require_alignment, int):
        raise TypeError(
            f"from_dlpack: require_alignment must be an int, got {type(require_alignment).__name__}"
        )
    if require_alignment < 0:
        raise ValueError(f"from_dlpack: require_alignment must be >= 0, got {require_alignment}")
    address = tensor.data_ptr + tensor.byte_offset
    if require_alignment and address % require_alignment:
        raise ValueError(
            f"from_dlpack: data address {address:#x} is not aligned to {require_alignment} bytes"
        )
    if require_contiguous and not is_contiguous(tensor.shape, tensor.strides):
        raise ValueError(
            f"from_dlpack: tensor of shape {tensor.shape} and strides {tensor.strides} "
            "is not contiguous"
        )
    return tensor


class TensorSize(int):
    """``Tensor.size``: the number of elements, an ``int``; called, ``size()`` is the same number
    and ``size(dim)`` the extent of axis ``dim`` (negative counts from the end), as on torch and
    apache-tvm-ffi tensors."""

    _shape: tuple

    def __call__(self, dim=None) -> int:
        if dim is None:
            return int(self)
        shape = self._shape
        try:
            return shape[operator.index(dim)]
        except IndexError:
            raise IndexError(
                f"Tensor.size: dimension {dim} out of range for a {len(shape)}-D tensor"
            ) from None


class TensorAddress(int):
    """``Tensor.data_ptr``: the data's address, an ``int``; called, ``data_ptr()`` gives the same
    number, as on torch and apache-tvm-ffi tensors."""

    def __call__(self) -> int:
        return int(self)


def size_of(tensor) -> TensorSize:
    """``Tensor.size`` of both backends."""
    shape = tensor.shape
    count = 1
    for extent in shape:
        count *= extent
    size = TensorSize(count)
    size._shape = shape
    return size


def data_ptr_of(address: int) -> TensorAddress:
    """``Tensor.data_ptr`` of both backends, from the data's address."""
    return TensorAddress(address)


def tensor_is_contiguous(tensor) -> bool:
    """``Tensor.is_contiguous()`` of both backends: compact row-major, as ``require_contiguous``."""
    return is_contiguous(tensor.shape, tensor.strides)


def is_contiguous(shape: tuple, strides: tuple) -> bool:
    """Whether ``shape``/``strides`` (in elements) describe compact row-major data (an empty
    tensor is, whatever its strides: it has no element to be out of place)."""
    if 0 in shape:
        return True
    expected = 1
    for extent, stride in zip(reversed(shape), reversed(strides)):
        if extent != 1 and stride != expected:
            return False
        expected *= extent
    return True
