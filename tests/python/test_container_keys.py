# Map/Dict keys that conversion would make into new objects are refused (issue 13 item 4).
"""A tuple key becomes a new Array, a callable a new Function, any other Python object a new
Opaque: the native Map compares object keys by identity, so such an entry could never be found
again. Every path that builds or searches a Map for Python refuses them with one TypeError; a
function argument still converts them (its native reader may take keys by content)."""

import datetime
import enum
from decimal import Decimal
from fractions import Fraction

import numpy as np
import packedfun as pf
import pytest
from packedfun import testing

REASON = "key is converted into a new native object, and Map/Dict keys that are objects compare"


class Color(enum.Enum):
    RED = 1


class Level(enum.IntEnum):
    LOW = 1


FRESH_KEYS = [(1, 2), (), ((1, 2), 3), ("a",), frozenset({1}), 1 + 2j, object(), Color.RED,
              datetime.date(2020, 1, 2), len, int, range(3)]  # fmt: skip


@pytest.mark.parametrize("key", FRESH_KEYS, ids=lambda k: type(k).__name__)
def test_lookups_and_stores_refuse_fresh_object_keys(key):
    # These used to be stored under a new Array/Function/Opaque that no later lookup found:
    # d[(1, 2)] = "x" and then d[(1, 2)] raised KeyError, (1, 2) in d was False.
    d, m = pf.Dict({1: 2}), pf.Map({1: 2})
    attempts = {
        "setitem": lambda: d.__setitem__(key, "x"),
        "getitem": lambda: d[key],
        "in": lambda: key in d,
        "get": lambda: d.get(key),
        "pop": lambda: d.pop(key, None),
        "del": lambda: d.__delitem__(key),
        "setdefault": lambda: d.setdefault(key, 0),
        "update": lambda: d.update({key: 1}),
        "Map getitem": lambda: m[key],
        "Map in": lambda: key in m,
        "Map get": lambda: m.get(key, 0),
    }
    for name, attempt in attempts.items():
        with pytest.raises(TypeError, match=REASON) as info:
            attempt()
        assert str(info.value).startswith(f"packedfun.Map key {key!r}: a "), name
    assert dict(d.items()) == {1: 2}


@pytest.mark.parametrize("key", FRESH_KEYS, ids=lambda k: type(k).__name__)
def test_construction_and_convert_refuse_fresh_object_keys(key):
    path = f"[{key!r}]"
    for build in (pf.Map, pf.Dict, pf.convert, lambda v: pf.Dict(list(v.items()))):
        with pytest.raises(TypeError, match=REASON) as info:
            build({"ok": 1, key: 2})
        assert str(info.value).startswith(f"value{path}: a "), str(info.value)


def test_nested_dicts_refuse_them_with_the_path():
    cases = {
        "value[0]['a'][(1, 2)]": lambda: pf.convert([{"a": {(1, 2): 3}}]),
        "value[1][(1, 2)]": lambda: pf.List([0, {(1, 2): 3}]),
        "value[0][(1, 2)]": lambda: pf.Array([{(1, 2): 3}]),
        "packedfun.List: argument 0[(1, 2)]": lambda: pf.List().append({(1, 2): 3}),
        "packedfun.Map: argument 0[(1, 2)]": lambda: pf.Dict().__setitem__("v", {(1, 2): 3}),
    }
    for where, build in cases.items():
        with pytest.raises(TypeError, match=REASON) as info:
            build()
        assert str(info.value).startswith(f"{where}: a tuple key"), str(info.value)


def test_a_tuple_holding_a_list_keeps_the_dicts_unhashable_error():
    key = (1, [2])
    with pytest.raises(TypeError) as model:
        {}[key]
    for attempt in (lambda: pf.Dict()[key], lambda: pf.Dict().__setitem__(key, 1),
                    lambda: key in pf.Map(), lambda: pf.Map([(key, 1)])):  # fmt: skip
        with pytest.raises(TypeError) as info:
            attempt()
        assert str(info.value) == str(model.value)


def test_a_tuple_key_is_refused_before_its_elements_convert():
    # (2**70,) would fail to convert; the key's own problem is reported, alike on both backends
    with pytest.raises(TypeError, match=REASON):
        pf.Map({(2**70,): 1})


def test_value_keys_and_packedfun_objects_still_work():
    arr, pair = pf.Array((1, 2)), testing.TestIntPair(1, 2)
    keys = ["s", b"b", 1, 2.5, True, None, Level.LOW, arr, pair, pf.Shape((3,))]
    d, model = pf.Dict(), {}
    for i, key in enumerate(keys):
        d[key] = model[key] = i
    assert [d[k] for k in keys] == [model[k] for k in keys]  # 1 == True == Level.LOW: 6
    assert len(d) == len(model) == 8 and d[1] == 6 and arr in pf.Map({arr: 0})
    assert pf.Dict({arr: 1})[arr] == 1 and pf.convert({arr: 1})[arr] == 1


def test_a_key_whose_repr_runs_python_code_names_a_bad_value():
    # The path's key repr used to run with the value's error pending: an IntEnum or frozenset key
    # lost it and CPython raised SystemError instead.
    with pytest.raises(OverflowError, match=r"value\[<Level.LOW: 1>\]: int too large"):
        pf.Map({Level.LOW: 2**70})


def test_function_arguments_still_convert_tuple_keys():
    # A native callee reads the Map's keys itself (a std::map<std::tuple<...>, V> parameter takes
    # them by content), so arguments are not refused.
    echoed = testing.echo({(1, 2): 3})
    assert [list(k) for k in echoed.keys()] == [[1, 2]] and list(echoed.values()) == [3]


LOSSY_KEYS = [Decimal("0.1"), Fraction(1, 3), Decimal("NaN"), Decimal("1e400")]


@pytest.mark.parametrize("key", LOSSY_KEYS, ids=repr)
def test_number_keys_that_convert_to_another_value_are_refused(key):
    # Decimal("0.1") became the float 0.1: 0.1 found it, and every Decimal rounding to 0.1 shared
    # its entry (d[Decimal("0.1")] and d[Decimal("0.1000000000000000000001")] were one key).
    lossy = "key is converted into .*, which is not equal to it"
    d = pf.Dict({1: 2})
    for attempt in (lambda: d.__setitem__(key, 1), lambda: key in d, lambda: d.get(key),
                    lambda: pf.Map({key: 1}), lambda: pf.convert({"a": {key: 1}})):  # fmt: skip
        with pytest.raises(TypeError, match=lossy):
            attempt()
    assert dict(d.items()) == {1: 2}


def test_number_keys_that_convert_unchanged_still_work():
    keys = [Decimal("0.5"), Fraction(1, 2), np.float32(0.1), np.int64(3), np.bool_(True),
            Level.LOW, np.uint64(2**63 + 1)]  # fmt: skip
    d, model = pf.Dict(), {}
    for i, key in enumerate(keys):
        d[key] = model[key] = i
    assert [d[k] for k in keys] == [model[k] for k in keys] and len(d) == len(model)
    assert d[0.5] == model[0.5] and d[3] == model[3]


def test_integral_floats_from_2_63_to_2_64_find_their_int_keys():
    # An int in [2**63, 2**64) is a uint64 key; the equal float was hashed as a float, so
    # Dict({2**63: "a"})[2.0**63] raised KeyError (a dict finds it).
    for i in (2**63, 2**63 + 2048, 2**64 - 2048):
        f = float(i)
        assert pf.Dict({i: "a"})[f] == {i: "a"}[f] == "a"
        assert pf.Map({f: "b"})[i] == {f: "b"}[i] == "b"
        assert pf.Dict({np.uint64(i): "c"})[f] == "c"
    assert float(2**64) not in pf.Dict({2**64 - 1: 1}) and (2**64 - 1) not in pf.Map({2.0**64: 1})
    assert 2.0**64 in pf.Dict({2.0**64: 1}) and -(2.0**63) in pf.Dict({-(2**63): 1})


def test_the_shared_rule_knows_the_abis_type_indices():
    # Both backends call packedfun._rules.map_keys.refusal with the converted key's type index; the
    # rule's copy of the PFTypeIndex values must be the header's (mirrored by _ctypes.abi).
    from packedfun._ctypes import abi
    from packedfun._rules import map_keys as _map_keys

    pairs = {"INT": "Int", "BOOL": "Bool", "FLOAT": "Float", "UINT64": "UInt64",
             "STATIC_OBJECT_BEGIN": "StaticObjectBegin", "STRING": "String", "BYTES": "Bytes",
             "ARRAY": "Array"}  # fmt: skip
    for ours, header in pairs.items():
        assert getattr(_map_keys, f"TYPE_{ours}") == getattr(abi, f"kPFType{header}"), ours


def test_a_str_subclass_key_is_kept_and_a_key_whose_equality_raises_raises():
    class Name(str):
        pass

    class Odd(Decimal):
        def __eq__(self, other):
            raise ArithmeticError("no comparing")

        __hash__ = Decimal.__hash__

    d = pf.Dict({Name("a"): 1})
    assert d["a"] == d[Name("a")] == 1 and pf.Map({Name("é"): 2})["é"] == 2
    with pytest.raises(ArithmeticError, match="no comparing"):
        d[Odd("0.1")] = 1
