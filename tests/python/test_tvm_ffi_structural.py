# tvm-ffi's typed-callback structural toolkit under the switch (packedfun._tvm_ffi_structural):
# structural_walk / visit / mutate / map, their classes and enums, on both backends.
import os
import subprocess
import sys
from typing import Any

import packedfun as pf
import pytest
from packedfun import _tvm_ffi_structural as ts
from packedfun.dataclasses import field, py_class


@py_class("test_tvmffi_struct.Var", structural_eq="var")
class Var(pf.Object):
    name: str = field(structural_eq="ignore")


@py_class("test_tvmffi_struct.Fn")
class Fn(pf.Object):
    params: list = field(structural_eq="def")
    body: list


@py_class("test_tvmffi_struct.Box")
class Box(pf.Object):
    value: Any = None


def test_walk_orders_dispatch_and_skip():
    root = pf.Array([pf.Array([1]), 2, "s", True])
    trace: list = []
    cbs = [
        (pf.Array, lambda v: trace.append(f"a{len(v)}")),
        (int, lambda v: trace.append(f"i{v}")),
        (bool, lambda v: trace.append(f"b{v}")),
    ]
    assert ts.structural_walk(root, cbs) is None
    assert trace == ["i1", "a1", "i2", "bTrue", "a4"]  # post-order by default; str unmatched
    trace.clear()
    ts.structural_walk(root, cbs, order=ts.WalkOrder.PREORDER)
    assert trace == ["a4", "a1", "i1", "i2", "bTrue"]
    trace.clear()
    skip = [
        (pf.Array, lambda v: trace.append(len(v)) or ts.WalkResult.SKIP),
        (object, trace.append),
    ]
    ts.structural_walk(root, skip, order="pre")
    assert trace == [4]
    with pytest.raises(ValueError, match="order"):
        ts.structural_walk(root, cbs, order="sideways")
    with pytest.raises(TypeError, match="callback type"):
        ts.structural_walk(root, (list, print))
    with pytest.raises(TypeError, match="callbacks"):
        ts.structural_walk(root, 5)


def test_walk_interrupt_and_map_keys_skipped():
    root = pf.Array([pf.Map({"k": 1}), 2, 3])
    seen: list = []

    def on_int(v: int) -> Any:
        seen.append(v)
        return ts.VisitInterrupt(v) if v == 2 else None

    result = ts.structural_walk(root, (int, on_int), order="pre")
    assert isinstance(result, ts.VisitInterrupt) and result.value == 2
    assert seen == [1, 2]
    strings: list = []
    ts.structural_walk(root, (str, strings.append))
    assert strings == []  # map keys are not visited


def test_walk_def_region_kind():
    x, y = Var("x"), Var("y")
    root = Fn([x], [x, y])
    uses: list = []
    ts.structural_walk(root, with_def_region_kind=(Var, lambda v, k: uses.append((v.name, k))))
    assert uses == [("x", ts.DefRegionKind.DEF_PATTERN), ("x", ts.DefRegionKind.NONE),
                    ("y", ts.DefRegionKind.NONE)]  # fmt: skip


def test_walk_skips_fields_structural_equality_ignores():
    # Var.name is structural_eq="ignore": a walk does not enter it, on a variable or elsewhere
    x = Var("x")
    seen: list = []
    ts.structural_walk(pf.Array([Fn([x], [x]), "tag"]), (str, seen.append), order="pre")
    assert seen == ["tag"]
    assert ts.structural_visit(x, (str, seen.append)) is None and seen == ["tag"]


def test_cycles_are_refused():
    box = Box()
    box.value = pf.Array([box])
    try:
        for run in (
            lambda: ts.structural_walk(box, lambda v: None),
            lambda: ts.structural_visit(box, []),
            lambda: ts.structural_map(box, (int, lambda v: v)),
            lambda: ts.structural_mutate(box, []),
        ):
            with pytest.raises(ValueError, match="cycle"):
                run()
    finally:
        box.value = None  # break the native cycle
    shared = pf.Array([1])
    dag = pf.Array([shared, shared])  # sharing is no cycle: each occurrence is visited
    count: list = []
    ts.structural_walk(dag, (int, count.append))
    assert count == [1, 1]


def test_visit_owns_descent():
    trace: list = []
    root = pf.Array([pf.Array([1, 2, 3]), pf.Array([4])])

    def on_array(v: Any, visitor: ts.StructuralVisitor) -> Any:
        assert isinstance(visitor, ts.StructuralVisitor)
        trace.append("a")
        return visitor.visit(v[0])  # only the first child

    def on_int(v: int, visitor: ts.StructuralVisitor) -> Any:
        trace.append(v)
        return ts.VisitInterrupt("stop") if v == 2 else None

    assert ts.structural_visit(root, [(pf.Array, on_array), (int, on_int)]) is None
    assert trace == ["a", "a", 1]
    trace.clear()
    result = ts.structural_visit(root, [(int, on_int)])  # arrays unmatched: default descent
    assert isinstance(result, ts.VisitInterrupt) and result.value == "stop"
    assert trace == [1, 2]
    with pytest.raises(KeyError):
        ts.structural_visit(root, (int, lambda v, vis: {}[v]))


def test_mutate_and_map_copy_on_change_keep_otherwise():
    root = pf.Array([pf.Array([1]), pf.Map({"k": pf.Array([2])})])
    same = ts.structural_map(root, (int, lambda v: v))
    assert same.same_as(root)
    mapped = ts.structural_map(root, (int, lambda v: v + 10))
    assert not mapped.same_as(root) and list(root[0]) == [1]
    assert list(mapped[0]) == [11] and list(mapped[1]["k"]) == [12]
    modes: list = []

    def bump(v: int, m: ts.StructuralMutator, mode: int) -> int:
        modes.append(mode)
        return v + 1

    out = ts.structural_mutate(pf.Array([1, 2]), (int, bump))
    assert list(out) == [2, 3] and modes == [ts.InplaceMode.DISALLOW] * 2
    out = ts.structural_mutate(
        pf.Array([1, 2]), (pf.Array, lambda v, m: pf.Array([m.mutate(v[0])]))
    )
    assert list(out) == [1]
    with pytest.raises(TypeError, match="mutator"):
        ts.structural_mutate(pf.Array([1]), (int, lambda v: v))


def test_map_keeps_a_variable_one_object():
    @py_class("test_tvmffi_struct.IntVar", structural_eq="var")
    class IntVar(pf.Object):
        value: int

    v = IntVar(1)
    mapped = ts.structural_map(Fn([v], [v]), (int, lambda n: n + 1))
    assert mapped.params[0].value == 2 and mapped.params[0].same_as(mapped.body[0])
    mapper = ts.StructuralMutator([])
    mapper.var_remap_set(v, 5)
    assert mapper.var_remap_get(v) == 5 and mapper.var_remap_get(IntVar(1)) is None


def test_switch_gives_the_toolkit():
    code = (
        "import packedfun.tvm_ffi_compat as c; c.install()\n"
        "import tvm_ffi, tvm_ffi.structural as s, packedfun._tvm_ffi_structural as ts\n"
        "assert s is ts and tvm_ffi.structural_walk is ts.structural_walk\n"
        "assert tvm_ffi.WalkOrder.PREORDER == 0 and tvm_ffi.structural_map is ts.structural_map\n"
        "assert tvm_ffi.get_global_func('ffi.RecursiveEq')([1], [1])\n"
        "c.uninstall()\n"
        "import packedfun\n"
        "assert not hasattr(packedfun, 'structural_walk')\n"
        "print('ok')\n"
    )
    parent = os.path.dirname(os.path.dirname(os.path.abspath(pf.__file__)))  # this packedfun
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([parent] + [
        p for p in [os.environ.get("PYTHONPATH")] if p]))  # fmt: skip
    env.pop("PACKEDFUN_AS_TVM_FFI", None)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=env)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_visitor_and_mutator_report_their_definition_region():
    x = Var("x")
    seen: list = []

    def on_var(v: Any, visitor: ts.StructuralVisitor) -> None:
        seen.append(visitor.def_region_kind())
        inner = visitor.with_def_region_kind(ts.DefRegionKind.DEF_SIMPLE, visitor.def_region_kind)
        seen.append(inner)

    assert ts.structural_visit(Fn([x], [x]), (Var, on_var)) is None
    K = ts.DefRegionKind
    assert seen == [K.DEF_PATTERN, K.DEF_SIMPLE, K.NONE, K.DEF_SIMPLE]
    mutator = ts.StructuralMutator([])
    assert mutator.def_region_kind() == K.NONE
    assert mutator.with_def_region_kind(K.DEF_PATTERN, mutator.def_region_kind) == K.DEF_PATTERN
    with pytest.raises(ZeroDivisionError):
        mutator.with_def_region_kind(K.DEF_SIMPLE, lambda: 1 / 0)
    assert mutator.def_region_kind() == K.NONE  # restored after an exception too
