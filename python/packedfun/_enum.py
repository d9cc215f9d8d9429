# Enums defined in C++ (reflection::EnumDef) as Python IntEnum classes, and results mapped to them.
"""C++ enums exposed as :class:`enum.IntEnum` subclasses.

A C++ ``reflection::EnumDef<E>("mylib.Color")`` stores the flat list ``[name, value, ...]`` in the
runtime as the global function ``"__enum__.mylib.Color"``; :func:`enum_class` turns it into an
IntEnum class, built once per key. Functions whose metadata names such a key as their return type
are wrapped at lookup time (:func:`wrap_enum_result`) so that their results come back as members;
every other Function is returned untouched and its calls cost nothing more.
"""

from __future__ import annotations

from ._backend import core
from ._lazy import load_namespace_of
from ._rules.signature import _parse as _parse_record

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see __init__'s import cost)
if TYPE_CHECKING:
    import enum
    from typing import Any

__all__ = ["enum_class"]

_PREFIX = "__enum__."
_CLASSES: dict[str, type[enum.IntEnum]] = {}


def _members_func(key: str) -> Any:
    func = core.get_global_func(_PREFIX + key)
    if func is None and load_namespace_of(key):
        func = core.get_global_func(_PREFIX + key)
    return func


def _reduce_ex(member: Any, protocol: int) -> tuple:
    # Members pickle by their key and value: the class is rebuilt from the runtime on load.
    return (_member, (member.__class__._packedfun_key_, int(member)))


def _member(key: str, value: int) -> enum.IntEnum:
    return enum_class(key)(value)


def enum_class(key: str) -> type[enum.IntEnum]:
    """The IntEnum class of the C++ enum registered under ``key`` (e.g. ``"mylib.Color"``).

    Parameters
    ----------
    key : str
        The key given to ``reflection::EnumDef`` (by default the enum's PACKEDFUN_ENUM_NAME).

    Returns
    -------
    type[enum.IntEnum]
        The same class on every call; its members pickle by key and value.

    Raises
    ------
    TypeError
        When ``key`` is not a str.
    ValueError
        When no enum is registered under ``key``.
    """
    found = _CLASSES.get(key)
    if found is not None:
        return found
    if not isinstance(key, str):
        raise TypeError(f"enum_class: key must be a str, got {type(key).__name__}")
    func = _members_func(key)
    if func is None:
        raise ValueError(f"enum_class: no enum registered under {key!r} (reflection::EnumDef)")
    flat = list(func())
    members = [(str(flat[i]), int(flat[i + 1])) for i in range(0, len(flat), 2)]
    module, _, name = key.rpartition(".")
    import enum

    cls: Any = enum.IntEnum(name, members, module=module or None, qualname=key)  # type: ignore[misc]
    setattr(cls, "_packedfun_key_", key)  # noqa: B010  (mypy: a class built at run time)
    setattr(cls, "__reduce_ex__", _reduce_ex)  # noqa: B010
    return _CLASSES.setdefault(key, cls)


class EnumResultFunction:
    """A Function whose result is a C++ enum: calls it and returns the IntEnum member.

    A value without a name in the enum comes back as the plain int. Attributes other than the
    ones set here (metadata, GIL policy, ...) are the wrapped Function's.
    """

    def __init__(self, func: Any, cls: type[enum.IntEnum]) -> None:
        self.__wrapped__ = func
        self._map = cls._value2member_map_
        self.__name__ = getattr(func, "__name__", "function")
        self.__qualname__ = getattr(func, "__qualname__", self.__name__)
        self.__module__ = getattr(func, "__module__", None) or "packedfun"
        self.__doc__ = getattr(func, "__doc__", None)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        result = self.__wrapped__(*args, **kwargs)
        return self._map.get(result, result) if type(result) is int else result

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__wrapped__, name)

    def __reduce__(self) -> tuple:
        return (wrap_enum_result, (self.__wrapped__,))

    def __repr__(self) -> str:
        return f"<enum-result {self.__wrapped__!r}>"


#: PACKEDFUN_FUNCTION_FLAG_NAMED_RESULT: the runtime sets it on a Function whose
#: metadata returns a bare type key, the only ones that may return an enum.
NAMED_RESULT = 4

#: Return type keys known not to be enums: registered object types, which never become one.
_NOT_ENUM: set[str] = set()


def _return_key(text: str) -> str | None:
    """The bare type key a metadata record returns, or None (the record parsed once, by the
    metadata module's cache)."""
    ret = _parse_record(text).get("return")
    return ret if isinstance(ret, str) else None


def wrap_enum_result(func: Any) -> Any:
    """``func`` itself, or an :class:`EnumResultFunction` when its metadata returns an enum.

    A Function without the runtime's named-result flag (every Function returning a builtin type)
    costs one flag read; the metadata of the others is parsed once per record.
    """
    if func is None or isinstance(func, EnumResultFunction):
        return func
    if not core.function_flags(func) & NAMED_RESULT:
        return func
    return _wrap_named(func)


def _wrap_named(func: Any) -> Any:
    text = core.function_get_metadata(func)
    ret = _return_key(text) if text is not None else None
    if ret is None or ret in _NOT_ENUM:
        return func
    cls = _CLASSES.get(ret)
    if cls is None:
        if _members_func(ret) is None:
            try:
                core.type_key_to_index(ret)
            except (KeyError, ValueError):
                return func  # maybe an enum registered later: not remembered
            _NOT_ENUM.add(ret)
            return func
        cls = enum_class(ret)
    return EnumResultFunction(func, cls)
