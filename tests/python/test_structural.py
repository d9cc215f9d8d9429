# Tests of structural_equal, structural_hash and structural_first_difference (both backends).
import os
import subprocess
import sys
from pathlib import Path

import packedfun
import pytest
from packedfun import structural_equal, structural_first_difference, structural_hash, testing
from packedfun.object import type_info

PKG_PARENT = str(Path(packedfun.__file__).resolve().parents[1])


def _tagged(name, body, cache):
    assert testing.echo(1) == 1  # loads the testing library (testing.Tagged)
    info = type_info(packedfun._backend.core.type_key_to_index("testing.Tagged"))
    ctor = next(m["func"] for m in info["methods"] if m["name"] == "__create__")
    return ctor(name, body, cache)


def test_equal_values_are_equal_and_hash_alike():
    make = lambda: packedfun.convert([1, {"k": "v"}, "a longer string", b"by", 2.5, None, [True]])  # noqa: E731
    a, b = make(), make()
    assert not a.same_as(b)
    assert structural_equal(a, b) and structural_hash(a) == structural_hash(b)
    assert structural_first_difference(a, b) is None
    assert structural_equal(packedfun.Map({"a": 1, "b": 2}), packedfun.Map({"b": 2, "a": 1}))
    assert structural_hash(packedfun.Map({"a": 1, "b": 2})) == structural_hash({"b": 2, "a": 1})
    assert structural_equal(packedfun.Shape([2, 3]), packedfun.Shape([2, 3]))
    assert structural_equal(float("nan"), float("nan"))


@pytest.mark.parametrize(
    "a, b",
    [
        ([1, 2], [1, 3]),
        ([1], [1, 1]),
        ({"a": 1}, {"b": 1}),
        (1, True),
        (1, 1.0),
        ("s", b"s"),
        (packedfun.Shape([1]), packedfun.Shape([2])),
    ],
)
def test_different_values(a, b):
    assert not structural_equal(a, b)
    assert structural_first_difference(a, b) is not None


def test_container_types_must_match():
    assert not structural_equal(packedfun.Array([1]), packedfun.List([1]))
    assert not structural_equal(packedfun.Map({"a": 1}), packedfun.Dict({"a": 1}))


def test_reflected_objects_by_field_with_excluded_field():
    x = _tagged("n", [1, [2, {"q": _tagged("inner", 3, 0)}]], 1)
    y = _tagged("n", [1, [2, {"q": _tagged("inner", 3, 99)}]], 2)
    z = _tagged("n", [1, [2, {"q": _tagged("innr", 3, 0)}]], 1)
    assert structural_equal(x, y) and structural_hash(x) == structural_hash(y)
    assert not structural_equal(x, z)
    assert structural_first_difference(x, z) == 'root.body[1][1]["q"].name'
    assert structural_first_difference([x], [y, 1]) == "root"


def test_functions_compare_by_identity():
    echo = packedfun.get_global_func("testing.echo")
    assert structural_equal([echo], [packedfun.get_global_func("testing.echo")])
    assert not structural_equal(packedfun.convert(len), packedfun.convert(len))


def test_deep_nesting_does_not_overflow_the_stack():
    def deep():
        value = packedfun.Array([])
        for _ in range(100_000):
            value = packedfun.Array([value])
        return value

    a, b = deep(), deep()
    assert structural_hash(a) == structural_hash(b)
    assert structural_equal(a, b)


def test_cycles_terminate():
    a, b, c = packedfun.List([1]), packedfun.List([1]), packedfun.List([2])
    try:
        a.append(a)
        b.append(b)
        assert structural_equal(a, b) and structural_hash(a) == structural_hash(b)
        c.append(c)
        assert not structural_equal(a, c)
        assert structural_first_difference(a, c) == "root[0]"
    finally:  # a List that holds itself is a native cycle no collector frees (docs/concepts.md)
        for lst in (a, b, c):
            del lst[1:]
        assert [len(lst) for lst in (a, b, c)] == [1, 1, 1]


def test_wrong_arity_is_a_type_error():
    with pytest.raises(TypeError, match="packedfun.structural_equal: expected 2 or 3 arguments"):
        packedfun.get_global_func("packedfun.structural_equal")(1)


CYCLES = """
import packedfun
from packedfun import structural_equal, structural_hash, testing
from packedfun.object import type_info


def two_cycle(tag):  # outer -> inner -> outer; only outer has a Python reference (inner: count 1)
    outer = packedfun.List([tag])
    outer.append(packedfun.List([tag, outer]))
    return outer


def tagged(cache):
    assert testing.echo(1) == 1
    info = type_info(packedfun._backend.core.type_key_to_index("testing.Tagged"))
    t = next(m["func"] for m in info["methods"] if m["name"] == "__create__")("t", None, cache)
    t.body = packedfun.Array([packedfun.List([t])])  # a cycle through a reflected field
    return t


a, b, c = two_cycle(1), two_cycle(1), two_cycle(2)
assert structural_hash(a) == structural_hash(b) != structural_hash(c)
assert structural_equal(a, b) and not structural_equal(a, c)
t0, t5 = tagged(0), tagged(5)
assert structural_hash(t0) == structural_hash(t5)  # cache is not compared
assert structural_equal(t0, t5)
# Native cycles no collector frees (docs/concepts.md): broken before exit, or the sanitized run's
# leak check reports them.
for outer in (a, b, c):
    outer.pop()
for t in (t0, t5):
    t.body = None
print("ok")
"""


def test_cycles_through_singly_referenced_nodes_terminate():
    # The hash skips its table for nodes held by one reference; a node on a cycle never is. A
    # broken rule would loop: the case runs in a child process with a timeout.
    env = dict(os.environ, PACKEDFUN_BACKEND=packedfun.BACKEND)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [PKG_PARENT, env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, "-c", CYCLES], capture_output=True, text=True, env=env, timeout=60
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-3000:]


def test_shared_and_unshared_subtrees_hash_alike():
    leaf = lambda: packedfun.Array([1, "x", packedfun.Map({"k": [2, 3]})])  # noqa: E731
    shared = leaf()
    dag = packedfun.Array([shared, shared, _tagged("n", shared, 0)])
    tree = packedfun.Array([leaf(), leaf(), _tagged("n", leaf(), 1)])
    del shared
    assert structural_equal(dag, tree) and structural_hash(dag) == structural_hash(tree)
    # Reading the same stored field twice within one walk hashes it alike both times.
    node = _tagged("n", leaf(), 0)
    assert structural_hash(packedfun.Array([node, node])) == structural_hash(
        packedfun.Array([_tagged("n", leaf(), 0), _tagged("n", leaf(), 0)])
    )
