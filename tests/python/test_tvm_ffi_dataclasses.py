# `tvm_ffi.dataclasses` under the switch: packedfun.dataclasses' names, tvm-ffi's py_class rule.
"""``packedfun._tvm_ffi_dataclasses`` is what ``import tvm_ffi.dataclasses`` gives under the
switch: packedfun's own names, except ``py_class``, which lets frozen and mutable classes mix in
one hierarchy (tvm-ffi's rule; packedfun's own ``py_class`` refuses it, test_dataclasses), and
``c_class``, which takes a tvm-ffi type's init traits from its reflection (test_tvm_ffi_init).
Checked here in this process, and the switch's import in a child process. Both backends: the suite
runs once per backend, and the child inherits ``PACKEDFUN_BACKEND``."""

from __future__ import annotations

import copy
import importlib
from typing import Optional

import packedfun
import packedfun._tvm_ffi_dataclasses as tdc
import packedfun.dataclasses as dc
import pytest
from test_tvm_ffi_switch import run_child


def test_names_are_packedfuns_own_but_py_class_c_class_and_field():
    for name in tdc.__all__:
        if name not in ("py_class", "c_class", "Field", "field", "fields", "replace"):
            assert getattr(tdc, name) is getattr(dc, name), name
    assert tdc.py_class is not dc.py_class and tdc.c_class is not dc.c_class
    assert tdc.replace is not dc.replace  # tvm-ffi's form for tvm-ffi's types
    assert issubclass(tdc.Field, dc.Field)  # every py_class takes tvm-ffi's Field


def test_field_has_tvm_ffi_signature_and_defaults():
    from packedfun._tvm_ffi_core import TypeSchema

    f = tdc.Field("x", TypeSchema("int"))
    assert (f.name, f.hash, f.compare, f.kw_only) == ("x", True, False, False)
    assert f._ty_schema == TypeSchema("int")
    g = tdc.field()
    assert isinstance(g, tdc.Field) and isinstance(g, dc.Field)
    assert (g.hash, g.compare, g.kw_only) == (None, True, None)  # follow compare / the class

    def conv(v):
        return v

    assert tdc.field(converter=conv).converter is conv
    assert tdc.field(my_option=1).extra_kwargs == {"my_option": 1}
    assert tdc.py_class.__dataclass_transform__["kwargs"]["converter"] is tdc.field().converter
    assert tdc.c_class.__dataclass_transform__["kwargs"]["converter"] is tdc.field().converter
    with pytest.raises(ValueError, match="both default and default_factory"):
        tdc.Field("x", default=0, default_factory=int)
    with pytest.raises(TypeError, match="callable"):
        tdc.Field("x", default_factory=0)
    with pytest.raises(ValueError, match="structural_eq"):
        tdc.field(structural_eq="tree-ish")
    h = copy.copy(tdc.field(metadata={"k": 1}, opt=2))
    assert h.metadata == {"k": 1} and h.extra_kwargs == {"opt": 2}


def _steps():
    from packedfun import _tvm_ffi_core as core
    from packedfun import _tvm_ffi_private as private

    return core, private


def test_low_level_steps_define_a_py_class():
    core, private = _steps()
    TS = core.TypeSchema
    parent_info = core._type_cls_to_type_info(packedfun.Object)
    cls = type("Point", (packedfun.Object,), {"__slots__": ()})
    info = private._register_py_class(parent_info, "test_tdc.steps.Point", cls)
    assert info.fields is None and info.type_key == "test_tdc.steps.Point"
    info._register_fields(
        [
            tdc.Field("x", TS("int"), compare=True),  # tvm-ffi's Field: compare=False
            tdc.Field("y", TS("float"), default=0.5),
            tdc.Field("tags", TS("Optional", (TS("Array", (TS("str"),)),)), default=None),
        ]
    )
    assert [f.name for f in info.fields] == ["x", "y", "tags"]
    offsets = [f.offset for f in info.fields]
    assert offsets == sorted(offsets) and len(set(offsets)) == 3
    assert core._lookup_type_attr(info.type_index, "__ffi_init__") is not None
    assert private._add_class_attrs(cls, info) is cls
    private._install_dataclass_dunders(
        cls, init=True, repr=True, eq=True, order=False, unsafe_hash=False
    )
    p = cls(3)
    assert (p.x, p.y, p.tags) == (3, 0.5, None)
    assert p == cls(3) and p != cls(4)
    assert repr(p) == "Point(x=3, y=0.5, tags=None)"
    with pytest.raises(TypeError):
        p.x = "not an int"
    assert p.x == 3
    assert core._lookup_or_register_type_info_from_type_key("test_tdc.steps.Point").type_cls is cls
    with pytest.raises(RuntimeError, match="already called"):
        info._register_fields([tdc.Field("z", TS("int"))])


def test_low_level_steps_refuse_bad_input():
    core, private = _steps()
    TS = core.TypeSchema
    parent_info = core._type_cls_to_type_info(packedfun.Object)
    first = type("Dup1", (packedfun.Object,), {"__slots__": ()})
    private._register_py_class(parent_info, "test_tdc.steps.Dup", first)
    second = type("Dup2", (packedfun.Object,), {"__slots__": ()})
    with pytest.raises(ValueError, match="already registered"):
        private._register_py_class(parent_info, "test_tdc.steps.Dup", second)
    with pytest.raises(TypeError, match="must derive"):
        private._register_py_class(parent_info, "test_tdc.steps.NotObject", int)
    with pytest.raises(TypeError, match="parent TypeInfo"):
        private._register_py_class(object(), "test_tdc.steps.NoParent", second)
    third = type("Bad", (packedfun.Object,), {"__slots__": ()})
    info = private._register_py_class(parent_info, "test_tdc.steps.Bad", third)
    with pytest.raises(TypeError, match="names no registered type"):
        info._register_fields([tdc.Field("x", TS("no.such.Type"))])
    with pytest.raises(TypeError, match="type schema"):
        info._register_fields([tdc.Field("x")])
    with pytest.raises(TypeError, match="needs a name"):
        info._register_fields([tdc.Field(None, TS("int"))])
    fourth = type("NoFields", (packedfun.Object,), {"__slots__": ()})
    with pytest.raises(TypeError, match="_register_fields first"):
        private._install_dataclass_dunders(
            fourth, init=True, repr=True, eq=False, order=False, unsafe_hash=False
        )


def test_type_schema_convert_checks_the_value():
    core, _ = _steps()
    assert core.TypeSchema("int").convert(42) == 42
    assert core.TypeSchema("Optional", (core.TypeSchema("str"),)).convert(None) is None
    with pytest.raises(TypeError, match="cannot convert"):
        core.TypeSchema("int").convert("not an int")


def test_frozen_parent_mutable_child():
    @tdc.py_class("test_tdc.FrozenParent", frozen=True)
    class Parent(packedfun.Object):
        a: int

    @tdc.py_class("test_tdc.MutableChild")
    class Child(Parent):
        b: int

    c = Child(1, 2)
    with pytest.raises(AttributeError):
        c.a = 10  # the parent's field stays frozen
    c.b = 20
    assert (c.a, c.b) == (1, 20)
    Child.a.set(c, 5)  # the escape hatch reaches the inherited frozen field
    assert c.a == 5


def test_mutable_parent_frozen_child():
    @tdc.py_class("test_tdc.MutableParent")
    class Parent(packedfun.Object):
        a: int

    @tdc.py_class("test_tdc.FrozenChild", frozen=True, eq=True)
    class Child(Parent):
        b: int

    c = Child(1, 2)
    c.a = 10
    with pytest.raises(AttributeError):
        c.b = 20
    assert (c.a, c.b) == (10, 2)
    assert Child(1, 2) == Child(1, 2) and hash(Child(1, 2)) == hash(Child(1, 2))


def test_packedfun_py_class_still_refuses_the_mix():
    @tdc.py_class("test_tdc.FrozenBase", frozen=True)
    class Base(packedfun.Object):
        a: int

    with pytest.raises(TypeError, match="non-frozen"):

        @dc.py_class("test_tdc.RefusedChild")
        class Child(Base):
            b: int


def test_switch_imports_it_as_tvm_ffi_dataclasses():
    run_child(
        """
        import sys
        import packedfun
        import packedfun.tvm_ffi_compat as compat
        compat.install()
        from tvm_ffi.dataclasses import Object, py_class, field
        import tvm_ffi.dataclasses
        assert sys.modules["tvm_ffi.dataclasses"] is sys.modules["packedfun._tvm_ffi_dataclasses"]
        assert tvm_ffi.dataclasses.asdict is sys.modules["packedfun.dataclasses"].asdict

        @py_class("child.Frozen", frozen=True)
        class Frozen(Object):
            a: int

        @py_class("child.Mutable")
        class Mutable(Frozen):
            b: int = field(default=0)

        m = Mutable(1)
        m.b = 3
        assert (m.a, m.b) == (1, 3)
        try:
            import tvm_ffi.dataclasses.no_such_module
        except ModuleNotFoundError:
            pass
        else:
            raise AssertionError("tvm_ffi.dataclasses.no_such_module imported")
        print("ok")
        """
    )


def test_a_default_that_does_not_fit_fails_when_used():
    # tvm-ffi's rule under the switch: the class is defined; building with the default raises
    @tdc.py_class("test_tdc.LateDefault")
    class Late(packedfun.Object):
        a: int
        b: str = 5  # type: ignore[assignment]

    with pytest.raises(TypeError, match=r"default for field 'b'"):
        Late(1)
    assert Late(1, "x").b == "x"  # an explicit value that fits is fine
    with pytest.raises(TypeError):
        Late(1, 5)  # an explicit value that does not fit: the usual store error
    with pytest.raises(TypeError, match="does not fit"):  # packedfun's own: at definition

        @dc.py_class("test_tdc.EarlyDefault")
        class Early(packedfun.Object):
            b: str = 5  # type: ignore[assignment]


def test_low_level_names_are_on_the_switchs_modules():
    run_child(
        """
        import packedfun, packedfun.tvm_ffi_compat as compat
        import packedfun._tvm_ffi_private as private
        compat.install()
        from tvm_ffi._dunder import _install_dataclass_dunders
        from tvm_ffi.core import _register_py_class, _to_py_class_value
        from tvm_ffi.registry import _add_class_attrs
        assert _install_dataclass_dunders is private._install_dataclass_dunders
        assert _register_py_class is private._register_py_class
        assert _add_class_attrs is private._add_class_attrs
        assert _to_py_class_value(5) == 5
        compat.uninstall()
        assert not hasattr(packedfun.registry, "_add_class_attrs")
        assert not hasattr(packedfun.core, "_register_py_class")
        print("ok")
        """
    )


def test_required_fields_come_first_in_init():
    # tvm-ffi's rule under the switch; packedfun's own py_class refuses the order (dataclasses')
    @tdc.py_class("test_tdc.Reorder")
    class Reorder(packedfun.Object):
        a: int = 0
        b: int  # type: ignore[misc]
        _: dc.KW_ONLY
        c: int = 10
        d: int  # type: ignore[misc]

    import inspect

    assert list(inspect.signature(Reorder).parameters) == ["b", "a", "d", "c"]
    r = Reorder(2, d=4)
    assert (r.a, r.b, r.c, r.d) == (0, 2, 10, 4)
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument 'a'"):

        @dc.py_class("test_tdc.NoReorder")
        class NoReorder(packedfun.Object):
            a: int = 0
            b: int  # type: ignore[misc]


def test_plain_classes_between_add_their_fields():
    # tvm-ffi's rule under the switch: annotated fields of plain classes between a py_class and
    # its native parent are the py_class's own; a KW_ONLY marker holds into the classes below; a
    # name declared again keeps its place and takes the later declaration
    from packedfun._tvm_ffi_core import _type_cls_to_type_info

    @tdc.py_class("test_tdc.MixNode")
    class Node(packedfun.Object):
        x: int

    class Between(Node):
        lhs: int
        kind: str = "op"
        _: dc.KW_ONLY
        rhs: int

    @tdc.py_class("test_tdc.MixAdd")
    class Add(Between):
        kind: bytes = b"add"
        scale: int

    a = Add(0, 1, rhs=3, scale=2)
    assert (a.x, a.lhs, a.kind, a.rhs, a.scale) == (0, 1, b"add", 3, 2)
    assert [f.name for f in dc.fields(Add)] == ["x", "lhs", "kind", "rhs", "scale"]
    info = _type_cls_to_type_info(Add)
    assert [f.name for f in info.fields] == ["lhs", "kind", "rhs", "scale"]
    assert info.fields[1].dataclass_field.type is bytes
    with pytest.raises(TypeError):
        Add(0, 1, b"k", 3, 2)  # rhs and scale are keyword-only
    assert Between.kind == "op"  # the plain class keeps its own attributes
    with pytest.raises(TypeError, match="cannot derive from"):

        @dc.py_class("test_tdc.MixRefused")  # packedfun's own py_class: no such classes
        class Refused(Between):
            y: int


class _Marker:
    """A field marker of an extension (test_field_markers_and_resolution_hooks)."""


def test_field_markers_and_resolution_hooks():
    seen: list = []

    @tdc.py_class("test_tdc.HookBase")
    class Base(packedfun.Object):
        __ffi_field_markers__ = (_Marker,)
        first: int
        boundary: _Marker = "kept"  # type: ignore[assignment]

        def __ffi_hook__(info, own):  # type: ignore[misc]
            assert not info.fields  # before the fields are registered
            seen.append((info.type_key, [(f.name, str(f._ty_schema)) for f in own]))
            for f in own:
                if "unit" in f.extra_kwargs:
                    f.metadata["unit"] = f.extra_kwargs.pop("unit")

        __ffi_hook__.__ffi_on_fields_resolved__ = True  # type: ignore[attr-defined]

    @tdc.py_class("test_tdc.HookChild")
    class Child(Base):
        size: Optional[int] = tdc.field(default=None, unit="px")  # noqa: UP045

    assert seen == [
        ("test_tdc.HookBase", [("first", "int")]),
        ("test_tdc.HookChild", [("size", "int | None")]),
    ]
    assert Base.boundary == "kept"  # a marker declares no field; its value stays the class's
    assert [f.name for f in dc.fields(Child)] == ["first", "size"]
    assert dc.fields(Child)[1].metadata == {"unit": "px"}
    assert Child(1).size is None
    from packedfun._tvm_ffi_core import _type_cls_to_type_info

    assert _type_cls_to_type_info(Child)._decorator_args["field_markers"] == (
        (_Marker, Base, "boundary", 1),
    )
    with pytest.raises(TypeError, match=r"Typo[.]size: unrecognized field options: colour"):

        @tdc.py_class("test_tdc.HookTypo")
        class Typo(Base):
            size: int = tdc.field(default=0, colour="red")

    with pytest.raises(TypeError, match="__ffi_field_markers__ must be a tuple or list of types"):

        @tdc.py_class("test_tdc.BadMarkers")
        class BadMarkers(packedfun.Object):
            __ffi_field_markers__ = ("not a type",)
            x: int


def test_type_schema_from_annotation():
    from packedfun._tvm_ffi_core import TypeSchema

    @tdc.py_class("test_tdc.SchemaNode")
    class Node(packedfun.Object):
        x: int

    cases = {
        int: "int",
        Optional[str]: "str | None",  # noqa: UP045
        list[int]: "List[int]",
        dict[str, float]: "Dict[str, float]",
        Node: "test_tdc.SchemaNode",
        packedfun.Object: "Object",
        type(None): "None",
    }
    for annotation, text in cases.items():
        assert str(TypeSchema.from_annotation(annotation)) == text, annotation


def test_object_annotation_is_refused_under_the_switch():
    # tvm-ffi's rule; packedfun's own py_class takes `object` as Any
    with pytest.raises(TypeError, match="unsupported annotation 'object'"):

        @tdc.py_class("test_tdc.ObjectAnnotation")
        class Refused(packedfun.Object):
            x: object

    @tdc.py_class("test_tdc.ObjectAnnotation")  # the key is free again
    class Fine(packedfun.Object):
        x: int

    @dc.py_class("test_tdc.ObjectAnnotationOwn")
    class Own(packedfun.Object):
        x: object

    assert Fine(1).x == 1 and Own("anything").x == "anything"


def test_submodules_are_this_module_and_keep_the_function_names():
    run_child(
        """
        import collections, sys, warnings
        import packedfun.tvm_ffi_compat as compat
        compat.install()
        import tvm_ffi.dataclasses
        from tvm_ffi.dataclasses.c_class import _attach_field_objects, c_class
        from tvm_ffi.dataclasses.common import _asdict_inner, _astuple_inner
        from tvm_ffi.registry import _warn_missing_field_annotations
        mod = sys.modules["packedfun._tvm_ffi_dataclasses"]
        assert sys.modules["tvm_ffi.dataclasses.c_class"] is mod
        assert c_class is mod.c_class and callable(tvm_ffi.dataclasses.c_class)
        dd = collections.defaultdict(list, {"a": [1]})
        out = _asdict_inner(dd, dict)
        assert type(out) is collections.defaultdict and out.default_factory is list
        assert out == {"a": [1]} and _astuple_inner([1, (2, 3)], tuple) == [1, (2, 3)]

        class Info:  # what the helper reads of a type info
            type_key = "x.T"
            fields = [type("F", (), {"name": "a"})(), type("F", (), {"name": "b"})()]

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _warn_missing_field_annotations(type("C", (), {"__annotations__": {"a": int}}), Info,
                                            stacklevel=1)
        assert len(caught) == 1 and "annotate the following reflected field(s): b" in str(
            caught[0].message)
        print("ok")
        """
    )


def test_type_attribute_columns_of_a_py_class():
    from packedfun import _tvm_ffi_core as core

    lookup = core._lookup_type_attr

    @tdc.py_class("test_tdc.attrs.Parent")
    class Parent(packedfun.Object):
        __ffi_type_attr_names__ = ("__my_meta__", "__my_hook__")
        __ffi_inherit_type_attrs__ = ("__my_hook__", "__data_to_json__")
        __my_meta__ = ("a", 1)
        value: int

        def __my_hook__(self):
            return self.value + 1

        def __ffi_repr__(self, fn_repr):
            return "P"

        @staticmethod
        def __data_to_json__(obj):
            return str(obj.value)

        @dc.method
        def __ffi_eq__(self, other, fn_eq):  # marked, but an attribute: not a method
            return True

        @dc.method
        def not_an_attr(self):
            return 0

    p = Parent.__pf_type_index__
    from packedfun._tvm_ffi_ffi_api import ReprPrint

    assert repr(Parent(4)) == ReprPrint(Parent(4)) == "P"  # repr() prints through the hook
    assert lookup(p, "__my_meta__") == ("a", 1)
    assert lookup(p, "__my_hook__")(Parent(4)) == 5
    assert lookup(p, "__ffi_repr__") is Parent.__dict__["__ffi_repr__"]
    assert lookup(p, "__data_to_json__") is Parent.__dict__["__data_to_json__"].__func__
    assert lookup(p, "not_an_attr") is None and lookup(p, "value") is None
    assert lookup(p, "__ffi_init__") is not None
    shallow = lookup(p, "__ffi_shallow_copy__")(Parent(3))
    assert type(shallow) is Parent and shallow.value == 3
    methods = [m.name for m in core.TypeInfo(p, Parent).methods]
    assert "not_an_attr" in methods and "__ffi_eq__" not in methods and "__my_meta__" not in methods
    assert lookup(p, "__ffi_eq__") is not None

    @tdc.py_class("test_tdc.attrs.Child")
    class Child(Parent):
        pass

    c = Child.__pf_type_index__
    assert repr(Child(7)).endswith("Child(value=7)")  # __ffi_repr__ is not inherited
    assert lookup(c, "__my_hook__")(Child(7)) == 8  # listed as inherited
    assert lookup(c, "__data_to_json__") is not None
    assert lookup(c, "__my_meta__") is None and lookup(c, "__ffi_repr__") is None  # not listed
    assert lookup(c, "__my_meta__", ancestor=True) == ("a", 1)

    @tdc.py_class("test_tdc.attrs.Off")
    class Off(Parent):
        __my_hook__ = None  # none, for its subclasses too

    @tdc.py_class("test_tdc.attrs.OffChild")
    class OffChild(Off):
        pass

    assert lookup(Off.__pf_type_index__, "__my_hook__") is None
    assert lookup(OffChild.__pf_type_index__, "__my_hook__") is None
    assert lookup(OffChild.__pf_type_index__, "__data_to_json__") is not None

    @tdc.py_class("test_tdc.attrs.OptOut")
    class OptOut(Parent):
        __ffi_inherit_type_attrs__ = ()

    assert lookup(OptOut.__pf_type_index__, "__data_to_json__") is None

    for bad in ("__x__", ("__x__", 1), None):
        with pytest.raises(TypeError, match="tuples or lists of str"):

            @tdc.py_class(f"test_tdc.attrs.Bad{len(repr(bad))}")
            class Bad(packedfun.Object):
                __ffi_type_attr_names__ = bad
                x: int

    # packedfun's own py_class keeps no tvm-ffi attribute columns
    @dc.py_class("test_tdc.attrs.Own")
    class Own(packedfun.Object):
        x: int

        def __ffi_repr__(self, fn_repr):
            return "O"

    assert lookup(Own.__pf_type_index__, "__ffi_repr__") is None


def test_ffi_repr_hook_prints_parts_through_fn_repr():
    from packedfun._tvm_ffi_ffi_api import ReprPrint

    @tdc.py_class("test_tdc.repr.Leaf")
    class Leaf(packedfun.Object):
        x: int

        def __ffi_repr__(self, fn_repr):
            return f"<{self.x}>"

    @tdc.py_class("test_tdc.repr.Pair")
    class Pair(packedfun.Object):
        left: Leaf
        right: Leaf

        def __ffi_repr__(self, fn_repr):
            return f"Pair[{fn_repr(self.left)} {fn_repr(self.right)}]"

    @tdc.py_class("test_tdc.repr.Own")
    class Own(packedfun.Object):
        x: int

        def __ffi_repr__(self, fn_repr):
            return "hook"

        def __repr__(self):  # the class's own __repr__ stays
            return "own"

    @tdc.py_class("test_tdc.repr.NotText")
    class NotText(packedfun.Object):
        def __ffi_repr__(self, fn_repr):
            return 1

    pair = Pair(Leaf(1), Leaf(2))
    assert ReprPrint(pair) == repr(pair) == "Pair[<1> <2>]"
    assert repr(packedfun.Array([Leaf(3)])) == "[<3>]"
    assert repr(Own(1)) == "own" and ReprPrint(Own(1)) == "hook"
    with pytest.raises(TypeError, match="__ffi_repr__ of .*NotText returned int, expected str"):
        repr(NotText())


def test_list_and_dict_annotations_are_mutable_containers():
    # tvm-ffi's py_class stores a `list`/`dict` field as its List/Dict; packedfun's own keeps
    # Array/Map (immutable), and a tuple annotation stays an Array under either
    @tdc.py_class("test_tdc.mut.Holder")
    class Holder(packedfun.Object):
        items: list[int]
        table: dict[str, int]
        nested: list[list[int]]
        by_key: dict[str, list[int]]
        fixed: tuple[int, ...] = ()

    h = Holder([1], {"a": 1}, [[1], [2]], {"k": [3]})
    assert type(h.items) is packedfun.List and type(h.table) is packedfun.Dict
    assert type(h.nested[0]) is packedfun.List and type(h.by_key["k"]) is packedfun.List
    assert type(h.fixed) is packedfun.Array
    h.items.append(2)
    h.nested[1].append(5)
    h.table["b"] = 2
    assert list(h.items) == [1, 2] and list(h.nested[1]) == [2, 5] and h.table["b"] == 2
    given = packedfun.Array([7, 8])
    h.items = given  # an Array given for a List field: a new List of its items
    assert type(h.items) is packedfun.List and list(h.items) == [7, 8]
    own = packedfun.List([9])
    h.items = own  # a List: the same List
    assert h.items.same_as(own)
    with pytest.raises(TypeError, match=r"items: element \[0\]: expected int, got str"):
        h.items = ["x"]
    with pytest.raises(TypeError, match=r"nested: element \[1\]: element \[0\]: expected int"):
        h.nested = [[1], ["x"]]
    assert list(h.items) == [9]  # a refused store leaves the field as it was

    @dc.py_class("test_tdc.mut.Own")
    class Own(packedfun.Object):
        items: list[int]

    assert type(Own([1]).items) is packedfun.Array


def test_repr_print_of_a_py_class_is_tvm_ffis_form():
    from packedfun._tvm_ffi_ffi_api import ReprPrint

    @tdc.py_class("test_tdc.print.Node")
    class Node(packedfun.Object):
        name: str
        hidden: int = dc.field(default=0, repr=False)
        next: Node | None = None

    a = Node("a", 1)
    text = ReprPrint(Node("b", 2, a))
    assert text.startswith("test_tdc.print.Node(name=") and "hidden" not in text
    assert "next=test_tdc.print.Node(name=" in text and text.count("None") == 1
    loop = Node("loop")
    loop.next = loop  # met again inside itself: "..."
    assert ReprPrint(loop).endswith("next=...)")
    loop.next = None


def test_type_info_gives_field_sizes_and_total_size_of_python_defined_types():
    """tvm-ffi's ``TypeField.size`` and ``TypeInfo.total_size`` from the runtime's slot layout
    (``packedfun.slot_type_layout``): a Python-defined field is one Any slot; a C++ type's sizes
    are not in the type table, so they are None rather than guessed."""
    from packedfun._tvm_ffi_core import TypeInfo

    @dc.py_class("test_tdc.LayoutA")
    class LayoutA(packedfun.Object):
        x: int
        y: bool

    @dc.py_class("test_tdc.LayoutB")
    class LayoutB(LayoutA):  # no fields of its own
        pass

    @dc.py_class("test_tdc.LayoutC")
    class LayoutC(LayoutB):
        z: str

    a, b, c = (TypeInfo(k.__pf_type_index__, k) for k in (LayoutA, LayoutB, LayoutC))
    assert [f.size for f in a.fields] == [16, 16] and [f.size for f in c.fields] == [16]
    assert a.fields[1].offset == a.fields[0].offset + 16
    assert a.total_size == a.fields[1].offset + 16
    assert b.total_size == a.total_size and b.fields == []
    assert c.fields[0].offset == b.total_size and c.total_size == b.total_size + 16
    layout = packedfun.get_global_func("packedfun.slot_type_layout")
    assert list(layout(LayoutC.__pf_type_index__)) == [c.total_size, 16]
    # a C++ type (and a POD index): not recorded, so None
    importlib.import_module("packedfun.testing")  # registers testing.TestIntPair
    pair = packedfun.core.type_key_to_index("testing.TestIntPair")
    native = TypeInfo(pair)
    assert native.total_size is None and all(f.size is None for f in native.fields)
    assert layout(pair) is None and layout(1) is None
    with pytest.raises(TypeError, match="type_index"):
        layout("LayoutA")
    with pytest.raises(TypeError, match="expected 1 argument"):
        layout()
