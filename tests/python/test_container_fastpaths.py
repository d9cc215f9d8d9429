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


def test_convert_dict_keeps_every_pair():
    source = {f"key{i}": i for i in range(300)}
    m = pf.convert(source)
    assert len(m) == 300 and dict(m.items()) == source


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
