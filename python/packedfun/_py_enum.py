# Enums defined in Python (packedfun.dataclasses.Enum/IntEnum/StrEnum): singleton objects of a
# Python-defined object type, which C++ receives, reads and returns as any object.
"""Enums whose variants are objects of a Python-defined type.

``class Color(Enum, type_key="mylib.Color")`` defines the object type ``mylib.Color`` (a
:func:`~packedfun.dataclasses.py_class` deriving from ``packedfun.Enum``) and makes one instance
per variant, once: every variant has an integer index ``_int_index`` and a string index
``_str_index`` (reflected fields, so C++ reads them by name), and the class's annotated fields
are further per-variant fields, given with ``entry(...)``. ``IntEnum`` variants are declared
with their integer (``value``), ``StrEnum`` variants with their string. Variants keep their
identity everywhere: through C++ (a function returning its argument gives the same object),
pickle, ``copy``, and the JSON and pickle value graphs (a rebuilt variant is the class's own).
"""

from __future__ import annotations

import typing

from . import _graph
from . import _py_class as _dc
from . import object as _object
from ._backend import core

__all__ = ["Enum", "EnumAttrMap", "IntEnum", "StrEnum", "auto", "entry"]

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


class _EnumEntry:
    """A declared variant: the values of the class's own fields (``entry(...)``) or none
    (``auto()``)."""

    __slots__ = ("args", "kwargs")

    def __init__(self, *args: typing.Any, **kwargs: typing.Any) -> None:
        self.args, self.kwargs = args, kwargs

    def __repr__(self) -> str:
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"entry({', '.join(parts)})"


def entry(*args: typing.Any, **kwargs: typing.Any) -> typing.Any:
    """Declares a variant with the values of the enum's own fields (positional, then keywords)."""
    return _EnumEntry(*args, **kwargs)


def auto() -> typing.Any:
    """Declares a variant whose indices follow from its name and position."""
    return _EnumEntry()


class _EnumState:
    """The variants of one enum class, in declaration order, and its attribute columns."""

    __slots__ = ("attrs", "by_index", "entries")

    def __init__(self) -> None:
        self.entries: list = []
        self.by_index: dict = {}  # int and str index -> variant
        self.attrs: dict = {}  # attribute name -> {variant: value}


def _state(cls: type) -> _EnumState | None:
    return cls.__dict__.get("__pf_enum__")


class _EnumMeta(type):
    """Iteration, ``len`` and lookup by index on the class; instances are never made by calling
    it (``Color(0)``, ``Color("RED")`` and ``Color(Color.RED)`` give the variant)."""

    def __new__(mcs, name: str, bases: tuple, ns: dict, **kwargs: typing.Any) -> typing.Any:
        ns.setdefault("__slots__", ())  # py_class then keeps the class (no rebuild for slots)
        return super().__new__(mcs, name, bases, ns, **kwargs)

    def __iter__(cls) -> typing.Iterator:
        state = _state(cls)
        return iter(list(state.entries) if state is not None else [])

    def __len__(cls) -> int:
        state = _state(cls)
        return len(state.entries) if state is not None else 0

    def __bool__(cls) -> bool:  # a class is true, also one without variants
        return True

    def __call__(cls, *args: typing.Any, **kwargs: typing.Any) -> typing.Any:
        if len(args) == 1 and not kwargs:
            value = args[0]
            if isinstance(value, cls):
                return value
            if isinstance(value, (int, str)):
                try:
                    return cls.get(value)  # type: ignore[attr-defined]
                except KeyError:
                    raise ValueError(f"{value!r} is not a valid {cls.__qualname__}") from None
        raise TypeError(
            f"{cls.__qualname__}: enum variants are made by the class definition only; call it "
            "with one integer or string index (or a variant) to look one up"
        )


def _make_variant(cls: type, int_index: int, str_index: str, decl: _EnumEntry) -> typing.Any:
    try:
        return type.__call__(cls, int_index, str_index, *decl.args, **decl.kwargs)
    except (TypeError, ValueError, OverflowError) as err:
        raise type(err)(f"{cls.__qualname__}.{str_index}: invalid enum entry: {err}") from None


def _canonical_of(cls: typing.Any) -> typing.Callable[[typing.Any], typing.Any]:
    """The class's own variant for a rebuilt one (the value graphs of pickle and JSON)."""

    def canonical(obj: typing.Any) -> typing.Any:
        return _lookup(cls, obj._str_index)

    return canonical


def _reduce_variant(self: typing.Any, protocol: int = 2) -> tuple:
    cls = type(self)
    return (_variant, (cls.__module__, cls.__dict__["__pf_enum_key__"], self._str_index))


def _variant(module: str, key: str, str_index: str) -> typing.Any:
    """Unpickles a variant: the defining module is imported, the variant is the class's own."""
    import importlib
    import sys

    if module != "__main__" and module not in sys.modules:
        importlib.import_module(module)
    return _lookup(_object._class_for(core.type_key_to_index(key)), str_index)


def _lookup(cls: typing.Any, str_index: str) -> typing.Any:
    """The variant a pickle or a value graph names (``ValueError`` when the class has none: a
    document written by another definition of the enum, or a forged one)."""
    try:
        return cls.get(str_index)
    except KeyError:
        raise ValueError(
            f"enum {cls.__dict__.get('__pf_enum_key__', cls.__qualname__)!r} has no variant "
            f"{str_index!r}"
        ) from None


@_dc.py_class("packedfun.Enum", frozen=True, repr=False)
class Enum(core.Object, metaclass=_EnumMeta):
    """Base of the enums defined in Python: ``class Color(Enum, type_key="mylib.Color")``.

    Variants are declared in the class body as ``NAME = auto()`` or ``NAME = entry(values of
    the class's own fields)`` (or, with no value, ``NAME: ClassVar[Color]``); their integer index
    is their position and their string index their name. ``name`` is the string index and
    ``value`` the integer index.
    """

    _int_index: int
    _str_index: str

    def __init_subclass__(cls, type_key: str | None = None, **kwargs: typing.Any) -> None:
        super().__init_subclass__(**kwargs)
        if type_key is None:  # an abstract base (IntEnum, StrEnum) or a py_class rebuild
            return
        payload = int if issubclass(cls, IntEnum) else str if issubclass(cls, StrEnum) else None
        planned: list = []  # (alias, int index, str index, field values), all checked first
        seen: set = set()
        for alias, decl in _declarations(cls, payload):
            int_index, str_index, decl = _indices(cls, alias, len(planned), decl, payload)
            if int_index in seen or str_index in seen:
                raise ValueError(f"enum {cls.__qualname__}.{alias}: duplicate enum index")
            seen.update((int_index, str_index))
            planned.append((alias, int_index, str_index, decl))
        fresh = _dc._key_is_free(type_key)
        _dc.py_class(type_key, frozen=True, repr=False)(cls)
        if "__pf_type_index__" not in cls.__dict__:
            _dc._forget(cls, fresh)
            raise TypeError(
                f"enum {cls.__qualname__}: its field annotations name classes not defined yet"
            )
        setattr(cls, "__pf_enum_key__", type_key)  # noqa: B010 (mypy refuses the assignment)
        # a field declared with this class also takes a variant's value (py_class reads it)
        setattr(cls, "__pf_enum_payload__", payload)  # noqa: B010
        # A variant is its class's one object: pickling names it, copying gives it back.
        cls.__reduce_ex__ = _reduce_variant  # type: ignore[method-assign,assignment]
        cls.__copy__ = Enum.__copy__  # type: ignore[method-assign]
        cls.__deepcopy__ = Enum.__deepcopy__  # type: ignore[method-assign]
        state = _EnumState()
        setattr(cls, "__pf_enum__", state)  # noqa: B010
        try:
            for alias, int_index, str_index, decl in planned:
                variant = _make_variant(cls, int_index, str_index, decl)
                state.entries.append(variant)
                state.by_index[int_index] = state.by_index[str_index] = variant
                setattr(cls, alias, variant)
        except BaseException:
            _dc._forget(cls, fresh)  # a corrected definition can take the key, any layout
            raise
        _graph.canonical[type_key] = _canonical_of(cls)

    @classmethod
    def get(cls, index: int | str) -> typing.Any:
        """The variant at integer or string ``index`` (``KeyError`` when there is none)."""
        state = _state(cls)
        if isinstance(index, (int, str)) and state is not None:
            key = int(index) if isinstance(index, int) else index
            if key in state.by_index:
                return state.by_index[key]
        raise KeyError(index)

    @classmethod
    def all_entries(cls) -> typing.Iterator:
        """The variants in declaration order."""
        return iter(cls)  # type: ignore[call-overload]

    @classmethod
    def def_attr(cls, name: str, *, default: typing.Any = _dc.MISSING) -> EnumAttrMap:
        """A per-variant attribute ``name`` (a mapping from variant to value) of this enum."""
        return EnumAttrMap(cls, name, default=default)

    @property
    def name(self) -> str:
        """The string index."""
        return self._str_index

    @property
    def value(self) -> typing.Any:
        """The integer index (``IntEnum``: its integer, ``StrEnum``: its string)."""
        return self._int_index

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}.{self._str_index}"

    def __copy__(self) -> typing.Any:
        return self

    def __deepcopy__(self, memo: dict) -> typing.Any:
        return self

    def __hash__(self) -> int:
        return hash((type(self).__qualname__, self._int_index))


def _payload_eq(self: typing.Any, other: object) -> typing.Any:
    if isinstance(other, type(self)):
        return self.value == other.value
    if isinstance(other, (int, str)) and not isinstance(other, bool):
        return self.value == other
    return NotImplemented


def _payload_ne(self: typing.Any, other: object) -> typing.Any:
    result = _payload_eq(self, other)
    return result if result is NotImplemented else not result


def _payload_hash(self: typing.Any) -> int:
    return hash(self.value)


def _payload_str(self: typing.Any) -> str:
    return str(self.value)


@_dc.py_class("packedfun.IntEnum", frozen=True, repr=False)
class IntEnum(Enum):
    """An enum whose variants are declared with their integer (``LOW = 1``), which is their
    integer index and ``value``; the string index is the name. A variant equals its integer."""

    __eq__ = _payload_eq
    __ne__ = _payload_ne
    __hash__ = _payload_hash
    __str__ = _payload_str


@_dc.py_class("packedfun.StrEnum", frozen=True, repr=False)
class StrEnum(Enum):
    """An enum whose variants are declared with their string (``FAST = "fast"``), which is their
    string index, ``name`` and ``value``; the integer index is the position. A variant equals its
    string."""

    __eq__ = _payload_eq
    __ne__ = _payload_ne
    __hash__ = _payload_hash
    __str__ = _payload_str

    @property
    def value(self) -> typing.Any:
        return self._str_index


def _declarations(cls: type, payload: type | None) -> list:
    """The variants the class body declares, in order, removed from the class."""
    own = cls.__dict__.get("__annotations__", {})
    fields = {n for n, a in own.items() if not _is_class_var(a)}
    out = []
    for name, ann in own.items():  # NAME: ClassVar[Cls] with no value: a variant named NAME
        if _is_class_var(ann) and not name.startswith("_") and name not in cls.__dict__:
            out.append((name, _EnumEntry()))
    for name, value in list(cls.__dict__.items()):
        if name.startswith("_") or name in fields:
            continue
        if isinstance(value, _EnumEntry):
            out.append((name, value))
        elif payload is not None and isinstance(value, (int, str)):
            out.append((name, _EnumEntry(value=value)))
        else:
            continue
        delattr(cls, name)
    if payload is not None and ("value" in fields or "value" in cls.__dict__):
        raise TypeError(f"enum {cls.__qualname__}: `value` is the variant's index, not a field")
    return out


def _indices(cls: type, alias: str, ordinal: int, decl: _EnumEntry, payload: type | None) -> tuple:
    kwargs = dict(decl.kwargs)
    if "_int_index" in kwargs or "_str_index" in kwargs:
        raise TypeError(f"enum {cls.__qualname__}.{alias}: the indices are not given by hand")
    if payload is None:
        return ordinal, alias, decl
    if "value" not in kwargs:
        raise TypeError(f"enum {cls.__qualname__}.{alias}: needs a {payload.__name__} value")
    value: typing.Any = kwargs.pop("value")
    if type(value) is not payload:
        raise TypeError(
            f"enum {cls.__qualname__}.{alias}: the value must be a {payload.__name__}, got "
            f"{type(value).__name__}"
        )
    rest = _EnumEntry(*decl.args, **kwargs)
    if payload is int:
        if not isinstance(value, int) or not _INT64_MIN <= value <= _INT64_MAX:
            raise OverflowError(f"enum {cls.__qualname__}.{alias}: {value} does not fit in int64")
        return value, alias, rest
    return ordinal, value, rest


def _is_class_var(ann: typing.Any) -> bool:
    if ann is typing.ClassVar or typing.get_origin(ann) is typing.ClassVar:
        return True
    return isinstance(ann, str) and ann.replace(" ", "").startswith(("ClassVar", "typing.ClassVar"))


class EnumAttrMap:
    """One per-variant attribute of an enum: ``COLOR_HEX = Color.def_attr("hex")``, then
    ``COLOR_HEX[Color.RED] = "#f00"``; reading a variant without a value gives the default (or
    ``KeyError``)."""

    __slots__ = ("_default", "_enum_cls", "_name")

    def __init__(self, enum_cls: type, name: str, *, default: typing.Any = _dc.MISSING) -> None:
        self._enum_cls, self._name, self._default = enum_cls, name, default

    def _column(self) -> dict:
        state = _state(self._enum_cls)
        if state is None:
            raise TypeError(f"{self._enum_cls.__qualname__} is not an enum with variants")
        return state.attrs.setdefault(self._name, {})

    def _check(self, variant: object) -> None:
        if not isinstance(variant, self._enum_cls):
            raise TypeError(
                f"expected a {self._enum_cls.__qualname__} variant, got {type(variant).__name__}"
            )

    def __setitem__(self, variant: object, value: typing.Any) -> None:
        self._check(variant)
        self._column()[id(variant)] = value

    def __getitem__(self, variant: object) -> typing.Any:
        self._check(variant)
        column = self._column()
        if id(variant) in column:
            return column[id(variant)]
        if self._default is not _dc.MISSING:
            return self._default
        raise KeyError(f"{variant!r} has no attribute {self._name!r}")

    def __contains__(self, variant: object) -> bool:
        return isinstance(variant, self._enum_cls) and id(variant) in self._column()

    def get(self, variant: object, default: typing.Any = None) -> typing.Any:
        """The value stored for ``variant``, else ``default``."""
        return self[variant] if variant in self else default

    @property
    def name(self) -> str:
        """The attribute's name."""
        return self._name
