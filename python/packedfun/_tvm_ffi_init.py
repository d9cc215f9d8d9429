# Constructors under the switch: tvm-ffi's __init__ and __ffi_init__ over the types' reflection.
"""How objects are built from Python under :mod:`packedfun.tvm_ffi_compat`.

apache-tvm-ffi gives every class of an object type an ``__ffi_init__(self, *args, **kwargs)``
that builds the object with the type's constructor (its ``__ffi_init__`` method, or the one it
generates from the fields' init traits, kept in its per-type attribute column), and gives a class
whose body defines no ``__init__`` an ``__init__`` over that constructor, whose signature comes
from the fields' traits: positional fields, required ones first, then keyword-only ones; fields
with ``init`` off are left out, and a field with a default defaults to ``core.MISSING`` (left out
of the call, so the constructor fills in the C++ default). Keyword arguments travel in tvm-ffi's
``KWARGS`` protocol: the marker ``core.KWARGS``, then name/value pairs; the constructor itself
checks the call and words the ``TypeError`` (missing, unexpected or repeated arguments).

Under the switch every class made for a type of a library built for tvm-ffi (registered, declared
with ``c_class`` or made automatically) gets both; a class of one of packedfun's own types gets
``__ffi_init__`` over its constructor (``__create__``) and keeps packedfun's ``__init__``.
"""

from __future__ import annotations

import inspect
import typing

from . import _py_class
from . import _tvm_ffi_core as _core
from ._missing import MISSING
from .object import _class_hooks, _no_arguments, _no_constructor, on_new_class

__all__: list[str] = []


def _owner(cls: type) -> int | None:
    """The type index of the nearest class of ``cls``'s MRO that stands for a native type."""
    for klass in cls.__mro__:
        index = klass.__dict__.get("__pf_type_index__")
        if index is not None:
            return index
    return None


def _chain_fields(info: _core.TypeInfo) -> list:
    """The reflected fields of ``info``'s type and its ancestors, root first."""
    chain = []
    current: _core.TypeInfo | None = info
    while current is not None:
        chain.append(current)
        current = current.parent_type_info
    return [f for ti in reversed(chain) for f in ti.fields]


def _init_signature(info: _core.TypeInfo) -> inspect.Signature:
    """``__init__``'s signature from the fields' init traits (tvm-ffi's layout): positional
    fields, required ones first, then keyword-only ones, required first; defaults are MISSING."""
    kinds = {False: inspect.Parameter.POSITIONAL_OR_KEYWORD, True: inspect.Parameter.KEYWORD_ONLY}
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    fields = [f for f in _chain_fields(info) if f.c_init]
    for kw_only in (False, True):
        for has_default in (False, True):
            for f in fields:
                if f.c_kw_only == kw_only and f.c_has_default == has_default:
                    default = MISSING if has_default else inspect.Parameter.empty
                    params.append(inspect.Parameter(f.name, kinds[kw_only], default=default))
    return inspect.Signature(params)


def _packed(args: tuple, kwargs: dict) -> list:
    """Positional arguments, then (when there are keywords) ``KWARGS`` and name/value pairs;
    a keyword whose value is MISSING is left out."""
    out = list(args)
    if kwargs:
        out.append(_core._kwargs_marker())
        for key, value in kwargs.items():
            if value is not MISSING:
                out += [key, value]
    return out


def _ffi_init_of(index: int, info: _core.TypeInfo) -> typing.Any:
    """The type's constructor: its ``__ffi_init__`` method, else its attribute column's."""
    for m in info.methods:
        if m.name == "__ffi_init__" and m.func is not None:
            return m.func
    return _core._lookup_type_attr(index, "__ffi_init__")


def _is_tvm_ffi_type(index: int) -> bool:
    return _core._bridge_query("packedfun.tvm_ffi_field_flags", index) is not None


def _bind_keywords(cls: type, ctor: typing.Any, args: tuple, kwargs: dict) -> tuple:
    """``args`` and ``kwargs`` as the positional arguments of packedfun's constructor ``ctor``:
    named by its signature, or (a ``py_class``'s, which takes its fields in order) by the class's
    fields; a field left out takes its default (``TypeError`` when it has none)."""
    signature = inspect.signature(ctor)
    kinds = {p.kind for p in signature.parameters.values()}
    if inspect.Parameter.VAR_POSITIONAL not in kinds or "__pf_py_spec__" not in cls.__dict__:
        return signature.bind(*args, **kwargs).args
    fields = _py_class._all_fields(cls, slots_only=True)
    if len(args) > len(fields):
        raise TypeError(
            f"{cls.__name__}.__ffi_init__() takes {len(fields)} arguments, got {len(args)}"
        )
    values = dict(zip((f.name for f in fields), args))
    for name, value in kwargs.items():
        if name in values:
            raise TypeError(f"{cls.__name__}.__ffi_init__() got multiple values for {name!r}")
        if not any(f.name == name for f in fields):
            raise TypeError(
                f"{cls.__name__}.__ffi_init__() got an unexpected keyword argument {name!r}"
            )
        values[name] = value
    out = []
    for f in fields:
        if f.name in values:
            out.append(values[f.name])
        elif f.default is not MISSING:
            out.append(f.default)
        elif f.default_factory is not MISSING:
            out.append(f.default_factory())
        else:
            raise TypeError(f"{cls.__name__}.__ffi_init__() missing required argument {f.name!r}")
    return tuple(out)


def make_ffi_init(cls: type, index: int, ctor: typing.Any, packed: bool) -> typing.Any:
    """``cls.__ffi_init__``: builds ``self`` with ``ctor``; a subclass's instance is refused."""
    name = cls.__name__

    def __ffi_init__(self: typing.Any, /, *args: typing.Any, **kwargs: typing.Any) -> None:
        if _owner(type(self)) != index:
            raise TypeError(
                f"Calling `{name}.__ffi_init__()` on a `{type(self).__name__}` instance is not "
                f"supported. Define `{type(self).__name__}` with init=True."
            )
        if packed:
            self.__init_handle_by_constructor__(ctor, *_packed(args, kwargs))
        else:  # packedfun's constructor: keywords bound by its signature
            if kwargs:
                args = _bind_keywords(cls, ctor, args, kwargs)
            self.__init_handle_by_constructor__(ctor, *args)

    __ffi_init__.__qualname__ = f"{cls.__qualname__}.__ffi_init__"
    __ffi_init__.__module__ = cls.__module__
    return __ffi_init__


def make_init(cls: type, index: int, info: _core.TypeInfo, ctor: typing.Any) -> typing.Any:
    """``cls.__init__`` over tvm-ffi's constructor ``ctor`` (see the module's doc)."""
    name = cls.__name__
    post_init = hasattr(cls, "__post_init__")

    def __init__(self: typing.Any, *args: typing.Any, **kwargs: typing.Any) -> None:
        if _owner(type(self)) != index:
            raise TypeError(
                f"Calling `super().__init__()` is not supported for @c_class `{name}`. Use "
                f"@py_class for inheritance with manual __init__, or define "
                f"`{type(self).__name__}` with init=True."
            )
        self.__init_handle_by_constructor__(ctor, *_packed(args, kwargs))
        if post_init:
            self.__post_init__()

    __init__.__signature__ = _init_signature(info)  # type: ignore[attr-defined]
    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    __init__.__module__ = cls.__module__
    return __init__


def make_guard(cls: type) -> typing.Any:
    """``__init__`` of a class whose type has no constructor: every call raises TypeError."""
    message = (
        f"`{cls.__name__}` cannot be constructed directly. Define a custom __init__ or use a "
        f"factory method."
    )

    def __init__(self: typing.Any, *args: typing.Any, **kwargs: typing.Any) -> None:
        raise TypeError(message)

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    __init__.__module__ = cls.__module__
    return __init__


def _generated(init: typing.Any) -> bool:
    """Whether ``init`` (a class's own ``__init__``) is one packedfun's registration made."""
    return isinstance(init, _core._backend.ConstructorDescriptor) or init in (
        _no_arguments,
        _no_constructor,
    )


def install(cls: type, own_init: bool | None = None) -> None:
    """Gives ``cls`` (a class just made for a native type) tvm-ffi's constructors; ``own_init``:
    whether the class body defined ``__init__`` (None: judged from what the class holds)."""
    index = cls.__dict__.get("__pf_type_index__")
    if index is None:
        return
    info = _core.TypeInfo(index, cls)
    tvm_type = _is_tvm_ffi_type(index)
    ctor = _ffi_init_of(index, info)
    if ctor is not None and (tvm_type or "__ffi_init__" not in cls.__dict__):
        cls.__ffi_init__ = make_ffi_init(cls, index, ctor, tvm_type)  # type: ignore[attr-defined]
    if not tvm_type:
        return
    if own_init is None:
        current = cls.__dict__.get("__init__")
        own_init = current is not None and not _generated(current)
    if not own_init:
        init = make_init(cls, index, info, ctor) if ctor is not None else make_guard(cls)
        setattr(cls, "__init__", init)  # noqa: B010 (mypy refuses the assignment)


def _attach() -> None:
    """Called by the switch's ``install()``: every object class, made already or later, gets
    tvm-ffi's constructors."""
    if install not in _class_hooks:
        on_new_class(install)


def _detach() -> None:
    """Called by the switch's ``uninstall()``: classes made from now on keep packedfun's."""
    if install in _class_hooks:
        _class_hooks.remove(install)
