# tvm-ffi's error object under the switch: `tvm_ffi.core.Error` and exceptions' `__tvm_ffi_error__`.
"""The error as an object, as apache-tvm-ffi's Python API shows it (only under
:mod:`packedfun.tvm_ffi_compat`).

packedfun raises a native error as a Python exception whose ``kind`` attribute names its kind and
whose first note holds the native error (:mod:`packedfun.error`). apache-tvm-ffi gives every such
exception a ``__tvm_ffi_error__`` attribute instead: an :class:`Error` object with ``kind``,
``message`` and ``backtrace``, which pickles by value, and ``tvm_ffi.convert(exception)`` gives that
object. While the switch is on, :func:`_attach` makes both true on packedfun: the error factory
also sets ``__tvm_ffi_error__`` (so the compiled backend's C fast path for errors is off while the
switch is on), and ``packedfun.convert`` (``tvm_ffi.convert``) turns an exception into an
:class:`Error`. :func:`_detach` puts packedfun's own behaviour back.

Backtrace text follows tvm-ffi's convention: innermost frame first, Python frames written as
``File "<file>", line <n>, in <name>``.
"""

from __future__ import annotations

import sys
import types
import typing

from . import error as _error
from ._backend import core as _backend

__all__ = ["Error"]


def _str_arg(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"Error: {name} must be a str, got {type(value).__name__}")
    return value


class Error:
    """An error as an object (tvm-ffi's ``tvm_ffi.core.Error``): its kind, message and backtrace.

    ``Error(kind, message, backtrace)`` builds one from its three strings. Errors raised by native
    code come as the ``__tvm_ffi_error__`` attribute of the exception, over the native error
    object. An ``Error`` pickles (and deep-copies) by value from its three strings;
    ``extra_context`` is always None. ``Error.__new__(Error)`` is the empty error (``__chandle__()``
    is 0), which pickles as an empty error again.

    Parameters
    ----------
    kind : str
        The error kind, e.g. ``"ValueError"``.
    message : str
        The message.
    backtrace : str
        The backtrace text, innermost frame first.

    Raises
    ------
    TypeError
        When an argument is not a ``str``.
    """

    __slots__ = ("__weakref__", "_backtrace", "_kind", "_message", "_native")
    _kind: str
    _message: str
    _backtrace: str | None  # None: not read from the native error yet
    _native: typing.Any  # the packedfun Error object, or None

    def __init__(self, kind: str, message: str, backtrace: str) -> None:
        self._kind = _str_arg("kind", kind)
        self._message = _str_arg("message", message)
        self._backtrace = _str_arg("backtrace", backtrace)
        self._native = None

    @classmethod
    def _of_native(cls, native: object, kind: str, message: str) -> Error:
        """The error object over a native error (a packedfun ``Error`` object); its backtrace is
        read from the native error when first asked for."""
        self = cls.__new__(cls)
        self._kind, self._message, self._backtrace, self._native = kind, message, None, native
        return self

    def _empty(self) -> bool:
        return not hasattr(self, "_kind")

    def _field(self, name: str) -> str:
        if self._empty():
            raise ValueError(f"Error.{name}: the error is empty (made by Error.__new__)")
        return getattr(self, "_" + name)

    @property
    def kind(self) -> str:
        """The error kind, e.g. ``"ValueError"``."""
        return self._field("kind")

    @property
    def message(self) -> str:
        """The error message."""
        return self._field("message")

    @property
    def backtrace(self) -> str:
        """The backtrace text, innermost frame first (native frames of a native error, then what
        :meth:`update_backtrace` stored)."""
        text = self._field("backtrace")
        if text is None:
            try:
                text = _backend.error_get_backtrace(self._native)
            except Exception:  # symbolization must never make reading an error fail
                text = ""
            self._backtrace = text
        return text

    @property
    def extra_context(self) -> None:
        """A structured payload attached to the error: packedfun attaches none (always None)."""
        return None

    def update_backtrace(self, backtrace: str) -> None:
        """Replaces the stored backtrace text with ``backtrace``."""
        self._field("backtrace")
        self._backtrace = _str_arg("backtrace", backtrace)

    def py_error(self) -> BaseException:
        """A Python exception for this error: an instance of the class registered for its kind
        (:func:`packedfun.error.register_error`), whose ``__tvm_ffi_error__`` is this object."""
        cls = _error._class_for(self.kind)
        try:
            exc = cls(self.message) if cls is not None else _error.Error(self.message, self.kind)
        except Exception:  # a class that cannot take a bare message
            exc = _error.Error(self.message, self.kind)
        exc.kind = self.kind  # type: ignore[attr-defined]
        exc.__tvm_ffi_error__ = self  # type: ignore[union-attr]
        return exc

    def same_as(self, other: object) -> bool:
        """Whether ``other`` is this error (the same native error, for errors raised natively)."""
        if not isinstance(other, Error):
            return False
        mine, theirs = getattr(self, "_native", None), getattr(other, "_native", None)
        if mine is not None and theirs is not None:
            return bool(mine.same_as(theirs))
        return self is other

    def __chandle__(self) -> int:
        """The address of the native error object; 0 for an error built in Python or empty."""
        native = getattr(self, "_native", None)
        return 0 if native is None else int(native.__chandle__())

    def __reduce__(self):
        if self._empty():
            return (_empty_error, ())
        return (Error, (self.kind, self.message, self.backtrace))

    def __repr__(self) -> str:
        if self._empty():
            return "<tvm_ffi.core.Error (empty)>"
        return f"<tvm_ffi.core.Error {self.kind}: {self.message!r}>"


def _empty_error() -> Error:
    return Error.__new__(Error)


def _traceback_text(tb: types.TracebackType | None) -> str:
    """The frames of a Python traceback in tvm-ffi's backtrace form, innermost first."""
    lines = []
    while tb is not None:
        code = tb.tb_frame.f_code
        lines.append(f'  File "{code.co_filename}", line {tb.tb_lineno}, in {code.co_name}\n')
        tb = tb.tb_next
    return "".join(reversed(lines))


def error_of_exception(exc: BaseException) -> Error:
    """The :class:`Error` for a Python exception (``tvm_ffi.convert(exc)`` under the switch): its
    ``__tvm_ffi_error__`` when it has one, its backtrace replaced by the exception's traceback;
    else a new error of the exception's kind (its ``kind`` attribute, else its class name) and
    message, with the traceback as backtrace."""
    frames = _traceback_text(exc.__traceback__)
    found = getattr(exc, "__tvm_ffi_error__", None)
    if isinstance(found, Error):
        found.update_backtrace(frames)
        return found
    kind = getattr(exc, "__dict__", {}).get("kind")
    try:
        message = str(exc)
    except Exception:  # a broken __str__ must not lose the error
        message = "<exception str() failed>"
    return Error(kind if isinstance(kind, str) else type(exc).__name__, message, frames)


def _make_exception(kind: str, message: str, native: object) -> BaseException:
    """The error factory while the switch is on: packedfun's exception, with
    ``__tvm_ffi_error__`` set."""
    exc = _error._make_exception(kind, message, native)
    try:
        exc.__tvm_ffi_error__ = Error._of_native(native, kind, message)  # type: ignore[attr-defined]
    except AttributeError:  # an exception class that takes no attributes: packedfun's form only
        pass
    return exc


def _convert(value):
    """``tvm_ffi.convert`` while the switch is on: an exception becomes its :class:`Error`."""
    if isinstance(value, BaseException):
        return error_of_exception(value)
    return _backend.convert(value)


_saved: dict = {}


def _attach() -> None:
    """Called by the switch's ``install()``: errors get tvm-ffi's object form."""
    packedfun: typing.Any = sys.modules["packedfun"]  # imported: the switch imports it first
    _backend.set_error_factory(_make_exception)
    if "convert" not in _saved:
        _saved["convert"] = packedfun.convert
        _convert.__doc__ = packedfun.convert.__doc__
        packedfun.convert = _convert


def _detach() -> None:
    """Called by the switch's ``uninstall()``: packedfun's own error factory and ``convert``."""
    packedfun: typing.Any = sys.modules["packedfun"]
    _error._install_factory()
    if "convert" in _saved:
        packedfun.convert = _saved.pop("convert")
