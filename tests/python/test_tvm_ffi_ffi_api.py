# `tvm_ffi._ffi_api` under the switch: tvm-ffi's dataclass helpers as packedfun's own operations.
"""Child processes: the switch changes the import system of the whole process."""

from __future__ import annotations

import copy

import packedfun
import pytest
from packedfun import _tvm_ffi_ffi_api as api
from test_tvm_ffi_switch import run_child


def test_helpers_are_packedfuns_operations_or_tvm_ffis_rules():
    assert api.DeepCopy is copy.deepcopy and api.ReprPrint is repr
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
        assert DeepCopy is copy.deepcopy and ReprPrint is repr
        check_once()
        """
    )
