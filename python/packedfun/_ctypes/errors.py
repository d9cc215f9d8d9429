# Errors crossing the ctypes backend's boundary: native Error objects <-> Python exceptions.
"""Error translation of :mod:`packedfun._ctypes.backend`, following the "Errors" section of
docs/internals/python-backends.md: a native error whose cause is an Opaque made by this backend
re-raises the very Python exception a callback raised; any other error goes through the factory
installed with ``set_error_factory``. A Python exception escaping a callback becomes an Error of
kind ``type(exc).__name__`` (or ``exc.kind``), message ``str(exc)``, cause ``Opaque(exc)``.
"""

from __future__ import annotations

import atexit
import ctypes
import sys
from ctypes import byref, c_int32, c_void_p

from .._rules import messages as _msg
from . import abi as abi
from .abi import LIB, PFByteArray
from .values import (
    Object,
    _DecRef,
    _free_handle_c,
    _handles,
    _safe_call_c,
    hold,
    opaque_payload,
    tp_name,
    wrap,
)

# ---- errors -------------------------------------------------------------------------------------
_error_factory = None


def set_error_factory(factory) -> None:
    """Installs ``factory(kind, message, error) -> exception``, used to raise native errors."""
    global _error_factory
    if factory is not None and not callable(factory):
        raise TypeError(_msg.text("ERROR_FACTORY_NOT_CALLABLE"))
    _error_factory = factory


def set_error_fast_path(kinds, error_cls, note_type, placeholder) -> None:
    """``_core`` runs the error factory's common case in C from these; here every error goes
    through the factory installed by :func:`set_error_factory` (nothing faster to install)."""
    if not isinstance(kinds, dict):
        raise TypeError(f"set_error_fast_path: kinds must be a dict, not {type(kinds).__name__}")
    if not isinstance(error_cls, type) or not isinstance(note_type, type):
        raise TypeError("set_error_fast_path: error_cls and note_type must be classes")
    if not issubclass(note_type, NativeNote):
        raise TypeError("set_error_fast_path: note_type must be a NativeNote subclass")
    if not isinstance(placeholder, str):
        raise TypeError("set_error_fast_path: placeholder must be a str")


def take_raised(fname=None) -> BaseException:
    """Moves the calling thread's pending native error out, as the Python exception to raise."""
    out = c_void_p()
    LIB.PFErrorMoveFromRaised(byref(out))
    return exception_from_error(out.value, fname)


def raise_last_error(fname=None):
    """Raises the calling thread's pending native error as a Python exception."""
    exc = take_raised(fname)
    try:
        raise exc
    finally:
        exc = None


def exception_from_error(handle, fname=None) -> BaseException:
    """The exception for the Error at ``handle`` (its reference is consumed)."""
    if not handle:
        return RuntimeError(_msg.text("NATIVE_FAILED_WITHOUT_ERROR", fname))
    if c_int32.from_address(handle + 8).value != abi.kPFTypeError:
        _DecRef(handle)
        return RuntimeError(_msg.text("NATIVE_RAISED_NON_ERROR", fname))
    err = abi.PFErrorObject.from_address(handle)
    if err.cause:
        ours, payload = opaque_payload(err.cause)
        if ours and isinstance(payload, BaseException):  # the very exception a callback raised
            _DecRef(handle)
            return payload
    kind = abi.read_bytes(err.kind).decode("utf-8", "replace")
    message = abi.read_bytes(err.message).decode("utf-8", "replace")
    factory = _error_factory
    if factory is None:
        _DecRef(handle)
        return RuntimeError(f"{kind}: {message}")
    exc = factory(kind, message, wrap(handle, abi.kPFTypeError))
    if not isinstance(exc, BaseException):
        return TypeError(_msg.text("ERROR_FACTORY_RESULT", tp_name(type(exc))))
    return exc


class NativeNote(str):
    """The base of packedfun.error.NativeBacktrace: a str owning a native error in ``_error``,
    which takes Error objects only (deleting it empties the note), as the compiled backend's."""

    __slots__ = ("_note_error",)

    @property
    def _error(self):
        try:
            return self._note_error
        except AttributeError:
            raise AttributeError("_error") from None

    @_error.setter
    def _error(self, value) -> None:
        handle = value._pf_handle if isinstance(value, Object) else 0
        if not handle or c_int32.from_address(handle + 8).value != abi.kPFTypeError:
            raise TypeError(_msg.text("BACKTRACE_NEEDS_ERROR"))
        self._note_error = value

    @_error.deleter
    def _error(self) -> None:
        try:
            del self._note_error
        except AttributeError:
            pass


def error_get_backtrace(error) -> str:
    """The native backtrace of an Error object (symbolized on first use), innermost first."""
    handle = error._pf_handle if isinstance(error, Object) else 0
    if not handle or c_int32.from_address(handle + 8).value != abi.kPFTypeError:
        raise TypeError(_msg.text("BACKTRACE_OF_NON_ERROR"))
    text = PFByteArray()
    if LIB.PFErrorGetBacktrace(handle, byref(text)):
        raise_last_error()
    return abi.read_bytes(text).decode("utf-8", "replace")


def _exception_kind(exc: BaseException) -> bytes:
    kind = getattr(exc, "__dict__", {}).get("kind")
    if not isinstance(kind, str):
        kind = type(exc).__name__
    return kind.encode("utf-8", "replace")


def _exception_message(exc: BaseException) -> bytes:
    try:
        message = str(exc)
    except BaseException:  # noqa: B036 - a broken __str__ must not lose the error
        message = "<exception str() failed>"
    try:
        return message.encode("utf-8")
    except UnicodeEncodeError:
        return b"<unencodable message>"


_NO_BACKTRACE = PFByteArray(b"", 0)


def raise_into_native(exc: BaseException) -> int:
    """Stores ``exc`` as the thread's pending Error (kind = type name, cause = Opaque(exc))."""
    kind = _exception_kind(exc)
    message = _exception_message(exc)
    cause = c_void_p()
    key = hold(exc)
    if LIB.PFOpaqueObjectCreate(key, _free_handle_c, byref(cause)):
        _handles.pop(key, None)  # the runtime raised its own error (e.g. MemoryError); keep it
        return -1
    err = c_void_p()
    rc = LIB.PFErrorCreate(
        byref(PFByteArray(kind, len(kind))),
        byref(PFByteArray(message, len(message))),
        byref(_NO_BACKTRACE),
        cause,
        byref(err),
    )
    if rc == 0:
        LIB.PFErrorSetRaised(err)
        _DecRef(err)
    _DecRef(cause)
    return -1


# ---- the caller's lock and signals ----------------------------------------------------
def _check_signals() -> None:
    """PFEnvCheckSignals' hook: runs pending signal handlers; what they raise goes to the slot."""
    try:
        ctypes.pythonapi.PyErr_CheckSignals()
    except BaseException as exc:  # noqa: B036 - KeyboardInterrupt must reach the native caller
        raise_into_native(exc)


_check_signals_c = ctypes.CFUNCTYPE(None)(_check_signals)


def _unraisable_hook(unraisable) -> None:
    """Entering a Python callback runs pending signal handlers before its first line, so what
    they raise escapes ``_check_signals`` and ctypes reports it as unraisable: it goes to the
    native caller instead (PFEnvCheckSignals reports by what is raised, not by a return value)."""
    # Python 3.13+ names the callback in the message instead of passing it as the object.
    ours = unraisable.object is _check_signals or (
        unraisable.object is None and repr(_check_signals) in (unraisable.err_msg or "")
    )
    if ours and unraisable.exc_value is not None:
        raise_into_native(unraisable.exc_value)
        return
    _previous_unraisable_hook(unraisable)


_previous_unraisable_hook = sys.unraisablehook


def install_lock_hooks() -> None:
    """Installs the runtime's lock hooks: CPython's own entry points, called from C directly."""
    global _previous_unraisable_hook
    api = ctypes.pythonapi

    def address(fn) -> int | None:
        return ctypes.cast(fn, c_void_p).value

    if sys.unraisablehook is not _unraisable_hook:
        _previous_unraisable_hook = sys.unraisablehook
        sys.unraisablehook = _unraisable_hook
    # ctypes' callbacks take the GIL before any Python runs, so only a C entry point can say that
    # the interpreter is shutting down: Py_IsFinalizing (3.13+), _Py_IsFinalizing before.
    finalizing = getattr(api, "Py_IsFinalizing", None) or api._Py_IsFinalizing
    LIB.PFEnvSetLockHooks(
        address(api.PyGILState_Check),
        address(api.PyEval_SaveThread),
        address(api.PyEval_RestoreThread),
        address(_check_signals_c),
        address(finalizing),
    )
    # A thread without a GILState thread state cannot hold the GIL (PyGILState_Check says it does
    # once finalization deleted the states); callbacks enter through the runtime's guard.
    LIB.PFEnvSetGuardedCall(address(api.PyGILState_GetThisThreadState), address(_safe_call_c))
    # At exit, before finalization: native threads stop entering Python (their calls fail, their
    # deleters leak) and those already inside get up to 2 s to leave; one let in just before
    # finalization would otherwise enter an interpreter that no longer exists.
    atexit.register(LIB.PFEnvCloseLock, 2000)
