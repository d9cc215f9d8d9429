# Functions from the address of a tvm-ffi C function: Function.__from_extern_c__ and friends.
"""``Function.__from_extern_c__`` (a tvm-ffi safe call's address) and
``Function.__from_mlir_packed_safe_call__`` (an MLIR packed call's address), built by the tvm-ffi
bridge: calls, errors raised by the C function, ``keep_alive_object`` owned by the native Function
(alive while a container holds the Function, released with it), bad addresses. The C functions
are the ones apache-tvm-ffi's testing library hands out (``testing.get_add_one_c_symbol``). Every
case runs in a child process under the switch, on the backend under test."""

from __future__ import annotations

import importlib.util

import pytest

if importlib.util.find_spec("tvm_ffi") is None:
    pytest.skip("apache-tvm-ffi is not installed", allow_module_level=True)

from test_tvm_ffi_switch import run_child  # noqa: E402

_SETUP = """
        import sys
        import packedfun.tvm_ffi_compat as compat
        compat.install()
        import packedfun
        import tvm_ffi, tvm_ffi.testing
        import pytest
        Function = tvm_ffi.Function
        assert Function is packedfun.Function
"""


@pytest.mark.parametrize(
    "make, getter",
    [
        ("__from_extern_c__", "testing.get_add_one_c_symbol"),
        ("__from_mlir_packed_safe_call__", "testing.get_mlir_add_one_c_symbol"),
    ],
)
def test_function_from_a_c_symbol_calls_it_and_owns_keep_alive(make, getter):
    run_child(
        _SETUP
        + f"""
        make = getattr(Function, {make!r})
        address = tvm_ffi.get_global_func({getter!r})()
        assert type(address) is int and address != 0
        f = make(address)
        assert isinstance(f, Function) and f(1) == 2 and f(-5) == -4
        with pytest.raises(TypeError):  # raised by the C function, through tvm-ffi's error slot
            f(None)
        assert f(41) == 42  # the failed call left nothing behind

        # keep_alive_object travels as itself (a list is not converted to an Array copy) and
        # the native Function owns it: it outlives the Python wrapper while a container holds it.
        keep = [1, 2, 3]
        base = sys.getrefcount(keep)
        f = make(address, keep_alive_object=keep)
        assert sys.getrefcount(keep) == base + 1 and f(2) == 3
        held = packedfun.Array([f])
        del f
        assert sys.getrefcount(keep) == base + 1 and held[0](7) == 8
        del held
        assert sys.getrefcount(keep) == base
        f = make(address, keep_alive_object=None)
        assert f(0) == 1 and sys.getrefcount(keep) == base

        # Called by native code that was handed it (packedfun's testing.apply).
        assert tvm_ffi.get_global_func("testing.apply")(make(address), 9) == 10
        check_once()
        """
    )


def test_bad_addresses_and_arguments_raise():
    run_child(
        _SETUP
        + """
        for make in (Function.__from_extern_c__, Function.__from_mlir_packed_safe_call__):
            with pytest.raises(ValueError, match="the address is 0"):
                make(0)
            with pytest.raises(TypeError, match="expected \\\\(address: int"):
                make("0x1234")
            with pytest.raises(TypeError):
                make(1.5)
            with pytest.raises(TypeError):
                make()  # the address is required
            with pytest.raises(TypeError):
                make(1, object())  # keep_alive_object is keyword-only
        check_once()
        """
    )
