# The messages of converting values and of packedfun.Function: one wording, in
# packedfun._rules.messages, raised alike by both bindings.
import re

import packedfun
import pytest
from packedfun import testing
from packedfun._rules import messages

assert testing  # registers the testing.* functions

echo = packedfun.get_global_func("testing.echo")


def _callback(x):  # noqa: ANN001, ANN202 - a callback
    return x


class BadIndex:
    """Has __index__, which raises: an error raised by Python code inside a conversion."""

    def __index__(self) -> int:
        raise ValueError("boom")


def _raised(call) -> BaseException:  # noqa: ANN001 - a callable without arguments
    with pytest.raises(Exception) as info:
        call()
    return info.value


def test_function_constructor_messages() -> None:
    err = _raised(lambda: packedfun.Function(1))
    assert type(err) is TypeError and str(err) == "Function() expects a callable, got int"
    err = _raised(lambda: packedfun.Function(_callback, name="x"))
    assert type(err) is TypeError and str(err) == "Function() takes no keywords"


def test_function_attribute_messages() -> None:
    f = packedfun.Function(_callback)
    err = _raised(lambda: setattr(f, "gil_policy", 3))
    assert type(err) is TypeError
    assert str(err) == "gil_policy must be 'release' or 'hold' (a str)"
    err = _raised(lambda: setattr(f, "gil_policy", "never"))
    assert type(err) is ValueError
    assert str(err) == "gil_policy must be 'release' or 'hold', got 'never'"
    err = _raised(lambda: setattr(f, "__name__", 3))
    assert type(err) is TypeError and str(err) == "__name__ must be a str"
    err = _raised(lambda: setattr(f, "__signature__", None))
    assert type(err) is AttributeError and str(err) == "Function.__signature__ is read-only"


def test_function_reprs() -> None:
    assert re.fullmatch(r"<packedfun\.Function 'testing\.echo' at 0x[0-9a-f]+>", repr(echo))
    wrapped = packedfun.Function(_callback)
    assert re.fullmatch(
        r"<packedfun\.Function wrapping <function _callback at 0x[0-9a-f]+> at 0x[0-9a-f]+>",
        repr(wrapped),
    )


def test_keywords_to_a_function_without_parameters() -> None:
    err = _raised(lambda: packedfun.Function(_callback)(x=1))
    assert type(err) is TypeError
    assert str(err) == "packedfun.Function takes no keyword arguments"


def test_int_range_messages() -> None:
    err = _raised(lambda: echo(2**64))
    assert type(err) is OverflowError
    assert str(err) == "testing.echo: argument 0: int too large for uint64"
    err = _raised(lambda: echo([1, 2**64]))
    assert type(err) is OverflowError
    assert str(err) == "testing.echo: argument 0[1]: int too large for uint64"
    err = _raised(lambda: packedfun.convert([1, -(2**64)]))
    assert type(err) is OverflowError and str(err) == "value[1]: int too small for int64"


def test_container_messages() -> None:
    looped: list = [1]
    looped.append(looped)
    try:
        err = _raised(lambda: echo(looped))
        assert type(err) is ValueError
        assert str(err) == "testing.echo: argument 0[1]: container contains itself"
    finally:
        looped.clear()  # no cycle left behind


def test_note_names_the_element() -> None:
    err = _raised(lambda: echo([1, BadIndex()]))
    assert type(err) is ValueError and str(err) == "boom"
    assert getattr(err, "__notes__", None) == ["while converting argument 0[1] of testing.echo"]
    err = _raised(lambda: packedfun.convert({"k": BadIndex()}))
    assert getattr(err, "__notes__", None) == ["while converting value['k']"]


def test_wording_comes_from_the_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """Changing a template in packedfun._rules.messages changes what the running binding raises:
    neither binding keeps a wording of its own."""
    monkeypatch.setattr(messages, "GIL_POLICY_UNKNOWN", "no policy {!r}")
    monkeypatch.setattr(messages, "INT_TOO_LARGE", "much too large")
    monkeypatch.setattr(messages, "ARG_WHERE", "{} (argument {})")
    monkeypatch.setattr(messages, "FUNCTION_NOT_CALLABLE", "not callable: {}")
    monkeypatch.setattr(messages, "FUNCTION_REPR_NAMED", "<function {} at {:#x}>")
    f = packedfun.Function(_callback)
    err = _raised(lambda: setattr(f, "gil_policy", "never"))
    assert str(err) == "no policy 'never'"
    err = _raised(lambda: echo(2**64))
    assert str(err) == "testing.echo (argument 0): much too large"
    err = _raised(lambda: echo([2**64]))
    assert str(err) == "testing.echo (argument 0[0]): much too large"
    err = _raised(lambda: packedfun.Function(1.5))
    assert str(err) == "not callable: float"
    assert repr(echo).startswith("<function testing.echo at 0x")


def test_every_message_name_the_compiled_binding_passes_exists() -> None:
    # _core names its messages by key; a key that is not in packedfun._rules.messages turns the
    # error into an AttributeError from the lookup (a datetime64 array argument raised
    # "module 'packedfun._rules.messages' has no attribute 'it has no buffer ...'").
    from pathlib import Path

    src = Path(__file__).resolve().parents[2] / "src" / "python"
    call = re.compile(
        r"\b(?:pfpy_message|pfpy_raise_message|numpy_dtype_error)\(([^;]*?)\)\s*;", re.S
    )
    names = set()
    for path in src.glob("*.c"):
        for args in call.findall(path.read_text()):
            names.update(re.findall(r'"([^"]*)"', args)[:1])  # the key, else the format
    build_value = set("()[]{}sszyOSNUCpbhiIlLkKnBHcdfD#:,| $")  # a Py_BuildValue format
    names = {n for n in names if not set(n) <= build_value}
    assert len(names) > 50, names  # the scan still finds the binding's message names
    assert {n for n in names if not hasattr(messages, n)} == set()
