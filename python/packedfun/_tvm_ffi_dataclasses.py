# `tvm_ffi.dataclasses` under the switch: packedfun.dataclasses' names, tvm-ffi's py_class rule.
"""What ``import tvm_ffi.dataclasses`` gives under :mod:`packedfun.tvm_ffi_compat`.

Every name is packedfun's own (:mod:`packedfun.dataclasses`: the same classes, the same type
registry) except :func:`py_class`, which follows tvm-ffi's inheritance rule: a frozen class may
derive from a mutable one and a mutable class from a frozen one, each field keeping the rule of the
class that declares it. packedfun's own ``py_class`` refuses such a hierarchy, as
:mod:`dataclasses` does (``docs/migration-from-tvm-ffi.md``).

apache-tvm-ffi's ``tvm_ffi.dataclasses`` is a package; this module has an empty ``__path__`` so
that ``tvm_ffi.dataclasses.<name>`` is looked up through the switch's own mapping only.
"""

from __future__ import annotations

import typing

from . import _py_class
from .dataclasses import (
    KW_ONLY,
    MISSING,
    Enum,
    EnumAttrMap,
    Field,
    IntEnum,
    Object,
    StrEnum,
    asdict,
    astuple,
    auto,
    c_class,
    entry,
    field,
    fields,
    init_property,
    is_dataclass,
    replace,
)

__path__: list[str] = []  # a package for the import system: tvm_ffi.dataclasses.<name>

__all__ = [
    "KW_ONLY",
    "MISSING",
    "Enum",
    "EnumAttrMap",
    "Field",
    "IntEnum",
    "Object",
    "StrEnum",
    "asdict",
    "astuple",
    "auto",
    "c_class",
    "entry",
    "field",
    "fields",
    "init_property",
    "is_dataclass",
    "py_class",
    "replace",
]


def py_class(
    cls_or_type_key: typing.Any = None,
    /,
    *,
    type_key: str | None = None,
    frozen: bool = False,
    init: bool = True,
    repr: bool = True,  # noqa: A002
    eq: bool = False,
    order: bool = False,
    unsafe_hash: bool = False,
    match_args: bool = True,
    kw_only: bool = False,
    structural_eq: str | None = "tree",
    slots: bool = True,
) -> typing.Any:
    """:func:`packedfun.dataclasses.py_class` with tvm-ffi's inheritance rule: frozen and mutable
    classes may mix in one hierarchy (a parent's frozen fields stay frozen in a mutable child, a
    frozen child's own fields are frozen under a mutable parent), and tvm-ffi's rule for a
    default that does not fit its field's annotation: the class is defined, and building an
    object with that default raises ``TypeError`` (packedfun's own ``py_class`` refuses the class
    at once), and its ``__init__`` order: required fields first, then those with a default (each
    group in field order, positional and keyword-only alike), where packedfun's own ``py_class``
    refuses a required field after one with a default, as :mod:`dataclasses` does."""
    params = {
        "frozen": frozen, "init": init, "repr": repr, "eq": eq, "order": order,
        "unsafe_hash": unsafe_hash, "match_args": match_args, "kw_only": kw_only,
        "structural_eq": structural_eq, "slots": slots, "mixed_frozen": True,
        "late_default_check": True, "reorder_required": True,
    }  # fmt: skip
    return _py_class._decorator(cls_or_type_key, type_key, params)


for _name in ("__dataclass_transform__",):  # what type checkers read from packedfun's
    if hasattr(_py_class.py_class, _name):
        setattr(py_class, _name, getattr(_py_class.py_class, _name))
