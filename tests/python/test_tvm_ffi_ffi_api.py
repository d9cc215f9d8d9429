# `tvm_ffi._ffi_api` under the switch: tvm-ffi's dataclass helpers as packedfun's own operations.
"""Child processes: the switch changes the import system of the whole process."""

from __future__ import annotations

import copy

import packedfun
import pytest
from packedfun import _tvm_ffi_ffi_api as api
from test_tvm_ffi_switch import run_child


def test_helpers_are_packedfuns_operations_or_tvm_ffis_rules():
    assert api.DeepCopy is copy.deepcopy
    pair = packedfun.testing.TestIntPair(1, 2)  # packedfun's own type: no tvm-ffi form
    assert api.ReprPrint(pair) == repr(pair)
    arr = packedfun.convert([1, [2, 3]])
    copied = api.DeepCopy(arr)
    assert not copied.same_as(arr) and not copied[1].same_as(arr[1])
    assert packedfun.structural_equal(copied, arr)
    assert api.RecursiveEq(1, 1) and api.RecursiveLt(1, 2) and api.RecursiveGe(2, 2)
    assert api.RecursiveHash("x") == api.RecursiveHash("x") != api.RecursiveHash("y")


def test_other_names_are_ffi_globals_and_missing_ones_raise_attribute_error():
    name = "ffi.test_tvm_ffi_ffi_api_probe"
    packedfun.register_global_func(name, lambda x: x + 1)
    try:
        assert api.test_tvm_ffi_ffi_api_probe(1) == 2
    finally:
        packedfun.remove_global_func(name)
    with pytest.raises(AttributeError, match="no global function 'ffi.NoSuchHelper'"):
        api.NoSuchHelper  # noqa: B018


def test_under_the_switch_it_is_tvm_ffi_ffi_api():
    run_child(
        """
        import copy
        import packedfun.tvm_ffi_compat as compat
        compat.install()
        from tvm_ffi._ffi_api import DeepCopy, ReprPrint
        import tvm_ffi._ffi_api, packedfun._tvm_ffi_ffi_api
        assert tvm_ffi._ffi_api is packedfun._tvm_ffi_ffi_api
        assert DeepCopy is copy.deepcopy
        # tvm-ffi's printer (its library is loaded by the switch), for values that reach it
        import numpy as np
        import tvm_ffi, tvm_ffi.testing
        assert ReprPrint("hello") == '"hello"' and ReprPrint(0.0) == "0"
        assert ReprPrint(None) == "None"
        assert ReprPrint(tvm_ffi.Array([1, "a"])) == '(1, "a")'
        assert ReprPrint(tvm_ffi.from_dlpack(np.zeros((3, 4), "float32"))) == "float32[3, 4]@cpu:0"
        obj = tvm_ffi.testing.create_object("testing.TestObjectBase", v_i64=3, v_str="s")
        text = ReprPrint(obj)
        assert text == 'testing.TestObjectBase(v_i64=3, v_f64=10, v_str="s")', text
        pair = tvm_ffi.testing.TestIntPair(1, 2)  # packedfun's own type: packedfun's repr
        assert ReprPrint(pair) == repr(pair)
        check_once()
        """
    )
