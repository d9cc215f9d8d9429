# The public names of Python-defined object types: classes (_py_class) and enums (_py_enum).
"""Object types and enums defined in Python that native code sees as its own.

``@py_class("ir.Add")`` turns a class body with annotated fields into an object type of the
runtime (a type key, a type index, a parent, reflected fields and ``@method`` methods), with the
dunders and options of :mod:`dataclasses` and of ``tvm_ffi.dataclasses.py_class``; ``c_class``
gives the same surface to a type defined in C++; ``Enum``, ``IntEnum`` and ``StrEnum`` define enums
whose variants are objects of such a type.

See ``docs/python-defined-types.md``.
"""

from ._py_class import (
    KW_ONLY,
    MISSING,
    Field,
    Object,
    asdict,
    astuple,
    c_class,
    field,
    fields,
    init_property,
    is_dataclass,
    method,
    py_class,
    replace,
)
from ._py_enum import Enum, EnumAttrMap, IntEnum, StrEnum, auto, entry

__all__ = [
    "KW_ONLY",
    "MISSING",
    "Enum",
    "EnumAttrMap",
    "IntEnum",
    "StrEnum",
    "auto",
    "entry",
    "Field",
    "Object",
    "asdict",
    "astuple",
    "c_class",
    "field",
    "fields",
    "init_property",
    "is_dataclass",
    "method",
    "py_class",
    "replace",
]
