# Tests of Array / List / Map / Dict / Shape in Python: conversion, protocols, errors, mutation.
import collections.abc as abc
import gc

import packedfun
import pytest
from packedfun import testing


def test_convert_list_tuple_dict_nested():
    arr = packedfun.convert([1, "two", 3.0, None, True, b"by", [4, (5,)], {"k": [6]}])
    assert isinstance(arr, packedfun.Array) and isinstance(arr, abc.Sequence)
    assert len(arr) == 8
    assert arr[1] == "two" and arr[4] is True and arr[5] == b"by"
    assert isinstance(arr[6], packedfun.Array) and arr[6][1][0] == 5
    assert isinstance(arr[7], packedfun.Map) and arr[7]["k"][0] == 6
    assert arr == [1, "two", 3.0, None, True, b"by", [4, [5]], {"k": [6]}]
    assert packedfun.convert((1, 2)) == [1, 2] and packedfun.convert((1, 2)) == (1, 2)
    m = packedfun.convert({"a": 1, 2: "b"})
    assert isinstance(m, packedfun.Map) and isinstance(m, abc.Mapping)
    assert m == {"a": 1, 2: "b"} and m["a"] == 1 and m[2] == "b"


def test_sequence_protocol():
    arr = testing.make_array(5)
    assert len(arr) == 5 and arr[0] == 0 and arr[-1] == 4 and arr[-5] == 0
    for bad in (5, -6, 2**80):
        with pytest.raises(IndexError):
            arr[bad]
    with pytest.raises(TypeError):
        arr["x"]
    assert arr[1:3] == [1, 2] and isinstance(arr[1:3], packedfun.Array)
    assert arr[::-2] == [4, 2, 0] and arr[10:] == []
    assert list(arr) == [0, 1, 2, 3, 4] and list(reversed(arr)) == [4, 3, 2, 1, 0]
    assert 3 in arr and 7 not in arr
    assert arr.index(3) == 3 and arr.count(2) == 1
    with pytest.raises(ValueError):
        arr.index(99)
    assert repr(arr) == "[0, 1, 2, 3, 4]"
    assert arr == (0, 1, 2, 3, 4) and arr != [0, 1] and (arr == 5) is False
    assert hash(arr) == hash((0, 1, 2, 3, 4))


def test_arguments_convert_automatically():
    assert testing.array_sum([1, 2, 3]) == 6
    assert testing.array_sum((4, 5)) == 9
    assert testing.array_sum([]) == 0
    assert testing.map_get({"a": 1, "b": [2]}, "b") == [2]
    with pytest.raises(TypeError):
        testing.array_sum([1, "x"])


def test_results_are_wrappers_without_copy():
    arr = testing.make_array(3)
    again = testing.echo(arr)
    assert again.same_as(arr) and type(again) is packedfun.Array
    lst = testing.make_list(2)
    assert type(lst) is packedfun.List and isinstance(lst, abc.MutableSequence)
    assert testing.list_append(lst, 9).same_as(lst)
    assert lst == [0, 1, 9]  # C++ appended to the very object Python holds


def test_list_mutation():
    lst = packedfun.List([1, 2])
    lst.append("x")
    lst[0] = [10]
    lst.insert(0, "first")
    lst.extend((7, 8))
    assert lst == ["first", [10], 2, "x", 7, 8]
    assert lst.pop() == 8 and lst.pop(0) == "first"
    del lst[-1]
    lst.remove("x")  # collections.abc mixin
    lst += [3]
    assert lst == [[10], 2, 3]
    lst.reverse()
    assert lst == [3, 2, [10]]
    with pytest.raises(IndexError):
        lst[5] = 1
    with pytest.raises(IndexError):
        packedfun.List().pop()
    with pytest.raises(TypeError):
        hash(lst)
    lst.clear()
    assert len(lst) == 0 and lst == []


def test_map_protocol():
    m = testing.make_map()
    assert len(m) == 3 and m["a"] == 1 and m["c"] == "three"
    assert "b" in m and "z" not in m and 1 not in m
    with pytest.raises(KeyError):
        m["z"]
    assert m.get("z") is None and m.get("z", 5) == 5 and m.get("a") == 1
    assert list(m) == ["a", "b", "c"]
    assert list(m.keys()) == ["a", "b", "c"] and list(m.values()) == [1, 2.5, "three"]
    assert dict(m.items()) == {"a": 1, "b": 2.5, "c": "three"}
    assert m == {"a": 1, "b": 2.5, "c": "three"} and m != {"a": 1}
    assert repr(m) == "{'a': 1, 'b': 2.5, 'c': 'three'}"
    with pytest.raises(TypeError):
        m["a"] = 2
    with pytest.raises(TypeError):
        hash(m)


def test_dict_mutation():
    d = testing.make_dict()
    assert isinstance(d, packedfun.Dict) and isinstance(d, abc.MutableMapping)
    d["z"] = [1, 2]
    d["x"] = 5
    assert list(d) == ["x", "y", "z"] and d["x"] == 5 and d["z"] == [1, 2]
    del d["y"]
    with pytest.raises(KeyError):
        del d["y"]
    assert d.pop("x") == 5 and d.pop("x", None) is None
    assert d.setdefault("n", 3) == 3
    d.update({"m": 4})
    assert testing.dict_set(d, "c", "from C++").same_as(d)
    assert d == {"z": [1, 2], "n": 3, "m": 4, "c": "from C++"}
    d.clear()
    assert len(d) == 0
    assert packedfun.Dict({"a": 1}) == {"a": 1} and packedfun.Map([("k", 2)]) == {"k": 2}


def test_shape_behaves_like_tuple():
    s = testing.make_shape((2, 3, 4))
    assert isinstance(s, packedfun.Shape)
    assert s == (2, 3, 4) and hash(s) == hash((2, 3, 4)) and len(s) == 3
    assert s[-1] == 4 and s[1:] == (3, 4) and isinstance(s[1:], tuple)
    assert list(s) == [2, 3, 4] and tuple(s) == (2, 3, 4) and repr(s) == "(2, 3, 4)"
    assert testing.shape_numel(s) == 24 and testing.shape_numel(packedfun.Shape([5, 2])) == 10
    with pytest.raises(TypeError):
        packedfun.Shape([1, "x"])


def test_bad_element_reports_its_path():
    with pytest.raises(OverflowError, match=r"testing.echo: argument 0\[3\]\['k'\]: int too large"):
        testing.echo([0, 1, 2, {"k": 2**70}])
    with pytest.raises(UnicodeEncodeError) as info:
        testing.echo([0, ["ok", "bad\udc80"]])
    assert info.value.reason.startswith("testing.echo: argument 0[1][1]: ")
    with pytest.raises(OverflowError, match=r"value\[1\]: int too small"):
        packedfun.convert([1, -(2**70)])


def test_elements_converted_before_a_failure_are_released():
    before = testing.object_live_count()
    pairs = [testing.make_tree(0, 0) for _ in range(3)]
    created = testing.object_live_count()
    with pytest.raises(OverflowError):
        testing.echo([pairs, {"a": pairs[0]}, [pairs[1], 2**64]])
    del pairs
    gc.collect()
    assert created == before + 3 and testing.object_live_count() == before


def test_self_reference_and_deep_nesting():
    loop = [1, 2]
    loop.append(loop)
    with pytest.raises(ValueError, match="contains itself"):
        testing.echo(loop)
    d = {}
    d["me"] = [d]
    with pytest.raises(ValueError, match=r"\['me'\]\[0\]: container contains itself"):
        packedfun.convert(d)
    shared = [1]
    assert packedfun.convert([shared, shared]) == [[1], [1]]  # repeated, not recursive
    deep = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(RecursionError):
        testing.echo(deep)


def test_list_changing_size_while_converting():
    class Shrinks:
        def __init__(self, target):
            self.target = target

        def __dlpack__(self, *args, **kwargs):
            self.target.clear()
            raise TypeError("not really an array")

    items = [1, 2, 3]
    items.insert(1, Shrinks(items))
    with pytest.raises((RuntimeError, TypeError)):
        testing.echo(items)
