"""Structural equality and hashing agree: values equal by structural_equal hash equal, cyclic ones
included (equality unfolds cycles), and a Map or Dict with a NaN key equals its copies."""

import copy
import pickle

import packedfun as pf
import pytest


def _cycles(kind):
    if kind == "List":
        one = pf.List([])
        one.append(one)
        a, b = pf.List([]), pf.List([])
        a.append(b)
        b.append(a)
        three = pf.List([])
        three.append(pf.List([pf.List([three])]))
        return one, a, three
    one = pf.Dict()
    one["k"] = one
    a, b = pf.Dict(), pf.Dict()
    a["k"], b["k"] = b, a
    three = pf.Dict()
    three["k"] = pf.Dict({"k": pf.Dict({"k": three})})
    return one, a, three


@pytest.mark.parametrize("kind", ["List", "Dict"])
def test_equal_cyclic_values_hash_equal(kind):
    # structural_equal(l1, l3) was true for l1 = [l1] and l3 = [l4], l4 = [l3], but the hashes
    # differed (a cycle hashed by its length).
    values = _cycles(kind)
    try:
        for x in values:
            for y in values:
                assert pf.structural_equal(x, y)
                assert pf.structural_hash(x) == pf.structural_hash(y)
        other = pf.List([1]) if kind == "List" else pf.Dict({"k": 1})
        assert not pf.structural_equal(values[0], other)
    finally:
        # break the native cycles, which no collector frees (each value's clear() frees the rest
        # of its cycle): left to exit, they are leaks to the sanitized run's leak check
        for value in values:
            value.clear()


def test_acyclic_values_keep_distinct_hashes():
    assert pf.structural_hash(pf.List([[1]])) != pf.structural_hash(pf.List([[2]]))
    shared = pf.List([1, 2])
    twice = pf.List([pf.List([1, 2]), pf.List([1, 2])])
    assert pf.structural_hash(pf.List([shared, shared])) == pf.structural_hash(twice)


@pytest.mark.parametrize("kind", ["Map", "Dict"])
def test_a_nan_key_equals_its_copies(kind):
    make = getattr(pf, kind)
    value = make({float("nan"): 1, "a": [2.5, float("nan")], 3: "x"})
    copies = {
        "pickle": pickle.loads(pickle.dumps(value)),
        "deepcopy": copy.deepcopy(value),
        "json": pf.from_json(pf.to_json(value)),
    }
    for how, other in copies.items():
        assert pf.structural_equal(value, other), how
        assert pf.structural_hash(value) == pf.structural_hash(other), how
    assert not pf.structural_equal(value, make({float("nan"): 2, "a": [2.5, float("nan")], 3: "x"}))
    two = make({float("nan"): 1, float("nan"): 2})
    assert pf.structural_equal(two, pickle.loads(pickle.dumps(two)))
