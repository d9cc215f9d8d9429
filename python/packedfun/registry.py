# The global function registry: look up, register, list and remove named Functions.
"""The process-wide registry of named Functions, shared by every language and library."""

from __future__ import annotations

import sys

from ._backend import core
from ._enum import EnumResultFunction, wrap_enum_result
from ._lazy import load_namespace_of, register_lazy_namespace
from ._rules import signature as _signature

__all__ = [
    "get_global_func",
    "register_global_func",
    "register_func",
    "list_global_func_names",
    "remove_global_func",
    "init_ffi_api",
    "get_global_func_metadata",
    "register_lazy_namespace",
    "convert_func",
]


def get_global_func(name: str, allow_missing: bool = False):
    """Looks up a global Function.

    Parameters
    ----------
    name : str
        The registered name, e.g. ``"testing.echo"``.
    allow_missing : bool
        Return None instead of raising when ``name`` is not registered.

    Returns
    -------
    Function or None

    Raises
    ------
    ValueError
        When ``name`` is not registered and ``allow_missing`` is false.
    """
    # Only a Function whose metadata returns a type key (a runtime flag, read natively) may
    # return an enum: that one goes through the enum wrapper, every other lookup costs nothing more.
    func = _get_global_func(name, wrap_enum_result)
    if func is not None:
        return func
    if load_namespace_of(name):
        func = core.get_global_func(name)
    if func is None and not allow_missing:
        raise ValueError(f"Cannot find global function {name!r}")
    return wrap_enum_result(func)


# Bound once: get_global_func is a hot lookup.
_get_global_func = core.get_global_func


def register_global_func(func_name, f=None, override: bool = False):
    """Registers a Python callable (or a Function) as a global Function.

    Usable as ``register_global_func("name", f)``, as ``@register_global_func("name")`` and as a
    bare ``@register_global_func`` (the name is the function's ``__name__``).

    Parameters
    ----------
    func_name : str or callable
        The global name, or the function itself when used as a bare decorator.
    f : callable, optional
        The function to register; omitted when used as a decorator.
    override : bool
        Replace an existing registration instead of raising ``ValueError``.

    Returns
    -------
    callable
        ``f`` itself, or a decorator that registers and returns its argument.
    """
    if callable(func_name) and f is None:
        f, func_name = func_name, func_name.__name__
    if not isinstance(func_name, str):
        raise TypeError(f"register_global_func: name must be a str, got {type(func_name).__name__}")

    def register(fn):
        if not callable(fn):
            raise TypeError(f"register_global_func({func_name!r}): {fn!r} is not callable")
        doc = None
        func = fn.__wrapped__ if isinstance(fn, EnumResultFunction) else fn
        if not isinstance(func, core.Function):
            doc = getattr(fn, "__doc__", None)
            func = core.to_function(fn)
            record = _signature.metadata_from_callable(func_name, fn)
            if record is not None:
                core.function_set_metadata(func, record)
        core.set_global_func(func_name, func, bool(override), doc)
        return fn

    return register(f) if f is not None else register


#: TVM's name for :func:`register_global_func`.
register_func = register_global_func


def list_global_func_names() -> list:
    """Every registered global name, sorted."""
    return core.list_global_func_names()


def remove_global_func(name: str) -> bool:
    """Removes a global Function; returns whether ``name`` was registered."""
    return core.remove_global_func(name)


def init_ffi_api(prefix: str, module_name: str) -> None:
    """Fills a Python module with the global Functions registered under ``prefix``.

    Every name ``"<prefix>.<fname>"`` without further dots becomes attribute ``fname`` of
    ``sys.modules[module_name]``, with ``__name__`` and ``__doc__`` set (TVM's ``_init_api``).

    Parameters
    ----------
    prefix : str
        The registry prefix, e.g. ``"testing"``.
    module_name : str
        The name of an imported module, usually ``__name__``.
    """
    module = sys.modules[module_name]
    head = prefix + "."
    for name in core.list_global_func_names():
        if not name.startswith(head):
            continue
        fname = name[len(head) :]
        if not fname or "." in fname:
            continue
        func = core.get_global_func(name)
        if func is None:  # removed concurrently
            continue
        func.__name__ = fname
        func.__qualname__ = fname
        func.__module__ = module_name
        func.__doc__ = _signature.describe(func, fname, core.get_global_func_doc(name), name)
        setattr(module, fname, wrap_enum_result(func))


def get_global_func_metadata(name: str) -> dict | None:
    """The metadata record of a global Function as plain Python data.

    Parameters
    ----------
    name : str
        The registered name.

    Returns
    -------
    dict or None
        ``{"name", "params": [{"name", "type"[, "default"]}, ...], "return", "gil"[, "doc"]}``;
        None when the function carries no metadata (e.g. an untyped packed function).

    Raises
    ------
    ValueError
        When ``name`` is not registered.
    """
    record = _signature.metadata_of(get_global_func(name))
    if record is not None and "doc" not in record:
        doc = core.get_global_func_doc(name)
        if doc:
            record["doc"] = doc
    return record


def convert_func(func, tensor_cls=None):
    """A Python callable as a :class:`Function` (apache-tvm-ffi's name; ``convert(func)``).

    Parameters
    ----------
    func : callable
        The Python function.
    tensor_cls : type, optional
        A framework's tensor class with the DLPack C exchange API (``torch.Tensor``): the
        Function hands each tensor argument to ``func`` as an instance of that class, sharing
        memory (made by the framework's ``from_dlpack``).

    Returns
    -------
    Function

    Raises
    ------
    TypeError
        When ``func`` is not callable, or ``tensor_cls`` is not a class defining
        ``__dlpack_c_exchange_api__`` in a module that has ``from_dlpack``.
    """
    if not callable(func):
        raise TypeError(f"convert_func expects a callable, got {type(func).__name__}")
    if tensor_cls is None:
        return core.convert(func)
    module = sys.modules.get(getattr(tensor_cls, "__module__", "").partition(".")[0])
    to_framework = getattr(module, "from_dlpack", None)
    if not (
        isinstance(tensor_cls, type)
        and hasattr(tensor_cls, "__dlpack_c_exchange_api__")
        and callable(to_framework)
    ):
        raise TypeError(
            "convert_func: tensor_cls must be a tensor class with __dlpack_c_exchange_api__ "
            f"(such as torch.Tensor), got {tensor_cls!r}"
        )
    tensor = core.Tensor

    def call(*args, **kwargs):
        args = tuple(to_framework(a) if isinstance(a, tensor) else a for a in args)
        return func(*args, **kwargs)

    call.__name__ = getattr(func, "__name__", "convert_func")
    call.__doc__ = getattr(func, "__doc__", None)
    return core.convert(call)
