# Copies of objects of tvm-ffi types: copy.copy, copy.deepcopy and __replace__ through tvm-ffi.
"""An object of a type that a tvm-ffi library defines (mirrored through the bridge) copies through
tvm-ffi's own machinery: ``copy.copy`` by its C++ copy constructor (``__ffi_shallow_copy__``),
``copy.deepcopy`` by tvm-ffi's ``ffi.DeepCopy``, ``__replace__`` as a copy with fields stored. A
type whose C++ class is not copy-constructible raises. Every case runs in a child process with
apache-tvm-ffi's testing library loaded (the switch), on the backend under test."""

from __future__ import annotations

import importlib.util

import pytest

if importlib.util.find_spec("tvm_ffi") is None:
    pytest.skip("apache-tvm-ffi is not installed", allow_module_level=True)

from test_tvm_ffi_switch import run_child  # noqa: E402

_SETUP = """
        import copy
        import packedfun.tvm_ffi_compat as compat
        compat.install()
        import tvm_ffi, tvm_ffi.testing
        T = tvm_ffi.testing
"""


def test_copy_deepcopy_and_replace_go_through_tvm_ffi():
    run_child(
        _SETUP
        + """
        obj = T._TestCxxClassBase(v_i64=1, v_i32=2)  # its __init__ adds 1 and 2
        for made in (copy.copy(obj), copy.deepcopy(obj)):
            assert type(made) is T._TestCxxClassBase and not made.same_as(obj)
            assert (made.v_i64, made.v_i32) == (2, 4)
        replaced = obj.__replace__(v_i64=99)
        assert (replaced.v_i64, replaced.v_i32, obj.v_i64) == (99, 4, 2)
        inner = T.create_object("testing.TestObjectBase", v_i64=5)
        holder = T.create_object("testing.TestObjectPtrHolder", value=inner, optional_value=inner)
        deep = copy.deepcopy(holder)
        assert not deep.value.same_as(inner) and deep.value.v_i64 == 5
        assert deep.value.same_as(deep.optional_value)  # sharing kept
        shallow = copy.copy(holder)
        assert shallow.value.same_as(inner) and not shallow.same_as(holder)
        """
    )


def test_a_type_that_is_not_copy_constructible_raises():
    run_child(
        _SETUP
        + """
        obj = T.TestNonCopyable(42)
        cases = [(copy.copy, TypeError, "does not support copy"),
                 (lambda o: o.__replace__(), TypeError, "does not support copy"),
                 (copy.deepcopy, RuntimeError, "not copy-constructible")]
        for attempt, kind, words in cases:
            try:
                attempt(obj)
            except kind as e:
                assert words in str(e), str(e)
            else:
                raise AssertionError(f"no {kind.__name__}")
        """
    )


def test_deepcopy_of_containers_copies_tvm_ffi_objects_through_tvm_ffi():
    run_child(
        _SETUP
        + """
        import pickle
        import packedfun
        obj = T._TestCxxClassBase(v_i64=1, v_i32=2)  # its __init__ adds 1 and 2: (2, 4)
        for box in (packedfun.Array([obj, obj]), packedfun.List([obj, [obj]]),
                    packedfun.Map({"k": obj, "j": obj}), packedfun.Dict({"k": obj})):
            deep = copy.deepcopy(box)
            assert type(deep) is type(box) and not deep.same_as(box)
            items = list(deep.values()) if hasattr(deep, "values") else list(deep)
            first = items[0]
            assert type(first) is T._TestCxxClassBase and not first.same_as(obj)
            assert (first.v_i64, first.v_i32) == (2, 4)  # fields copied, __init__ not run again
            if isinstance(box, (packedfun.Array, packedfun.Map)):
                assert items[1].same_as(first)  # one copy of an object the box holds twice
        lst = packedfun.List([obj])
        lst.append(lst)  # a cycle through the List: kept in the copy
        deep = copy.deepcopy(lst)
        assert deep[1].same_as(deep) and not deep[0].same_as(obj)
        lst.clear()
        deep.clear()
        # a plain container keeps its fast road; pickling a tvm-ffi object still refuses
        assert copy.deepcopy(packedfun.Array([1, "a"])) == packedfun.Array([1, "a"])
        try:
            pickle.dumps(packedfun.Array([obj]))
        except TypeError as e:
            assert "__create__" in str(e), e
        else:
            raise AssertionError("pickled an object of a tvm-ffi type")
        stuck = T.TestNonCopyable(1)
        for box in (packedfun.Array([stuck]), packedfun.Map({"k": stuck})):
            try:
                copy.deepcopy(box)
            except RuntimeError as e:
                assert "not copy-constructible" in str(e), e
            else:
                raise AssertionError("copied a type that is not copy-constructible")
        """
    )
