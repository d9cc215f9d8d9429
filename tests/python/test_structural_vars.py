# Structural equality and hashing with variables (alpha-equivalence), DAG and const-tree types,
# and types declared not comparable: py_class(structural_eq=...), field(structural_eq="def"),
# map_free_vars. Computed in the runtime, so the same on both backends.
from typing import Any, Optional

import packedfun as pf
import pytest
from packedfun.dataclasses import field, py_class
from packedfun.structural import (
    get_first_structural_mismatch,
    structural_equal,
    structural_hash,
)


@py_class("test_svars.Var", structural_eq="var")
class Var(pf.Object):
    name: str = field(structural_eq="ignore")


@py_class("test_svars.Lit")
class Lit(pf.Object):
    value: int


@py_class("test_svars.Fn")
class Fn(pf.Object):
    params: list = field(structural_eq="def")
    body: list
    note: str = field(structural_eq="ignore", default="")


@py_class("test_svars.UseFirst")
class UseFirst(pf.Object):
    """A binder whose body comes before its definitions (a variable used before it is bound)."""

    body: list
    params: list = field(structural_eq="def")


@py_class("test_svars.Shared", structural_eq="dag")
class Shared(pf.Object):
    value: int


@py_class("test_svars.Meta", structural_eq="const-tree")
class Meta(pf.Object):
    tag: str


@py_class("test_svars.Opaque", structural_eq=None)
class Opaque(pf.Object):
    x: int


@py_class("test_svars.Cell")
class Cell(pf.Object):
    params: list = field(structural_eq="def")
    next: Optional[Any] = None


def equal_and_hash(a: Any, b: Any, **kw: Any) -> bool:
    """structural_equal, checked against the hash: equal values must hash alike."""
    equal = structural_equal(a, b, **kw)
    if equal:
        assert structural_hash(a, **kw) == structural_hash(b, **kw)
    return equal


def test_alpha_equivalent_terms_are_equal_and_hash_alike():
    x, y = Var("x"), Var("y")
    assert equal_and_hash(Fn([x], [Lit(1), x], "a"), Fn([y], [Lit(1), y], "b"))
    a, b, c, d = Var("a"), Var("b"), Var("c"), Var("d")
    assert equal_and_hash(Fn([a, b], [a, b]), Fn([c, d], [c, d]))
    # the bijection is kept: a renaming must be consistent, both ways
    assert not equal_and_hash(Fn([a, b], [a, b]), Fn([c, d], [d, c]))
    assert not equal_and_hash(Fn([a, b], [a, a]), Fn([c, d], [c, d]))
    assert not equal_and_hash(Fn([a], [a]), Fn([c], [Lit(1)]))
    assert structural_hash(Fn([a], [a])) != structural_hash(Fn([a], [Lit(1)]))


def test_free_variables_compare_by_identity_unless_mapped():
    x, y = Var("x"), Var("y")
    assert equal_and_hash(x, x)
    assert not structural_equal(x, y)
    assert structural_hash(x) != structural_hash(y)
    assert equal_and_hash(x, y, map_free_vars=True)
    # a term with free variables: equal only up to renaming with map_free_vars
    assert not structural_equal(pf.Array([x, Lit(1)]), pf.Array([y, Lit(1)]))
    assert equal_and_hash(pf.Array([x, Lit(1)]), pf.Array([y, Lit(1)]), map_free_vars=True)
    # map_free_vars still keeps the bijection
    assert not structural_equal(pf.Array([x, x]), pf.Array([x, y]), map_free_vars=True)
    assert not structural_equal(pf.Array([x, y]), pf.Array([y, y]), map_free_vars=True)
    assert equal_and_hash(pf.Array([x, y]), pf.Array([y, x]), map_free_vars=True)


def test_variable_used_before_its_definition():
    x, y = Var("x"), Var("y")
    # the use comes first: unbound then, so it equals only itself
    assert not structural_equal(UseFirst([x], [x]), UseFirst([y], [y]))
    assert equal_and_hash(UseFirst([x], [x]), UseFirst([x], [x]))
    assert equal_and_hash(UseFirst([x], [x]), UseFirst([y], [y]), map_free_vars=True)


def test_variable_defined_twice():
    x, y, z = Var("x"), Var("y"), Var("z")
    assert equal_and_hash(Fn([x, x], [x]), Fn([y, y], [y]))
    assert not equal_and_hash(Fn([x, x], [x]), Fn([y, z], [y]))
    assert structural_hash(Fn([x, x], [x])) != structural_hash(Fn([y, z], [y]))
    # bound again in a nested binder: the first binding stands
    assert not structural_equal(Fn([x], [Fn([x], [x])]), Fn([y], [Fn([z], [z])]))


def test_nested_scopes():
    x, y, u, v = Var("x"), Var("y"), Var("u"), Var("v")
    outer_a = Fn([x], [Fn([y], [x, y])])
    outer_b = Fn([u], [Fn([v], [u, v])])
    assert equal_and_hash(outer_a, outer_b)
    assert not structural_equal(outer_a, Fn([u], [Fn([v], [v, u])]))
    # an inner variable escaping its binder in one side only
    assert not structural_equal(Fn([x], [Fn([y], [y]), x]), Fn([u], [Fn([v], [v]), v]))
    assert equal_and_hash(Fn([], [Fn([x], [x])]), Fn([], [Fn([y], [y])]))


def test_the_same_subterm_under_different_bindings_is_walked():
    x, y = Var("x"), Var("y")
    body = pf.Array([x])  # one object on both sides, but its x is bound to y on the right
    assert not structural_equal(Fn([x], body), Fn([y], body))
    assert structural_equal(Fn([x], body), Fn([x], body))


def test_first_mismatch_and_map_free_vars():
    x, y = Var("x"), Var("y")
    mismatch = get_first_structural_mismatch(Fn([x], [x, Lit(1)]), Fn([y], [y, Lit(2)]))
    assert mismatch is not None
    assert str(mismatch[0]) == "root.body[1].value"
    assert get_first_structural_mismatch(pf.Array([x]), pf.Array([y])) is not None
    assert get_first_structural_mismatch(pf.Array([x]), pf.Array([y]), map_free_vars=True) is None


def test_dag_types_count_sharing():
    s = Shared(1)
    s1, s2 = Shared(1), Shared(1)
    assert equal_and_hash(pf.Array([s, s]), pf.Array([Shared(1)] * 2))
    assert not structural_equal(pf.Array([s, s]), pf.Array([s1, s2]))
    assert structural_hash(pf.Array([s, s])) != structural_hash(pf.Array([s1, s2]))
    assert not structural_equal(pf.Array([s1, s2]), pf.Array([s1, s1]))  # both ways
    # a tree type: sharing is invisible
    t = Lit(1)
    assert equal_and_hash(pf.Array([t, t]), pf.Array([Lit(1), Lit(1)]))


def test_const_tree_and_unsupported_types():
    m = Meta("v1")
    assert equal_and_hash(m, m)
    assert equal_and_hash(Meta("v1"), Meta("v1"))
    assert not structural_equal(Meta("v1"), Meta("v2"))
    with pytest.raises(TypeError, match="test_svars.Opaque"):
        structural_equal(Opaque(1), Opaque(1))
    with pytest.raises(TypeError, match="test_svars.Opaque"):
        structural_hash(pf.Array([Opaque(1)]))


def test_kinds_are_read_back_and_checked():
    kind = pf.get_global_func("packedfun.type_structural_kind")
    set_kind = pf.get_global_func("packedfun.type_set_structural_kind")
    assert [kind(c.__pf_type_index__) for c in (Lit, Meta, Shared, Var, Opaque)] == [0, 1, 2, 3, 4]
    assert kind(pf.Array([]).type_index) == 0
    with pytest.raises(ValueError, match="structural kind"):
        set_kind(Lit.__pf_type_index__, 7)
    with pytest.raises(TypeError):
        set_kind(pf.Array([]).type_index, 1)
    with pytest.raises(TypeError):
        pf.get_global_func("packedfun.structural_equal")(1, 2, "x")
    with pytest.raises(ValueError, match="structural_eq"):
        py_class(structural_eq="graph")
    with pytest.raises(ValueError, match="structural_eq"):
        field(structural_eq="bind")


def test_cyclic_terms_with_variables_terminate():
    x, y = Var("x"), Var("y")
    a, b = Cell([x]), Cell([y])
    a.next, b.next = a, b
    try:
        assert equal_and_hash(a, b)
        c = Cell([x])
        c.next = c
        assert not structural_equal(a, pf.Array([c]))
    finally:
        a.next = b.next = None  # break the native cycles (no collector frees them)
        if "c" in locals():
            c.next = None
