# Python classes for native object types: register_object, reflected members, class dispatch.
"""Objects: Python classes for the native object types of the type table.

``@register_object("mylib.Point")`` on a class deriving :class:`Object` (or a registered parent)
gives it properties for the type's reflected fields, its methods and static methods, and an
``__init__`` that calls the type's ``__create__`` constructor when it has one. Objects returned from
native code arrive as the most derived registered class; a type never registered in Python arrives
as an automatic subclass of its nearest registered ancestor that adds the type's own fields and
methods (so ``isinstance`` with the ancestor holds and every reflected field stays readable).
"""

from __future__ import annotations

from ._backend import core
from ._lazy import load_namespace_of

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see __init__'s import cost)
if TYPE_CHECKING:
    from typing import Any, Callable, TypeVar

    _T = TypeVar("_T", bound=type)

__all__ = ["Object", "register_object", "type_info"]

#: Base class of every wrapper of a native object.
Object = core.Object

_OBJECT_INDEX = 64  # kPFTypeObject

_registered: dict[int, type] = {_OBJECT_INDEX: core.Object}  # type index -> registered class
_automatic: dict[int, type] = {}  # type index -> class made for an unregistered type
_infos: dict[int, dict] = {}
_class_hooks: list[Callable[[type], None]] = []  # called with each new Python class of a type


def on_new_class(hook: Callable[[type], None]) -> None:
    """Calls ``hook(cls)`` for every Python class made for a native type, from now on and for the
    ones made already (``packedfun._pickle`` gives them their pickle methods this way: it sits
    above this module, which never imports it)."""
    _class_hooks.append(hook)
    for cls in [*_registered.values(), *_automatic.values()]:
        if cls is not core.Object:
            hook(cls)


def _announce(cls: type) -> None:
    for hook in _class_hooks:
        hook(cls)


def type_info(type_index: int) -> dict:
    """The type table's record of ``type_index`` (cached): key, ancestors, fields, methods.

    Parameters
    ----------
    type_index : int
        A type index, e.g. ``obj.type_index``.

    Returns
    -------
    dict
        See ``docs/internals/python-backends.md`` (``type_info``).
    """
    info = _infos.get(type_index)
    if info is None:
        info = _infos[type_index] = core.type_info(type_index)
    return info


def _install_members(cls: type, type_index: int, keep: set) -> None:
    """Sets the fields and methods of ``type_index`` (its own ones) on ``cls``."""
    info = type_info(type_index)
    for field in info["fields"]:
        if field["name"] not in keep:
            setattr(cls, field["name"], core.FieldDescriptor(type_index, field["name"]))
    for method in info["methods"]:
        name, func = method["name"], method["func"]
        if name in keep:
            continue
        if method["is_static"]:
            setattr(cls, name, staticmethod(func))
        else:
            setattr(cls, name, core.MethodDescriptor(func, name, method["doc"] or None))


def _nearest_registered(ancestors: tuple) -> int:
    """Position in ``ancestors`` of the deepest one with a registered class (excluding the last)."""
    for depth in range(len(ancestors) - 2, -1, -1):
        if ancestors[depth] in _registered:
            return depth
    return -1


def _object_repr(self: Any) -> str:
    if not self.handle:
        return f"<{type(self).__name__} (empty)>"
    info = type_info(self.type_index)
    parts = []
    for index in info["ancestors"]:
        for field in type_info(index)["fields"]:
            name = field["name"]
            try:
                value = repr(getattr(self, name))
            except Exception as exc:  # a field that cannot be shown must not break repr
                value = f"<{type(exc).__name__}>"
            parts.append(f"{name}={value}")
    return f"{info['type_key']}({', '.join(parts)})"


def _no_constructor(self: Any, *args: Any) -> None:
    raise TypeError(
        f"{type(self).__name__} has no __create__ constructor: it cannot be built from Python"
    )


def _no_arguments(self: Any, *args: Any, **kwargs: Any) -> None:
    """``__init__`` of a class without a constructor: ``Cls()`` is the empty object, arguments
    are refused instead of being dropped silently."""
    if args or kwargs:
        _no_constructor(self)


def _install_init(cls: Any, type_index: int) -> None:
    own = {m["name"]: m for m in type_info(type_index)["methods"]}
    if "__create__" in own:
        cls.__init__ = core.ConstructorDescriptor(own["__create__"]["func"])
        core.fast_construct(cls)  # _core: Cls(...) calls the constructor directly
    elif isinstance(getattr(cls, "__init__", None), core.ConstructorDescriptor):
        cls.__init__ = _no_constructor
    elif cls.__init__ is object.__init__:
        cls.__init__ = _no_arguments


def _name_class(cls: Any, type_key: str) -> None:
    """Makes CPython name instances of ``cls`` by the type key, as it names a C extension's types
    by their module-qualified name: ``'testing.TestIntPair' object has no attribute 'zz'``.

    On ``_core`` this is the class's ``tp_name``, with no attribute hook (a ``__getattr__`` would
    turn off CPython's attribute-access specialization for every read of a field or method);
    ``__name__``, ``__qualname__``, ``__module__``, ``repr(cls)`` and pickling stay the class's.
    The ctypes backend words its messages and a missing attribute's the same way.
    """
    core.set_type_name(cls, type_key)


def _install_class(cls: Any, type_index: int, user_names: set) -> None:
    ancestors = type_info(type_index)["ancestors"]
    covered = {getattr(base, "__pf_type_index__", None) for base in cls.__mro__[1:]}
    covered.add(_OBJECT_INDEX)
    for index in ancestors:  # root first, so that derived members override
        if index not in covered:
            _install_members(cls, index, user_names)
    if "__init__" not in user_names:
        _install_init(cls, type_index)
    if "__repr__" not in user_names and cls.__repr__ is core.Object.__repr__:
        cls.__repr__ = _object_repr
    cls.__pf_type_index__ = type_index
    if cls.__dict__.get("__doc__") is None and type_info(type_index)["doc"]:
        cls.__doc__ = type_info(type_index)["doc"]  # the C++ ObjectDef's, unless the class has one
    _name_class(cls, type_info(type_index)["type_key"])
    _announce(cls)


def _check_parent(cls: type, type_key: str, type_index: int) -> None:
    ancestors = type_info(type_index)["ancestors"]
    depth = _nearest_registered(ancestors)
    parent = _registered.get(ancestors[depth]) if depth >= 0 else core.Object
    if parent is not None and not issubclass(cls, parent):
        raise TypeError(
            f"register_object({type_key!r}): {cls.__name__} must derive from {parent.__name__}, "
            f"the class registered for its native parent type"
        )


#: tvm-ffi's type of a key (its packedfun index, or None when no loaded tvm-ffi library registers
#: the key), while the tvm-ffi switch is on (``packedfun.tvm_ffi_compat.install()`` sets it): code
#: written for tvm-ffi declares its classes for tvm-ffi's types, also where packedfun has a type of
#: its own with the same key (docs/migration-from-tvm-ffi.md, "One object system").
_foreign_type_index: Callable[[str], int | None] | None = None


def _declared_type_index(key: str) -> int:
    """The type a class registered for ``key`` (register_object, c_class) is declared for."""
    if _foreign_type_index is not None:
        index = _foreign_type_index(key)
        if index is not None:
            return index
    try:
        return core.type_key_to_index(key)
    except KeyError:
        if not load_namespace_of(key):
            raise
        return core.type_key_to_index(key)


def register_object(type_key: str | type | None = None) -> Callable[[_T], _T] | type:
    """Registers a Python class for a native object type.

    Usable as ``@register_object("mylib.Point")`` and as a bare ``@register_object`` (the type
    key is then the class's ``__name__``).

    Parameters
    ----------
    type_key : str
        The native type key, e.g. ``"testing.TestIntPair"``.

    Returns
    -------
    callable
        A decorator that registers and returns the class.

    Raises
    ------
    KeyError
        When no native type has that key.
    TypeError
        When the class does not derive from :class:`Object` or from the class registered for the
        native parent type.
    """
    if isinstance(type_key, type):
        return register_object(type_key.__name__)(type_key)

    def register(cls: _T) -> _T:
        key = type_key if type_key is not None else cls.__name__
        if not (isinstance(cls, type) and issubclass(cls, core.Object)):
            raise TypeError(f"register_object({key!r}) expects a subclass of packedfun.Object")
        index = _declared_type_index(key)
        _check_parent(cls, key, index)
        _install_class(cls, index, set(cls.__dict__))
        _registered[index] = cls
        _automatic.clear()
        core.set_object_factory(_class_for)  # forgets the classes cached per type index
        return cls

    return register


def _register_builtin(type_index: int, cls: Any) -> None:
    """Registers ``cls`` for a built-in type index (containers) without installing members."""
    cls.__pf_type_index__ = type_index
    _announce(cls)
    _registered[type_index] = cls
    _automatic.clear()
    core.set_object_factory(_class_for)


def _automatic_class(type_index: int, info: dict) -> type:
    ancestors = info["ancestors"]
    depth = _nearest_registered(ancestors)
    base = _registered[ancestors[depth]] if depth >= 0 else core.Object
    missing = ancestors[depth + 1 :]
    if not any(type_info(i)["fields"] or type_info(i)["methods"] for i in missing):
        return base
    name = info["type_key"].rsplit(".", 1)[-1]
    namespace = {"__slots__": (), "__module__": __name__, "__doc__": info["doc"] or None}
    cls: Any = type(name, (base,), namespace)
    for index in missing:
        _install_members(cls, index, set())
    _install_init(cls, type_index)
    cls.__pf_type_index__ = type_index
    _name_class(cls, info["type_key"])
    cls.__pf_unregistered__ = True
    _announce(cls)
    return cls


def _class_for(type_index: int) -> type | None:
    """The object factory: the Python class of native objects of ``type_index``."""
    cls = _registered.get(type_index) or _automatic.get(type_index)
    if cls is not None:
        return cls
    try:
        info = type_info(type_index)
    except (IndexError, KeyError):
        return None
    cls = _automatic[type_index] = _automatic_class(type_index, info)
    return cls


core.set_object_factory(_class_for)
