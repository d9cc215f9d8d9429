# `tvm_ffi.dataclasses` under the switch: packedfun.dataclasses' names, tvm-ffi's py_class rule.
"""What ``import tvm_ffi.dataclasses`` gives under :mod:`packedfun.tvm_ffi_compat`.

Every name is packedfun's own (:mod:`packedfun.dataclasses`: the same classes, the same type
registry) except :func:`py_class`, which follows tvm-ffi's inheritance rule: a frozen class may
derive from a mutable one and a mutable class from a frozen one, each field keeping the rule of the
class that declares it. packedfun's own ``py_class`` refuses such a hierarchy, as
:mod:`dataclasses` does (``docs/migration-from-tvm-ffi.md``); and :func:`c_class`, which over a
type of a library built for tvm-ffi takes the fields' init traits from tvm-ffi's reflection.

apache-tvm-ffi's ``tvm_ffi.dataclasses`` is a package; this module has an empty ``__path__`` so
that ``tvm_ffi.dataclasses.<name>`` is looked up through the switch's own mapping only, which
gives this module again for its submodules ``c_class`` and ``common`` (their names, private
helpers included, are here). Importing such a submodule leaves the function of the same name
(``c_class``) in place, as tvm-ffi's package, which re-exports it, does.
"""

from __future__ import annotations

import sys
import types
import typing
import warnings

from . import _pickle, _py_class
from . import _tvm_ffi_core as _core
from . import _tvm_ffi_init as _init
from ._tvm_ffi_core import TypeSchema
from .dataclasses import (
    KW_ONLY,
    MISSING,
    Enum,
    EnumAttrMap,
    IntEnum,
    Object,
    StrEnum,
    asdict,
    astuple,
    auto,
    entry,
    init_property,
    is_dataclass,
)
from .dataclasses import replace as _pf_replace

__path__: list[str] = []  # a package for the import system: tvm_ffi.dataclasses.<name>


def _field_converter(value: typing.Any) -> typing.Any:
    """The default ``converter`` of a field: a marker for static analysis (``dataclass_transform``
    reads it); values are converted by the field's declared type when stored, as in tvm-ffi."""
    return value


#: structural_eq values of a field, as tvm-ffi spells them (packedfun's own also take "tree"/"dag")
_FIELD_STRUCTURAL_EQ = (None, "ignore", "def", "def-pattern", "def-simple")


class Field(_py_class.Field):
    """tvm-ffi's ``Field``: packedfun's :class:`packedfun.dataclasses.Field` (so every
    ``py_class`` accepts it) with tvm-ffi's constructor: ``Field(name, _ty_schema, *, default=...,
    ...)`` with tvm-ffi's defaults (``hash=True``, ``compare=False``, ``kw_only=False``), a
    ``converter`` (a marker for static analysis, see :func:`field`) and ``extra_kwargs``: options
    a field-resolution hook (``__ffi_on_fields_resolved__``) consumes; ``py_class`` refuses the
    options left over after the hooks ran."""

    __slots__ = ("_ty_schema", "converter", "extra_kwargs")

    def __init__(  # noqa: PLR0913 (tvm-ffi's signature)
        self,
        name: str | None = None,
        _ty_schema: typing.Any = None,
        *,
        default: typing.Any = MISSING,
        default_factory: typing.Any = MISSING,
        frozen: bool = False,
        init: bool = True,
        repr: bool = True,  # noqa: A002
        hash: bool | None = True,  # noqa: A002
        compare: bool = False,
        kw_only: bool | None = False,
        metadata: typing.Any = None,
        structural_eq: str | None = None,
        doc: str | None = None,
        converter: typing.Any = _field_converter,
        **extra_kwargs: typing.Any,
    ) -> None:
        if default_factory is not MISSING:
            if default is not MISSING:
                raise ValueError("cannot specify both default and default_factory")
            if not callable(default_factory):
                raise TypeError(
                    f"default_factory must be a callable, got {type(default_factory).__name__}"
                )
        if structural_eq not in _FIELD_STRUCTURAL_EQ:
            raise ValueError(
                f"structural_eq must be one of {sorted(_FIELD_STRUCTURAL_EQ, key=str)}, "
                f"got {structural_eq!r}"
            )
        super().__init__(
            default=default,
            default_factory=default_factory,
            init=init,
            repr=repr,
            hash=hash,
            compare=compare,
            kw_only=kw_only,
            metadata=metadata,
            doc=doc,
            structural_eq=structural_eq,
            frozen=frozen,
        )
        self.name = name  # type: ignore[assignment]  # None until py_class names it
        self._ty_schema = _ty_schema
        self.converter = converter
        self.extra_kwargs = dict(extra_kwargs)

    def __copy__(self) -> Field:
        out = object.__new__(type(self))
        for klass in type(self).__mro__:
            for slot in klass.__dict__.get("__slots__", ()):
                if hasattr(self, slot):
                    setattr(out, slot, getattr(self, slot))
        out.metadata = dict(self.metadata)
        out.extra_kwargs = dict(self.extra_kwargs)
        return out


def field(  # noqa: PLR0913 (tvm-ffi's signature)
    *,
    default: typing.Any = MISSING,
    default_factory: typing.Any = MISSING,
    frozen: bool = False,
    init: bool = True,
    repr: bool = True,  # noqa: A002
    hash: bool | None = None,  # noqa: A002
    compare: bool = True,
    kw_only: bool | None = None,
    metadata: typing.Any = None,
    structural_eq: str | None = None,
    doc: str | None = None,
    converter: typing.Any = _field_converter,
    **extra_kwargs: typing.Any,
) -> typing.Any:
    """tvm-ffi's ``field()``: :func:`packedfun.dataclasses.field` with tvm-ffi's extra options:
    ``converter`` (a marker for static analysis: values are converted by the field's declared
    type, never by calling it) and extension options (``extra_kwargs``) for field-resolution
    hooks. ``kw_only=None`` follows the class's ``kw_only``; ``hash=None`` follows ``compare``."""
    return Field(
        default=default,
        default_factory=default_factory,
        frozen=frozen,
        init=init,
        repr=repr,
        hash=hash,
        compare=compare,
        kw_only=kw_only,
        metadata=metadata,
        structural_eq=structural_eq,
        doc=doc,
        converter=converter,
        **extra_kwargs,
    )


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


def replace(obj: typing.Any, /, **changes: typing.Any) -> typing.Any:
    """:func:`packedfun.dataclasses.replace`; for an object of a type of a library built for
    tvm-ffi, tvm-ffi's form: a shallow copy (``copy.copy``) whose changed fields are stored
    through tvm-ffi's setters, read-only ones included (its C++ constructor need not take its
    fields by keyword, and ``__init__`` does not run again).

    Raises
    ------
    TypeError
        When ``obj`` is no dataclass instance, or its type cannot be copied.
    AttributeError
        When a change names no field of a tvm-ffi type.
    """
    index = getattr(type(obj), "__pf_type_index__", None)
    if index is None or isinstance(obj, type) or not _init._is_tvm_ffi_type(index):
        return _pf_replace(obj, **changes)
    return _pickle._replace_tvm_ffi_object(obj, **changes)


def _as_tvm_field(f: _py_class.Field) -> Field:
    """``f`` as tvm-ffi's :class:`Field` (hooks read ``_ty_schema`` and ``extra_kwargs``)."""
    if isinstance(f, Field):
        return f
    out = object.__new__(Field)
    for slot in _py_class.Field.__slots__:
        setattr(out, slot, getattr(f, slot))
    out._ty_schema, out.converter, out.extra_kwargs = None, _field_converter, {}
    return out


def fields(class_or_instance: typing.Any) -> tuple:
    """:func:`packedfun.dataclasses.fields`, each field as tvm-ffi's :class:`Field` (the fields
    of a class declared outside the switch, such as ``testing.TestIntPair``, are converted once,
    in place).

    Raises
    ------
    TypeError
        When the argument is not a c_class or py_class type or instance.
    """
    result = _py_class.fields(class_or_instance)
    if all(isinstance(f, Field) for f in result):
        return result
    cls = class_or_instance if isinstance(class_or_instance, type) else type(class_or_instance)
    for klass in cls.__mro__:
        spec = klass.__dict__.get("__pf_py_spec__")
        if spec is not None:
            spec.own[:] = [_as_tvm_field(f) for f in spec.own]
    return _py_class.fields(class_or_instance)


def _attach_field_objects(cls: type, type_info: typing.Any, *, frozen: bool = False) -> None:
    """tvm-ffi's step of ``c_class``: a :class:`Field` for each of ``type_info``'s own reflected
    fields, from the field's traits and ``cls``'s annotation, as ``TypeField.dataclass_field``
    and as the class's dataclass field of that name (a new one replaces the old)."""
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # noqa: BLE001 (an annotation that names nothing: no types, as tvm-ffi)
        hints = {}
    spec = cls.__dict__.get("__pf_py_spec__")
    for tf in type_info.fields:
        f = Field(
            tf.name, tf.ty, default=tf.c_default, default_factory=tf.c_default_factory,
            frozen=frozen or tf.frozen, init=tf.c_init, repr=tf.c_repr, hash=tf.c_hash,
            compare=tf.c_compare, kw_only=tf.c_kw_only, structural_eq=tf.c_structural_eq,
            doc=tf.doc,
        )  # fmt: skip
        f.type = hints.get(tf.name)
        tf.dataclass_field = f
        if spec is not None:
            spec.own[:] = [f if g.name == tf.name else g for g in spec.own]


def _warn_missing_field_annotations(cls: type, type_info: typing.Any, *, stacklevel: int) -> None:
    """Warns (``UserWarning``) when ``cls``'s own annotations leave out any of ``type_info``'s own
    reflected fields (``tvm_ffi.registry``'s helper of ``c_class``)."""
    import inspect

    missing = sorted({f.name for f in type_info.fields} - set(inspect.get_annotations(cls)))
    if missing:
        warnings.warn(
            f"@c_class({type_info.type_key!r}): class `{cls.__qualname__}` does not annotate the "
            f"following reflected field(s): {', '.join(missing)}. Add type annotations (e.g. "
            f"`field_name: type`) to the class body for IDE support and documentation.",
            UserWarning,
            stacklevel=stacklevel + 1,
        )


def _asdict_inner(obj: typing.Any, dict_factory: typing.Any) -> typing.Any:
    """tvm-ffi's recursive step of :func:`asdict` (a ``defaultdict`` keeps its factory)."""
    return _convert_inner(obj, lambda v: _asdict_inner(v, dict_factory), dict_factory, True)


def _astuple_inner(obj: typing.Any, tuple_factory: typing.Any) -> typing.Any:
    """tvm-ffi's recursive step of :func:`astuple`."""
    return _convert_inner(obj, lambda v: _astuple_inner(v, tuple_factory), tuple_factory, False)


def _convert_inner(
    obj: typing.Any, inner: typing.Any, factory: typing.Any, as_dict: bool
) -> typing.Any:
    import collections
    import copy

    if is_dataclass(obj) and not isinstance(obj, type):
        values = [(f.name, inner(getattr(obj, f.name))) for f in fields(obj)]
        return factory(values) if as_dict else factory(v for _, v in values)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # a namedtuple: by position
        return type(obj)(*[inner(v) for v in obj])
    if isinstance(obj, (list, tuple)):
        return type(obj)(inner(v) for v in obj)
    if isinstance(obj, collections.defaultdict):
        out: dict = collections.defaultdict(obj.default_factory)
        out.update((inner(k), inner(v)) for k, v in obj.items())
        return out
    if isinstance(obj, dict):
        return type(obj)((inner(k), inner(v)) for k, v in obj.items())
    if isinstance(obj, (_core.Array, _core.List)):
        return [inner(v) for v in obj]
    if isinstance(obj, (_core.Map, _core.Dict)):
        return {inner(k): inner(v) for k, v in obj.items()}
    return copy.deepcopy(obj)


def _evaluated(cls: type, ann: typing.Any) -> typing.Any:
    """An annotation's value (its text evaluated in the class's module); None when it names
    something not defined yet."""
    if not isinstance(ann, str):
        return ann
    module = sys.modules.get(cls.__module__)
    try:
        return eval(ann, dict(vars(module)) if module else {}, dict(vars(cls)))  # noqa: S307
    except Exception:
        return None


def _on_own_fields(cls: type, parent: type, own: list, params: dict) -> list:
    """tvm-ffi's field markers: an annotation whose type is one of the class's
    ``__ffi_field_markers__`` declares no field; it is recorded, with the class, its name and the
    index of the next field, in ``params["field_markers"]`` (after the parent's records), where a
    field-resolution hook reads it (``type_info._decorator_args``)."""
    markers = getattr(cls, "__ffi_field_markers__", ())
    if not isinstance(markers, (tuple, list)) or not all(isinstance(m, type) for m in markers):
        raise TypeError("__ffi_field_markers__ must be a tuple or list of types")
    parent_params = parent.__dict__.get("__pf_dataclass_params__", {})
    records = list(parent_params.get("field_markers", ()))
    inherited = len(_py_class._all_fields(parent)) if _py_class._is_py_class(parent) else 0
    kept: list = []
    for f in own:
        tp = _evaluated(cls, f.type) if markers else None
        if tp is not None and any(tp is m for m in markers):
            records.append((tp, cls, f.name, inherited + len(kept)))
            if f.default is not MISSING:  # the value stays the class's, for the extension
                setattr(cls, f.name, f.default)
            continue
        kept.append(_as_tvm_field(f))
    params["field_markers"] = tuple(records)
    return kept


class _ResolvingTypeInfo:
    """What a field-resolution hook receives as ``type_info``: the class, its key and options;
    ``fields`` is empty (the fields reach the type table after the hooks)."""

    def __init__(self, spec: typing.Any) -> None:
        self.type_cls, self.type_key = spec.cls, spec.key
        self.fields: list = []
        self._decorator_args = spec.params

    def __repr__(self) -> str:
        return f"TypeInfo({self.type_key!r}, resolving)"


def _on_fields_resolved(spec: typing.Any) -> None:
    """tvm-ffi's field-resolution hooks: each callable of the class or its ancestors marked
    ``__ffi_on_fields_resolved__ = True`` is called, root class first, with the type info and
    the class's own fields (their annotations resolved, ``_ty_schema`` set) before the fields
    are registered; a hook may change their options and consume ``extra_kwargs``. An extension
    option no hook consumed is refused (``TypeError``)."""
    cls = spec.cls
    _core.type_attr_options(cls)  # its attribute lists refused before the type registers
    for f in spec.own:
        if isinstance(f, Field):
            f._ty_schema = TypeSchema.from_annotation(f.type)
    hooks = [
        hook
        for base in reversed(cls.__mro__)
        for hook in base.__dict__.values()
        if callable(hook) and getattr(hook, "__ffi_on_fields_resolved__", False) is True
    ]
    if hooks:
        info = _ResolvingTypeInfo(spec)
        for hook in hooks:
            hook(info, spec.own)
    for f in spec.own:
        extra = getattr(f, "extra_kwargs", None)
        if extra:
            raise TypeError(
                f"{cls.__name__}.{f.name}: unrecognized field options: " + ", ".join(sorted(extra))
            )


@typing.dataclass_transform(
    eq_default=False,
    order_default=False,
    field_specifiers=(Field, field),
    converter=_field_converter,  # type: ignore[literal-required]  # kept under "kwargs", as tvm-ffi
)
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
        "late_default_check": True, "reorder_required": True, "mixin_fields": True,
        "on_own_fields": _on_own_fields, "on_fields_resolved": _on_fields_resolved,
        "on_registered": _core.register_type_attrs, "refuse_object": True,
        "type_attr_names": lambda cls: _core.type_attr_options(cls)[0],
        "mutable_containers": True,
    }  # fmt: skip
    return _py_class._decorator(cls_or_type_key, type_key, params)


@typing.dataclass_transform(
    eq_default=False,
    order_default=False,
    field_specifiers=(Field, field),
    converter=_field_converter,  # type: ignore[literal-required]  # kept under "kwargs", as tvm-ffi
)
def c_class(
    type_key: str,
    *,
    init: bool = True,
    repr: bool = True,  # noqa: A002
    eq: bool = False,
    order: bool = False,
    unsafe_hash: bool = False,
    frozen: bool = False,
    match_args: bool = True,
) -> typing.Any:
    """:func:`packedfun.dataclasses.c_class`; over a type of a library built for tvm-ffi, its
    dataclass fields take tvm-ffi's init traits (``init``, ``kw_only``, the C++ default or
    default factory), and ``__init__`` is tvm-ffi's over the type's constructor
    (:mod:`packedfun._tvm_ffi_init`): a class without one, or declared with ``init=False``, gets
    an ``__init__`` that raises ``TypeError`` ("cannot be constructed directly")."""
    options = {
        "init": init, "repr": repr, "eq": eq, "order": order, "unsafe_hash": unsafe_hash,
        "frozen": frozen, "match_args": match_args,
    }  # fmt: skip

    def wrap(cls: typing.Any) -> typing.Any:
        own_init = isinstance(cls, type) and "__init__" in cls.__dict__
        own_match_args = isinstance(cls, type) and "__match_args__" in cls.__dict__
        cls = _py_class.c_class(type_key, **options)(cls)
        index = cls.__pf_type_index__
        if not _init._is_tvm_ffi_type(index):
            return cls
        info: _core.TypeInfo | None = _core.TypeInfo(index, cls)
        while info is not None:  # the fields' traits, each frozen by the class that declares it
            _attach_field_objects(cls, info, frozen=frozen and info.type_index == index)
            info = info.parent_type_info
        for name in sorted(_core.TYPE_ATTR_NAMES):  # the C++ type's attribute columns
            value = _core._lookup_type_attr(index, name)
            if value is not None and name not in cls.__dict__:
                setattr(cls, name, value)
        if not own_init:
            _init.install(cls, own_init=not init)
            if not init:
                cls.__init__ = _init.make_guard(cls)
        if "__replace__" not in cls.__dict__.get("__pf_user__", ()):
            cls.__replace__ = replace
        if match_args and not own_match_args:
            positional = tuple(f.name for f in cls.__pf_py_spec__.own if f.init and not f.kw_only)
            setattr(cls, "__match_args__", positional)  # noqa: B010 (mypy refuses the assignment)
        return cls

    return wrap


class _Package(types.ModuleType):
    """This module's class: the import system names each submodule it imports on its package
    (``tvm_ffi.dataclasses.c_class`` is this module again), and tvm-ffi's package keeps the
    function of that name, which its ``__init__`` re-exports, so a function stays."""

    def __setattr__(self, name: str, value: typing.Any) -> None:
        if isinstance(value, types.ModuleType) and callable(self.__dict__.get(name)):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
