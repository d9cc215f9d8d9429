# Typed containers hold what reading them gives: an Array<double> that arrives holding ints comes
# back (and is seen by C++) as floats. Immutable Array and Map convert by copying; mutable List and
# Dict stay the caller's object and convert on each read.
import math
import struct

import packedfun as pf
import pytest
from packedfun import testing


def _types(values):
    return [type(v) for v in values]


def test_ints_in_an_array_of_float_come_back_as_floats():
    out = testing.echo_array_float([1, 2, 2**53 + 1, True])
    assert list(out) == [1.0, 2.0, float(2**53 + 1), 1.0]
    assert _types(out) == [float] * 4


def test_an_array_already_of_floats_is_passed_through_unchanged():
    arr = pf.convert([1.5, -0.0, math.inf])
    out = testing.echo_array_float(arr)
    assert out.same_as(arr)
    assert list(out) == [1.5, -0.0, math.inf]


def test_nested_arrays_convert_at_every_level():
    out = testing.echo_array_array_float([[3], [1.5, 9007199254740993]])
    assert [list(a) for a in out] == [[3.0], [1.5, 9007199254740992.0]]
    assert all(type(v) is float for a in out for v in a)
    kept = pf.convert([[1.5], [2.5]])
    assert testing.echo_array_array_float(kept).same_as(kept)
    # one inner array needs converting: a new outer Array, the kept inner one shared
    mixed = pf.convert([[1.5], [2]])
    out = testing.echo_array_array_float(mixed)
    assert not out.same_as(mixed)
    assert out[0].same_as(mixed[0]) and list(out[1]) == [2.0]


def test_float32_elements_hold_the_rounded_value():
    out = testing.echo_array_float32([0.1, 0.5, 1e300, math.nan])
    assert out[0] == struct.unpack("f", struct.pack("f", 0.1))[0] != 0.1
    assert out[1] == 0.5
    assert out[2] == math.inf
    assert math.isnan(out[3])
    exact = pf.convert([0.5, 0.25])
    assert testing.echo_array_float32(exact).same_as(exact)


def test_ints_in_an_array_of_bool_come_back_as_bools_and_bools_in_an_array_of_int_as_ints():
    assert _types(testing.echo_array_bool([1, 0, True])) == [bool] * 3
    assert list(testing.echo_array_bool([1, 0, True])) == [True, False, True]
    out = testing.echo_array_int([True, 2])
    assert list(out) == [1, 2] and _types(out) == [int, int]


def test_optional_elements_keep_none_and_convert_the_rest():
    out = testing.echo_array_optional_float([None, 1, 2.5])
    assert list(out) == [None, 1.0, 2.5]
    assert _types(out) == [type(None), float, float]


def test_map_values_and_keys_convert():
    out = testing.echo_map_str_float({"a": 1, "b": 2.5})
    assert dict(out.items()) == {"a": 1.0, "b": 2.5}
    assert _types(out.values()) == [float, float]
    keys = testing.echo_map_float_str({1: "one", 2.5: "two and a half"})
    assert _types(keys.keys()) == [float, float]
    assert keys[1.0] == "one"
    kept = pf.convert({"a": 1.5})
    assert testing.echo_map_str_float(kept).same_as(kept)
    nested = testing.echo_map_str_array_float({"xs": [1, 2]})
    assert _types(nested["xs"]) == [float, float]


def test_list_stays_the_callers_object_and_converts_on_read():
    lst = pf.List([1, 2.5])
    out = testing.echo_list_float(lst)
    assert out.same_as(lst)
    assert _types(out) == [int, float]  # stored as given; C++ reads them as double
    outer = testing.echo_array_list_float([lst])
    assert outer[0].same_as(lst)


def test_retyping_an_array_in_cpp_converts_its_elements():
    out = testing.retype_array_float([1, 2.5])
    assert _types(out) == [float, float]
    with pytest.raises(TypeError, match=r"Array\[float\] element \[1\]: expected float, got str"):
        testing.retype_array_float([1, "x"])


def test_bad_elements_are_still_refused_with_their_path():
    with pytest.raises(TypeError, match=r"\[1\]\[0\]: expected float, got str"):
        testing.echo_array_array_float([[1], ["x"]])
    with pytest.raises(TypeError, match=r"\['b'\]: expected float, got str"):
        testing.echo_map_str_float({"a": 1, "b": "x"})
