# GPU streams: the stream the functions called from this thread launch their kernels on.
"""``with packedfun.use_stream(device, stream): f(x)`` makes ``stream`` the stream that native code
called inside the block sees for ``device`` (``packedfun::EnvGetStream(device)`` in C++).

The slot is per thread and per device. A raw handle is an int (a ``cudaStream_t`` value) or a
``ctypes.c_void_p``; objects with a ``cuda_stream`` attribute (``torch.cuda.Stream``), a ``ptr``
attribute (``cupy`` streams) or a ``native_handle`` attribute (``torch.Stream``, what
``torch.accelerator.current_stream()`` returns) are accepted too.

apache-tvm-ffi's names for the same two operations work too: ``use_raw_stream`` and
``StreamContext`` are ``use_stream``, ``get_raw_stream`` is ``current_stream``.
"""

from __future__ import annotations

import sys

from ._backend import core
from .tensor import device as _device

__all__ = ["use_stream", "current_stream", "use_raw_stream", "StreamContext", "get_raw_stream"]


def _as_device(dev) -> _device:
    return dev if isinstance(dev, _device) else _device(dev)


def _handle_of(stream) -> int:
    if stream is None:
        return 0
    ctypes = sys.modules.get("ctypes")  # a c_void_p exists only once ctypes is loaded
    if ctypes is not None and isinstance(stream, ctypes.c_void_p):
        return stream.value or 0
    why = ""
    for attr in ("cuda_stream", "ptr", "native_handle"):
        try:
            value = getattr(stream, attr, None)
        except Exception as err:  # torch.Stream of a device without handles raises on the read
            why = f" ({attr}: {err})"
            continue
        if isinstance(value, int):
            stream = value
            break
    if isinstance(stream, bool) or not isinstance(stream, int):
        kind = type(stream).__name__
        raise TypeError(
            f"use_stream: stream must be an int handle or a stream object, got {kind}{why}"
        )
    if not 0 <= stream < 2**64:
        raise OverflowError(f"use_stream: stream handle {stream} does not fit in a pointer")
    return stream


def current_stream(device) -> int:
    """The stream handle set for ``device`` on this thread (0: the default stream).

    Parameters
    ----------
    device : packedfun.device or str
        The device, e.g. ``"cuda:0"``.
    """
    dev_type, dev_id = _as_device(device)._dl_fields()
    return core.env_get_stream(dev_type, dev_id)


class use_stream:  # noqa: N801 - used as a function: ``with use_stream(...)``
    """Sets this thread's stream for ``device`` for the block; the previous one comes back after.

    Parameters
    ----------
    device : packedfun.device or str
        The device, e.g. ``"cuda:0"`` or ``packedfun.device("cuda", 1)``.
    stream : int, stream object or None
        The raw handle (``cudaStream_t`` as an int), an object with ``cuda_stream``/``ptr``/
        ``native_handle``, or None for the default stream.

    Returns
    -------
    use_stream
        A context manager; ``with`` gives the same object back.

    Raises
    ------
    TypeError, OverflowError, ValueError
        For a stream or device that is not one.
    """

    __slots__ = ("_device", "_handle", "_previous")

    def __init__(self, device, stream) -> None:
        self._device = _as_device(device)._dl_fields()
        self._handle = _handle_of(stream)
        self._previous: list = []

    def __enter__(self) -> use_stream:
        dev_type, dev_id = self._device
        self._previous.append(core.env_set_stream(dev_type, dev_id, self._handle))
        return self

    def __exit__(self, *exc: object) -> None:
        dev_type, dev_id = self._device
        core.env_set_stream(dev_type, dev_id, self._previous.pop())


#: apache-tvm-ffi's names (``tvm_ffi.use_raw_stream(device, stream)``, ``tvm_ffi.StreamContext``):
#: the same context manager as :class:`use_stream`.
use_raw_stream = use_stream
StreamContext = use_stream
#: apache-tvm-ffi's name (``tvm_ffi.get_raw_stream(device)``) of :func:`current_stream`.
get_raw_stream = current_stream
