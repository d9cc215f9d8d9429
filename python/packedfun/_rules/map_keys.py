# The one rule for the Map/Dict keys that are refused, applied by both backends.
"""Which Map/Dict keys no lookup could find again, and the TypeError that says why.

A Python key is converted into a PFAny before the native Map sees it. The Map compares object
keys by identity and value keys (numbers, strings, bytes) by content, so a key is refused when
conversion made it a new object (a tuple's Array, a callable's Function, a frozenset's, complex's,
Enum's or date's Opaque: no later lookup converts into the same object), or when the number rule
made it a value that is not equal to it (``Decimal("0.1")`` becomes the float 0.1, found by 0.1
and shared by every Decimal that rounds to it). A packedfun object is itself, so it is never
refused; str and bytes keys compare by content.

Both backends convert the key and call :func:`refusal` with what conversion made of it, only
for keys outside the common kinds that convert to themselves (exact str, int, float, bool, bytes,
None, and packedfun objects): the compiled backend from C (``pfpy_map_key_refused``), the ctypes
backend from ``_ctypes/containers.py``. Private: nothing else imports it.
"""

from __future__ import annotations

from . import backend as _backend

# PFTypeIndex values of include/packedfun/c_api.h (fixed within ABI major version 1; a test
# compares them with the ctypes mirror of the header).
TYPE_INT, TYPE_BOOL, TYPE_FLOAT, TYPE_UINT64 = 1, 2, 3, 13
TYPE_STATIC_OBJECT_BEGIN, TYPE_STRING, TYPE_BYTES, TYPE_ARRAY = 64, 65, 66, 72

_NUMBER_KINDS = (TYPE_INT, TYPE_BOOL, TYPE_FLOAT, TYPE_UINT64)
_CONTENT_KINDS = (TYPE_STRING, TYPE_BYTES)
_EXACT_NUMBERS = (int, float, bool)
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE

_FRESH_REASON = (
    "key is converted into a new native object, and Map/Dict keys that are objects compare by "
    "identity, so no lookup could find it again; use str, bytes, int, float, bool or None keys, "
    "or one packedfun object (an Array made once, ...) both to store and to look up"
)

_object_type: type | None = None


def refusal(key, type_index: int, converted, what: str | None = None) -> TypeError | None:
    """The TypeError refusing the Map/Dict key ``key``, or None when it may be stored.

    Parameters
    ----------
    key
        The Python key as given.
    type_index
        The type index of the PFAny conversion made of it (``TYPE_ARRAY`` for a tuple refused
        before its Array is built).
    converted
        That PFAny read back into Python when it is an inline value (type index below
        ``TYPE_STATIC_OBJECT_BEGIN``), else None.
    what
        Names the container in the message (``"packedfun.Map"`` for a lookup or a store:
        ``"packedfun.Map key (1, 2): a tuple key is ..."``); None for a key met while converting a
        dict, whose caller prefixes the element's path.

    Returns
    -------
    TypeError or None
        The exception for the caller to raise; None when the key is kept.
    """
    if isinstance(key, _packedfun_object()):
        return None
    if type_index >= TYPE_STATIC_OBJECT_BEGIN and type_index not in _CONTENT_KINDS:
        reason = f"a {_type_name(type(key))} {_FRESH_REASON}"
    elif type_index in _NUMBER_KINDS and type(key) not in _EXACT_NUMBERS and not key == converted:
        reason = (
            f"a {_type_name(type(key))} key is converted into {converted!r}, which is not equal to "
            "it, so the map would mistake it for other keys; use a key that converts unchanged "
            "(an exact int or float, or a str)"
        )
    else:
        return None
    return TypeError(reason if what is None else f"{what} key {key!r}: {reason}")


def _packedfun_object() -> type:
    """The binding's Object class, looked up on first use (the bindings import this module)."""
    global _object_type
    if _object_type is None:
        _object_type = _backend.core.Object
    return _object_type


def _type_name(cls: type) -> str:
    """The type's ``tp_name``, as C error messages print it: the bare name of builtins and of
    classes defined in Python, the dotted name of types defined in C (``datetime.date``)."""
    if cls.__flags__ & _HEAPTYPE or cls.__module__ == "builtins":
        return cls.__name__
    return f"{cls.__module__}.{cls.__name__}"
