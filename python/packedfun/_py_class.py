# Object types defined in Python, dataclass-style, registered in the runtime's type table (the
# implementation; the public names are packedfun.dataclasses').
"""Python-defined object types that native code sees as its own.

``@py_class("ir.Add")`` turns a class body with annotated fields into an object type of the
runtime: a type key, a type index, a parent, and one reflected field per annotation, stored in the
object as a runtime-owned value slot (a *slot type*, ``PFTypeRegisterSlotType`` in the C ABI). C++
reads and writes the fields by name through reflection, checks the type by key, calls the methods
marked ``@method`` and constructs instances through the registered ``__create__``. The class gets
the dunders of :mod:`dataclasses` (``__init__``, ``__repr__``, ``__eq__``, ordering, hashing,
``__match_args__``) with the options and defaults of ``tvm_ffi.dataclasses.py_class``.

See ``docs/python-defined-types.md``.
"""

from __future__ import annotations

import sys
import typing

from . import _graph, _pickle
from . import object as _object
from ._backend import core
from ._missing import MISSING
from .registry import get_global_func
from .tensor import Device as _Device
from .tensor import dtype as _dtype

Object = core.Object

_ANY, _INT, _BOOL, _FLOAT = -1, 1, 2, 3
_DTYPE, _DEVICE = 5, 6  # kPFTypeDataType, kPFTypeDevice
_OBJECT, _STR, _BYTES, _FUNCTION, _ARRAY, _MAP = 64, 65, 66, 68, 72, 73
_LIST, _DICT = 74, 75  # kPFTypeList, kPFTypeDict
_READONLY, _NO_COMPARE, _STRUCTURAL_DEF = 1, 2, 4  # PACKEDFUN_FIELD_* bits
#: field(structural_eq=...): what each value adds to the field's flags.
_FIELD_STRUCTURAL = {
    None: 0,
    "tree": 0,
    "dag": 0,
    "ignore": _NO_COMPARE,
    "def": _STRUCTURAL_DEF,
    "def-simple": _STRUCTURAL_DEF,
    "def-pattern": _STRUCTURAL_DEF,
}
#: py_class(structural_eq=...): the type's structural kind (PFStructuralKind).
_TYPE_STRUCTURAL = {"tree": 0, "const-tree": 1, "dag": 2, "var": 3, None: 4}
_TYPE_NAMES = {_INT: "int", _BOOL: "bool", _FLOAT: "float", _STR: "str", _BYTES: "bytes"}


class _FactoryType:
    """The default shown in ``inspect.signature`` for a field with a ``default_factory`` (the
    generated ``__init__`` calls the factory when the argument is not given)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY: typing.Any = _FactoryType()


class _KwOnlyType:
    """The annotation ``_: KW_ONLY``: every field after it is keyword-only."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "KW_ONLY"


KW_ONLY: typing.Any = _KwOnlyType()


class Field:
    """One field of a ``py_class``: what :func:`field` returns and :func:`fields` lists."""

    __slots__ = (
        "name",
        "type",
        "default",
        "default_factory",
        "init",
        "repr",
        "hash",
        "compare",
        "kw_only",
        "metadata",
        "doc",
        "structural_eq",
        "frozen",
        "_schema",
        "_elems",
        "_compute",
    )

    def __init__(
        self,
        default: typing.Any = MISSING,
        default_factory: typing.Any = MISSING,
        init: bool = True,
        repr: bool = True,  # noqa: A002 (the dataclasses name)
        hash: bool | None = None,  # noqa: A002
        compare: bool = True,
        kw_only: typing.Any = MISSING,
        metadata: typing.Any = None,
        doc: str | None = None,
        structural_eq: str | None = None,
        frozen: bool = False,
    ) -> None:
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot specify both default and default_factory")
        if default_factory is not MISSING and not callable(default_factory):
            raise TypeError(
                "field(): default_factory must be a callable (it is called for each new object), "
                f"got {type(default_factory).__name__}"
            )
        if structural_eq not in _FIELD_STRUCTURAL:
            raise ValueError(
                f"field(structural_eq=...): unknown kind {structural_eq!r} "
                f"(one of {', '.join(f'{k!r}' for k in _FIELD_STRUCTURAL)})"
            )
        self.name: str = ""
        self.type: typing.Any = None
        self.default, self.default_factory = default, default_factory
        self.init, self.repr, self.hash, self.compare = init, repr, hash, compare
        self.kw_only, self.metadata, self.doc = kw_only, dict(metadata or {}), doc
        self.structural_eq, self.frozen = structural_eq, frozen
        self._schema: tuple = (_ANY, False)
        self._elems: list = []  # element types of a list/dict field (see _elements)
        self._compute: typing.Any = None  # an init_property's function

    def __repr__(self) -> str:
        return (
            f"Field(name={self.name!r}, type={self.type!r}, default={self.default!r}, "
            f"default_factory={self.default_factory!r}, init={self.init}, repr={self.repr}, "
            f"hash={self.hash}, compare={self.compare}, kw_only={self.kw_only})"
        )


def field(
    *,
    default: typing.Any = MISSING,
    default_factory: typing.Any = MISSING,
    init: bool = True,
    repr: bool = True,  # noqa: A002
    hash: bool | None = None,  # noqa: A002
    compare: bool = True,
    kw_only: typing.Any = MISSING,
    metadata: typing.Any = None,
    doc: str | None = None,
    structural_eq: str | None = None,
    frozen: bool = False,
) -> typing.Any:
    """Customizes a field of a :func:`py_class`, as :func:`dataclasses.field` does.

    ``structural_eq="ignore"`` leaves the field out of structural equality and hashing;
    ``structural_eq="def"`` (or ``"def-simple"``, ``"def-pattern"``) makes the field define the
    variables (``py_class(structural_eq="var")`` objects) it holds, so that two terms equal up
    to a renaming of their bound variables are structurally equal and hash alike;
    ``frozen=True`` makes this one field read-only.

    Raises
    ------
    ValueError
        When both ``default`` and ``default_factory`` are given, or for an unknown
        ``structural_eq``.
    """
    return Field(
        default,
        default_factory,
        init,
        repr,
        hash,
        compare,
        kw_only,
        metadata,
        doc,
        structural_eq,
        frozen,
    )


class init_property:  # noqa: N801 (named as property is)
    """A field computed from the others when an object is built.

    In a :func:`py_class` body, ``@init_property`` over a one-argument function declares a field
    of that name, typed by the function's return annotation (``typing.Any`` without one), that
    the constructor does not take (``init=False``) and that structural equality and hashing
    ignore (``structural_eq="ignore"``). The generated ``__init__`` calls the function once, after
    every other field is set (the parent's init properties first, then the class's own, in the
    order of the class body) and before ``__post_init__``, and stores its result in the object's
    native storage: other languages read it as a field, and reading it again does not call the
    function. A subclass's ``@init_property`` of the same name replaces the parent's function.
    Until it is computed the field holds ``None`` (its storage accepts ``None`` besides its
    type). The value can be reassigned like any field of the class (``Cls.name.set(obj, v)`` on
    a frozen class).
    """

    __slots__ = ("func", "name")

    def __init__(self, func: typing.Any) -> None:
        if not callable(func):
            raise TypeError(f"init_property: expected a function, got {type(func).__name__}")
        self.func = func
        self.name: str | None = None

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        ann = getattr(self.func, "__annotations__", {}).get("return", typing.Any)
        if "__annotations__" not in owner.__dict__:
            owner.__annotations__ = {}
        owner.__dict__["__annotations__"][name] = ann

    def __get__(self, obj: typing.Any, objtype: typing.Any = None) -> typing.Any:
        return self  # replaced by the field's descriptor when py_class registers the class


def method(fn: typing.Any) -> typing.Any:
    """Marks a method of a :func:`py_class` body for the type table, so native code calls it.

    Instance methods receive the object first; a ``staticmethod`` is registered as static.

    Raises
    ------
    TypeError
        For a ``classmethod`` (native callers pass the object, not the class) and for anything
        that is not callable.
    """
    if isinstance(fn, classmethod):
        raise TypeError(
            "@method: @classmethod is not supported (a native caller passes the object first, "
            "not the class); use @staticmethod or an instance method"
        )
    target = fn.__func__ if isinstance(fn, staticmethod) else fn
    if not callable(target):
        raise TypeError(f"@method: expected a callable, got {type(fn).__name__}")
    target.__pf_method__ = True  # type: ignore[union-attr]
    return fn


def _is_marked(fn: typing.Any) -> bool:
    """Marked by :func:`method` (or with tvm-ffi's marker attribute, ``__ffi_method__``)."""
    return bool(getattr(fn, "__pf_method__", False) or getattr(fn, "__ffi_method__", False))


# ---- annotations -> the runtime's declared field types -----------------------------------------


class _Unresolved(Exception):
    """An annotation names something not defined yet (a forward reference)."""


class _Spec:
    """What a decorated class declared, kept until its annotations resolve."""

    def __init__(
        self, cls: typing.Any, key: str, params: dict, own: list, parent: typing.Any
    ) -> None:
        self.cls, self.key, self.params, self.own, self.parent = cls, key, params, own, parent
        self.deps: list = []
        self.native = False  # True for a c_class: the fields are a C++ type's


_pending: list[_Spec] = []


def _is_py_class(tp: typing.Any) -> bool:
    return isinstance(tp, type) and "__pf_py_spec__" in tp.__dict__


def _schema(spec: _Spec, f: Field, tp: typing.Any) -> tuple:
    """``(type index or pending class, nullable)`` of annotation ``tp``."""
    if isinstance(tp, (str, typing.ForwardRef)):
        text = tp if isinstance(tp, str) else tp.__forward_arg__
        return _schema(spec, f, _evaluate_text(spec, f, text))
    if tp is object and spec.params.get("refuse_object"):  # tvm-ffi's rule: say Any
        raise TypeError(
            f"py_class {spec.cls.__qualname__}: field {f.name!r}: unsupported annotation "
            "'object' (annotate it Any to take any value)"
        )
    if tp is typing.Any or tp is object:
        return (_ANY, False)
    if tp is type(None):
        return (_ANY, False)
    if tp is bool:
        return (_BOOL, False)
    if tp is int:
        return (_INT, False)
    if tp is float:
        return (_FLOAT, False)
    if tp is str:
        return (_STR, False)
    if tp is bytes:
        return (_BYTES, False)
    if tp is _dtype:
        return (_DTYPE, False)  # a dtype or its name ("float32")
    if tp is _Device:
        return (_DEVICE, False)
    origin = typing.get_origin(tp)
    if origin is typing.Union or (origin is not None and type(tp).__name__ == "UnionType"):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        nullable = len(args) < len(typing.get_args(tp))
        if len(args) == 1:
            index, _ = _schema(spec, f, args[0])
            return (index, nullable and index != _ANY)
        return (_ANY, nullable)  # a union of several types: its members in _elements
    if origin is typing.ClassVar:
        raise _Unresolved  # never reached: ClassVar fields are skipped before
    base = origin if origin is not None else tp
    mutable = spec.params.get("mutable_containers")  # the switch's: list and dict as tvm-ffi's
    if base is list and mutable:
        return (_LIST, False)
    if base is dict and mutable:
        return (_DICT, False)
    if base in (list, tuple) or base is typing.Sequence:
        return (_ARRAY, False)
    if base is dict or base is typing.Mapping:
        return (_MAP, False)
    import collections.abc

    if base is collections.abc.Callable:
        return (_FUNCTION, False)
    if base is collections.abc.Sequence:
        return (_ARRAY, False)
    if base is collections.abc.Mapping:
        return (_MAP, False)
    if isinstance(base, type) and issubclass(base, core.Object):
        if _is_py_class(base) and "__pf_type_index__" not in base.__dict__:
            return (base, False)  # a py_class still waiting for its own annotations
        index = getattr(base, "__pf_type_index__", None)
        return (index if index is not None else _OBJECT, False)
    if isinstance(base, type) and issubclass(base, int) and not issubclass(base, bool):
        return (_INT, False)  # IntEnum and other int subclasses travel as int
    raise TypeError(
        f"py_class {spec.cls.__qualname__}: field {f.name!r}: cannot map the annotation {tp!r} "
        "to a packedfun type (use int, float, bool, str, bytes, dtype, Device, Any, a packedfun "
        "Object class, list, dict, Callable, or Optional or Union of these)"
    )


def _elements(spec: _Spec, f: Field, tp: typing.Any) -> list:
    """The element types of a ``list[T]``/``dict[K, V]`` annotation as the runtime checks them
    on every store: ``[]`` (none), ``[value]`` or ``[key, value]``, each
    ``[type index or pending class, nullable, its own elements]``."""
    if isinstance(tp, (str, typing.ForwardRef)):
        text = tp if isinstance(tp, str) else tp.__forward_arg__
        tp = _evaluate_text(spec, f, text)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Union or (origin is not None and type(tp).__name__ == "UnionType"):
        members = [a for a in args if a is not type(None)]
        if len(members) == 1:
            return _elements(spec, f, members[0])
        # the runtime checks that a value fits one member (in order; an int stays an int when
        # int comes before float); a member packedfun has no check for makes the union Any
        return [_UNION, *(_element(spec, f, m) for m in members)]
    import collections.abc

    if origin in (list, collections.abc.Sequence) and len(args) == 1:
        return [_element(spec, f, args[0])]
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return [_element(spec, f, args[0])]
    if origin in (dict, collections.abc.Mapping) and len(args) == 2:
        return [_element(spec, f, args[0]), _element(spec, f, args[1])]
    return []


def _element(spec: _Spec, f: Field, tp: typing.Any) -> list:
    try:
        index, nullable = _schema(spec, f, tp)
    except TypeError:
        return [_ANY, 1, []]  # an element type packedfun has no check for: any value
    elems = _elements(spec, f, tp)
    union = bool(_union_head(elems))  # Any with members: None only when declared Optional
    return [index, int(nullable or (index == _ANY and not union)), elems]


#: The first entry of a union's element schema (``[_UNION, member, ...]``, each member
#: ``[type index, nullable, elements]``), which the runtime reads as "one of these".
_UNION = "union"


def _union_head(elems: list) -> list:
    """``[_UNION]`` when ``elems`` lists a union's members after that marker, else ``[]``: what
    precedes the ``[type index, nullable, elements]`` entries."""
    return elems[:1] if elems[:1] == [_UNION] else []


def _element_classes(elems: list) -> list:
    """The pending py_class classes an element schema names (registered with the field's)."""
    out: list = []
    for index, _, inner in elems[len(_union_head(elems)) :]:
        if isinstance(index, type):
            out.append(index)
        out.extend(_element_classes(inner))
    return out


#: module name -> {class name: class}: the py_class classes of each module by name, the latest
#: definition of a name last (a class defined in a function body, or defined again, is the one an
#: annotation naming it means; the module's globals come after, as Python's own lookup order).
_by_module: dict[str, dict[str, typing.Any]] = {}


def _namespace(spec: _Spec) -> tuple:
    module = sys.modules.get(spec.cls.__module__)
    globalns = dict(vars(module)) if module is not None else {}
    # A py_class of another module, by a name no other module's py_class has: an annotation may
    # name a class its module imports only for type checkers (a circular import); the declaring
    # module's own names and globals come first.
    elsewhere: dict = {}
    for mod, classes in _by_module.items():
        if mod != spec.cls.__module__:
            for name, cls in classes.items():
                if not getattr(cls, "__pf_failed__", False):
                    elsewhere[name] = cls if name not in elsewhere else None
    localns = {n: c for n, c in elsewhere.items() if c is not None and n not in globalns}
    localns.update(
        (name, cls)
        for name, cls in _by_module.get(spec.cls.__module__, {}).items()
        if not getattr(cls, "__pf_failed__", False)
    )
    localns.update({"KW_ONLY": KW_ONLY, spec.cls.__name__: spec.cls})
    return globalns, localns


def _evaluate(spec: _Spec, f: Field) -> typing.Any:
    return _evaluate_text(spec, f, f.type) if isinstance(f.type, str) else f.type


def _evaluate_text(spec: _Spec, f: Field, ann: str) -> typing.Any:
    globalns, localns = _namespace(spec)
    try:
        return eval(ann, globalns, localns)  # noqa: S307 (an annotation, as typing does)
    except NameError as exc:
        raise _Unresolved from exc
    except Exception as exc:
        raise TypeError(
            f"py_class {spec.cls.__qualname__}: field {f.name!r}: cannot evaluate the "
            f"annotation {ann!r}: {exc}"
        ) from None


def _resolve(spec: _Spec) -> bool:
    """Maps every own annotation; False while some name is not defined yet."""
    deps = []
    schemas = []
    types = []
    elements = []
    for f in spec.own:
        try:
            tp = _evaluate(spec, f)
            index, nullable = _schema(spec, f, tp)
            nullable = nullable or f._compute is not None  # None until computed
            elems = _elements(spec, f, tp)
        except _Unresolved:
            return False
        if isinstance(index, type):
            deps.append(index)
        deps.extend(_element_classes(elems))
        schemas.append((index, nullable))
        types.append(tp)
        elements.append(elems)
    for f, s, tp, elems in zip(spec.own, schemas, types, elements):
        f._schema = s
        f._elems = elems
        f.type = tp  # the resolved annotation (fields() shows the type, not its text)
    spec.deps = deps
    return True


# ---- class-definition-time checks ---------------------------------------------------------------

_RESERVED = frozenset(dir(core.Object)) | {"handle", "type_index", "type_key", "same_as"}


def _annotations(cls: typing.Any) -> dict:
    import inspect

    return inspect.get_annotations(cls)


def _marks_kw_only(ann: typing.Any) -> bool:
    """Whether an annotation is the ``KW_ONLY`` marker (or its text)."""
    return ann is KW_ONLY or (isinstance(ann, str) and ann.split(".")[-1] == "KW_ONLY")


def _own_fields(cls: typing.Any, kw_only: bool, copy_fields: bool = False) -> list:
    """The annotated fields of ``cls``'s own body, as Field objects (ClassVar and KW_ONLY out);
    ``copy_fields``: copies of the class's ``Field`` objects (a plain class whose fields a
    ``py_class`` below it takes, which keeps its own)."""
    import copy

    own = []
    for name, ann in _annotations(cls).items():
        text = ann if isinstance(ann, str) else None
        if _marks_kw_only(ann):
            kw_only = True
            continue
        if typing.get_origin(ann) is typing.ClassVar or ann is typing.ClassVar:
            continue
        if text is not None and (text.startswith(("ClassVar", "typing.ClassVar"))):
            continue
        if name.startswith("__") or name in _RESERVED:
            raise ValueError(
                f"py_class {cls.__qualname__}: field {name!r} clashes with a name reserved by "
                "packedfun.Object (or a dunder); rename the field"
            )
        value = cls.__dict__.get(name, MISSING)
        if isinstance(value, init_property):
            f = Field(init=False, structural_eq="ignore")
            f._compute = value.func
        else:
            f = value if isinstance(value, Field) else Field(default=value)
            if copy_fields and f is value:
                f = copy.copy(f)
        f.name, f.type = name, ann
        if f.kw_only is MISSING or f.kw_only is None:  # None: tvm-ffi's "follow the class"
            f.kw_only = kw_only
        if f.default_factory is not MISSING and not callable(f.default_factory):
            raise TypeError(
                f"py_class {cls.__qualname__}: field {name!r}: default_factory must be callable"
            )
        own.append(f)
    return own


def _value_fits(schema: tuple, value: typing.Any) -> bool:
    index, nullable = schema
    if index == _ANY or (value is None and nullable):
        return True
    if value is None:
        return False
    if index == _INT:
        return isinstance(value, int)
    if index == _FLOAT:
        return isinstance(value, (int, float))
    if index == _BOOL:
        return isinstance(value, bool)
    if index == _STR:
        return isinstance(value, str)
    if index == _BYTES:
        return isinstance(value, bytes)
    if index == _DTYPE:
        return isinstance(value, str)  # a dtype is a str; a name is parsed when stored
    if index == _DEVICE:
        return isinstance(value, (_Device, str))  # a name is parsed when stored
    if index == _ARRAY:
        return isinstance(value, (list, tuple, core.Array))
    if index == _MAP:
        return isinstance(value, (dict, core.Map))
    if index == _FUNCTION:
        return callable(value)
    if isinstance(index, type):
        return isinstance(value, index)
    return isinstance(value, core.Object) and core.type_is_instance(value.type_index, index)


def _annotation_fits(tp: typing.Any, value: typing.Any) -> bool:
    """Whether ``value`` fits a field annotated ``tp`` (``TypeError`` for an annotation no field
    may have)."""
    probe = _Spec(type("TypeSchema", (), {}), "", {}, [], None)
    return _value_fits(_schema(probe, Field(), tp), value)


def _check_defaults(spec: _Spec) -> None:
    late = spec.params.get("late_default_check", False)  # tvm-ffi's rule: at construction
    for f in spec.own:
        if f.default is not MISSING and not late and not _value_fits(f._schema, f.default):
            raise TypeError(
                f"py_class {spec.cls.__qualname__}: field {f.name!r}: the default "
                f"{f.default!r} does not fit the annotation {f.type!r}"
            )
        if not f.init and not _has_default(f):
            if not (f._schema[0] == _ANY or f._schema[1]):
                raise TypeError(
                    f"py_class {spec.cls.__qualname__}: field {f.name!r} has init=False and "
                    "no default, and its type does not accept None"
                )


def _all_fields(cls: typing.Any, slots_only: bool = False) -> list:
    """The fields of ``cls`` and its ancestors, root first; ``slots_only``: without the fields of
    ``c_class`` ancestors (which the Python-defined slots and their constructor do not hold)."""
    out: dict = {}  # by name: a c_class's fields include its C++ ancestors', a c_class parent's too
    for klass in reversed(cls.__mro__):
        spec = klass.__dict__.get("__pf_py_spec__")
        if spec is not None and not (slots_only and spec.native):
            out.update((f.name, f) for f in spec.own)
    return list(out.values())


def _has_default(f: Field) -> bool:
    return f.default is not MISSING or f.default_factory is not MISSING


def _check_order(spec: _Spec) -> None:
    if spec.params.get("reorder_required"):  # tvm-ffi's rule: __init__ takes required ones first
        return
    if not spec.params["init"] or "__init__" in spec.cls.__dict__.get("__pf_user__", ()):
        return  # no generated __init__: the order of defaults does not matter
    seen_default = None
    for f in _all_fields(spec.cls, slots_only=True):
        if not f.init or f.kw_only:
            continue
        if _has_default(f):
            seen_default = f.name
        elif seen_default is not None:
            raise TypeError(
                f"py_class {spec.cls.__qualname__}: non-default argument {f.name!r} follows "
                f"default argument {seen_default!r}"
            )


# ---- registration -------------------------------------------------------------------------------

_defined: dict[str, _Spec] = {}  # type key -> spec of every registered py_class
_funcs: dict = {}


def _func(name: str) -> typing.Any:
    f = _funcs.get(name)
    if f is None:
        f = _funcs[name] = get_global_func(name)
    return f


def _parent_index(spec: _Spec) -> int:
    return (
        spec.parent.__dict__.get("__pf_type_index__", _OBJECT)
        if spec.parent is not None
        else _OBJECT
    )


def _indexed(elems: list, index_of: dict) -> list:
    """An element schema with its pending classes replaced by their type indices."""
    out: list = _union_head(elems)
    for index, nullable, inner in elems[len(out) :]:
        if isinstance(index, type):
            index = index_of.get(id(index), index.__dict__.get("__pf_type_index__", _OBJECT))
        out.append([index, nullable, _indexed(inner, index_of)])
    return out


def _register_group(group: list) -> None:
    """Registers specs whose annotations all resolve, parents first; a group's classes may refer
    to each other, so every key is reserved before any fields are declared. The group registers
    as a whole: when one of its classes fails, the keys the group took are freed again (a
    corrected definition can take them) and none of its classes is installed."""
    order: list = []
    names = {id(s.cls) for s in group}
    while len(order) < len(group):
        for s in group:
            if s in order:
                continue
            if (
                s.parent is None
                or id(s.parent) not in names
                or any(o.cls is s.parent for o in order)
            ):
                order.append(s)
    # Only the classes some declared type names are reserved; a class nobody names is registered
    # in one step.
    named = {id(d) for s in order for d in s.deps}
    for s in reversed(order):  # children first: a reserved class needs its parent's index
        if id(s.cls) in named and s.parent is not None:
            named.add(id(s.parent))
    index_of: dict = {}  # id(cls) -> its index in this group (reserved or registered)
    taken: list = []  # the indices whose keys this group created, freed again if it fails

    def parent_of(s: _Spec) -> int:
        parent = index_of.get(id(s.parent)) if s.parent is not None else None
        return _parent_index(s) if parent is None else parent

    for s in order:  # the switch's field-resolution hooks (tvm-ffi's): may still refuse a class
        if s.params.get("on_fields_resolved") is not None:
            s.params["on_fields_resolved"](s)
    try:
        for s in order:
            if id(s.cls) in named:
                fresh = _key_is_free(s.key)
                index = _func("packedfun.slot_type_reserve")(s.key, parent_of(s))
                if fresh:
                    taken.append(index)
                index_of[id(s.cls)] = index
        indices = []
        for s in order:
            rows = []
            for f in s.own:
                declared, nullable = f._schema
                if isinstance(declared, type):
                    declared = index_of.get(
                        id(declared), declared.__dict__.get("__pf_type_index__")
                    )
                flags = _READONLY if (s.params["frozen"] or f.frozen) else 0
                flags |= _FIELD_STRUCTURAL[f.structural_eq]
                elems = _indexed(f._elems, index_of)
                rows.append([f.name, f.doc or "", flags, declared, int(nullable), elems])
            fresh = id(s.cls) not in named and _key_is_free(s.key)  # a reserved key is counted
            index = _func("packedfun.slot_type_register")(s.key, parent_of(s), rows)
            if fresh:
                taken.append(index)
            index_of[id(s.cls)] = index
            indices.append(index)
    except BaseException:
        if taken:
            _func("packedfun.slot_type_release")(taken)
        raise
    for s, index in zip(order, indices):
        _install(s, index)


def _forget(cls: typing.Any, free_key: bool) -> None:
    """Undoes the definition of ``cls``, a ``py_class`` nothing refers to yet whose definition
    then failed (an enum whose variants are refused): it no longer waits or counts as defined,
    and with ``free_key`` (the definition created the key) its key is free for a corrected
    definition of any layout."""
    spec: _Spec = cls.__dict__["__pf_py_spec__"]
    key = spec.key
    if spec in _pending:
        _pending.remove(spec)
    cls.__pf_failed__ = True
    index = cls.__dict__.get("__pf_type_index__")
    if index is None:
        return
    if _defined.get(key) is spec:
        del _defined[key]
    if _object._registered.get(index) is cls:
        del _object._registered[index]
    _object._infos.pop(index, None)
    _object._automatic.clear()
    if free_key:
        _func("packedfun.slot_type_release")([index])


def _key_is_free(key: str) -> bool:
    try:
        core.type_key_to_index(key)
    except KeyError:
        return True
    return False


class FieldProperty(core.FieldDescriptor):
    """The descriptor of a :func:`py_class` field (``Cls.__dict__["x"]``): reads and writes the
    field as :class:`packedfun.core.FieldDescriptor` does, and adds the frozen-field escape hatch.

    ``Cls.x.set(obj, value)`` stores ``value`` into field ``x`` of ``obj`` even when the field is
    frozen (``frozen=True`` on the class or ``field(frozen=True)``), checked against the declared
    type like any store: what ``object.__setattr__`` is to a frozen :mod:`dataclasses` class, for
    a ``__post_init__`` that computes a frozen field. Attribute assignment (``obj.x = v``) and
    native reflection setters still refuse a frozen field. ``fset`` is ``None`` for a frozen field
    and the setter ``fset(obj, value)`` for a mutable one, as on a :class:`property`.
    """

    __slots__ = ()

    @property
    def fset(self) -> typing.Any:
        """``None`` for a frozen field, else a callable ``fset(obj, value)`` that assigns."""
        return None if self.readonly else self.__set__

    def set(self, obj: typing.Any, value: typing.Any) -> None:
        """Stores ``value`` into this field of ``obj``, frozen or not.

        Raises
        ------
        TypeError
            When ``obj`` is not an instance of the field's class, or ``value`` does not fit the
            field's declared type.
        """
        if not self.readonly:
            self.__set__(obj, value)
            return
        if not isinstance(obj, core.Object) or not core.type_is_instance(
            obj.type_index, self.type_index
        ):
            raise TypeError(
                f"{self.__qualname__}.set(): expected an instance of its class, got "
                f"{type(obj).__qualname__}"
            )
        _func("packedfun.slot_object_set_field")(obj, self.__name__, value)


class PayloadEnumField(FieldProperty):
    """The descriptor of a field declared with a :class:`packedfun.IntEnum` or
    :class:`packedfun.StrEnum` class: a store (assignment, ``set``, the constructor) also takes a
    variant's payload (``Priority``'s ``20``, ``Opcode``'s ``"*"``) and stores that variant. A
    payload no variant has, or any other value, is refused by the field's type check as before."""

    __slots__ = ("enum",)
    enum: typing.Any  #: the IntEnum or StrEnum class, set once made

    def __set__(self, obj: typing.Any, value: typing.Any) -> None:
        super().__set__(obj, _payload_variant(self.enum, value))

    def set(self, obj: typing.Any, value: typing.Any) -> None:
        super().set(obj, _payload_variant(self.enum, value))


def _payload_enum(schema: tuple) -> typing.Any:
    """The IntEnum/StrEnum class that a field of this schema holds, or None (``_py_enum`` marks
    such a class with the type of its variants' values, ``__pf_enum_payload__``)."""
    index = schema[0]
    cls = _object._registered.get(index) if isinstance(index, int) else None
    if cls is None or cls.__dict__.get("__pf_enum_payload__") is None:
        return None
    return cls


def _payload_variant(enum: typing.Any, value: typing.Any) -> typing.Any:
    """``value`` as the variant of ``enum`` whose payload it is (an ``int`` for an IntEnum, a
    ``str`` for a StrEnum); any other value unchanged, for the field's check to judge."""
    kind = enum.__dict__["__pf_enum_payload__"]
    if type(value) is kind or (isinstance(value, kind) and not isinstance(value, (bool, enum))):
        try:
            return enum.get(value)
        except KeyError:
            return value
    return value


def _install(spec: _Spec, index: int) -> None:
    cls = spec.cls
    _object._infos.pop(index, None)
    for f in spec.own:
        enum = _payload_enum(f._schema)
        if enum is None:
            setattr(cls, f.name, FieldProperty(index, f.name))
        else:
            descriptor = PayloadEnumField(index, f.name)
            descriptor.enum = enum
            setattr(cls, f.name, descriptor)
    cls.__pf_type_index__ = index
    structural = _TYPE_STRUCTURAL[spec.params.get("structural_eq", "tree")]
    _func("packedfun.type_set_structural_kind")(index, structural)
    info = core.type_info(index)
    ctor = next(m["func"] for m in info["methods"] if m["name"] == "__create__")
    if spec.params["init"] and "__init__" not in cls.__dict__.get("__pf_user__", ()):
        cls.__init__ = _make_init(cls, ctor)
    elif "__init__" in cls.__dict__.get("__pf_user__", ()):
        cls.__init__ = _starting_blank(cls.__dict__["__init__"])
    cls.__pf_create__ = ctor
    core.fast_construct(cls)  # _core: Cls(...) calls __init__ without packing the keywords
    attr_names = spec.params.get("type_attr_names")  # the switch's: attributes, not methods
    _register_methods(cls, index, info, attr_names(cls) if attr_names is not None else ())
    _object.core.set_type_name(cls, spec.key)
    _object._registered[index] = cls
    _object._automatic.clear()
    core.set_object_factory(_object._class_for)
    if "__reduce_ex__" not in cls.__dict__ and "__reduce__" not in cls.__dict__:
        cls.__reduce_ex__ = _reduce_py_class
    if spec.params.get("on_registered") is not None:  # the switch's type attributes (tvm-ffi's)
        spec.params["on_registered"](cls, index)
    _object._announce(cls)  # the class hooks: _pickle.attach, and any others
    _defined[spec.key] = spec


def _starting_blank(user_init: typing.Any) -> typing.Any:
    """A class's own ``__init__``, run on a blank object of the instance's type (its fields hold
    0, 0.0, False or None until assigned), so that it may assign the fields, call
    ``super().__init__(...)`` or both, as with :mod:`dataclasses`. An ``__init__`` that calls
    ``__init_handle_by_constructor__`` builds the object itself and is left as it is."""
    if getattr(user_init, "__pf_starting_blank__", False):
        return user_init
    code = getattr(user_init, "__code__", None)
    if code is None or "__init_handle_by_constructor__" in code.co_names:
        return user_init  # it builds the object itself, from the type's constructor
    import functools

    blank = _func("packedfun.slot_object_create_blank")
    adopt = core.Object.__init_handle_by_constructor__

    @functools.wraps(user_init)
    def __init__(self: typing.Any, *args: typing.Any, **kwargs: typing.Any) -> None:
        if not self.handle:
            adopt(self, blank, type(self).__pf_type_index__)
        user_init(self, *args, **kwargs)

    __init__.__pf_starting_blank__ = True  # type: ignore[attr-defined]
    return __init__


def _reduce_py_class(self: typing.Any, protocol: int = 2) -> tuple:
    """Pickles by value (the value graph, as any reflected object) and names the modules that
    define the graph's Python-defined types, so a fresh process imports them before rebuilding."""
    nodes, root = _graph.flatten(self, _pickle._tensor_data_checked)
    modules = sorted(
        {_defined[n[1]].cls.__module__ for n in nodes if n[0] == "O" and n[1] in _defined}
    )
    return (_load_after_import, (modules, nodes, root))


def _load_after_import(modules: list, nodes: list, root: typing.Any) -> typing.Any:
    import importlib

    for name in modules:
        if name != "__main__" and name not in sys.modules:
            importlib.import_module(name)
    return _pickle._load_graph(nodes, root)


def _register_methods(cls: typing.Any, index: int, info: dict, skip: typing.Any = ()) -> None:
    have = {m["name"] for m in info["methods"]} | set(skip)
    register = _func("packedfun.type_register_method")
    for name, value in cls.__dict__.items():
        target = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
        if not _is_marked(target) or name in have:
            continue
        is_static = isinstance(value, staticmethod)
        register(index, name, core.to_function(target), is_static, target.__doc__ or "")


def _try_pending() -> None:
    """Registers every pending class whose annotations now resolve (with the pending classes it
    refers to, when those resolve too)."""
    while True:
        ready = [s for s in _pending if _resolve(s)]
        ready_ids = {id(s.cls) for s in ready}
        changed = True
        while changed:  # drop those that need a class that still cannot be registered
            changed = False
            for s in list(ready):
                needs = list(s.deps) + ([s.parent] if s.parent is not None else [])
                for d in needs:
                    if "__pf_type_index__" in d.__dict__ or not _is_py_class(d):
                        continue
                    if id(d) not in ready_ids:
                        ready.remove(s)
                        ready_ids.discard(id(s.cls))
                        changed = True
                        break
        if not ready:
            return
        for s in ready:
            _pending.remove(s)
        try:
            for s in ready:
                _check_defaults(s)
            _register_group(ready)
        except BaseException:
            for s in ready:  # a failed group is not left half-usable
                if "__pf_type_index__" not in s.cls.__dict__:
                    s.cls.__pf_failed__ = True
            raise


# ---- generated methods --------------------------------------------------------------------------


def _make_init(cls: typing.Any, ctor: typing.Any) -> typing.Any:
    all_fields = _all_fields(cls, slots_only=True)
    params: list = []
    kw_params: list = []
    lines: list = []
    env: dict = {
        "_ctor": ctor,
        "_init_handle": core.Object.__init_handle_by_constructor__,
        "MISSING": MISSING,
        "_FACTORY": _FACTORY,
    }
    args = []
    for i, f in enumerate(all_fields):
        var = f"_v{i}"
        if f.default is not MISSING:
            env[f"_d{i}"] = f.default
        if f.default_factory is not MISSING:
            env[f"_f{i}"] = f.default_factory
        if f.init:
            enum = _payload_enum(f._schema)
            if enum is not None:  # a variant's payload stands for the variant
                env[f"_n{i}"], env[f"_t{i}"] = _payload_variant, enum
                lines.append(f"    {f.name} = _n{i}(_t{i}, {f.name})")
            if f.default is not MISSING:
                param = f"{f.name}=_d{i}"
                if not _value_fits(f._schema, f.default):  # only under late_default_check
                    env[f"_e{i}"] = TypeError(
                        f"{cls.__qualname__}(): the default for field {f.name!r} "
                        f"({f.default!r}) does not fit its annotation {f.type!r}"
                    )
                    lines.append(f"    if {f.name} is _d{i}: raise _e{i}")
            elif f.default_factory is not MISSING:
                param = f"{f.name}=_FACTORY"
                lines.append(f"    if {f.name} is _FACTORY: {f.name} = _f{i}()")
            else:
                param = f.name
            (kw_params if f.kw_only else params).append((_has_default(f), param))
            args.append(f.name)
        else:
            if f.default_factory is not MISSING:
                lines.append(f"    {var} = _f{i}()")
            elif f.default is not MISSING:
                lines.append(f"    {var} = _d{i}")
            else:
                lines.append(f"    {var} = None")
            args.append(var)
    if cls.__dict__.get("__pf_dataclass_params__", {}).get("reorder_required"):
        params.sort(key=lambda p: p[0])  # stable: required ones first, each group in field order
        kw_params.sort(key=lambda p: p[0])
    native = _native_fields(cls)
    for name in native:  # the C++ part is default-constructed; these fields may be set after
        kw_params.append((True, f"{name}=MISSING"))
    positional = [p for _, p in params]
    keyword = [p for _, p in kw_params]
    # the object's own parameter; renamed (as dataclasses does) when a field is named "self"
    me = "__pf_self__" if any(f.name == "self" for f in all_fields) else "self"
    signature = ", ".join([me, *positional] + (["*", *keyword] if keyword else []))
    # Called on an object that exists already (``super().__init__(...)`` from a subclass's own
    # ``__init__``, which starts from a blank object): assign the fields instead of building.
    assigned = [
        f"type({me}).{f.name}.set({me}, {a})"
        for f, a in zip(all_fields, args)
        if f.init or _has_default(f)
    ]
    lines.append(f"    if {me}.handle:")
    lines.extend(f"        {line}" for line in assigned or ["pass"])
    lines.append("    else:")
    lines.append(f"        _init_handle({me}, _ctor, {', '.join(args)})")
    for name in native:
        lines.append(f"    if {name} is not MISSING: {me}.{name} = {name}")
    # init_property functions, root class first; a subclass's of the same name replaces its parent's
    computed = {f.name: f._compute for f in all_fields if f._compute is not None}
    for klass in reversed(cls.__mro__):
        computed.update(klass.__dict__.get("__pf_computed_override__", {}))
    for i, (name, fn) in enumerate(computed.items()):
        env[f"_c{i}"] = fn
        lines.append(f"    type({me}).{name}.set({me}, _c{i}({me}))")
    if hasattr(cls, "__post_init__"):
        lines.append(f"    {me}.__post_init__()")
    source = f"def __init__({signature}):\n" + "\n".join(lines) + "\n"
    exec(source, env)  # noqa: S102 (generated as dataclasses generates its __init__)
    init = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__annotations__ = {f.name: f.type for f in all_fields if f.init}
    init.__annotations__["return"] = None
    return init


def _native_fields(cls: typing.Any) -> list:
    """The writable reflected fields of the C++-defined ancestors of ``cls`` (root first)."""
    type_info = core.type_info  # not object.type_info, which caches what it reads

    index = cls.__dict__.get("__pf_type_index__")
    if index is None:
        return []
    keys = {s.key for s in _defined.values()}
    out: list = []
    for ancestor in type_info(index)["ancestors"][1:]:
        info = type_info(ancestor)
        if info["type_key"] not in keys and ancestor != index:
            out.extend(f["name"] for f in info["fields"] if not f["readonly"])
    return out


def _pending_init(self: typing.Any, *args: typing.Any, **kwargs: typing.Any) -> None:
    cls = type(self)
    _try_pending()
    if "__pf_type_index__" not in cls.__dict__:
        spec = cls.__dict__["__pf_py_spec__"]
        missing = [f"{f.name}: {f.type}" for f in spec.own if isinstance(f.type, str)]
        raise TypeError(
            f"Cannot instantiate {cls.__qualname__}: its py_class annotations could not be "
            f"resolved (a class not defined yet, or an expression that fails): {'; '.join(missing)}"
        )
    cls.__init__(self, *args, **kwargs)


def _field_tuple(names: tuple) -> typing.Any:
    from operator import attrgetter

    if not names:
        return lambda self: ()
    if len(names) == 1:
        get = attrgetter(names[0])
        return lambda self: (get(self),)
    return attrgetter(*names)


def _install_dunders(cls: typing.Any, params: dict) -> None:
    own = cls.__dict__
    all_fields = _all_fields(cls)
    if params["repr"] and "__repr__" not in own:
        import reprlib

        names = [f.name for f in all_fields if f.repr]
        qualname = cls.__qualname__

        @reprlib.recursive_repr()
        def __repr__(self: typing.Any) -> str:
            return f"{qualname}(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in names) + ")"

        cls.__repr__ = __repr__
    compare = _field_tuple(tuple(f.name for f in all_fields if f.compare))
    if params["eq"] and "__eq__" not in own:

        def __eq__(self: typing.Any, other: typing.Any) -> typing.Any:
            if other.__class__ is not self.__class__:
                return NotImplemented
            return self.same_as(other) or compare(self) == compare(other)

        def __ne__(self: typing.Any, other: typing.Any) -> typing.Any:
            result = __eq__(self, other)
            return result if result is NotImplemented else not result

        cls.__eq__, cls.__ne__ = __eq__, __ne__
    if params["order"]:
        for name, op in (("__lt__", "<"), ("__le__", "<="), ("__gt__", ">"), ("__ge__", ">=")):
            if name in own:
                raise TypeError(f"py_class {cls.__qualname__}: cannot overwrite {name} (order)")
            setattr(cls, name, _order_method(op, compare))
    hashed = _field_tuple(
        tuple(f.name for f in all_fields if (f.compare if f.hash is None else f.hash))
    )
    explicit_hash = "__hash__" in own and own["__hash__"] is not None
    if params["unsafe_hash"]:
        if explicit_hash:
            raise TypeError(f"py_class {cls.__qualname__}: cannot overwrite __hash__")
        cls.__hash__ = lambda self: hash(hashed(self))
    elif params["eq"] and not explicit_hash:
        cls.__hash__ = (lambda self: hash(hashed(self))) if params["frozen"] else None
    if params["match_args"] and "__match_args__" not in own:
        spec = own.get("__pf_py_spec__")
        slots = _all_fields(cls, slots_only=spec is None or not spec.native)
        positional = tuple(f.name for f in slots if f.init and not f.kw_only)
        setattr(cls, "__match_args__", positional)  # noqa: B010 (mypy refuses the assignment)
    if "__replace__" not in own:  # a class's own __replace__ stays
        cls.__replace__ = replace


def _order_method(op: str, compare: typing.Any) -> typing.Any:
    import operator

    fn = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}[op]

    def method(self: typing.Any, other: typing.Any) -> typing.Any:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return fn(compare(self), compare(other))

    return method


def _rebuild_with_slots(cls: typing.Any) -> typing.Any:
    ns = dict(cls.__dict__)
    ns.pop("__dict__", None)
    ns.pop("__weakref__", None)
    ns["__slots__"] = ()
    new = type(cls)(cls.__name__, cls.__bases__, ns)
    new.__qualname__ = cls.__qualname__
    for value in ns.values():  # zero-argument super() refers to the class through a cell
        target = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
        for cell in getattr(target, "__closure__", None) or ():
            try:
                if cell.cell_contents is cls:
                    cell.cell_contents = new
            except ValueError:
                pass
    return new


def _is_object_type(k: type) -> bool:
    """Whether ``k`` stands for a native type: packedfun.Object, a py_class or a registered
    class."""
    return k is core.Object or _is_py_class(k) or "__pf_type_index__" in k.__dict__


def _with_mixin_fields(cls: typing.Any, mixins: list, kw_only: bool) -> list:
    """The fields of ``cls`` and of the plain classes between it and its native parent
    (``mixins``, in MRO order), root-most first; a name declared again keeps its first position
    and takes the later declaration, and a ``KW_ONLY`` marker holds for every field after it,
    into the classes below (tvm-ffi's rule for such classes under the switch)."""
    merged: dict = {}
    for klass in [*reversed(mixins), cls]:
        fields = _own_fields(klass, kw_only, copy_fields=klass is not cls)
        kw_only = kw_only or any(_marks_kw_only(a) for a in _annotations(klass).values())
        for f in fields:
            merged[f.name] = f
    return list(merged.values())


def _decorate(
    cls: typing.Any, key: str | None, params: dict, own: list | None = None
) -> typing.Any:
    """Defines ``cls`` as a Python-defined object type; ``own``: its own fields, when they come
    from elsewhere than its annotations (tvm-ffi's low-level steps, ``_tvm_ffi_private``)."""
    if not isinstance(cls, type) or not issubclass(cls, core.Object):
        raise TypeError(
            f"py_class: {getattr(cls, '__qualname__', cls)!r} must inherit from packedfun.Object "
            "(or from another py_class)"
        )
    if params["order"] and not params["eq"]:
        raise ValueError(f"py_class {cls.__qualname__}: order=True requires eq=True")
    bases = [b for b in cls.__bases__ if issubclass(b, core.Object)]
    if len(bases) != 1:
        raise TypeError(f"py_class {cls.__qualname__}: exactly one packedfun.Object base allowed")
    parent = bases[0]
    mixins: list = []
    if params.get("mixin_fields"):  # tvm-ffi's rule: plain classes in between add their fields
        parent = next(k for k in cls.__mro__[1:] if _is_object_type(k))
        mixins = [k for k in cls.__mro__[1:] if k is not object and not issubclass(parent, k)]
    if (
        parent is not core.Object
        and not _is_py_class(parent)
        and "__pf_type_index__" not in parent.__dict__
    ):
        raise TypeError(
            f"py_class {cls.__qualname__}: cannot derive from {parent.__qualname__}: a "
            "Python-defined type's parent must be packedfun.Object, another py_class or a class "
            "registered for a C++ type (register_object)"
        )
    if _is_py_class(parent):
        pspec = parent.__dict__["__pf_py_spec__"]
        if pspec.params["frozen"] != params["frozen"] and not params.get("mixed_frozen"):
            word = "frozen" if params["frozen"] else "non-frozen"
            raise TypeError(
                f"py_class {cls.__qualname__}: cannot inherit {word} class from a "
                f"{'non-frozen' if params['frozen'] else 'frozen'} one"
            )
        if getattr(parent, "__pf_failed__", False):
            raise TypeError(f"py_class {cls.__qualname__}: its parent failed to register")
    for name, value in cls.__dict__.items():  # @classmethod over @method, or a hand-set marker
        if isinstance(value, classmethod) and _is_marked(value.__func__):
            raise TypeError(
                f"py_class {cls.__qualname__}.{name}: a method marked with @method is wrapped by "
                "@classmethod, which is not supported (a native caller passes the object first)"
            )
    if own is None and mixins:
        own = _with_mixin_fields(cls, mixins, params["kw_only"])
    elif own is None:
        own = _own_fields(cls, params["kw_only"])
    inherited = {f.name: f for f in _all_fields(parent)} if _is_py_class(parent) else {}
    overrides = {}  # an init_property over the parent's of the same name: a new function only
    for f in [f for f in own if f._compute is not None]:
        base = inherited.get(f.name)
        if base is not None and base._compute is not None:
            overrides[f.name] = f._compute
            own.remove(f)
    key = key or f"{cls.__module__}.{cls.__qualname__}"
    if key in _defined or any(s.key == key for s in _pending):
        old = _defined.get(key)
        if old is None or [f.name for f in old.own] != [f.name for f in own]:
            raise ValueError(
                f"py_class {cls.__qualname__}: type key {key!r} is already taken by another "
                "class with a different layout"
            )
    user = frozenset(cls.__dict__)
    if params["slots"] and "__slots__" not in cls.__dict__:
        cls = _rebuild_with_slots(cls)
    if params.get("on_own_fields") is not None:  # the switch's field markers (tvm-ffi's)
        own = params["on_own_fields"](cls, parent, own, params)
    for name in [*(f.name for f in own), *overrides]:
        if name in cls.__dict__:
            delattr(cls, name)
    cls.__pf_computed_override__ = overrides
    spec = _Spec(cls, key, params, own, parent if parent is not core.Object else None)
    cls.__pf_py_spec__ = spec
    cls.__pf_user__ = user
    cls.__pf_dataclass_params__ = dict(params)
    names = _by_module.setdefault(cls.__module__, {})
    names.pop(cls.__name__, None)
    names[cls.__name__] = cls
    _check_order(spec)
    if "__init__" not in user:
        cls.__init__ = _pending_init
    _install_dunders(cls, params)
    _pending.append(spec)
    try:
        _try_pending()
    except BaseException:
        if spec in _pending:
            _pending.remove(spec)
        raise
    return cls


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
    """Defines an object type in Python: ``@py_class``, ``@py_class("ir.Add")``,
    ``@py_class(eq=True, frozen=True)``.

    Parameters
    ----------
    cls_or_type_key : type or str, optional
        The class (bare decorator) or the type key; ``type_key=`` also gives the key. The default
        key is ``"<module>.<qualname>"``.
    frozen, init, repr, eq, order, unsafe_hash, match_args, kw_only
        As in :func:`dataclasses.dataclass`, with ``eq`` False by default (identity, as
        ``tvm_ffi.dataclasses.py_class``); ``frozen`` fields are read-only from every language.
    structural_eq : str, optional
        How instances take part in :func:`packedfun.structural_equal` and
        :func:`~packedfun.structural_hash` (kept as ``__pf_structural_eq__``): ``"tree"``
        (default: by content, sharing invisible), ``"const-tree"`` (as tree, and the same object
        on both sides is equal at once: for types that hold no variables), ``"dag"`` (sharing
        counts: instances pair one to one between the sides), ``"var"`` (a variable: equal to
        the variable it is bound to, see :func:`field`'s ``structural_eq="def"``; its fields are
        not compared) or None (not comparable: structural equality and hashing raise TypeError).
    slots : bool
        True (default): instances have no ``__dict__``, all state lives in the native object.

    Raises
    ------
    TypeError
        For an annotation that cannot be mapped, a default of the wrong type, a parent whose
        layout cannot be extended, a non-default argument after a default one.
    ValueError
        For a field name reserved by :class:`packedfun.Object`, a type key already taken by a
        different layout, ``order`` without ``eq``.
    """
    params = {
        "frozen": frozen, "init": init, "repr": repr, "eq": eq, "order": order,
        "unsafe_hash": unsafe_hash, "match_args": match_args, "kw_only": kw_only,
        "structural_eq": structural_eq, "slots": slots,
    }  # fmt: skip
    return _decorator(cls_or_type_key, type_key, params)


def _decorator(cls_or_type_key: typing.Any, type_key: str | None, params: dict) -> typing.Any:
    """:func:`py_class` for its ``params`` (with ``mixed_frozen`` True: a frozen class may derive
    from a mutable one and the other way round, each field keeping its own class's rule)."""
    structural_eq = params["structural_eq"]
    if structural_eq not in _TYPE_STRUCTURAL:
        raise ValueError(
            f"py_class: unknown structural_eq {structural_eq!r} "
            f"(one of {', '.join(f'{k!r}' for k in _TYPE_STRUCTURAL)})"
        )

    def wrap(cls: typing.Any) -> typing.Any:
        key = (
            type_key
            if type_key is not None
            else (cls_or_type_key if isinstance(cls_or_type_key, str) else None)
        )
        out = _decorate(cls, key, params)
        out.__pf_structural_eq__ = structural_eq
        return out

    if isinstance(cls_or_type_key, type):
        return wrap(cls_or_type_key)
    return wrap


# ---- c_class: the dataclass surface over a C++ type ---------------------------------------------

_STATIC_TYPES = {_INT: int, _BOOL: bool, _FLOAT: float, _STR: str, _BYTES: bytes}


def _ctor_parameters(index: int) -> dict:
    """The named parameters of the C++ constructor ``__create__`` of ``index`` (empty: none)."""
    import inspect

    for m in core.type_info(index)["methods"]:
        if m["name"] == "__create__":
            try:
                return dict(inspect.signature(m["func"]).parameters)
            except (TypeError, ValueError):
                return {}
    return {}


def _c_fields(cls: typing.Any, index: int, body: dict) -> list:
    """Field objects for the reflected fields of ``index`` and its ancestors (root first);
    ``body``: the ``field(...)`` objects of the class body by name."""
    import inspect

    annotations = inspect.get_annotations(cls)
    params = _ctor_parameters(index)
    infos = [core.type_info(a) for a in core.type_info(index)["ancestors"][1:]]
    reflected = {f["name"]: f for info in infos for f in info["fields"]}
    for name, ann in annotations.items():
        is_classvar = typing.get_origin(ann) is typing.ClassVar or (
            isinstance(ann, str) and ann.startswith(("ClassVar", "typing.ClassVar"))
        )
        if name not in reflected and not is_classvar:
            raise TypeError(
                f"c_class {cls.__qualname__}: field {name!r} is annotated but the C++ type "
                f"{core.type_info(index)['type_key']!r} reflects no such field"
            )
    out = []
    for name, info in reflected.items():
        f = body.get(name) or Field()
        f.name = name
        f.type = annotations.get(name, _STATIC_TYPES.get(info["static_type_index"], typing.Any))
        f.doc = f.doc or info["doc"] or None
        param = params.get(name)
        f.init = param is not None
        if param is not None and param.default is not param.empty:
            f.default = param.default
        f.kw_only = param is not None and param.kind == param.KEYWORD_ONLY
        f.frozen = f.frozen or info["readonly"]
        out.append(f)
    return out


def _frozen_setattr(self: typing.Any, name: str, value: typing.Any) -> None:
    cls = type(self)
    if any(f.name == name for f in _all_fields(cls)):
        raise AttributeError(f"cannot assign to field {name!r} of frozen {cls.__qualname__}")
    object.__setattr__(self, name, value)


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
    """The dataclass surface over a C++ type defined with ``ObjectDef<T>``:
    ``@c_class("mylib.Point") class Point(pf.Object): ...``.

    The class is registered for the C++ type (as :func:`packedfun.register_object` does); its
    reflected fields, ancestors' first, become the dataclass fields (:func:`fields`), with the
    annotation of the class body when there is one. ``__init__`` is the C++ constructor
    (``__create__``) with its parameter names and defaults; a field is an ``init`` field when the
    constructor has a parameter of its name. ``repr``, ``eq``, ``order``, ``unsafe_hash`` and
    ``match_args`` are generated as for :func:`py_class` over those fields; ``frozen`` refuses
    assignment to every field from Python (C++ read-only fields are refused anyway).

    Raises
    ------
    KeyError
        When no C++ type has ``type_key``.
    TypeError
        When the class does not derive from :class:`packedfun.Object` (or from the class of the
        C++ parent type), or annotates a name the C++ type does not reflect.
    ValueError
        For ``order`` without ``eq``.
    """

    params = {
        "frozen": frozen, "init": init, "repr": repr, "eq": eq, "order": order,
        "unsafe_hash": unsafe_hash, "match_args": match_args, "kw_only": False,
        "structural_eq": "tree", "slots": False,
    }  # fmt: skip

    def wrap(cls: typing.Any) -> typing.Any:
        if not isinstance(cls, type) or not issubclass(cls, core.Object):
            raise TypeError(f"c_class({type_key!r}) expects a subclass of packedfun.Object")
        if order and not eq:
            raise ValueError(f"c_class {cls.__qualname__}: order=True requires eq=True")
        index = _object._declared_type_index(type_key)  # KeyError before anything is changed
        body = {n: v for n, v in cls.__dict__.items() if isinstance(v, Field)}
        own = _c_fields(cls, index, body)  # refuses an unknown annotation before any change
        for name in body:
            delattr(cls, name)  # the C++ field's descriptor takes the name
        user = frozenset(cls.__dict__)
        cls = _object.register_object(type_key)(cls)
        if not init and "__init__" not in user:
            cls.__init__ = _object_no_init
        spec = _Spec(cls, type_key, params, own, None)
        spec.native = True
        cls.__pf_py_spec__ = spec
        cls.__pf_user__ = user
        cls.__pf_dataclass_params__ = dict(params)
        _install_dunders(cls, params)
        if frozen and "__setattr__" not in user:
            cls.__setattr__ = _frozen_setattr
        return cls

    return wrap


def _object_no_init(self: typing.Any, *args: typing.Any, **kwargs: typing.Any) -> None:
    raise TypeError(f"{type(self).__qualname__}: c_class(init=False) makes no constructor")


# ---- helpers ------------------------------------------------------------------------------------


def is_dataclass(obj: typing.Any) -> bool:
    """Whether ``obj`` is a :func:`py_class` class or an instance of one."""
    cls = obj if isinstance(obj, type) else type(obj)
    return any("__pf_py_spec__" in k.__dict__ for k in cls.__mro__)


def fields(class_or_instance: typing.Any) -> tuple:
    """The :class:`Field` objects of a :func:`py_class` (parents' first).

    Raises
    ------
    TypeError
        When the argument is not a py_class or an instance of one.
    """
    if not is_dataclass(class_or_instance):
        raise TypeError("fields() should be called on a c_class or py_class type or instance")
    cls = class_or_instance if isinstance(class_or_instance, type) else type(class_or_instance)
    return tuple(_all_fields(cls))


def replace(obj: typing.Any, /, **changes: typing.Any) -> typing.Any:
    """A new instance like ``obj`` with ``changes`` (through ``__init__``, as dataclasses does).

    Raises
    ------
    ValueError
        When a change names a field with ``init=False``.
    TypeError
        When a change names no field.
    """
    if not is_dataclass(obj) or isinstance(obj, type):
        raise TypeError("replace() should be called on c_class / py_class instances")
    for f in fields(obj):
        if not f.init:
            if f.name in changes:
                raise ValueError(
                    f"field {f.name!r} is declared with init=False, it cannot be "
                    "specified with replace()"
                )
            continue
        if f.name not in changes:
            changes[f.name] = getattr(obj, f.name)
    for name in _native_fields(type(obj)):  # a C++ parent's writable fields
        if name not in changes:
            changes[name] = getattr(obj, name)
    return type(obj)(**changes)


def _convert_out(obj: typing.Any, as_dict: bool, factory: typing.Any) -> typing.Any:
    import copy

    if is_dataclass(obj) and not isinstance(obj, type):
        values = [
            (f.name, _convert_out(getattr(obj, f.name), as_dict, factory)) for f in fields(obj)
        ]
        return factory(values) if as_dict else factory(v for _, v in values)
    if isinstance(obj, (list, tuple, core.Array, core.List)):
        return (
            type(obj)(_convert_out(v, as_dict, factory) for v in obj)
            if isinstance(obj, (list, tuple))
            else [_convert_out(v, as_dict, factory) for v in obj]
        )
    if isinstance(obj, (dict, core.Map, core.Dict)):
        return {
            _convert_out(k, as_dict, factory): _convert_out(v, as_dict, factory)
            for k, v in obj.items()
        }
    return copy.deepcopy(obj)


def asdict(obj: typing.Any, *, dict_factory: typing.Any = dict) -> dict:
    """The fields of ``obj`` as a dict, recursively (py_class instances, containers)."""
    if not is_dataclass(obj) or isinstance(obj, type):
        raise TypeError("asdict() should be called on c_class / py_class instances")
    return _convert_out(obj, True, dict_factory)


def astuple(obj: typing.Any, *, tuple_factory: typing.Any = tuple) -> tuple:
    """The fields of ``obj`` as a tuple, recursively."""
    if not is_dataclass(obj) or isinstance(obj, type):
        raise TypeError("astuple() should be called on c_class / py_class instances")
    return _convert_out(obj, False, tuple_factory)
