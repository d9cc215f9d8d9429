# tvm-ffi's RecursiveEq / RecursiveHash / orderings under the switch (packedfun._tvm_ffi_recursive).
"""The rules over packedfun's own values run in this process (nothing here needs the switch); the
C++ test classes of apache-tvm-ffi's testing library (field flags and hooks read through the
bridge) and the container hashes the switch puts on run in a child process, on the backend under
test."""

from __future__ import annotations

import importlib.util
import math
import struct
from typing import Any

import packedfun as pf
import pytest
from packedfun import _tvm_ffi_ffi_api as api
from packedfun import _tvm_ffi_recursive as rec
from packedfun.dataclasses import field, py_class
from test_tvm_ffi_switch import run_child

eq, hash_, lt, le, gt, ge = (
    rec.recursive_eq,
    rec.recursive_hash,
    rec.recursive_lt,
    rec.recursive_le,
    rec.recursive_gt,
    rec.recursive_ge,
)


@py_class("test_tvmffi_rec.Pair")
class Pair(pf.Object):
    a: Any
    b: Any


@py_class("test_tvmffi_rec.Traits")
class Traits(pf.Object):
    key: int
    off: int = field(compare=False)
    unhashed: int = field(hash=False)


@py_class("test_tvmffi_rec.Hooked")
class Hooked(pf.Object):
    key: int
    label: str

    def __ffi_eq__(self, other: Any, fn_eq: Any) -> bool:
        return fn_eq(self.key, other.key)

    def __ffi_compare__(self, other: Any, fn_cmp: Any) -> int:
        return fn_cmp(self.key, other.key)

    def __ffi_hash__(self, fn_hash: Any) -> int:
        return fn_hash(self.key)


@py_class("test_tvmffi_rec.EqOnly")
class EqOnly(pf.Object):
    key: int

    def __ffi_eq__(self, other: Any, fn_eq: Any) -> bool:
        return True


@py_class("test_tvmffi_rec.Raising")
class Raising(pf.Object):
    key: int

    def __ffi_eq__(self, other: Any, fn_eq: Any) -> bool:
        raise RuntimeError("hook failed")

    def __ffi_hash__(self, fn_hash: Any) -> int:
        raise RuntimeError("hook failed")


def test_the_switchs_ffi_api_names_are_these():
    assert api.RecursiveEq is eq and api.RecursiveHash is hash_
    assert (api.RecursiveLt, api.RecursiveLe, api.RecursiveGt, api.RecursiveGe) == (lt, le, gt, ge)


def test_kinds_never_equal_and_ordering_them_raises():
    assert eq(1, 1) and not eq(1, True) and not eq(1.0, 1) and not eq(1, "1")
    assert not eq(pf.Array([1]), pf.List([1])) and not eq(pf.Map({"a": 1}), pf.Dict({"a": 1}))
    assert hash_(1) != hash_(1.0) and hash_(1) != hash_(True)
    with pytest.raises(TypeError, match="different types: int vs str"):
        lt(1, "a")
    with pytest.raises(TypeError, match="different types: Array vs List"):
        lt(pf.Array([1]), pf.List([1]))
    assert lt(None, 0) and gt(0, None) and eq(None, None) and not lt(None, None)


def test_floats_nan_and_signed_zero():
    nan2 = struct.unpack(">d", struct.pack(">Q", 0x7FF8000000000123))[0]
    assert eq(math.nan, nan2) and hash_(math.nan) == hash_(nan2)
    assert eq(-0.0, 0.0) and hash_(-0.0) == hash_(0.0) and le(-0.0, 0.0)
    assert not eq(math.nan, 1.0)
    for op in (lt, le, gt, ge):
        with pytest.raises(TypeError, match="NaN"):
            op(math.nan, 1.0)
    assert eq(pf.Array([math.nan]), pf.Array([nan2]))


def test_leaves_order_and_hash_by_value():
    assert lt(-(2**63), 2**63 - 1) and lt("ab", "b") and lt(b"a", b"ab") and ge(2, 2)
    assert eq(pf.dtype("int32"), pf.dtype("int32")) and lt(pf.dtype("int8"), pf.dtype("int16"))
    assert eq(pf.device("cpu", 0), pf.device("cpu", 0)) and lt(
        pf.device("cpu", 0), pf.device("cpu", 1)
    )
    assert hash_("x") == hash_("x") and hash_("x") != hash_("y") and hash_(b"x") != hash_("x")
    assert lt(pf.Shape([1, 2]), pf.Shape([1, 3])) and hash_(pf.Shape([1])) == hash_(pf.Shape([1]))


def test_sequences_then_length_and_maps_unordered():
    assert lt(pf.Array([1, 2]), pf.Array([1, 3])) and lt(pf.Array([1]), pf.Array([1, 0]))
    assert eq(pf.List([1, [2]]), pf.List([1, [2]])) and lt(pf.List([]), pf.List([0]))
    assert hash_(pf.Array([1, 2])) != hash_(pf.Array([2, 1]))
    a, b = pf.Map({"x": 1, "y": 2}), pf.Map({"y": 2, "x": 1})
    assert eq(a, b) and le(a, b) and ge(a, b) and hash_(a) == hash_(b)
    for other in (pf.Map({"x": 1, "y": 3}), pf.Map({"x": 1}), pf.Map({"x": 1, "z": 2})):
        assert not eq(a, other)
        with pytest.raises(TypeError, match="Cannot order Map/Dict values"):
            lt(a, other)
    with pytest.raises(TypeError, match="Cannot order Map/Dict values"):
        lt(pf.Array([pf.Dict({"k": 1})]), pf.Array([pf.Dict({"k": 2})]))
    assert hash_(pf.Map({"a": 0, "b": 1})) != hash_(pf.Map({"a": 1, "b": 0}))


def test_reflected_objects_by_fields_and_traits():
    assert eq(Pair(1, 2), Pair(1, 2)) and lt(Pair(1, 2), Pair(1, 3)) and lt(Pair(0, 9), Pair(1, 0))
    assert hash_(Pair(1, 2)) == hash_(Pair(1, 2)) and hash_(Pair(1, 2)) != hash_(Pair(2, 1))
    assert eq(Traits(1, 2, 3), Traits(1, 99, 3)) and not eq(Traits(1, 2, 3), Traits(1, 2, 4))
    assert hash_(Traits(1, 2, 3)) == hash_(Traits(1, 99, 77))
    with pytest.raises(TypeError, match="different types"):
        lt(Pair(1, 2), Traits(1, 2, 3))
    assert not eq(Pair(1, 2), Traits(1, 2, 3))


def test_objects_without_fields_equal_their_type():
    f, g = pf.get_global_func("testing.echo"), pf.get_global_func("packedfun.structural_equal")
    assert eq(f, g) and hash_(f) == hash_(g)


def test_hooks_replace_the_field_walk():
    a, b = Hooked(1, "zzz"), Hooked(1, "aaa")
    assert eq(a, b) and hash_(a) == hash_(b) and le(a, b) and not lt(a, b)
    assert lt(Hooked(1, "z"), Hooked(2, "a")) and not eq(Hooked(1, "x"), Hooked(2, "x"))
    assert eq(pf.Array([a]), pf.List([b])) is False  # an Array never equals a List
    assert eq(pf.Map({"k": a}), pf.Map({"k": b})) and hash_(pf.Array([a])) == hash_(pf.Array([b]))
    with pytest.raises(ValueError, match="__ffi_eq__ or __ffi_compare__ but not __ffi_hash__"):
        hash_(pf.Array([EqOnly(1)]))
    assert eq(EqOnly(1), EqOnly(2))
    assert lt(EqOnly(1), EqOnly(2))  # ordering without __ffi_compare__: the fields


def test_a_hook_that_raises_propagates_and_leaves_no_state():
    with pytest.raises(RuntimeError, match="hook failed"):
        eq(pf.Array([Raising(1)]), pf.Array([Raising(1)]))
    with pytest.raises(RuntimeError, match="hook failed"):
        hash_(pf.List([Raising(1)]))
    assert eq(pf.Array([1]), pf.Array([1]))


def test_cycles_end_and_ordering_one_raises():
    a, b = pf.List([1]), pf.List([1])
    d = pf.Dict({"k": 1})
    a.append(a)
    b.append(b)
    d["self"] = d
    try:
        assert eq(a, b) and eq(a, a) and hash_(a) == hash_(b)
        assert eq(d, d) and isinstance(hash_(d), int)
        with pytest.raises(ValueError, match="cyclic reference"):
            lt(a, b)
    finally:  # native cycles, which no collector frees: a leak at exit (LeakSanitizer's report)
        a.pop()
        b.pop()
        del d["self"]


def test_depth_beyond_the_recursion_limit_and_shared_dags():
    deep: Any = 0
    for _ in range(3000):
        deep = pf.Array([deep])
    other: Any = 0
    for _ in range(3000):
        other = pf.Array([other])
    assert eq(deep, other) and hash_(deep) == hash_(other) and not lt(deep, other)
    dag: Any = 1
    for _ in range(60):  # 2**60 paths: hashed once per shared node
        dag = pf.Array([dag, dag])
    assert isinstance(hash_(dag), int) and -(2**63) <= hash_(dag) < 2**63


def test_python_values_are_what_they_convert_to():
    np = pytest.importorskip("numpy")
    assert eq([1, 2], pf.Array([1, 2])) and eq({"a": 1}, pf.Map({"a": 1}))
    assert hash_([1, 2]) == hash_(pf.Array([1, 2])) and not eq((1,), pf.List([1]))
    assert eq(np.int64(3), 3) and hash_(np.int32(3)) == hash_(3) and lt(np.int8(2), 3)
    assert eq(np.float32(1.5), 1.5) and hash_(np.float64(1.5)) == hash_(1.5)
    assert not eq(np.int64(1), 1.0)


def test_other_python_values_compare_with_eq_and_refuse_ordering():
    token = object()
    assert eq(token, token) and not eq(token, object()) and hash_(token) == hash_(token)
    with pytest.raises(TypeError, match="Cannot order values of type object"):
        lt(object(), object())
    with pytest.raises(TypeError, match="unhashable"):
        hash_({1, 2})


_TVM_FFI = importlib.util.find_spec("tvm_ffi") is not None


@pytest.mark.skipif(not _TVM_FFI, reason="apache-tvm-ffi is not installed")
def test_cxx_test_classes_field_flags_and_hooks_cross_the_bridge():
    run_child(
        """
        import packedfun.tvm_ffi_compat as compat
        compat.install()
        import pytest, tvm_ffi, tvm_ffi.testing as T
        from tvm_ffi._ffi_api import RecursiveEq as eq, RecursiveHash as h, RecursiveLt as lt
        assert eq(T.TestCompare(1, "x", 100), T.TestCompare(1, "x", 999))
        assert h(T.TestCompare(1, "x", 100)) == h(T.TestCompare(1, "x", 999))
        assert h(T.TestHash(1, "x", 5)) == h(T.TestHash(1, "x", 6))
        assert not eq(T.TestHash(1, "x", 5), T.TestHash(1, "x", 6))
        a, b = T.TestCustomCompare(1, "zzz"), T.TestCustomCompare(1, "aaa")
        assert eq(a, b) and h(a) == h(b) and not lt(a, b)
        assert lt(T.TestCustomCompare(1, "z"), T.TestCustomCompare(2, "a"))
        assert h(tvm_ffi.Array([a])) == h(tvm_ffi.Array([b]))
        with pytest.raises(ValueError, match="but not __ffi_hash__"):
            h(tvm_ffi.List([T.TestEqWithoutHash(1, "x")]))
        attr = tvm_ffi.get_global_func("packedfun.tvm_ffi_type_attr")
        assert attr(T.TestIntPair(1, 2).type_index, "__ffi_eq__") is None
        assert attr(a.type_index, "__no_such_attribute__") is None
        assert attr(a.type_index, "__ffi_hash__")(a, lambda v: v * 10) == 10
        with pytest.raises(TypeError, match="expected an int and a str"):
            attr(a.type_index, 5)
        """
    )


def test_the_switch_hashes_list_dict_and_map_by_content():
    run_child(
        """
        import packedfun.tvm_ffi_compat as compat
        import packedfun as pf
        compat.install()
        import tvm_ffi
        from tvm_ffi._ffi_api import RecursiveHash
        for make in (tvm_ffi.List, tvm_ffi.Map, tvm_ffi.Dict):
            arg = [1, 2] if make is tvm_ffi.List else {"x": 1}
            a, b = make(arg), make(arg)
            assert hash(a) == hash(b) == RecursiveHash(a) and len({a, b}) == 1
        compat.uninstall()
        for value in (pf.List([1]), pf.Map({"x": 1}), pf.Dict({"x": 1})):
            try:
                hash(value)
            except TypeError:
                pass
            else:
                raise AssertionError("hashable after uninstall")
        """
    )
