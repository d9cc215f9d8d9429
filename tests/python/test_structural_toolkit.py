# The structural toolkit over Python- and C++-defined objects: walks, mutator, keys, access paths.
import os
import subprocess
import sys
import textwrap

import packedfun as pf
import pytest
import suite
from packedfun.dataclasses import py_class
from packedfun.structural import (
    AccessPath,
    StructuralKey,
    VisitInterrupt,
    get_first_structural_mismatch,
    structural_mutate,
    structural_walk,
)


@py_class("test_st.Node")
class Node(pf.Object):
    pass


@py_class("test_st.Lit")
class Lit(Node):
    value: int


@py_class("test_st.Call")
class Call(Node):
    name: str
    args: list


def _tree():
    return Call("f", [Lit(1), Call("g", [Lit(2), Lit(3)])])


def test_walk_pre_and_post_order_with_paths():
    seen = []
    structural_walk(_tree(), lambda p, v: seen.append(str(p)) if isinstance(v, Node) else None)
    assert seen == ["root", "root.args[0]", "root.args[1]", "root.args[1].args[0]",
                    "root.args[1].args[1]"]  # fmt: skip
    post = []
    structural_walk(_tree(), lambda p, v: post.append(str(p)) if isinstance(v, Lit) else None,
                    order="post")  # fmt: skip
    assert post == ["root.args[0]", "root.args[1].args[0]", "root.args[1].args[1]"]
    with pytest.raises(ValueError):
        structural_walk(_tree(), print, order="sideways")


def test_walk_skips_children_and_interrupts():
    seen = []

    def visit(path, value):
        seen.append(str(path))
        if isinstance(value, Call) and value.name == "g":
            return False

    structural_walk(_tree(), visit)
    assert "root.args[1].args[0]" not in seen and "root.args[1]" in seen

    lits = []

    def stop(path, value):
        if isinstance(value, Lit):
            lits.append(value.value)
            raise VisitInterrupt

    structural_walk(_tree(), stop)
    assert lits == [1]


def test_walk_visits_shared_node_once_and_ends_on_cycles():
    shared = Lit(7)
    root = Call("h", [shared, shared])
    count = []
    structural_walk(root, lambda p, v: count.append(1) if isinstance(v, Lit) else None)
    assert len(count) == 1
    lst = pf.List([1])
    lst.append(lst)
    n = []
    try:
        structural_walk(lst, lambda p, v: n.append(v))
    finally:
        lst.clear()  # the native cycle no collector frees (a leak at exit to the sanitized run)
    assert len(n) == 2  # the list once, the int once


def test_mutator_rebuilds_changed_and_shares_unchanged():
    root = _tree()
    untouched = root.args[0]

    def bump(v):
        return Lit(v.value * 10) if isinstance(v, Lit) and v.value >= 2 else v

    out = structural_mutate(root, bump)
    assert not out.same_as(root) and out.args[0].same_as(untouched)
    assert [x.value for x in out.args[1].args] == [20, 30]
    assert [x.value for x in root.args[1].args] == [2, 3]  # the input is not changed
    same = structural_mutate(root, lambda v: v)
    assert same.same_as(root)


def test_structural_key_and_first_mismatch_paths():
    d = {StructuralKey(_tree()): "x"}
    assert d[StructuralKey(_tree())] == "x"
    assert StructuralKey(_tree()) != StructuralKey(Lit(1))
    a, b = _tree(), _tree()
    assert get_first_structural_mismatch(a, b) is None
    b.args[1].args[1].value = 4
    lhs, rhs = get_first_structural_mismatch(a, b)
    assert str(lhs) == "root.args[1].args[1].value" and lhs == rhs
    assert lhs == AccessPath.root().attr("args").array_item(1).attr("args").array_item(1).attr(
        "value"
    )
    assert AccessPath.parse('root["k"][2].x').steps == (("key", "k"), ("index", 2), ("attr", "x"))
    assert len({lhs, rhs}) == 1


def test_first_mismatch_paths_differ_per_side_where_an_item_is_missing():
    a, b = _tree(), Call("f", [Lit(1), Call("g", [Lit(2), Lit(3), Lit(4)])])
    lhs, rhs = get_first_structural_mismatch(a, b)
    assert str(lhs) == "root.args[1].args[<missing:2>]" and str(rhs) == "root.args[1].args[2]"
    assert lhs == AccessPath.root().attr("args").array_item(1).attr("args").array_item_missing(2)
    assert rhs.steps[-1] == ("index", 2) and lhs.steps[-1] == ("index_missing", 2)
    assert get_first_structural_mismatch(b, a) == (rhs, lhs)  # the sides swap with the arguments
    lhs, rhs = get_first_structural_mismatch({"a": 1, "b": 2}, {"a": 1})
    assert (str(lhs), str(rhs)) == ('root["b"]', 'root[<missing:"b">]')
    lhs, rhs = get_first_structural_mismatch({"a": 1}, {"a": 1, "c": 2})
    assert (str(lhs), str(rhs)) == ('root[<missing:"c">]', 'root["c"]')
    for path in (lhs, rhs, AccessPath.root().attr("x").attr_missing("y")):
        assert AccessPath.parse(str(path)) == path  # printed and read back
    assert AccessPath.parse("root.args").is_prefix_of(AccessPath.parse("root.args[1]"))
    assert not AccessPath.parse("root.args[1]").is_prefix_of(AccessPath.parse("root.args"))
    # The string form of the first difference is unchanged: the sequence itself differs.
    assert pf.structural_first_difference(a, b) == "root.args[1].args"


def test_toolkit_on_cpp_defined_objects():
    from packedfun.object import type_info

    assert pf.get_global_func("testing.echo")(1) == 1
    info = type_info(pf._backend.core.type_key_to_index("testing.TreeNode"))
    make = next(m["func"] for m in info["methods"] if m["name"] == "__create__")
    t = make("a", pf.Array([make("b", pf.Array([]))]))
    names = []
    structural_walk(t, lambda p, v: names.append(v) if isinstance(v, str) else None)
    assert names == ["a", "b"]
    renamed = structural_mutate(t, lambda v: "B" if v == "b" else v)
    assert renamed.children[0].name == "B" and t.children[0].name == "b"
    assert str(get_first_structural_mismatch(t, renamed)[0]) == "root.children[0].name"


# 100,000 links, far past any native stack; a million with the long soak sizes
# (PACKEDFUN_SOAK=full, not under the sanitizers). A million took up to 240 s on a loaded 2-core
# machine, in each of the full run's four passes (two backends, two Pythons), and under ASan on
# ctypes ran past the sanitized run's 300 s per-test limit.
SANITIZED = bool(os.environ.get("PACKEDFUN_SANITIZE_PRELOAD"))
DEPTH = 1_000_000 if suite.LONG_SOAK and not SANITIZED else 100_000


def test_deep_chain_walks_mutates_and_compares():
    code = textwrap.dedent(
        """
        import sys
        from typing import Optional

        import packedfun as pf
        from packedfun.dataclasses import py_class
        from packedfun.structural import (structural_walk, structural_hash,
                                          get_first_structural_mismatch)

        @py_class("deep.Link")
        class Link(pf.Object):
            value: int
            next: Optional["Link"] = None

        def chain(n, last):
            head = Link(last)
            for i in range(n - 1):
                head = Link(i, head)
            return head

        N = int(sys.argv[1])
        a, b = chain(N, 0), chain(N, 1)
        count = [0]
        structural_walk(a, lambda p, v: count.__setitem__(0, count[0] + 1))
        assert count[0] >= N, count
        lhs, rhs = get_first_structural_mismatch(a, b)
        assert len(lhs) == N, len(lhs)  # N - 1 times .next, then .value
        structural_hash(a)
        del a, b
        print("ok")
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(DEPTH)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stderr[-3000:]
