# The wording of the user-facing messages both bindings raise: one template per message.
"""Message templates shared by the compiled binding (``_core``) and the ctypes binding.

Each constant is a :meth:`str.format` template; a binding fills the fields with the same values
(``{}`` in order, ``{!r}`` for a repr) and raises the exception type the template's comment names.
``_core`` reads them from C with ``pfpy_raise_message`` / ``pfpy_message``
(``src/python/messages.c``); the ctypes binding with :func:`text`. A type named in a message is
named as CPython's own messages name it (:func:`type_name`). Changing a text here changes it for
both bindings; ``docs/`` and ``tests/`` pin several of them (grep before rewording).
"""

from __future__ import annotations

_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE


def text(name: str, *values: object) -> str:
    """The message ``name`` filled with ``values``."""
    return globals()[name].format(*values)


def type_name(cls: type) -> str:
    """The type's ``tp_name``, as C error messages print it: the bare name of builtins and of
    classes defined in Python, the dotted name of types defined in C (``numpy.ndarray``)."""
    if cls.__flags__ & _HEAPTYPE or cls.__module__ == "builtins":
        return cls.__name__
    return f"{cls.__module__}.{cls.__name__}"


# ---- tensors and DLPack (src/python/tensor.c, tensor_arg.c; _ctypes/tensor.py) -----------------

#: ValueError: a Tensor whose native object is gone.
TENSOR_EMPTY = "the packedfun.Tensor is empty"
#: TypeError: __dlpack__(max_version=...) that is not None or two ints.
DLPACK_MAX_VERSION = (
    "packedfun.Tensor.__dlpack__: max_version must be None or a (major, minor) tuple of two "
    "ints, got {!r}"
)
#: BufferError: __dlpack__(copy=True).
DLPACK_COPY = (
    "packedfun.Tensor.__dlpack__: copy=True is not supported (packedfun only shares memory)"
)
#: TypeError: __dlpack__(dl_device=...) that is not a pair of ints.
DLPACK_DEVICE_ARG = "__dlpack__: dl_device must be a (type, id) tuple"
#: BufferError: __dlpack__(dl_device=...) naming another device (the tensor's, the requested).
DLPACK_OTHER_DEVICE = (
    "packedfun.Tensor.__dlpack__: the tensor lives on device {}, not on the requested {}"
)
#: BufferError: a read-only tensor asked for as an unversioned capsule.
DLPACK_READONLY_LEGACY = (
    "packedfun.Tensor.__dlpack__: a read-only tensor cannot be exported as legacy DLPack "
    "(ask for max_version=(1, 0))"
)
#: BufferError: __dlpack__(stream=...) for a CPU tensor.
DLPACK_CPU_STREAM = "__dlpack__: stream must be None for a CPU tensor"
#: ValueError: a DLPack capsule imported a second time (its name).
CAPSULE_CONSUMED = (
    "from_dlpack: the DLPack capsule was consumed already (capsule '{}'); a capsule can be "
    "imported only once"
)
#: ValueError: a capsule of another kind (its name).
CAPSULE_NOT_DLPACK = "from_dlpack: capsule '{}' is not a DLPack tensor"
#: TypeError: from_dlpack of something that is neither a producer nor a capsule (its type).
FROM_DLPACK_NO_PRODUCER = (
    "from_dlpack: expected an object implementing __dlpack__ or a DLPack capsule, got {}"
)
#: TypeError: a producer whose __dlpack__ returned no capsule (producer type, returned type).
FROM_DLPACK_NOT_A_CAPSULE = "from_dlpack: {}.__dlpack__ returned {}, not a capsule"
#: TypeError: dtype(x) of a non-str (its type).
DTYPE_NOT_STR = "dtype expects a str, got {}"
#: ValueError: a (code, bits, lanes) triple out of DLDataType's ranges.
DTYPE_INVALID = "not a valid DLPack data type: code={} bits={} lanes={}"
#: BufferError (after the argument's name): a NumPy array DLPack cannot describe (dtype, why).
NUMPY_ARRAY_REFUSED = "cannot pass a NumPy array of dtype '{}' ({})"
#: ... why: big-endian data.
NUMPY_BYTE_SWAPPED = "byte-swapped data: DLPack only describes native byte order"
#: ... why: an element type with no DLPack code.
NUMPY_NO_DLPACK_TYPE = "DLPack cannot describe this element type"
#: ... why: a stride that is not a whole number of elements.
NUMPY_ODD_STRIDE = "a stride is not a multiple of the item size"
