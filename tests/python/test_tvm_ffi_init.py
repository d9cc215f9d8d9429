# Constructors under the switch: tvm-ffi's __init__/__ffi_init__ over its reflection's init traits.
"""Under the switch, a class of a type of a library built for tvm-ffi is built as tvm-ffi builds
it (``packedfun._tvm_ffi_init``): ``__init__``'s signature comes from the fields' init traits
(init off, keyword-only, C++ defaults), keywords travel in tvm-ffi's ``KWARGS`` protocol to the
type's constructor (its ``__ffi_init__`` method or the one tvm-ffi generates, found through
``core._lookup_type_attr``), which checks the call and words the errors. The bridge's global
functions ``packedfun.tvm_ffi_field_flags`` and ``packedfun.tvm_ffi_type_attr`` carry the traits
and attribute columns across. Every case runs in a child process (the switch changes the whole
process), on the backend under test (the child inherits ``PACKEDFUN_BACKEND``)."""

from __future__ import annotations

import importlib.util

import pytest

if importlib.util.find_spec("tvm_ffi") is None:
    pytest.skip("apache-tvm-ffi is not installed", allow_module_level=True)

from test_tvm_ffi_switch import run_child  # noqa: E402

_SETUP = """
        import inspect
        import packedfun.tvm_ffi_compat as compat
        compat.install()
        import packedfun
        import tvm_ffi, tvm_ffi.testing as T
        from tvm_ffi import core
        from tvm_ffi.dataclasses import fields, MISSING

        def raises(kind, text, fn, *args, **kwargs):
            try:
                fn(*args, **kwargs)
            except kind as exc:
                assert text in str(exc), (text, str(exc))
            else:
                raise AssertionError(f"no {kind.__name__}")
"""


def test_field_traits_cross_from_tvm_ffi_reflection():
    run_child(
        _SETUP
        + """
        info = T._TestCxxAutoInit.__tvm_ffi_type_info__
        f = {x.name: x for x in info.fields}
        assert (f["a"].c_init, f["a"].c_kw_only, f["a"].c_has_default) == (True, False, False)
        assert (f["b"].c_init, f["b"].c_has_default, f["b"].c_default) == (False, True, 42)
        assert (f["c"].c_init, f["c"].c_kw_only) == (True, True)
        assert (f["d"].c_has_default, f["d"].c_default) == (True, 99)
        assert f["a"].c_default is MISSING and f["a"].c_default_factory is MISSING
        assert f["a"].metadata["type_schema"] == '{"type":"int"}' and str(f["a"].ty) == "int"
        assert not f["a"].frozen and f["a"].c_repr and f["a"].c_compare and f["a"].c_hash
        derived = {x.name: x for x in T._TestCxxClassDerived.__tvm_ffi_type_info__.fields}
        assert list(derived) == ["v_f64", "v_f32"]  # the type's own fields only
        assert derived["v_f32"].c_default == 8.0 and derived["v_f64"].c_default is MISSING
        # packedfun's own types: default traits, and __create__ is also __ffi_init__
        from packedfun.testing import TestIntPair as Ours
        pair = Ours.__tvm_ffi_type_info__
        a, b = pair.fields  # __create__(a, b=0): b's default is the constructor's
        assert a.c_init and not a.c_has_default and a.c_default is MISSING
        assert b.c_init and b.c_has_default and b.c_default == 0
        methods = {m.name: m for m in pair.methods}
        assert methods["__ffi_init__"].func is methods["__create__"].func
        # the bridge's functions: None for a type that mirrors none, TypeError for bad input
        flags = packedfun.get_global_func("packedfun.tvm_ffi_field_flags")
        attr = packedfun.get_global_func("packedfun.tvm_ffi_type_attr")
        records = flags(info.type_index)
        assert [r[0] for r in records] == ["a", "b", "c", "d"] and records[1][2] == 42
        own = Ours.__pf_type_index__
        assert flags(own) is None and flags(-1) is None
        assert attr(own, "__ffi_init__") is None
        assert attr(info.type_index, "no_such_attribute") is None
        raises(TypeError, "expected one int", flags, "x")
        raises(TypeError, "expected one int", flags)
        """
    )


def test_init_signature_and_construction_follow_the_traits():
    run_child(
        _SETUP
        + """
        C = T._TestCxxAutoInit
        sig = inspect.signature(C.__init__)
        assert tuple(sig.parameters) == ("self", "a", "d", "c")
        assert sig.parameters["c"].kind is inspect.Parameter.KEYWORD_ONLY
        assert sig.parameters["d"].default is core.MISSING
        assert sig.parameters["a"].default is inspect.Parameter.empty
        obj = C(1, 2, c=3)
        assert (obj.a, obj.b, obj.c, obj.d) == (1, 42, 3, 2)
        obj = C(c=7, a=9)  # d left out: the C++ default
        assert (obj.a, obj.c, obj.d) == (9, 7, 99)
        assert C(1, c=3, d=MISSING).d == 99  # a MISSING keyword is not sent
        child = T._TestCxxAutoInitChild
        assert tuple(inspect.signature(child.__init__).parameters) == (
            "self", "parent_required", "child_required", "parent_default", "child_kw_only")
        obj = child(1, 2, child_kw_only=3)
        assert (obj.parent_required, obj.child_required, obj.parent_default) == (1, 2, 5)
        off = T._TestCxxAutoInitAllInitOff()
        assert (off.x, off.y, off.z) == (7, 9, 1234)
        # the dataclass fields take the traits too
        by_name = {f.name: f for f in fields(C)}
        assert not by_name["b"].init and by_name["b"].default == 42
        assert by_name["c"].kw_only and by_name["a"].default is MISSING
        assert C.__match_args__ == ("a", "d")
        names = [f.name for f in fields(T._TestCxxClassDerived)]  # a c_class parent's once
        from tvm_ffi.dataclasses import Field
        assert all(isinstance(f, Field) for f in fields(T.TestIntPair))  # tvm-ffi's Field class
        assert fields(T.TestIntPair) == fields(T.TestIntPair(1, 2))
        assert names == ["v_i64", "v_i32", "v_f64", "v_f32"]
        """
    )


def test_errors_are_worded_by_the_constructor():
    run_child(
        _SETUP
        + """
        C = T._TestCxxAutoInit
        raises(TypeError, "missing required keyword-only argument: 'c'", C, 1)
        raises(TypeError, "missing required argument: 'a'", C, c=3)
        raises(TypeError, "unexpected keyword argument 'b'", C, 1, b=2, c=3)
        raises(TypeError, "unexpected keyword argument 'nope'", C, 1, c=2, nope=3)
        raises(TypeError, "takes at most 2 positional argument(s), but 3 were given", C, 1, 2, 3)
        raises(TypeError, "multiple values", C, 1, a=2, c=3)
        raises(TypeError, "", C, "x", c=2)  # a value that does not fit the field
        raises(TypeError, "cannot be constructed directly", T._TestCxxNoAutoInit, 1, 2)
        no_init = T._TestCxxNoAutoInit.__pf_type_index__
        assert core._lookup_type_attr(no_init, "__ffi_init__") is None
        """
    )


def test_kwargs_protocol_and_ffi_init_attribute():
    run_child(
        _SETUP
        + """
        C = T._TestCxxAutoInit
        index = C.__tvm_ffi_type_info__.type_index
        ctor = core._lookup_type_attr(index, "__ffi_init__")
        assert core._lookup_type_attr(index, "__ffi_init__", ancestor=True) is not None
        obj = C.__new__(C)
        obj.__init_handle_by_constructor__(ctor, core.KWARGS, "a", 1, "c", 3)
        assert (obj.a, obj.b, obj.c, obj.d) == (1, 42, 3, 99)
        assert core.KWARGS is core.KWARGS
        obj = C.__new__(C)
        raises(TypeError, "even number", obj.__init_handle_by_constructor__, ctor, core.KWARGS, "a")
        # __ffi_init__ on the class: tvm-ffi's types (packed keywords) and packedfun's own
        obj = C.__new__(C)
        obj.__ffi_init__(a=1, c=3)
        assert (obj.a, obj.c) == (1, 3)
        from packedfun.testing import TestIntPair as Pair
        pair = Pair.__new__(Pair)
        pair.__ffi_init__(1, b=2)
        assert pair.sum() == 3
        assert core._lookup_type_attr(Pair.__pf_type_index__, "__ffi_init__") is not None
        obj = T._TestCxxClassDerivedDerived.__new__(T._TestCxxClassDerivedDerived)
        raises(TypeError, "is not supported", T._TestCxxClassDerived.__ffi_init__, obj, 1, 2, 3.0)
        # a custom __init__ builds through __ffi_init__ and is kept
        assert T._TestCxxClassBase(v_i64=10, v_i32=20).v_i64 == 11
        """
    )


def test_uninstall_stops_giving_constructors():
    run_child(
        _SETUP
        + """
        import packedfun._tvm_ffi_init as init
        from packedfun.object import _class_hooks
        assert init.install in _class_hooks
        compat.uninstall()
        assert init.install not in _class_hooks
        """
    )


def test_py_class_ffi_init_takes_its_fields_by_keyword():
    run_child(
        _SETUP
        + """
        from tvm_ffi.dataclasses import py_class, field
        from tvm_ffi import Object

        @py_class("test_tfi.SelfField", init=False)
        class Record(Object):
            self: int
            y: int = 3
            tags: list = field(default_factory=list)

        obj = Object.__new__(Record)
        Record.__ffi_init__(obj, self=7)  # a field may be named self
        assert (obj.self, obj.y, list(obj.tags)) == (7, 3, [])
        obj = Object.__new__(Record)
        Record.__ffi_init__(obj, 1, tags=[2], y=5)
        assert (obj.self, obj.y, list(obj.tags)) == (1, 5, [2])
        for args, kwargs, text in [
            ((), {"y": 1}, "missing required argument 'self'"),
            ((1,), {"self": 2}, "multiple values for 'self'"),
            ((), {"self": 1, "z": 2}, "unexpected keyword argument 'z'"),
            ((1, 2, [], 4), {"y": 1}, "takes 3 arguments, got 4"),
            ((), {"self": "x"}, "expected int, got str"),
        ]:
            raises(TypeError, text, Record.__ffi_init__, Object.__new__(Record), *args, **kwargs)

        @py_class("test_tfi.SelfInit")
        class WithInit(Object):
            self: int

        assert WithInit(self=4).self == 4 and WithInit(5).self == 5
        assert list(inspect.signature(WithInit.__init__).parameters)[1] == "self"
        """
    )


def test_py_class_type_fields_carry_their_field_options():
    run_child(
        _SETUP
        + """
        from tvm_ffi.dataclasses import py_class, field
        from tvm_ffi import Object

        @py_class("test_tfi.Traits")
        class Traits(Object):
            a: int
            b: int = field(default=2, kw_only=True, repr=False, hash=False)
            c: list = field(default_factory=list, init=False, compare=False,
                            structural_eq="ignore")

        by_name = {f.name: f for f in Traits.__tvm_ffi_type_info__.fields}
        a, b, c = by_name["a"], by_name["b"], by_name["c"]
        assert (a.c_init, a.c_kw_only, a.c_has_default, a.c_repr, a.c_hash) == (
            True, False, False, True, True)
        assert (b.c_kw_only, b.c_has_default, b.c_default, b.c_repr, b.c_hash) == (
            True, True, 2, False, False)
        assert (c.c_init, c.c_has_default, c.c_default_factory, c.c_compare, c.c_hash) == (
            False, True, list, False, False)
        assert c.c_structural_eq == "ignore" and a.c_structural_eq is None
        for f in by_name.values():  # the same schema object as the Field declares
            assert f.ty is f.dataclass_field._ty_schema and f.ty is not None
        # the low-level steps: the parent info is the one the type was registered under
        parent = core._type_cls_to_type_info(Object)
        cls = type("Reg", (Object,), {"__slots__": ()})
        info = core._register_py_class(parent, "test_tfi.Reg", cls)
        assert info.parent_type_info is parent
        """
    )


def test_c_class_gets_the_cxx_type_attribute_columns():
    run_child(
        _SETUP
        + """
        every = {"__ffi_hash__", "__ffi_eq__", "__ffi_compare__"}
        for cls, names in ((T.TestCustomHash, {"__ffi_hash__"}), (T.TestCustomCompare, every)):
            index = cls.__tvm_ffi_type_info__.type_index
            for name in ("__ffi_hash__", "__ffi_eq__", "__ffi_compare__", "__ffi_repr__"):
                value = core._lookup_type_attr(index, name)
                assert (value is not None) == (name in names), (cls, name)
                assert (name in cls.__dict__) == (name in names), (cls, name)
                if name in names:
                    assert callable(cls.__dict__[name])
        """
    )
