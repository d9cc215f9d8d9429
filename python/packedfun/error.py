# Errors crossing languages: the kind -> exception class registry and the backend's error factory.
"""Exceptions raised by native code.

A native error carries a *kind* (a string such as ``"ValueError"``), a message and a native
backtrace. Arriving in Python it becomes an instance of the class registered for its kind
(:func:`register_error`); built-in Python exception names map to the built-in classes, and
unknown kinds raise :class:`Error` with ``kind`` set. Every such exception has a ``kind``
attribute, and its native backtrace is attached as a note that is only symbolized when the
traceback is printed.
"""

from __future__ import annotations

import builtins

from ._backend import core

__all__ = ["Error", "InternalError", "register_error"]


class Error(RuntimeError):
    """An error raised by native code whose kind has no registered Python class.

    Parameters
    ----------
    message : str
        The error message.
    kind : str, optional
        The native error kind; defaults to the class name.
    """

    def __init__(self, message: str = "", kind: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind if kind is not None else type(self).__name__


class InternalError(Error):
    """A broken invariant inside packedfun or a native library (kind ``"InternalError"``)."""


_BUILTIN_KINDS = (
    ValueError,
    TypeError,
    IndexError,
    KeyError,
    AttributeError,
    RuntimeError,
    NotImplementedError,
    OverflowError,
    MemoryError,
    OSError,
    FileNotFoundError,
    BufferError,
    ZeroDivisionError,
    ImportError,
    AssertionError,
    StopIteration,
    TimeoutError,
)

_KINDS: dict[str, type] = {cls.__name__: cls for cls in _BUILTIN_KINDS}
_KINDS["Error"] = Error
_KINDS["InternalError"] = InternalError


def register_error(kind_or_cls=None, cls=None):
    """Maps a native error kind to a Python exception class.

    Usable as ``register_error("MyKind", MyError)``, as a class decorator
    ``@register_error("MyKind")``, or bare ``@register_error`` (the kind is the class name).

    Parameters
    ----------
    kind_or_cls : str or type
        The error kind, or the class itself (then its ``__name__`` is the kind).
    cls : type, optional
        The exception class, constructed with the message as its only argument.

    Returns
    -------
    type or callable
        The class, or a decorator when no class was given.
    """
    if isinstance(kind_or_cls, type):
        cls, kind = kind_or_cls, kind_or_cls.__name__
    else:
        kind = kind_or_cls

    def register(klass):
        if not (isinstance(klass, type) and issubclass(klass, BaseException)):
            raise TypeError(f"register_error expects an exception class, got {klass!r}")
        name = kind if kind is not None else klass.__name__
        if not isinstance(name, str):
            raise TypeError(f"error kind must be a str, got {type(name).__name__}")
        _KINDS[name] = klass
        return klass

    return register(cls) if cls is not None else register


def _class_for(kind: str):
    """The class for ``kind``: registered, else a built-in exception of that name, else None."""
    cls = _KINDS.get(kind)
    if cls is None:
        candidate = getattr(builtins, kind, None)
        if isinstance(candidate, type) and issubclass(candidate, Exception):
            cls = _KINDS[kind] = candidate
    return cls


class NativeBacktrace(core.NativeNote):
    """A note holding a native error whose ``str()`` is the backtrace, symbolized on demand.

    Python's traceback printing calls ``str()`` on every note, so nothing is symbolized unless the
    exception is printed. The text lists the frames of the user's native code only, most recent
    call last, with source file and line where the library has debug information; it is empty when
    no such frame exists (e.g. a wrong argument type, found by packedfun's own conversion code).
    It is a ``str`` (with placeholder contents) so that code joining notes as strings, such as
    ``pytest.raises(match=...)``, keeps working.
    """

    # The backend's base holds the error (the compiled one in a C field, no Python handle per
    # error); no instance dict: a note is made for every native error that reaches Python.
    __slots__ = ()

    def __str__(self) -> str:
        try:
            text = core.error_get_backtrace(self._error)
            from ._native_frames import format_backtrace

            return format_backtrace(text)
        except Exception as err:  # printing must never fail
            return f"Native backtrace unavailable: {err}"

    def __repr__(self) -> str:
        return "<packedfun native backtrace>"

    def __reduce__(self):
        return (str, (str(self),))


_PLACEHOLDER = "Native backtrace: (symbolized when printed)"


def _make_exception(
    kind: str, message: str, error, _kinds=_KINDS, _new=str.__new__, _note=NativeBacktrace
) -> BaseException:
    """The error factory installed into the backend: a native error as a Python exception.

    It is on the error path of every native call, so it is kept short: the note is built with
    ``str.__new__`` (no Python-level constructor) and nothing is symbolized here. The compiled
    backend runs the case of a registered kind in C, step for step the same
    (``set_error_fast_path``, src/python/error.c): change both together.
    """
    cls = _kinds.get(kind) or _class_for(kind)
    if cls is None:
        exc = Error(message, kind)
    else:
        try:
            exc = cls(message)
        except Exception:  # a class that cannot take a bare message
            exc = Error(message, kind)
    note = _new(_note, _PLACEHOLDER)
    note._error = error
    exc.kind = kind
    exc.__notes__ = [note]
    return exc


def _install_factory() -> None:
    """Installs :func:`_make_exception` as the backend's error factory (on the compiled backend
    its common case runs in C)."""
    core.set_error_factory(_make_exception)
    core.set_error_fast_path(_KINDS, Error, NativeBacktrace, _PLACEHOLDER)


_install_factory()


def _parse_backtrace(text: str) -> list[tuple[str, int, str]]:
    """The ``(file, line, function)`` of each ``File "f", line N, in name`` line of a backtrace
    text, in order (other lines skipped): apache-tvm-ffi's ``tvm_ffi.error._parse_backtrace``,
    which code written for it may call under the tvm-ffi switch."""
    import re  # only here: importing packedfun loads no re (tests/python/test_import.py)

    frame_line = re.compile(r'File "(?P<file>[^"]*)", line (?P<line>\d+), in (?P<name>.*)')
    frames = []
    for row in text.splitlines():
        found = frame_line.search(row)
        if found is not None:
            frames.append((found["file"], int(found["line"]), found["name"].strip()))
    return frames


def _opaque_type_name(value: object) -> str:
    """The name native messages give a Python object that travelled as Opaque ("got object")."""
    return type(value).__name__


# Native conversion errors ask this hook (detail::kOpaqueTypeNameHook) for the type of an
# Opaque value, so "expected int, got object" names the Python type even deep in a container.
core.set_global_func("packedfun.OpaqueTypeName", _opaque_type_name, True)
