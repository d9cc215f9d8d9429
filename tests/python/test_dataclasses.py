# packedfun.dataclasses: object types defined in Python (py_class), on both backends.
import copy
import gc
import inspect
import pickle
import weakref
from typing import Any, ClassVar, Optional

import packedfun as pf
import pytest
from packedfun import dataclasses as dc
from packedfun.dataclasses import KW_ONLY, field, py_class
from packedfun.object import type_info
from packedfun.serialize import from_json, to_json
from packedfun.structural import structural_equal, structural_hash

core = pf._backend.core


@py_class("test_dc.Expr")
class Expr(pf.Object):
    pass


@py_class("test_dc.Var")
class Var(Expr):
    name: str


@py_class("test_dc.Const")
class Const(Expr):
    value: float = 0.0


@py_class("test_dc.Add", eq=True)
class Add(Expr):
    lhs: Expr
    rhs: Expr

    @dc.method
    def arity(self) -> int:
        return 2


@py_class("test_dc.Point", eq=True, order=True)
class Point(pf.Object):
    x: int
    y: int = 0
    label: Optional[str] = None
    count: ClassVar[int] = 0


def test_type_is_registered_in_the_runtime_table():
    index = core.type_key_to_index("test_dc.Add")
    info = type_info(index)
    assert info["type_key"] == "test_dc.Add"
    assert [f["name"] for f in info["fields"]] == ["lhs", "rhs"]
    parent = info["ancestors"][-2]
    assert type_info(parent)["type_key"] == "test_dc.Expr"
    assert {m["name"] for m in info["methods"]} >= {"__create__", "arity"}
    assert Add.__pf_type_index__ == index


def test_construct_read_set_repr():
    p = Point(1, label="a")
    assert (p.x, p.y, p.label) == (1, 0, "a")
    p.y = 5
    assert p.y == 5
    assert repr(p) == "Point(x=1, y=5, label='a')"
    assert Point.count == 0 and "count" not in [f.name for f in dc.fields(Point)]
    with pytest.raises(AttributeError):
        p.not_a_field = 1  # slots: all state lives in the native object


def test_field_type_checked_on_write_names_class_and_field():
    p = Point(1)
    with pytest.raises(TypeError, match="y"):
        p.y = "no"
    with pytest.raises(TypeError, match=r"test_dc\.Point\.x: expected int, got str"):
        Point("1")
    with pytest.raises(TypeError, match=r"test_dc\.Add\.lhs: expected test_dc\.Expr"):
        Add(1, Var("a"))
    Const(3)  # an int is accepted where a float is declared
    assert Const(3).value == 3.0 and isinstance(Const(3).value, float)


@py_class("test_dc.Numbers")
class Numbers(pf.Object):
    i: int = 0
    f: float = 0.0
    b: bool = False
    oi: Optional[int] = None
    a: Any = None


def test_int_and_float_writes_keep_the_declared_types():
    echo = pf.get_global_func("testing.echo")
    n = Numbers()
    n.i, n.f, n.oi = 7, 2, -(2**63)
    assert (n.i, n.f, n.oi) == (7, 2.0, -(2**63)) and type(n.f) is float
    n.f = 1.5
    n.i = True  # a bool is an int, as the runtime's setter says
    assert n.f == 1.5 and n.i == 1
    n.i = 2**64 - 1  # a value a uint64 holds travels as one
    assert n.i == 2**64 - 1
    for bad in (2**64, -(2**63) - 1):
        with pytest.raises((TypeError, OverflowError), match="i"):
            n.i = bad
    assert n.i == 2**64 - 1
    n.i = True  # a bool is an int, as the runtime's setter says
    assert n.i == 1
    with pytest.raises(TypeError, match=r"test_dc\.Numbers\.i: expected int, got float"):
        n.i = 1.0
    with pytest.raises(TypeError, match=r"test_dc\.Numbers\.b: expected bool, got int"):
        n.b = 1
    with pytest.raises(TypeError, match="oi"):
        n.oi = 1.5
    n.oi, n.a = None, 3.25
    assert n.oi is None and n.a == 3.25
    n.a = 4
    assert n.a == 4 and type(n.a) is int
    back = echo(n)
    assert (back.i, back.f, back.oi) == (1, 1.5, None)
    assert pf.get_global_func("testing.echo")(n.f) == 1.5


def test_eq_order_hash():
    assert Point(1, 2) == Point(1, 2) and Point(1, 2) != Point(2, 2)
    assert Point(1, 2) < Point(2, 0) and sorted([Point(3), Point(1)])[0].x == 1
    with pytest.raises(TypeError):
        hash(Point(1))  # eq without frozen: unhashable, as dataclasses
    v = Var("a")
    assert v != Var("a") and v == v  # eq=False (the default): identity
    assert hash(v) == hash(v)


def test_frozen_and_unsafe_hash():
    @py_class("test_dc.Frozen", frozen=True, eq=True)
    class Frozen(pf.Object):
        a: int
        b: str = "x"

    f = Frozen(1)
    assert hash(f) == hash(Frozen(1))
    with pytest.raises(AttributeError, match="read-only"):
        f.a = 2

    @py_class("test_dc.Unsafe", eq=True, unsafe_hash=True)
    class Unsafe(pf.Object):
        a: int

    assert hash(Unsafe(1)) == hash(Unsafe(1))


def test_kw_only_init_false_post_init_match_args_signature():
    @py_class("test_dc.Opts")
    class Opts(pf.Object):
        a: int
        b: list = field(default_factory=list)
        _: KW_ONLY
        c: int = 3
        d: int = field(default=0, init=False, repr=False)

        def __post_init__(self):
            self.d = self.a + self.c

    o = Opts(1, c=4)
    assert (o.a, list(o.b), o.c, o.d) == (1, [], 4, 5)
    with pytest.raises(TypeError):
        Opts(1, [], 4)  # c is keyword-only
    assert Opts.__match_args__ == ("a", "b")
    sig = inspect.signature(Opts)
    assert list(sig.parameters) == ["a", "b", "c"]
    assert sig.parameters["c"].kind is inspect.Parameter.KEYWORD_ONLY
    assert str(sig) == "(a: int, b: list = <factory>, *, c: int = 3) -> None"  # as dataclasses
    assert (
        repr(o)
        == "test_kw_only_init_false_post_init_match_args_signature.<locals>.Opts(a=1, b=[], c=4)"
    )


def test_helpers():
    p = Point(1, 2, "l")
    assert dc.is_dataclass(p) and dc.is_dataclass(Point) and not dc.is_dataclass(1)
    assert [f.name for f in dc.fields(p)] == ["x", "y", "label"]
    q = dc.replace(p, y=7)
    assert (q.x, q.y, q.label) == (1, 7, "l") and p.y == 2
    tree = Add(Var("a"), Const(2.0))
    assert dc.asdict(tree) == {"lhs": {"name": "a"}, "rhs": {"value": 2.0}}
    assert dc.astuple(tree) == (("a",), (2.0,))
    with pytest.raises(TypeError):
        dc.fields(1)


def test_inheritance_and_isinstance_through_the_runtime():
    a = Add(Var("x"), Const(1.5))
    assert isinstance(a, Expr) and isinstance(a.lhs, Var)
    assert core.type_is_instance(a.type_index, Expr.__pf_type_index__)
    assert a.arity() == 2


def test_forward_and_mutual_references():
    @py_class("test_dc.Tree")
    class Tree(pf.Object):
        kids: list
        owner: Optional["Forest"] = None

    @py_class("test_dc.Forest")
    class Forest(pf.Object):
        first: Optional[Tree] = None

    t = Tree([])
    f = Forest(t)
    t.owner = f
    assert t.owner.first.same_as(t)
    with pytest.raises(TypeError, match="owner"):
        t.owner = Tree([])
    t.owner = None  # the native cycle t <-> f, which no collector frees (a leak at exit)


def test_instance_keeps_class_when_it_returns_from_native_code():
    p = Point(3)
    echo = pf.get_global_func("testing.echo")
    back = echo(p)
    assert type(back) is Point and back.same_as(p) and back == p
    arr = pf.convert([p, Var("v")])
    assert type(arr[0]) is Point and type(arr[1]) is Var


def test_instance_keeps_its_identity_when_it_returns_from_native_code():
    echo = pf.get_global_func("testing.echo")
    p, v = Point(3), Var("v")
    assert echo(p) is p
    arr = pf.convert([p, v, p])
    assert arr[0] is p and arr[1] is v and arr[2] is p
    tree = Add(v, Const(1.0))
    assert tree.lhs is v and tree.rhs is tree.rhs  # a field read gives the same wrapper
    assert pf.convert({"k": tree})["k"] is tree
    ref = weakref.ref(v)
    assert echo(v) is ref()


@py_class("test_dc.Loose", slots=False)
class Loose(pf.Object):
    x: int = 0


def test_instance_state_outside_the_fields_survives_a_round_trip():
    obj = Loose(1)
    obj.note = "kept"  # slots=False: a __dict__ on the wrapper, which is what comes back
    back = pf.convert([obj])[0]
    assert back is obj and back.note == "kept"


def test_wrapper_dies_while_native_code_holds_the_object():
    arr = pf.convert([Point(5)])  # the Array holds the only reference after the wrapper dies
    gc.collect()
    first = arr[0]
    assert type(first) is Point and first.x == 5 and arr[0] is first
    address = id(first)
    del first
    gc.collect()
    again = arr[0]  # a new wrapper (the old one is gone): same class, same native object
    assert type(again) is Point and again.x == 5 and arr[0] is again
    del address


def test_instance_read_back_while_its_wrapper_is_being_deallocated():
    # A weakref callback runs during the wrapper's deallocation, while the native object still
    # refers to it: reading the instance back then makes a new wrapper instead of reviving the
    # dying one (which would crash). In a child process, as a crash would end pytest.
    import subprocess
    import sys

    code = (
        "import gc, weakref, packedfun as pf\n"
        "from packedfun.dataclasses import py_class\n"
        "@py_class('child_dc.P')\n"
        "class P(pf.Object):\n"
        "    x: int\n"
        "p = P(7); holder = pf.convert([p]); seen = []\n"
        "r = weakref.ref(p, lambda _: seen.append(holder[0]))\n"
        "del p; gc.collect()\n"
        "again = seen[0]; assert type(again) is P and again.x == 7, seen\n"
        "assert holder[0] is again\n"
        "del again, seen; gc.collect(); assert holder[0].x == 7\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert out.returncode == 0 and out.stdout.split() == [b"ok"], out.stderr.decode()[-2000:]


def test_pickle_copy_deepcopy_replace_json():
    tree = Add(Var("a"), Add(Const(1.0), Var("b")))
    for clone in (pickle.loads(pickle.dumps(tree)), copy.deepcopy(tree), from_json(to_json(tree))):
        assert type(clone) is Add and type(clone.rhs.lhs) is Const and not clone.same_as(tree)
        assert structural_equal(clone, tree)
    shallow = copy.copy(tree)
    assert shallow.lhs.same_as(tree.lhs)
    if hasattr(copy, "replace"):
        assert copy.replace(Point(1), y=3).y == 3


def test_structural_equal_hash_and_ignored_field():
    @py_class("test_dc.Span")
    class Node(pf.Object):
        value: int
        span: Any = field(default=None, structural_eq="ignore")

    a, b = Node(1, span="here"), Node(1, span="there")
    assert structural_equal(a, b) and structural_hash(a) == structural_hash(b)
    assert not structural_equal(a, Node(2))
    t1 = Add(Var("a"), Const(1.0))
    t2 = Add(Var("a"), Const(2.0))
    assert not structural_equal(t1, t2)
    assert structural_hash(t1) == structural_hash(Add(Var("a"), Const(1.0)))


def test_gc_collects_cycle_through_a_field():
    class Tok:
        pass

    def make():
        tok = Tok()
        node = Const(1.0)
        holder = Opaque(node)
        tok.node = holder
        holder.payload = tok
        return [weakref.ref(tok)]

    @py_class("test_dc.PointHolder")
    class Opaque(pf.Object):
        payload: Any

    refs = make()
    gc.collect()
    assert all(r() is None for r in refs)


# ---- bad input ---------------------------------------------------------------------------------


def test_unmappable_annotation_is_refused_at_definition():
    with pytest.raises(TypeError, match=r"Bad.*field 'x'.*cannot map"):

        @py_class("test_dc.Bad")
        class Bad(pf.Object):
            x: set

    with pytest.raises(KeyError):
        core.type_key_to_index("test_dc.Bad")  # nothing half-registered


def test_reserved_field_name_is_refused():
    with pytest.raises(ValueError, match=r"Reserved.*'handle'"):

        @py_class("test_dc.Reserved")
        class Reserved(pf.Object):
            handle: int


def test_default_of_the_wrong_type_is_refused():
    with pytest.raises(TypeError, match=r"WrongDefault.*field 'x'.*default 'a'"):

        @py_class("test_dc.WrongDefault")
        class WrongDefault(pf.Object):
            x: int = "a"


def test_type_key_taken_by_another_layout():
    with pytest.raises(ValueError, match="already taken"):

        @py_class("test_dc.Point")
        class Other(pf.Object):
            q: int

    assert pf.get_global_func("testing.echo")(1) == 1
    with pytest.raises(ValueError, match="already taken"):

        @py_class("testing.TestIntPair")
        class Pair(pf.Object):
            a: int


def test_native_parent_layout_cannot_be_extended():
    from packedfun import testing  # noqa: F401 (registers testing.TestIntPair's class)

    cls = pf.object._class_for(core.type_key_to_index("testing.TestIntPair"))
    # No default constructor, so no registered layout: refused, nothing left registered.
    with pytest.raises(TypeError, match="'test_dc.Sub' deriving from 'testing.TestIntPair'"):

        @py_class("test_dc.Sub")
        class Sub(cls):
            c: int

    with pytest.raises(KeyError):
        core.type_key_to_index("test_dc.Sub")


def test_order_without_eq_and_non_default_after_default():
    with pytest.raises(ValueError, match="order=True requires eq=True"):
        py_class(order=True)(type("X", (pf.Object,), {}))
    with pytest.raises(TypeError, match="non-default argument 'b'"):

        @py_class("test_dc.Order")
        class Order(pf.Object):
            a: int = 0
            b: int


def test_not_an_object_subclass():
    with pytest.raises(TypeError, match="must inherit from packedfun.Object"):

        @py_class
        class Plain:
            a: int


def test_frozen_mixing_refused():
    @py_class("test_dc.Base0", frozen=True)
    class Base0(pf.Object):
        a: int

    with pytest.raises(TypeError, match="non-frozen"):

        @py_class("test_dc.Sub0")
        class Sub0(Base0):
            b: int


def test_field_repeating_a_parent_field_is_refused_and_can_be_fixed():
    @py_class("test_dc.P1")
    class P1(pf.Object):
        a: int

    with pytest.raises(ValueError, match=r"test_dc\.C1.*field 'a' is defined twice"):

        @py_class("test_dc.C1")
        class C1(P1):
            a: int

    @py_class("test_dc.C1")  # the same key, a valid layout: registers cleanly
    class C1Fixed(P1):
        b: int

    assert (C1Fixed(1, 2).a, C1Fixed(1, 2).b) == (1, 2)


def test_failed_group_frees_its_keys_for_a_corrected_retry():
    @py_class("test_dc.GBase")
    class GBase(pf.Object):
        a: int

    @py_class("test_dc.GA")
    class GA(pf.Object):
        other: Optional["GB"] = None  # noqa: F821 (defined below: GA waits for it)

    # GA and GB refer to each other: both keys are reserved, then GB's layout is refused.
    with pytest.raises(ValueError, match="field 'a' is defined twice"):

        @py_class("test_dc.GB")
        class GB(GBase):
            a: int
            back: Optional[GA] = None

    for key in ("test_dc.GA", "test_dc.GB"):  # neither is left in the type table
        with pytest.raises(KeyError):
            core.type_key_to_index(key)
    with pytest.raises(TypeError):
        GA()

    # A corrected definition takes both keys, GB now under another parent.
    @py_class("test_dc.GA")
    class GA2(pf.Object):
        other: Optional["GB2"] = None

    @py_class("test_dc.GB")
    class GB2(pf.Object):
        b: int
        back: Optional[GA2] = None

    x = GA2(GB2(1))
    x.other.back = x
    assert x.other.back is x and type_info(core.type_key_to_index("test_dc.GB"))["depth"] == 1
    with pytest.raises(TypeError, match="test_dc.GA.other"):
        x.other = GA2()
    x.other.back = None


def test_failed_group_keeps_a_key_it_did_not_create():
    from packedfun import testing  # noqa: F401 (the C++ type testing.TestIntPair)

    native = core.type_key_to_index("testing.TestIntPair")

    @py_class("test_dc.GC")
    class GC(pf.Object):
        other: Optional["GPair"] = None  # noqa: F821

    with pytest.raises(ValueError, match="already taken"):

        @py_class("testing.TestIntPair")
        class GPair(pf.Object):
            back: Optional[GC] = None

    assert core.type_key_to_index("testing.TestIntPair") == native
    assert testing.TestIntPair(1, 2).sum() == 3
    with pytest.raises(KeyError):
        core.type_key_to_index("test_dc.GC")


def test_freeing_keys_refuses_types_in_use():
    release = pf.get_global_func("packedfun.slot_type_release")
    from packedfun import testing  # noqa: F401

    native = core.type_key_to_index("testing.TestIntPair")
    with pytest.raises(ValueError, match="neither a slot type nor a reserved key"):
        release([native])
    with pytest.raises(ValueError, match="'test_dc.Var' derives from it"):
        release([core.type_key_to_index("test_dc.Expr")])

    @py_class("test_dc.RefHolder")
    class Holder(pf.Object):
        item: Optional[Point] = None

    point = core.type_key_to_index("test_dc.Point")
    with pytest.raises(ValueError, match="field 'item' of type .test_dc.RefHolder. is declared"):
        release([point])
    with pytest.raises(ValueError, match="not a dynamic type"):
        release([1])
    assert core.type_key_to_index("testing.TestIntPair") == native
    assert core.type_key_to_index("test_dc.Point") == point
    assert Add(Var("x"), Const(1.0)).lhs.name == "x" and Holder(Point(1)).item.x == 1


def test_waiting_forward_reference_names_what_is_missing():
    @py_class("test_dc.Waits")
    class Waits(pf.Object):
        other: "NotYetDefined"  # noqa: F821

    with pytest.raises(TypeError, match="NotYetDefined"):
        Waits(None)


def test_two_object_bases_are_refused():
    @py_class("test_dc.M1")
    class M1(pf.Object):
        a: int

    @py_class("test_dc.M2")
    class M2(pf.Object):
        b: int

    with pytest.raises(TypeError, match="exactly one packedfun.Object base"):

        @py_class("test_dc.M3")
        class M3(M1, M2):
            pass


def test_construction_errors_and_a_user_init():
    with pytest.raises(TypeError, match="unexpected keyword argument 'q'"):
        Point(x=1, q=2)
    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        Point()

    @py_class("test_dc.UserInit")
    class UserInit(pf.Object):
        a: int

        def __init__(self, twice):
            self.__init_handle_by_constructor__(type(self).__pf_create__, 2 * twice)

    assert UserInit(twice=4).a == 8


def test_pickle_into_a_fresh_process_imports_the_defining_module(tmp_path):
    import subprocess
    import sys

    (tmp_path / "pc_ir.py").write_text(
        "import packedfun as pf\n"
        "from packedfun.dataclasses import py_class\n"
        "@py_class('pc_ir.Leaf', eq=True)\n"
        "class Leaf(pf.Object):\n"
        "    v: int\n"
        "    tag: str = 't'\n"
    )
    dump = (
        "import pickle, sys; sys.path.insert(0, sys.argv[1]); import pc_ir;"
        "sys.stdout.buffer.write(pickle.dumps(pc_ir.Leaf(7, 'x')))"
    )
    data = subprocess.run(
        [sys.executable, "-c", dump, str(tmp_path)], capture_output=True, timeout=120, check=True
    ).stdout
    load = (
        "import pickle, sys; sys.path.insert(0, sys.argv[1]);"
        "obj = pickle.loads(sys.stdin.buffer.read());"
        "print(type(obj).__module__, type(obj).__name__, obj.v, obj.tag)"
    )
    out = subprocess.run(
        [sys.executable, "-c", load, str(tmp_path)],
        input=data,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert out.stdout.decode().split() == ["pc_ir", "Leaf", "7", "x"], out.stderr.decode()[-2000:]


def test_frozen_field_escape_hatch_set():
    @py_class("test_dc.FrozenHatch", frozen=True)
    class FrozenHatch(pf.Object):
        x: int
        items: list = field(default_factory=list)
        y: int = field(init=False, default=0)

        def __post_init__(self):
            type(self).y.set(self, self.x * 2)  # a derived frozen field, set once

    p = FrozenHatch(5)
    assert p.y == 10
    descr = FrozenHatch.__dict__["x"]
    assert isinstance(descr, core.FieldDescriptor) and descr.readonly
    assert descr.fset is None
    FrozenHatch.x.set(p, 99)
    assert p.x == 99
    FrozenHatch.items.set(p, [1, 2])  # converted as any store: a list becomes an Array
    assert list(p.items) == [1, 2] and isinstance(p.items, pf.Array)
    with pytest.raises(AttributeError):
        p.x = 100  # attribute assignment stays refused
    assert p.x == 99
    with pytest.raises(TypeError, match="expected int"):
        FrozenHatch.x.set(p, "not an int")
    assert p.x == 99
    with pytest.raises(TypeError, match="expected an instance"):
        FrozenHatch.x.set(Var("v"), 1)
    with pytest.raises(TypeError, match="expected an instance"):
        FrozenHatch.x.set(42, 1)


def test_field_level_frozen_and_mutable_set_and_fset():
    @py_class("test_dc.FieldFrozenHatch")
    class FieldFrozenHatch(pf.Object):
        a: int
        b: int = field(frozen=True, default=0)

    r = FieldFrozenHatch(1, 2)
    assert FieldFrozenHatch.__dict__["b"].fset is None
    FieldFrozenHatch.b.set(r, 20)
    assert r.b == 20
    with pytest.raises(AttributeError):
        r.b = 3
    fset = FieldFrozenHatch.__dict__["a"].fset
    assert fset is not None
    fset(r, 7)
    FieldFrozenHatch.a.set(r, 8)  # on a mutable field, set is plain assignment
    assert r.a == 8


def test_annotation_names_the_latest_class_of_that_name():
    # Two function bodies define a class of the same name: each annotation means its own.
    def first():
        @py_class("test_dc.LatestInner1")
        class Inner(pf.Object):
            v: int

        @py_class("test_dc.LatestOuter1")
        class Outer(pf.Object):
            child: "Inner"

        return Inner, Outer

    def second():
        @py_class("test_dc.LatestInner2")
        class Inner(pf.Object):
            w: str

        @py_class("test_dc.LatestOuter2")
        class Outer(pf.Object):
            child: "Inner"

        return Inner, Outer

    inner1, outer1 = first()
    inner2, outer2 = second()
    assert outer2(inner2("a")).child.w == "a"
    assert outer1(inner1(1)).child.v == 1
    assert dc.fields(outer2)[0].type is inner2
    with pytest.raises(TypeError):
        outer2(inner1(1))
    assert dc.asdict(outer2(inner2("b"))) == {"child": {"w": "b"}}


def test_field_type_is_the_resolved_annotation():
    @py_class("test_dc.ResolvedType")
    class ResolvedType(pf.Object):
        e: "Expr"
        v: "Optional[int]" = None

    e, v = dc.fields(ResolvedType)
    assert v.type == Optional[int] and e.type is Expr


def test_helpers_name_both_class_kinds_in_their_errors():
    with pytest.raises(TypeError, match="c_class or py_class"):
        dc.fields(42)
    for helper in (dc.asdict, dc.astuple, dc.replace):
        with pytest.raises(TypeError, match="c_class / py_class instances"):
            helper(42)


def test_init_property_computed_once_at_construction():
    calls: list = []

    @py_class("test_dc.IPBase")
    class Base(pf.Object):
        x: int = 0

        @dc.init_property
        def doubled(self) -> int:
            calls.append("base")
            return self.x * 2

        def __post_init__(self) -> None:
            calls.append(("post", self.doubled))  # computed before __post_init__

    @py_class("test_dc.IPChild")
    class Child(Base):
        y: int = 0

        @dc.init_property
        def total(self) -> int:
            return self.doubled + self.y  # the parent's computed field is ready

    c = Child(3, 4)
    assert (c.doubled, c.total) == (6, 10)
    assert calls == ["base", ("post", 6)]
    assert c.doubled == 6 and calls == ["base", ("post", 6)]  # a read does not call again
    assert [f.name for f in dc.fields(Child)] == ["x", "doubled", "y", "total"]
    assert "doubled" not in inspect.signature(Child).parameters  # init=False
    names = [f["name"] for f in type_info(Child.__pf_type_index__)["fields"]]
    assert "total" in names  # a native field, readable by other languages
    assert structural_equal(Child(3, 4), Child(3, 4))
    assert structural_hash(Child(3, 4)) == structural_hash(Child(3, 4))


def test_init_property_override_and_errors():
    @py_class("test_dc.IPOverBase")
    class Base(pf.Object):
        @dc.init_property
        def value(self) -> int:
            raise AssertionError("replaced by the subclass")

    @py_class("test_dc.IPOverChild")
    class Child(Base):
        @dc.init_property
        def value(self) -> int:
            return 2

    assert Child().value == 2
    assert [f.name for f in dc.fields(Child)] == ["value"]  # one field, not two

    @py_class("test_dc.IPBadType")
    class Bad(pf.Object):
        @dc.init_property
        def value(self) -> int:
            return "not an int"  # type: ignore[return-value]

    with pytest.raises(TypeError):
        Bad()

    @py_class("test_dc.IPRaises")
    class Raises(pf.Object):
        @dc.init_property
        def value(self) -> int:
            raise KeyError("inside")

    with pytest.raises(KeyError, match="inside"):
        Raises()
    with pytest.raises(TypeError, match="expected a function"):
        dc.init_property(3)


def test_init_property_on_a_frozen_class():
    @py_class("test_dc.IPFrozen", frozen=True)
    class Frozen(pf.Object):
        x: int

        @dc.init_property
        def label(self) -> str:
            return f"x={self.x}"

    f = Frozen(4)
    assert f.label == "x=4"
    with pytest.raises(AttributeError):
        f.label = "other"


def test_field_refuses_a_non_callable_default_factory_at_once():
    for bad in (42, None, "x"):
        with pytest.raises(TypeError, match="default_factory must be a callable"):
            field(default_factory=bad)


def test_dtype_and_device_fields():
    @py_class("test_dc.DTypeDevice")
    class Holder(pf.Object):
        dt: pf.dtype
        dev: pf.Device
        maybe: Optional[pf.dtype] = None

    h = Holder(pf.dtype("float16"), pf.device("cpu", 0))
    assert h.dt == "float16" and isinstance(h.dt, pf.dtype) and h.maybe is None
    assert h.dev == pf.device("cpu", 0)
    h.dt = "int8"  # a dtype's name is stored as the dtype
    assert isinstance(h.dt, pf.dtype) and h.dt == "int8"
    h.maybe = "bfloat16"
    assert h.maybe == "bfloat16"
    with pytest.raises(TypeError, match=r"DTypeDevice.dt: expected dtype, got str"):
        h.dt = "not a dtype"
    with pytest.raises(TypeError, match=r"expected dtype, got int"):
        Holder(3, pf.device("cpu"))
    h.dev = "cuda:1"  # a device's name is stored as the device
    assert isinstance(h.dev, pf.Device) and h.dev == pf.device("cuda", 1)
    assert Holder("int8", "cpu").dev == pf.device("cpu", 0)
    for bad in ("gpu", "cuda:x", "cuda:", ""):
        with pytest.raises(TypeError, match=r"DTypeDevice.dev: expected Device, got str"):
            h.dev = bad
    assert h.dev == pf.device("cuda", 1)  # a refused store leaves the field as it was
    assert h.dt == "int8"
    assert structural_equal(Holder("int8", pf.device("cpu")), Holder("int8", pf.device("cpu")))
    assert not structural_equal(Holder("int8", pf.device("cpu")), Holder("int4", pf.device("cpu")))
    copy_ = pickle.loads(pickle.dumps(h))
    assert (copy_.dt, copy_.dev, copy_.maybe) == (h.dt, h.dev, h.maybe)


def test_own_init_starts_from_a_blank_object():
    @py_class("test_dc.OwnInitParent")
    class Parent(pf.Object):
        a: int
        b: str = "b"

    @py_class("test_dc.OwnInitChild", init=False)
    class Child(Parent):
        c: float
        d: Optional[Parent]
        n: bool

        def __init__(self, a: int, c: float) -> None:
            assert (self.c, self.d, self.n) == (0.0, None, False)  # blank until assigned
            super().__init__(a)  # the parent's fields, its default included
            self.c = c

    ch = Child(1, 2.5)
    assert (ch.a, ch.b, ch.c, ch.d, ch.n) == (1, "b", 2.5, None, False)
    assert type(ch) is Child and ch.type_index == Child.__pf_type_index__
    with pytest.raises(TypeError, match="OwnInitChild.c: expected float, got str"):
        ch.c = "x"
    with pytest.raises(TypeError):
        super(Child, ch).__init__()  # the parent's __init__ still requires its arguments
    assert structural_equal(Child(1, 2.5), Child(1, 2.5))
    assert pickle.loads(pickle.dumps(ch)).c == 2.5

    @py_class("test_dc.OwnInitRaises", init=False)
    class Raises(pf.Object):
        a: int

        def __init__(self) -> None:
            raise KeyError("inside")

    with pytest.raises(KeyError, match="inside"):
        Raises()


def test_a_class_keeps_its_own_replace():
    @py_class("test_dc.OwnReplace")
    class OwnReplace(pf.Object):
        x: int

        def __replace__(self, **changes):
            return ("custom", changes)

    assert OwnReplace(1).__replace__(x=2) == ("custom", {"x": 2})

    @py_class("test_dc.DefaultReplace")
    class DefaultReplace(pf.Object):
        x: int

    assert DefaultReplace(1).__replace__(x=2).x == 2


def test_element_types_of_container_fields_are_checked():
    # list[T] / dict[K, V] fields: the runtime checks every element on every store (from any
    # language), the error naming the field and the element
    @py_class("test_dc.Elements")
    class Elements(pf.Object):
        matrix: list[list[int]]
        table: Optional[dict[str, list[float]]] = None
        loose: list = dc.field(default_factory=list)  # no element type: anything goes

    e = Elements([[1, 2], [3]])
    assert [list(row) for row in e.matrix] == [[1, 2], [3]]
    with pytest.raises(TypeError, match=r"Elements\.matrix: element \[0\]: expected .*got int"):
        e.matrix = [4, 3]
    with pytest.raises(TypeError, match=r"element \[0\]: element \[1\]: expected int, got str"):
        e.matrix = [[1, "x"]]
    with pytest.raises(TypeError, match=r"expected .*got None"):
        e.matrix = None
    with pytest.raises(TypeError, match=r"element \[1\]: expected int, got None"):
        Elements([[1, None]])
    assert [list(row) for row in e.matrix] == [[1, 2], [3]]  # a refused store changes nothing
    e.table = {"a": [1, 2.5]}  # an int element fits a float element type
    assert list(e.table["a"]) == [1, 2.5]
    with pytest.raises(TypeError, match=r"Elements\.table: value: element \[0\]: expected float"):
        e.table = {"a": ["x"]}
    with pytest.raises(TypeError, match=r"key: expected str, got int"):
        e.table = {1: [1.0]}
    e.table = None
    e.loose = [1, "two", None]
    assert list(e.loose) == [1, "two", None]


def test_forward_reference_to_a_py_class_of_another_module():
    # a class that module A names only for type checkers (a circular import), defined in module B
    ns_b: dict = {"__name__": "test_dc_cross_b", "py_class": py_class, "Object": pf.Object}
    exec(
        "from __future__ import annotations\n"
        "@py_class('test_dc.CrossTarget')\n"
        "class CrossTarget(Object):\n"
        "    x: int\n",
        ns_b,
    )
    ns_a: dict = {"__name__": "test_dc_cross_a", "py_class": py_class, "Object": pf.Object}
    exec(
        "from __future__ import annotations\n"
        "@py_class('test_dc.CrossHolder')\n"
        "class CrossHolder(Object):\n"
        "    child: CrossTarget | None = None\n",
        ns_a,
    )
    holder = ns_a["CrossHolder"](ns_b["CrossTarget"](3))
    assert holder.child.x == 3
    with pytest.raises(TypeError, match=r"expected Optional\[test_dc.CrossTarget\]"):
        holder.child = 5


def test_field_named_self():
    @py_class("test_dc.SelfField")
    class Holder(pf.Object):
        self: int
        other: str = "o"

    h = Holder(self=1)
    assert (h.self, h.other) == (1, "o") and Holder(2, "x").self == 2
    assert list(inspect.signature(Holder.__init__).parameters) == ["__pf_self__", "self", "other"]
    with pytest.raises(TypeError, match="expected int, got str"):
        Holder(self="no")


# ---- Union fields -------------------------------------------------------------------------------
def test_a_union_field_takes_a_value_of_one_member_and_refuses_the_rest():
    from typing import Union

    @py_class("test_dc.UnionFields")
    class UnionFields(pf.Object):
        v: Union[int, str]
        opt: Optional[Union[int, str]] = None
        pipe: "int | bytes" = 0
        num: Union[float, str] = 0.0  # an int is stored as a float (the first member that fits)
        keep: Union[int, float] = 0  # an int stays an int
        items: list[Union[int, str]] = field(default_factory=list)
        table: dict[str, Optional[Union[int, list[int]]]] = field(default_factory=dict)

    u = UnionFields("a")
    assert u.v == "a"
    u.v, u.pipe, u.opt = 1, b"x", "s"
    assert (u.v, u.pipe, u.opt) == (1, b"x", "s")
    u.opt = None
    assert u.opt is None
    u.num, u.keep = 2, 2
    assert type(u.num) is float and u.num == 2.0 and type(u.keep) is int
    u.items = [1, "x"]
    u.table = {"a": 1, "b": None, "c": [1, 2]}
    assert list(u.items) == [1, "x"] and list(u.table["c"]) == [1, 2]
    for name, bad, got in (("v", 3.5, "float"), ("v", None, "None"), ("pipe", "s", "str"),
                           ("v", [1], "packedfun.Array")):  # fmt: skip
        with pytest.raises(
            TypeError, match=rf"test_dc\.UnionFields\.{name}: expected .*, got {got}"
        ):
            setattr(u, name, bad)
    assert u.v == 1  # unchanged by a refused store
    with pytest.raises(TypeError, match=r"\.v: expected Union\[int, str\], got float"):
        UnionFields(2.5)
    with pytest.raises(TypeError, match=r"\.items: element \[1\]: expected Union\[int, str\]"):
        u.items = [1, 2.5]
    with pytest.raises(TypeError, match=r"\.items: element \[0\]: expected Union"):
        u.items = [None]  # not Optional
    with pytest.raises(TypeError, match=r"\.table: value: expected Optional\[Union\[int, "):
        u.table = {"a": [1, "x"]}  # the list member's own element type is checked too
    assert list(u.items) == [1, "x"]


def test_a_union_with_a_member_packedfun_cannot_check_takes_any_value():
    from typing import Union

    class Plain:  # not a packedfun type: no check exists for it
        pass

    @py_class("test_dc.LooseUnion")
    class LooseUnion(pf.Object):
        v: Union[int, Plain] = 0
        w: Union[int, Any] = 0

    u = LooseUnion()
    for value in (1, "s", 2.5, None):
        u.v = u.w = value
        assert u.v == value and u.w == value
    plain = Plain()
    u.v = plain
    assert u.v is plain
