# One conversion rule: a Python value converted as a positional argument, a keyword argument, a
# container element, a dict key and a callback's result arrives as the same native value.
import ctypes
import enum
import fractions

import packedfun
import pytest
from packedfun import testing


class Text(str):
    pass


class Real(float):
    pass


class Color(enum.IntEnum):
    RED = 3


class Index:
    """Not an int, but has __index__: travels as int."""

    def __index__(self) -> int:
        return 41


class Payload:
    """An arbitrary Python object: travels as itself (Opaque)."""


PAYLOAD = Payload()
INDEX = Index()


def _func(x):  # noqa: ANN001, ANN202 - a callback
    return x


# (id, value, usable as a dict key)
VALUES = [
    ("none", None, True),
    ("true", True, True),
    ("false", False, True),
    ("zero", 0, True),
    ("small_int", 7, True),
    ("negative_big_int", -(2**40), True),
    ("int64_max", 2**63 - 1, True),
    ("uint64", 2**63 + 5, True),
    ("int_enum", Color.RED, True),
    ("index_object", INDEX, True),
    ("float", 1.5, True),
    ("float_subclass", Real(2.5), True),
    ("fraction", fractions.Fraction(1, 4), True),
    ("empty_str", "", True),
    ("short_str", "abc", True),
    ("long_str", "a longer ascii text", True),
    ("non_ascii_str", "h\u00e9llo \u4e16\u754c", True),
    ("str_subclass", Text("sub"), True),
    ("bytes", b"x\x00y", True),
    ("bytearray", bytearray(b"xy"), False),
    ("void_p", ctypes.c_void_p(4096), False),
    ("opaque", PAYLOAD, True),
    ("function", _func, True),
    ("list", [1, "a"], False),
    ("tuple", (1, 2.5), False),
    ("dict", {"k": 1}, False),
]


def _describe(value):  # noqa: ANN001, ANN202
    """What a converted value came back as, comparable across contexts."""
    if isinstance(value, packedfun.Function):
        return ("Function", value.py_callable)
    if isinstance(value, ctypes.c_void_p):
        return ("c_void_p", value.value)
    if isinstance(value, packedfun.Map):
        return ("Map", sorted((_describe(k), _describe(v)) for k, v in value.items()))
    if isinstance(value, packedfun.Array):
        return ("Array", [_describe(v) for v in value])
    return (type(value).__name__, value)


def _positional(v):  # noqa: ANN001, ANN202
    return testing.echo(v)


def _keyword(v):  # noqa: ANN001, ANN202
    return packedfun.get_global_func("testing.packed_kw")(x=v)


def _element(v):  # noqa: ANN001, ANN202
    return testing.echo([v])[0]


def _dict_value(v):  # noqa: ANN001, ANN202
    return testing.echo({"k": v})["k"]


def _callback_result(v):  # noqa: ANN001, ANN202
    return testing.apply(lambda: v)


def _dict_key(v):  # noqa: ANN001, ANN202
    (key,) = testing.echo({v: 0}).keys()
    return key


CONTEXTS = [_positional, _keyword, _element, _dict_value, _callback_result]


@pytest.mark.parametrize(("value", "keyable"), [v[1:] for v in VALUES], ids=[v[0] for v in VALUES])
def test_same_value_in_every_context(value, keyable):  # noqa: ANN001
    seen = {ctx.__name__: _describe(ctx(value)) for ctx in CONTEXTS}
    if keyable:
        seen["_dict_key"] = _describe(_dict_key(value))
    first = seen["_positional"]
    assert all(d == first for d in seen.values()), seen


@pytest.mark.parametrize("value", [2**64, -(2**63) - 1], ids=["too_large", "too_small"])
def test_int_out_of_range_is_overflow_in_every_context(value):  # noqa: ANN001
    for ctx in [*CONTEXTS, _dict_key]:
        with pytest.raises(OverflowError, match="int too (large for uint64|small for int64)"):
            ctx(value)


def test_class_changed_after_first_use_is_converted_by_its_new_kind():
    class Late:
        pass

    obj = Late()
    assert testing.echo(obj) is obj  # an opaque value, its kind now known
    Late.__call__ = lambda self: 5
    f = testing.echo(obj)  # callable now: a Function
    assert isinstance(f, packedfun.Function) and f() == 5
    del Late.__call__
    assert testing.echo(obj) is obj
