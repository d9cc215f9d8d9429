"""uint64_t over the full unsigned range (issue 10, item 5): kPFTypeUInt64 on both backends."""

import json
import pickle

import packedfun
import pytest
import suite
from cmake_project import build_c_library
from packedfun import structural, testing

U64_MAX = 2**64 - 1
EDGES = [0, 1, 2**63 - 1, 2**63, 2**63 + 1, U64_MAX]


def func(name):
    return packedfun.get_global_func(name)


def test_uint64_parameters_and_results_use_the_full_range():
    echo = func("testing.echo_uint64")
    for value in EDGES:
        assert echo(value) == value and type(echo(value)) is int
        assert echo(x=value) == value
    # Through Any an int past int64 travels as it is, and comes back the same int.
    for value in (2**63, U64_MAX):
        assert testing.echo(value) == value and type(testing.echo(value)) is int
    assert func("testing.echo_float")(2**63) == float(2**63)


def test_uint64_out_of_range_names_the_parameter():
    echo = func("testing.echo_uint64")
    label = r"testing\.echo_uint64\(x: int\) -> int: argument 'x'"
    with pytest.raises(OverflowError, match=rf"^{label}: value -1 does not fit in uint64"):
        echo(-1)
    with pytest.raises(OverflowError, match=rf"^{label}: int too large for uint64"):
        echo(2**64)
    with pytest.raises(OverflowError, match=rf"^{label}: int too small for uint64"):
        echo(-(2**63) - 1)
    with pytest.raises(OverflowError, match="argument 0: int too large for uint64"):
        testing.echo(2**64)


def test_int64_parameter_refuses_values_past_int64():
    add = func("testing.add_kw")
    label = r"testing\.add_kw\(a: int, b: int\) -> int"
    with pytest.raises(OverflowError, match=rf"^{label}: argument 'a': value {2**63} does not fit"):
        add(2**63)
    with pytest.raises(OverflowError, match=rf"^{label}: argument 'b': value {U64_MAX} does not"):
        add(1, b=U64_MAX)
    with pytest.raises(OverflowError, match="int32"):
        func("testing.echo_int32")(2**63)


def test_uint64_defaults_and_keywords():
    mask = func("testing.mask_uint64")
    assert str(mask.__signature__) == f"(x: 'int', mask: 'int' = {U64_MAX}) -> 'int'"
    assert mask(U64_MAX) == U64_MAX
    assert mask(U64_MAX, mask=0xFF) == 0xFF
    assert mask(mask=2**63, x=U64_MAX) == 2**63


def test_uint64_in_containers():
    biggest = func("testing.max_uint64")
    assert biggest([1, 2**63, U64_MAX, 5]) == U64_MAX
    assert biggest((2**63 + 7,)) == 2**63 + 7
    label = r"testing\.max_uint64\(xs: Array\[int\]\) -> int: argument 'xs'"
    with pytest.raises(OverflowError, match=rf"^{label}\[1\]: value -1 does not fit in uint64"):
        biggest([1, -1])
    with pytest.raises(OverflowError, match=r"argument 'xs'\[2\]: int too large for uint64"):
        biggest([1, 2, 2**64])
    head = func("testing.head")  # Array[int] of int64: a value past int64 is an overflow
    with pytest.raises(OverflowError, match=rf"argument 'xs'\[1\]: value {2**63} does not fit"):
        head([1, 2**63])
    array = packedfun.convert([1, 2**63, U64_MAX])
    assert list(array) == [1, 2**63, U64_MAX] and array[2] == U64_MAX
    mapping = packedfun.convert({U64_MAX: "top", 2**63: "mid", -1: "neg"})
    assert mapping[U64_MAX] == "top" and mapping[2**63] == "mid" and mapping[-1] == "neg"
    assert dict(mapping) == {U64_MAX: "top", 2**63: "mid", -1: "neg"}


def test_uint64_pickle_json_and_structural_equality():
    array = packedfun.convert([1, 2**63, U64_MAX])
    assert list(pickle.loads(pickle.dumps(array))) == [1, 2**63, U64_MAX]
    text = packedfun.to_json(array)
    assert json.loads(text)["nodes"][0]["items"] == [1, 2**63, U64_MAX]
    assert list(packedfun.from_json(text)) == [1, 2**63, U64_MAX]
    same = packedfun.convert([1, 2**63, U64_MAX])
    assert structural.structural_equal(array, same)
    assert structural.structural_hash(array) == structural.structural_hash(same)
    # 2**63 and -(2**63) share their 64 bits; they must not be equal.
    high, low = packedfun.convert([2**63]), packedfun.convert([-(2**63)])
    assert not structural.structural_equal(high, low)
    assert structural.structural_hash(high) != structural.structural_hash(low)


def test_numpy_uint64_scalars():
    np = suite.require("numpy")
    echo = func("testing.echo_uint64")
    assert echo(np.uint64(U64_MAX)) == U64_MAX
    assert testing.echo(np.uint64(2**63)) == 2**63


def test_callback_results_past_int64():
    assert testing.apply(lambda: U64_MAX) == U64_MAX
    assert func("testing.echo_uint64")(testing.apply(lambda: 2**63)) == 2**63


# A function as a library built before ABI 1.4 receives an int: its typed conversion accepts
# kPFTypeInt/kPFTypeBool only and names anything else by the runtime's type key. (The repository
# keeps no library built against 1.3; this C source does what that conversion did.)
OLD_INT_PARAM = r"""
#include <packedfun/c_api.h>
#include <stdio.h>
int __packedfun_twice(void* self, const PFAny* args, int32_t n, PFAny* result) {
  (void)self;
  (void)n;
  if (args[0].type_index != kPFTypeInt && args[0].type_index != kPFTypeBool) {
    const PFTypeInfo* info = NULL;
    char msg[128];
    if (PFTypeGetInfo(args[0].type_index, &info) != 0) return -1;
    snprintf(msg, sizeof(msg), "argument 0: expected int, got %.*s", (int)info->type_key.size,
             info->type_key.data);
    return PFErrorSetRaisedFromCStr("TypeError", msg);
  }
  result->type_index = kPFTypeInt;
  result->zero_padding = 0;
  result->v_int64 = 2 * args[0].v_int64;
  return 0;
}
"""


def test_library_older_than_abi_1_4_refuses_with_a_type_error(tmp_path):
    out = build_c_library(OLD_INT_PARAM, tmp_path / "libold_int.so")
    twice = packedfun.load_module(str(out)).twice
    assert twice(21) == 42 and twice(2**61) == 2**62  # int64 values as before
    with pytest.raises(TypeError, match="expected int, got uint64"):
        twice(2**63)  # never a wrapped negative number
