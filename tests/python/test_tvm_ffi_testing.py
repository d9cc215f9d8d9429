# `tvm_ffi.testing` under the switch: packedfun's testing names plus tvm-ffi's C++ test classes.
"""Under the switch, ``tvm_ffi.testing`` is ``packedfun._tvm_ffi_testing``: the names of
``packedfun.testing`` (the same objects) but ``TestIntPair``, and apache-tvm-ffi's test classes
declared with packedfun's ``c_class`` over the types of its ``libtvm_ffi_testing.so`` (loaded
through the bridge), ``TestIntPair`` among them.
Every case runs in a child process (the switch changes the whole process), on the backend under
test (the child inherits ``PACKEDFUN_BACKEND``)."""

from __future__ import annotations

import importlib.util

import pytest

if importlib.util.find_spec("tvm_ffi") is None:
    pytest.skip("apache-tvm-ffi is not installed", allow_module_level=True)

from test_tvm_ffi_switch import run_child  # noqa: E402

_SETUP = """
        import packedfun.tvm_ffi_compat as compat
        compat.install()
        import sys
        import packedfun, packedfun.testing
        import tvm_ffi, tvm_ffi.testing
        T = tvm_ffi.testing
        def raises(exc, fn, *args, **kwargs):  # the message of the exc that fn(...) raises
            try:
                fn(*args, **kwargs)
            except exc as e:
                return str(e)
            raise AssertionError(f"no {exc.__name__}")
"""


def test_submodules_that_import_tvm_ffi_gives_are_attributes():
    run_child(
        """
        import sys
        import packedfun.tvm_ffi_compat as compat
        compat.install()
        import tvm_ffi
        assert "packedfun.access_path" not in sys.modules  # loaded on first use, not at import
        assert tvm_ffi.access_path.AccessPath is sys.modules["packedfun.access_path"].AccessPath
        """
    )


def test_one_module_that_keeps_packedfuns_testing_names():
    run_child(
        _SETUP
        + """
        import tvm_ffi.testing.testing
        assert sys.modules["tvm_ffi.testing"] is sys.modules["tvm_ffi.testing.testing"]
        assert T.__name__ == "packedfun._tvm_ffi_testing"
        pf = sys.modules["packedfun.testing"]
        assert T.echo is pf.echo and T.library_path is pf.library_path
        assert T.TestIntPair is not pf.TestIntPair  # tvm-ffi's type of that key (next test)
        assert T.TestIntPair(1, 2).sum() == 3 and pf.TestIntPair(1, 2).sum() == 3
        assert T.add_one(41) == 42
        try:
            T.no_such_name
        except AttributeError:
            pass
        else:
            raise AssertionError("no AttributeError")
        marker = T.requires_py310
        assert marker.name == "skipif"
        """
    )


def test_cxx_classes_build_and_come_back_as_their_class():
    run_child(
        _SETUP
        + """
        from tvm_ffi import get_global_func
        b = T.TestObjectBase(v_i64=7, v_str="s")
        assert type(b) is T.TestObjectBase and b.v_i64 == 7 and b.v_str == "s"
        assert b.v_f64 == 10.0  # the C++ default
        assert b.add_i64(3) == 10
        d = T.create_object("testing.TestObjectDerived", v_map={"k": 1}, v_array=[1, 2])
        assert type(d) is T.TestObjectDerived and isinstance(d, T.TestObjectBase)
        assert d.v_map["k"] == 1 and list(d.v_array) == [1, 2]
        assert get_global_func("testing.echo")(d) is d  # the same object back
        fallback = type(T.make_unregistered_object())  # named as tvm-ffi names fallback classes
        assert fallback.__name__ == "TestUnregisteredObject" and fallback.__module__ == "testing"
        assert fallback.__qualname__ == "testing.TestUnregisteredObject"
        assert fallback.__doc__.startswith("Auto-generated fallback class for testing.TestUnreg")
        assert fallback.__tvm_ffi_type_info__.type_key == "testing.TestUnregisteredObject"
        c = T.TestCompare(1, "a", 2)  # a reflected constructor (__ffi_init__)
        assert (c.key, c.name, c.ignored_field) == (1, "a", 2)
        p = T._TestCxxAutoInitSimple(1, 2)  # positional: the reflected fields in order
        assert (p.x, p.y) == (1, 2)
        base = T._TestCxxClassBase(1, 2)  # its own __init__ adds 1 and 2
        assert (base.v_i64, base.v_i32) == (2, 4)
        dd = T._TestCxxClassDerived(1, 2, 3.5, 4.5)  # no longer adds: the derived init
        assert (dd.v_i64, dd.v_i32, dd.v_f64, dd.v_f32) == (1, 2, 3.5, 4.5)
        import packedfun.dataclasses as dc
        assert [f.name for f in dc.fields(T.TestObjectBase)] == ["v_i64", "v_f64", "v_str"]
        assert all(f.init for f in dc.fields(T.TestObjectBase))
        """
    )


def test_bad_construction_raises_type_error():
    run_child(
        _SETUP
        + """
        assert "c" in raises(TypeError, T._TestCxxAutoInit, a=1)  # required field c left out
        assert "at most 2" in raises(TypeError, T._TestCxxAutoInitSimple, 1, 2, 3)
        assert "multiple values" in raises(TypeError, T._TestCxxAutoInitSimple, 1, x=2)
        raises(TypeError, T._TestCxxNoAutoInit, 1, 2)  # init=False: no constructor
        """
    )


def test_a_type_key_both_testing_libraries_register_is_two_types():
    run_child(
        _SETUP
        + """
        from packedfun import core
        from packedfun.object import type_info
        from packedfun.testing import TestIntPair as Ours  # packedfun.testing is tvm_ffi's now
        Theirs = T.TestIntPair
        a, b = Theirs.__pf_type_index__, Ours.__pf_type_index__
        key = "testing.TestIntPair"
        assert a != b and type_info(a)["type_key"] == type_info(b)["type_key"] == key
        assert core.type_key_to_index("testing.TestIntPair") == b  # the key names packedfun's
        index_of = packedfun.get_global_func("packedfun.tvm_ffi_type_index")
        assert index_of(key) == a and index_of("testing.TestObjectBase") is not None
        assert index_of("no.such.Type") is None and index_of("ffi.Array") is None
        assert "expected a type key" in raises(TypeError, index_of, 1)
        # an object tvm-ffi builds crosses into packedfun as tvm-ffi's type, and back as itself
        made = T.create_object("testing.TestIntPair", a=1, b=2)
        assert type(made) is Theirs and (made.a, made.b, made.sum()) == (1, 2, 3)
        assert T.TestIntPair.a.__doc__ == "Field `a`" and Ours.a.__doc__ == "the first integer"
        holder = T.create_object("testing.TestObjectDerived", v_map={"p": made}, v_array=[made])
        assert holder.v_array[0].same_as(made) and holder.v_map["p"].same_as(made)
        # packedfun's own object of that key has no tvm-ffi equivalent
        make = T.create_object
        msg = raises(TypeError, make, "testing.TestObjectDerived", v_map={}, v_array=[Ours(1, 2)])
        assert "no tvm-ffi equivalent" in msg
        # under the switch register_object names tvm-ffi's type of a key first
        @tvm_ffi.register_object("testing.TestIntPair")
        class Again(tvm_ffi.Object):
            pass
        assert Again.__pf_type_index__ == a
        compat.uninstall()
        @packedfun.register_object("testing.TestIntPair")
        class Own(packedfun.Object):
            pass
        assert Own.__pf_type_index__ == b
        """
    )


def test_replace_of_a_tvm_ffi_object_stores_read_only_fields_through_tvm_ffi():
    run_child(
        _SETUP
        + """
        from tvm_ffi.dataclasses import replace
        from packedfun.testing import TestIntPair as Ours
        p = T.TestIntPair(1, 2)
        assert "read-only" in raises(AttributeError, setattr, p, "a", 5)  # def_ro
        q = replace(p, a=10)
        assert (q.a, q.b, p.a) == (10, 2, 1) and not q.same_as(p) and type(q) is T.TestIntPair
        assert p.__replace__(b=7).b == 7
        assert "no settable field 'nope'" in raises(AttributeError, replace, p, nope=1)
        raises(TypeError, replace, p, a="x")  # the C++ setter checks the value
        assert "does not support copy" in raises(TypeError, replace, T.TestNonCopyable(1), value=2)
        force = packedfun.get_global_func("packedfun.tvm_ffi_force_set_field")
        assert "not of a tvm-ffi type" in raises(TypeError, force, Ours(1, 2), "a", 1)
        assert "expected an object, a str and a value" in raises(TypeError, force, p, "a")
        # packedfun's own types keep packedfun's replace (through __init__)
        own = replace(Ours(1, 2), a=3)
        assert (own.a, own.b) == (3, 2)
        """
    )
