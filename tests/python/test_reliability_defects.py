# Regression tests for the defects adversarial testing found (issue 13), on whichever backend runs.
"""Each test names the defect it pins; the suite's ctypes child run covers the second backend."""

import math

import numpy as np
import packedfun as pf
import pytest
import suite
from packedfun import testing
from packedfun._backend import core
from packedfun.object import type_info

testing.echo(0)  # loads the testing library, which registers its native types


def _ctor(type_key: str):
    methods = type_info(core.type_key_to_index(type_key))["methods"]
    return {m["name"]: m["func"] for m in methods}["__create__"]


# ---- __init__ on a live object ------------------------------------------------------------------
def test_init_on_a_live_object_raises_and_keeps_the_object():
    pair = _ctor("testing.TestIntPair")(1, 2)
    handle = pair.handle
    with pytest.raises(TypeError, match=r"testing\.TestIntPair object is already initialized"):
        pair.__init__(3, 4)
    with pytest.raises(TypeError, match="already initialized"):
        pair.__init_handle_by_constructor__(_ctor("testing.TestIntPair"), 3, 4)
    with pytest.raises(TypeError, match="already initialized"):
        core.ConstructorDescriptor(_ctor("testing.TestIntPair"))(pair, 5, 6)
    assert pair.handle == handle and (pair.a, pair.b) == (1, 2)


def test_init_on_an_empty_wrapper_still_constructs():
    cls = type(_ctor("testing.TestIntPair")(1, 2))
    made = cls.__new__(cls)
    assert made.handle == 0
    made.__init__(7, 8)
    assert (made.a, made.b) == (7, 8)


def test_class_without_registration_builds_through_create_not_empty():
    # The class packedfun made for an unregistered type used to drop the arguments and give an
    # empty object.
    cls = type(_ctor("testing.TestIntPair")(1, 2))
    pair = cls(3, 4)
    assert pair.handle != 0 and pair.sum() == 7


def test_class_without_constructor_refuses_arguments():
    # testing.MoreDerived has no __create__ of its own; its class used to drop the arguments.
    cls = type(testing.make_more_derived(5, "more", 1.5))
    with pytest.raises(TypeError, match="no __create__ constructor"):
        cls(1, "x")


# ---- missing attributes -------------------------------------------------------------------------
def test_missing_attribute_names_the_type_key():
    pair = _ctor("testing.TestIntPair")(1, 2)
    # the type key as CPython words it for C types (test_object_names.py has the details)
    with pytest.raises(
        AttributeError, match=r"^'testing\.TestIntPair' object has no attribute 'zz'$"
    ) as info:
        pair.zz  # noqa: B018
    assert info.value.name == "zz"
    assert not hasattr(pair, "zz") and getattr(pair, "zz", 5) == 5
    assert pair.a == 1  # fields are untouched


# ---- Map keys follow dict ------------------------------------------------------------------------
@pytest.mark.parametrize("kind", [pf.Map, pf.Dict])
def test_map_nan_keys_are_never_found_by_another_nan(kind):
    nan = float("nan")
    m = kind({nan: 1, 2.5: "x"})
    assert len(m) == 2
    for probe in (float("nan"), -nan, math.inf - math.inf):
        assert probe not in m
        with pytest.raises(KeyError):
            m[probe]
    assert m.get(float("nan"), "default") == "default"


def test_dict_nan_insertions_are_distinct_keys_like_distinct_nan_objects():
    d, model = pf.Dict(), {}
    for i in range(200):  # also: many NaN keys must not share one probe chain
        d[float("nan")] = i
        model[float("nan")] = i
    assert len(d) == len(model) == 200
    assert sorted(d.values()) == sorted(model.values())
    assert [v for _, v in d.items()] == list(range(200))  # listed without a lookup per key
    assert all(math.isnan(k) for k in d.keys())


@pytest.mark.parametrize("kind", [pf.Map, pf.Dict])
def test_map_numeric_keys_compare_like_dict(kind):
    pairs = [(1, "int"), (True, "bool"), (1.0, "float"), (0, "zero"), (-0.0, "-0"), (None, "n")]
    model = dict(pairs)
    m = kind(model)
    assert len(m) == len(model) == 3
    for probe in (1, True, 1.0, 0, False, 0.0, -0.0, None):
        assert m[probe] == model[probe]
    for probe in (2, 1.5, "1", b"1", math.inf):
        assert probe not in m and probe not in model
    assert kind({math.inf: 1})[math.inf] == 1 and kind({-math.inf: 1})[-math.inf] == 1


def test_dict_numeric_overwrites_like_dict():
    d, model = pf.Dict(), {}
    for key, value in (
        (1, "a"),
        (True, "b"),
        (1.0, "c"),
        (None, "d"),
        (2**53, "e"),
        (2.0**53, "f"),
    ):
        d[key] = value
        model[key] = value
    assert len(d) == len(model) and dict(d.items()) == model


@pytest.mark.parametrize("key", [[1], {1: 2}, {1}, (1, [2]), bytearray(b"k"), np.arange(2)])
def test_unhashable_keys_raise_like_dict(key):
    # A key a dict refuses used to be converted (a list into a new Array): the Dict kept an entry
    # no lookup could find, and lookups answered "absent". Now the dict's own TypeError.
    with pytest.raises(TypeError) as model:
        {}[key]
    d, m = pf.Dict({1: 2}), pf.Map({1: 2})
    for attempt in (lambda: d.__setitem__(key, 1), lambda: d[key], lambda: key in d,
                    lambda: d.get(key), lambda: d.pop(key, None), lambda: d.__delitem__(key),
                    lambda: m[key], lambda: key in m, lambda: m.get(key, 0)):  # fmt: skip
        with pytest.raises(TypeError) as info:
            attempt()
        assert str(info.value) == str(model.value)
    assert len(d) == 1 and dict(d.items()) == {1: 2}


def test_hashable_object_keys_still_work():
    pair, arr = testing.TestIntPair(1, 2), pf.convert([1])
    d = pf.Dict({pair: "pair"})
    d[arr] = "array"
    d[pf.Shape((1,))] = "shape"  # the Shape object itself is the key
    assert d[pair] == "pair" and d[arr] == "array" and arr in d and len(d) == 3


# ---- Tensor.__dlpack__ max_version and consumed capsules ---------------------------------------
@pytest.fixture
def tensor():
    return pf.from_dlpack(np.arange(4.0))


@pytest.mark.parametrize(
    "bad", [(1,), (1, 2, 3), ("1", "0"), (1.0, 0), 1, [1, 0], "1.0", (None, 0), ()]
)
def test_dlpack_max_version_must_be_a_pair_of_ints(tensor, bad):
    with pytest.raises(TypeError, match="max_version") as info:
        tensor.__dlpack__(max_version=bad)
    assert repr(bad) in str(info.value)


@pytest.mark.parametrize(
    ("version", "capsule"),
    [
        (None, "dltensor"),
        ((0, 8), "dltensor"),
        ((-1, 0), "dltensor"),
        ((1, 0), "dltensor_versioned"),
        ((1, 3), "dltensor_versioned"),
        ((2, 0), "dltensor_versioned"),
        ((True, 0), "dltensor_versioned"),
        ((np.int64(1), np.int32(0)), "dltensor_versioned"),
    ],
)
def test_dlpack_max_version_picks_the_capsule_like_numpy(tensor, version, capsule):
    cap = tensor.__dlpack__(max_version=version)
    assert f'"{capsule}"' in repr(cap)
    assert f'"{capsule}"' in repr(np.arange(4.0).__dlpack__(max_version=version))
    assert pf.from_dlpack(cap).shape == (4,)


@pytest.mark.parametrize("bad", [5, (1,), ("1", 0), (1.5, 0), [1, 0]])
def test_dlpack_dl_device_must_be_a_pair_of_ints(tensor, bad):
    with pytest.raises(TypeError, match="dl_device"):
        tensor.__dlpack__(dl_device=bad)


def test_dlpack_huge_major_version_is_versioned_not_an_overflow(tensor):
    assert '"dltensor_versioned"' in repr(tensor.__dlpack__(max_version=(10**30, 0)))
    assert '"dltensor"' in repr(tensor.__dlpack__(max_version=(-(10**30), 0)))


@pytest.mark.parametrize("version", [None, (1, 0)])
def test_consumed_capsule_is_a_value_error_like_numpy(version):
    cap = np.arange(3).__dlpack__(max_version=version)
    pf.from_dlpack(cap)
    with pytest.raises(ValueError, match="consumed already"):
        pf.from_dlpack(cap)
    with pytest.raises(ValueError):  # NumPy's own type for the same mistake
        np.from_dlpack(type("P", (), {"__dlpack__": lambda s, **k: cap})())


def test_capsule_that_is_not_dlpack_is_a_value_error():
    import ctypes

    new = ctypes.pythonapi.PyCapsule_New
    new.restype, new.argtypes = (
        ctypes.py_object,
        [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p],
    )
    holder = ctypes.c_int(0)
    cap = new(ctypes.addressof(holder), b"not_a_tensor", None)
    with pytest.raises(ValueError, match="not_a_tensor.*not a DLPack tensor"):
        pf.from_dlpack(cap)


# ---- BuildError ---------------------------------------------------------------------------------
def test_build_error_carries_the_exit_status(tmp_path):
    cpp = suite.require("packedfun.cpp")
    src = tmp_path / "bad.cc"
    src.write_text("int broken( {\n")
    with pytest.raises(cpp.BuildError) as info:
        cpp.build("bad", [src], build_directory=tmp_path / "cache")
    assert info.value.returncode == 1 and "exit status 1" in str(info.value)
    assert info.value.log_path and "exit status 1" in open(info.value.log_path).read()


def test_list_of_small_ints_then_a_sizeless_object_converts():
    # Found by the sanitized suite (heap-buffer-overflow): the small-int run of the list converter
    # read ob_size before checking the type, past the end of a 16-byte object() (no ob_size). The
    # overread is only visible under ASan (tests/sanitize/run.py); here the values must arrive.
    marker = object()
    back = testing.echo([1, 2, -3, marker, 4])
    assert list(back[:3]) == [1, 2, -3] and back[3] is marker and back[4] == 4
    back = testing.echo((0, marker))
    assert back[0] == 0 and back[1] is marker
