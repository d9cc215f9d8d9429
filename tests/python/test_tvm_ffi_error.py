# tvm-ffi's error object under the switch: tvm_ffi.core.Error and exceptions' __tvm_ffi_error__.
"""``packedfun._tvm_ffi_error`` (``tvm_ffi.core.Error``): the class is checked in this process
(importing it changes nothing global); what the switch turns on (``__tvm_ffi_error__`` on native
errors, ``tvm_ffi.convert(exception)``) and turns off again, in a child process. Both backends:
the suite runs once per backend, and the child inherits ``PACKEDFUN_BACKEND``."""

from __future__ import annotations

import copy
import pickle

import packedfun
import packedfun.testing
import pytest
from packedfun._tvm_ffi_error import Error, error_of_exception
from test_tvm_ffi_switch import run_child


def test_error_object_holds_kind_message_backtrace_and_pickles_by_value():
    error = Error("TypeError", "boom", '  File "a.py", line 1, in f\n')
    assert (error.kind, error.message) == ("TypeError", "boom")
    assert error.backtrace == '  File "a.py", line 1, in f\n'
    assert error.extra_context is None and error.__chandle__() == 0
    assert error.same_as(error) and not error.same_as(Error("TypeError", "boom", ""))
    for restored in (pickle.loads(pickle.dumps(error)), copy.deepcopy(error)):
        assert isinstance(restored, Error) and not restored.same_as(error)
        assert (restored.kind, restored.message, restored.backtrace) == (
            error.kind,
            error.message,
            error.backtrace,
        )
    error.update_backtrace("new")
    assert error.backtrace == "new"
    exc = error.py_error()
    assert type(exc) is TypeError and str(exc) == "boom" and exc.__tvm_ffi_error__ is error
    with pytest.raises(TypeError, match="message must be a str"):
        Error("ValueError", 3, "")


def test_empty_error_pickles_as_empty():
    empty = Error.__new__(Error)
    assert empty.__chandle__() == 0
    restored = pickle.loads(pickle.dumps(empty))
    assert isinstance(restored, Error) and restored.__chandle__() == 0
    with pytest.raises(ValueError, match="empty"):
        restored.kind  # noqa: B018


def test_error_of_exception_takes_the_traceback():
    def raise_it():
        raise KeyError("k")

    try:
        raise_it()
    except KeyError as exc:
        error = error_of_exception(exc)
    assert error.kind == "KeyError" and error.message == "'k'"
    assert "in raise_it" in error.backtrace
    # innermost frame first, as tvm-ffi stores backtraces
    assert error.backtrace.index("raise_it") < error.backtrace.index("test_error_of_exception")


def test_without_the_switch_native_errors_carry_no_error_object():
    fail = packedfun.get_global_func("testing.test_raise_error")
    with pytest.raises(ValueError) as info:
        fail("ValueError", "plain")
    assert not hasattr(info.value, "__tvm_ffi_error__")
    exc = ValueError("x")
    assert packedfun.convert(exc) is exc


def test_switch_gives_native_errors_their_error_object_and_takes_it_back():
    run_child(
        """
        import copy, pickle
        import packedfun, packedfun.testing
        import packedfun.tvm_ffi_compat as compat
        compat.install()
        import tvm_ffi
        fail = tvm_ffi.get_global_func("testing.test_raise_error")
        try:
            fail("ValueError", "error XYZ")
        except ValueError as e:
            err = e
        error = err.__tvm_ffi_error__
        assert isinstance(error, tvm_ffi.core.Error) and error.__chandle__() != 0
        assert (error.kind, error.message, error.extra_context) == ("ValueError", "error XYZ", None)
        assert isinstance(error.backtrace, str)
        for restored in (pickle.loads(pickle.dumps(err)), copy.deepcopy(err)):
            assert type(restored) is ValueError and restored.args == err.args
            assert restored.__tvm_ffi_error__.message == "error XYZ"
        # an exception raised by a callback comes back as itself, its error object kept
        apply = tvm_ffi.get_global_func("testing.apply")
        def again():
            raise err
        try:
            apply(again)
        except ValueError as e:
            assert e is err and e.__tvm_ffi_error__.same_as(error)
        # an unknown kind: packedfun's Error class, with the error object too
        try:
            fail("NoSuchKindOfError", "m")
        except packedfun.Error as e:
            assert e.__tvm_ffi_error__.kind == "NoSuchKindOfError"
        # tvm_ffi.convert(exception): its error object, backtrace from the traceback
        def raise_here():
            fail("ValueError", "again")
        try:
            raise_here()
        except ValueError as e:
            converted = tvm_ffi.convert(e)
            assert converted is e.__tvm_ffi_error__ and "raise_here" in converted.backtrace
        assert tvm_ffi.convert(3) == 3
        compat.uninstall()
        try:
            fail("ValueError", "after")
        except ValueError as e:
            assert not hasattr(e, "__tvm_ffi_error__")
        exc = KeyError("k")
        assert packedfun.convert(exc) is exc
        print("ok")
        """
    )
