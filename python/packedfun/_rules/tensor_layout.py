# The tensor layout rules both bindings apply: from_dlpack's keyword checks, is_contiguous().
"""``from_dlpack(..., require_alignment=, require_contiguous=)`` and ``Tensor.is_contiguous()``.

One definition of "contiguous" (compact row-major; a tensor with a zero extent is contiguous) for
both bindings: ``_core`` calls these from C (``src/python/tensor.c``), the ctypes binding from
``_ctypes/tensor.py``. Imports nothing from the rest of the package.
"""

from __future__ import annotations

__all__ = ["require_layout", "tensor_is_contiguous", "is_contiguous"]


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


def tensor_is_contiguous(tensor) -> bool:
    """``Tensor.is_contiguous()`` of both backends: compact row-major, as ``require_contiguous``."""
    return is_contiguous(tensor.shape, tensor.strides)


def is_contiguous(shape: tuple, strides: tuple) -> bool:
    """Whether ``shape``/``strides`` (in elements) describe compact row-major data."""
    expected = 1
    for extent, stride in zip(reversed(shape), reversed(strides)):
        if extent == 0:
            return True
        if extent != 1 and stride != expected:
            return False
        expected *= extent
    return True
