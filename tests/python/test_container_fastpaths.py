# Fast paths of element reads and field reads: cached small ints, compact indices, type checks.
import packedfun as pf
import packedfun.testing  # noqa: F401 - registers testing.TestIntPair
import pytest
from packedfun._backend import core


def test_array_elements_across_the_int_cache_bounds():
    values = [-(2**40), -5, -1, 0, 1, 255, 256, 257, 500, 1023, 1024, 2**31, 2**62]
    arr = pf.convert(values)
    assert [arr[i] for i in range(len(values))] == values
    assert [arr[-i - 1] for i in range(len(values))] == values[::-1]
    assert list(arr) == values
    if core.__name__.endswith("_core"):
        assert arr[8] is arr[8]  # 500 comes from the cache: one shared object
    with pytest.raises(IndexError):
        arr[len(values)]
    with pytest.raises(IndexError):
        arr[-len(values) - 1]
    with pytest.raises(IndexError):
        arr[2**40]


def test_convert_mixed_list_after_a_run_of_small_ints():
    values = [*range(20), "s", 2**70 // 2**20, None, 3.5, *range(5)]
    assert list(pf.convert(values)) == values
    assert list(pf.convert(tuple(values))) == values


def test_list_converted_in_place_releases_what_it_stored_on_failure():
    inner = pf.convert([1, 2])
    values = [*range(20), "a string longer than seven bytes", inner, "short", 1.5, 2**70]
    with pytest.raises(OverflowError, match=r"\[24\]"):
        pf.convert(values)
    assert list(pf.convert(values[:-1]))[:21] == values[:21]
    assert list(pf.convert(values[:-1])[21]) == [1, 2]


def test_convert_dict_keeps_every_pair():
    source = {f"key{i}": i for i in range(300)}
    m = pf.convert(source)
    assert len(m) == 300 and dict(m.items()) == source


def test_dict_of_str_and_int_keys_finds_every_key():
    # Exact str/int keys are distinct natively too: _core's Map skips hashing until this lookup.
    source = {f"k{i}": i for i in range(40)}
    source.update({i: f"v{i}" for i in range(40)})
    source["a key longer than seven bytes"] = 1.5
    m = pf.convert(source)
    assert len(m) == len(source)
    assert all(m[k] == v for k, v in source.items())
    assert "absent" not in m
    with pytest.raises(KeyError):
        m["absent"]
    assert list(m.keys()) == list(source)


def test_dict_whose_keys_define_their_own_equality_is_hashed_natively():
    class Key(str):
        def __hash__(self):
            return id(self)

        def __eq__(self, other):
            return self is other

    source = {Key("a"): 1, Key("a"): 2}  # two keys in Python, one string natively
    m = pf.convert(source)
    assert len(m) == 1 and m["a"] == 2  # later duplicates win, as for any native Map


def test_field_descriptor_checks_the_type_after_a_cached_read():
    index = core.type_key_to_index("testing.TestIntPair")
    methods = {m["name"]: m["func"] for m in core.type_info(index)["methods"]}
    pair = methods["__create__"](3, 4)
    descr = core.FieldDescriptor(index, "a")
    assert descr.__get__(pair) == 3 and descr.__get__(pair) == 3
    with pytest.raises(TypeError, match="expected a packedfun.Object"):
        descr.__get__(object())
    with pytest.raises(TypeError):
        descr.__get__(pf.convert([1]))
    assert descr.__get__(pair) == 3


def test_map_iteration_walks_the_entries_in_place():
    source = {f"k{i}": [i] if i % 3 == 0 else i for i in range(50)}
    m = pf.convert(source)
    assert list(m) == list(source)
    assert [list(v) if i % 3 == 0 else v for i, v in enumerate(m.values())] == list(source.values())
    assert {k: (list(v) if isinstance(v, pf.Array) else v) for k, v in m.items()} == source
    assert list(pf.convert({}).items()) == [] and list(iter(pf.convert({}))) == []
    it = iter(m.items())
    for _ in range(50):
        next(it)
    with pytest.raises(StopIteration):
        next(it)
    with pytest.raises(StopIteration):  # stays exhausted
        next(it)


def test_dict_iteration_skips_removed_entries_and_sees_value_changes():
    d = pf.Dict({f"k{i}": i for i in range(10)})
    for i in (0, 4, 9):
        del d[f"k{i}"]
    d["k5"] = 55
    d["new"] = -1
    expected = [(f"k{i}", 55 if i == 5 else i) for i in (1, 2, 3, 5, 6, 7, 8)] + [("new", -1)]
    assert list(d.items()) == expected
    assert list(d) == [k for k, _ in expected]
    assert list(d.values()) == [v for _, v in expected]
    it = iter(d.items())
    assert next(it) == ("k1", 1)
    d["k2"] = 22  # same size: the walk goes on and sees the new value
    assert next(it) == ("k2", 22)


@pytest.mark.parametrize("change", ["add", "delete", "clear"])
def test_dict_changing_size_during_iteration_raises_as_a_dict_does(change):
    d = pf.Dict({"a": 1, "b": 2, "c": 3})
    for view in (d, d.values(), d.items()):
        it = iter(view)
        next(it)
        if change == "add":
            d[f"x{len(d)}"] = 0
        elif change == "delete":
            del d[next(iter(d))]
        else:
            d.clear()
        with pytest.raises(RuntimeError, match="changed size during iteration"):
            next(it)
        if change == "clear":
            d.update({"a": 1, "b": 2})
