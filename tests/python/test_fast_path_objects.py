# packedfun objects passed among fast-path arguments travel borrowed: right values, no leaks.
import gc
import sys

import packedfun
import packedfun.testing  # noqa: F401 - registers testing.*

apply = packedfun.get_global_func("testing.apply")
echo = packedfun.get_global_func("testing.echo")


def test_preconverted_function_is_called_and_not_leaked():
    fc = packedfun.convert(lambda a, b: a + b)
    before = sys.getrefcount(fc)
    for i in range(1000):
        assert apply(fc, i, 1) == i + 1
    gc.collect()
    assert sys.getrefcount(fc) == before


def test_containers_and_objects_mixed_with_pod_arguments():
    arr = packedfun.convert([1, 2, 3])
    m = packedfun.convert({"k": 5})
    assert apply(lambda a, x, d: (len(a), x, d["k"]), arr, 7, m) == [3, 7, 5]
    assert echo(arr).same_as(arr)
    before = sys.getrefcount(arr)
    for _ in range(1000):
        apply(lambda a, x: None, arr, 1)
    assert sys.getrefcount(arr) == before


def test_function_passed_through_echo_is_the_same_function():
    fc = packedfun.convert(lambda: 42)
    back = echo(fc)
    assert back() == 42
    assert back.same_as(fc)
