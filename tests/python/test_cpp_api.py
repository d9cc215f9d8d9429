# The C++ conveniences of issue 16 as Python sees them (src/testing/cpp_api.cc), on both backends.
import inspect

import numpy as np
import packedfun
import packedfun.testing as t
import pytest


@pytest.fixture(scope="module")
def pair_cls():
    return type(t.cppapi_make_pair(1, 2))


def test_init_constructor_takes_keywords_and_defaults(pair_cls):
    p = pair_cls(3)
    assert (p.a, p.b) == (3, 10)
    q = pair_cls(b=4, a=1)
    assert (q.a, q.b) == (1, 4)
    assert type(p).__name__ == "CppApiPair"
    with pytest.raises(TypeError, match="expected int, got str"):
        pair_cls("x")


def test_object_ptr_results_and_parameters(pair_cls):
    p = t.cppapi_make_pair(1, 2)
    assert isinstance(p, pair_cls)
    assert t.cppapi_pair_sum(p) == 3
    s = p.swapped()
    assert (s.a, s.b) == (2, 1)
    r = p.plus(s)
    assert (r.a, r.b) == (3, 3)
    with pytest.raises(TypeError, match="expected testing.CppApiPair, got int"):
        t.cppapi_pair_sum(5)
    with pytest.raises(TypeError, match="expected testing.CppApiPair"):
        p.plus(packedfun.testing.TestIntPair(1, 2))


def test_optional_in_signatures_containers_and_fields(pair_cls):
    assert t.cppapi_optional_in() == -1
    assert t.cppapi_optional_in(None) == -1
    assert t.cppapi_optional_in(4) == 5
    assert t.cppapi_optional_out(-3) is None
    assert t.cppapi_optional_out(3) == 3
    assert t.cppapi_count_none([1, None, 2, None]) == 2
    with pytest.raises(TypeError, match=r"Optional\[int\]"):
        t.cppapi_optional_in("x")
    p = pair_cls(1)
    assert p.tag is None
    p.tag = 5
    assert p.tag == 5
    p.tag = None
    assert p.tag is None
    with pytest.raises(TypeError, match=r"expected Optional\[int\], got str"):
        p.tag = "x"


def test_check_kind_raises_the_named_kind():
    assert t.cppapi_check_sqrt(17) == 4
    with pytest.raises(ValueError, match="n must be non-negative, got -1"):
        t.cppapi_check_sqrt(-1)


def test_global_def_docstrings_and_keywords():
    add = packedfun.get_global_func("testing.cppapi_add")
    assert add(2) == 3
    assert add(a=2, b=5) == 7
    assert "a + b" in t.cppapi_add.__doc__  # init_ffi_api's docstring
    record = packedfun.registry.get_global_func_metadata("testing.cppapi_add")
    assert record["doc"] == "a + b"
    assert [(p["name"], p.get("default")) for p in record["params"]] == [("a", None), ("b", 1)]
    assert list(inspect.signature(add).parameters) == ["a", "b"]
    assert t.cppapi_count_args(1, "x", None) == 3
    assert "the number of arguments" in t.cppapi_count_args.__doc__
    assert t.cppapi_tensor_size(x=np.zeros((2, 5), "float32"), axis=-1) == 5


def test_tensor_accessors_and_dtype_printing():
    x = np.zeros((2, 3), dtype="float32")
    assert t.cppapi_tensor_info(x) == (
        "dtype=float32 device=cpu:0 ndim=2 shape=[2, 3] strides=[3, 1] numel=6"
        " size(-1)=3 stride(-1)=1"
    )
    y = np.zeros((4, 6), dtype="int16")[:, ::2]
    assert t.cppapi_tensor_info(y) == (
        "dtype=int16 device=cpu:0 ndim=2 shape=[4, 3] strides=[6, 2] numel=12"
        " size(-1)=3 stride(-1)=2"
    )
    assert t.cppapi_tensor_info(np.array(1.0)) == (
        "dtype=float64 device=cpu:0 ndim=0 shape=[] strides=[] numel=1"
    )
    with pytest.raises(IndexError, match="axis 2 is out of range for a tensor with 2 dimensions"):
        t.cppapi_tensor_size(x, 2)
    with pytest.raises(IndexError, match="axis -3"):
        t.cppapi_tensor_size(x, -3)
    with pytest.raises(
        IndexError, match="axis 1 is out of range for a tensor with 1 dimension(?!s)"
    ):
        t.cppapi_tensor_size(np.zeros(3, dtype="float32"), 1)
