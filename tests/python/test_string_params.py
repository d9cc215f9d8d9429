# String parameters borrow the caller's bytes: c_str() without a copy, std::string_view, escapes.
"""A Python ``str`` or ``bytes`` argument reaches a C++ ``String``/``Bytes`` parameter as a view of
its own buffer, marked NUL-terminated, so ``c_str()``/``data()`` return that buffer (no copy); a
``std::string_view`` parameter views it too; a parameter kept past the call is an owned copy."""

import gc

import packedfun
import packedfun.testing  # noqa: F401 - registers testing.*
import pytest

get = packedfun.get_global_func
c_str_in_place = get("testing.str_c_str_in_place")
bytes_in_place = get("testing.bytes_data_in_place")
str_strlen = get("testing.str_strlen")
view_len = get("testing.str_view_len")
view_echo = get("testing.str_view_echo")
keep = get("testing.str_keep")
kept = get("testing.str_kept")


class Text(str):
    """A str subclass: converted by the general path, not the exact-str fast path."""


LONG_ASCII = "a plain ASCII string, longer than the inline form"
LONG_UTF8 = "héllo wörld, ünïcode that is not ASCII"


@pytest.mark.parametrize(
    "text",
    [LONG_ASCII, LONG_UTF8, Text(LONG_ASCII), Text(LONG_UTF8), "x" * 100_000, "short", ""],
    ids=["ascii", "utf8", "subclass-ascii", "subclass-utf8", "large", "short", "empty"],
)
def test_c_str_of_a_str_parameter_is_the_callers_buffer(text):
    assert c_str_in_place(text) is True


@pytest.mark.parametrize("data", [b"raw bytes longer than seven", b"\x00\xff" * 40, b"tiny", b""])
def test_data_of_a_bytes_parameter_is_the_callers_buffer(data):
    assert bytes_in_place(data) is True


def test_bytearray_arguments_are_read_right():
    # A bytearray promises no NUL after its bytes on every backend: whether data() copies is the
    # backend's business, the bytes seen are not.
    assert get("testing.bytes_len")(bytearray(b"z" * 40)) == 40
    assert get("testing.echo_bytes")(bytearray(b"q" * 40)) == b"q" * 40


def test_c_str_stops_at_an_embedded_nul_and_sees_the_whole_string():
    assert str_strlen("abc\0def and more than seven bytes") == 3
    assert str_strlen(LONG_ASCII) == len(LONG_ASCII)
    assert str_strlen(LONG_UTF8) == len(LONG_UTF8.encode())
    assert str_strlen(Text(LONG_UTF8)) == len(LONG_UTF8.encode())


def test_string_view_parameters():
    assert view_len(LONG_UTF8) == len(LONG_UTF8.encode())
    assert view_len("") == 0
    assert view_len("seven77") == 7
    assert view_echo(2, LONG_ASCII) == LONG_ASCII[2:]
    assert view_echo(0, Text(LONG_UTF8)) == LONG_UTF8
    assert view_echo(3, "short") == "rt"
    assert view_echo(1, packedfun.convert(LONG_ASCII)) == LONG_ASCII[1:]


def test_string_view_parameter_errors_name_the_argument():
    with pytest.raises(
        TypeError, match=r"testing\.str_view_echo: argument 1: expected str, got int"
    ):
        view_echo(1, 2)
    with pytest.raises(
        TypeError, match=r"testing\.str_view_len: argument 0: expected str, got bytes"
    ):
        view_len(b"not a str")


def test_parameters_kept_past_the_call_are_owned_copies():
    # Built at run time, so that nothing but the caller holds its buffer.
    text = "".join(["kept ", "past ", "the ", "call, ", "é" * 20])
    data = bytes(bytearray(b"kept bytes, longer than seven"))
    expected = [str(text.encode().decode()), bytes(data)]
    assert keep(text, data) is False  # what was stored no longer borrows
    del text, data
    gc.collect()
    _ = ["churn" * 50 for _ in range(1000)]  # reuse the freed memory
    assert list(kept()) == expected
