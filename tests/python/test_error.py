# Tests of errors crossing C++ -> Python: kinds, register_error, backtrace notes, no cycles.
import gc
import sys
import traceback
import weakref

import packedfun
import pytest
from packedfun import testing

BUILTIN_KINDS = [
    ValueError,
    TypeError,
    IndexError,
    KeyError,
    AttributeError,
    RuntimeError,
    NotImplementedError,
    OverflowError,
    MemoryError,
]


@pytest.mark.parametrize("cls", BUILTIN_KINDS, ids=lambda c: c.__name__)
def test_builtin_kinds_raise_their_python_type(cls):
    with pytest.raises(cls) as info:
        testing.test_raise_error(cls.__name__, "message from C++")
    assert type(info.value) is cls
    assert info.value.args[0] == "message from C++"
    assert info.value.kind == cls.__name__


def test_unknown_kind_raises_packedfun_error():
    with pytest.raises(packedfun.Error) as info:
        testing.test_raise_error("SomethingOdd", "odd")
    assert isinstance(info.value, RuntimeError)
    assert info.value.kind == "SomethingOdd"
    assert str(info.value) == "odd"


def test_register_error_forms():
    class FirstError(Exception):
        pass

    assert packedfun.register_error("test_error.First", FirstError) is FirstError

    @packedfun.register_error("test_error.Second")
    class SecondError(Exception):
        pass

    @packedfun.register_error
    class ThirdKindError(Exception):
        pass

    for kind, cls in [
        ("test_error.First", FirstError),
        ("test_error.Second", SecondError),
        ("ThirdKindError", ThirdKindError),
    ]:
        with pytest.raises(cls, match="boom"):
            testing.test_raise_error(kind, "boom")
    with pytest.raises(TypeError):
        packedfun.register_error("x", 42)


def test_registered_class_that_rejects_the_message_falls_back_to_error():
    class NeedsTwo(Exception):
        def __init__(self, a, b):
            super().__init__(a, b)

    packedfun.register_error("test_error.NeedsTwo", NeedsTwo)
    with pytest.raises(packedfun.Error, match="one message") as info:
        testing.test_raise_error("test_error.NeedsTwo", "one message")
    assert type(info.value) is packedfun.Error
    assert info.value.kind == "test_error.NeedsTwo"
    assert len(info.value.__notes__) == 1


def test_every_error_carries_kind_and_one_note():
    # The same attributes whichever path made the exception (a kind seen before or a new one).
    for kind, cls in [("ValueError", ValueError), ("test_error.NeverSeen", packedfun.Error)]:
        for _ in range(2):
            with pytest.raises(cls) as info:
                testing.test_raise_error(kind, "text")
            assert info.value.kind == kind and str(info.value) == "text"
            (note,) = info.value.__notes__
            assert isinstance(note, str) and note.startswith("Native backtrace")


def test_kinds_in_rotation_keep_their_names():
    # More kinds in turn than the compiled backend keeps decoded, a non-ASCII one among them.
    # Each arrives as its documented class: a built-in kind as that exception, an unknown one as
    # packedfun.Error (docs/concepts.md), the very class, not a subclass or a rebuilt stand-in.
    classes = {c.__name__: c for c in BUILTIN_KINDS}
    classes |= {"test_error.Ünïcode": packedfun.Error, "test_error.Other": packedfun.Error}
    for _ in range(3):
        for kind, cls in classes.items():
            with pytest.raises(cls) as info:
                testing.test_raise_error(kind, "m")
            assert type(info.value) is cls, (kind, type(info.value))
            assert info.value.kind == kind
            assert sorted(vars(info.value)) == ["__notes__", "kind"]
            assert info.value.args == ("m",)


def test_a_replaced_error_factory_is_used():
    from packedfun import error
    from packedfun._backend import core

    seen = []

    def factory(kind, message, error):
        seen.append(kind)
        return KeyError(message)

    core.set_error_factory(factory)
    try:
        with pytest.raises(KeyError):
            testing.test_raise_error("ValueError", "x")
    finally:
        error._install_factory()
    assert seen == ["ValueError"]
    with pytest.raises(ValueError):
        testing.test_raise_error("ValueError", "x")


def test_backtrace_is_a_lazy_note():
    # testing.make_array raises from a named C++ function (MakeArray) of the testing library.
    try:
        packedfun.get_global_func("testing.make_array")(-1)
    except ValueError as err:
        notes = getattr(err, "__notes__", [])
        assert len(notes) == 1 and type(notes[0]) is not str
        text = str(notes[0])
        assert text.startswith("Native backtrace (most recent call last):"), text
        assert "in packedfun::testing::MakeArray" in text, text
        if sys.version_info >= (3, 11):
            printed = "".join(traceback.format_exception(type(err), err, err.__traceback__))
            assert text in printed
            assert "n must be >= 0" in printed


def _note_of(fn, *args):
    try:
        fn(*args)
    except Exception as err:
        return err.__notes__[0]
    raise AssertionError("no error raised")


def test_backtrace_note_outlives_its_exception():
    # The note owns the native error: it still reads the backtrace once the exception is gone,
    # through the same `_error` (an Error object) on both backends, whichever path made it (a
    # registered kind, a new one).
    from packedfun._backend import core

    first = _note_of(packedfun.get_global_func("testing.make_array"), -1)
    second = _note_of(testing.test_raise_error, "test_error.NoteKind", "x")
    gc.collect()
    assert "in packedfun::testing::MakeArray" in str(first)
    for note in (first, second):
        assert isinstance(note, packedfun.error.NativeBacktrace)
        assert isinstance(core.error_get_backtrace(note._error), str)
        assert repr(note) == "<packedfun native backtrace>"


def test_note_takes_only_errors():
    # The same rule on both backends: the note's `_error` holds an Error object or nothing.
    from packedfun._backend import core

    note = _note_of(testing.test_raise_error, "ValueError", "x")
    with pytest.raises(TypeError, match="Error object"):
        note._error = packedfun.convert([1])
    note._error = _note_of(testing.test_raise_error, "KeyError", "y")._error
    del note._error
    assert not hasattr(note, "_error")
    assert str(note).startswith("Native backtrace unavailable")
    with pytest.raises(TypeError, match="NativeNote"):
        core.set_error_fast_path({}, packedfun.Error, str, "placeholder")


@pytest.mark.parametrize(
    "which, cls",
    [
        ("runtime_error", RuntimeError),
        ("out_of_range", IndexError),
        ("invalid_argument", ValueError),
        ("overflow_error", OverflowError),
        ("bad_alloc", MemoryError),
        ("int", RuntimeError),
    ],
)
def test_std_exceptions_become_errors(which, cls):
    with pytest.raises(cls):
        testing.raise_std_exception(which)


def test_python_error_kind_survives_round_trip_through_cpp():
    def cb():
        testing.test_raise_error("SomethingOdd", "inner")

    with pytest.raises(packedfun.Error) as info:
        testing.apply(cb)
    assert info.value.kind == "SomethingOdd"


def _fail_with_big_local(raiser):
    class Big:
        pass

    big = Big()
    ref = weakref.ref(big)
    try:
        raiser()
    except Exception:  # noqa: BLE001 - the raisers raise several types; that one was raised counts
        pass
    else:
        pytest.fail("no error was raised: the test would check nothing")
    return ref


@pytest.mark.parametrize(
    "raiser",
    [
        lambda: testing.test_raise_error("ValueError", "x"),
        lambda: testing.test_raise_error("SomethingOdd", "x"),
        lambda: testing.apply(lambda: 1 / 0),
        lambda: testing.echo(2**64),
    ],
    ids=["cpp-builtin", "cpp-unknown", "python-callback", "conversion"],
)
def test_error_path_leaves_no_reference_cycles(raiser):
    gc.collect()
    gc.disable()
    try:
        ref = _fail_with_big_local(raiser)
        assert ref() is None
    finally:
        gc.enable()


def test_error_objects_are_freed():
    @packedfun.register_error("test_error.Weak")
    class WeakError(Exception):  # Python subclasses support weak references
        pass

    gc.collect()
    gc.disable()
    try:
        try:
            testing.test_raise_error("test_error.Weak", "x")
        except WeakError as err:
            ref = weakref.ref(err)
        assert ref() is None
    finally:
        gc.enable()
