# Objects still alive when the interpreter exits: released, or at least visible to a leak checker.
"""Regression tests of the sanitized run's exit-time findings (issue 13, docs/reliability.md):
the leak check at exit must see only real leaks. On whichever backend runs; the suite's ctypes
child run covers the second one."""

import ctypes
import gc
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import packedfun
import pytest
from packedfun import testing

PKG_PARENT = str(Path(packedfun.__file__).resolve().parents[1])


def _child(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PACKEDFUN_BACKEND=packedfun.BACKEND)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [PKG_PARENT, env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )


def _words_one_hop_away(obj) -> set:
    """The aligned 8-byte words of ``obj`` and of the objects it references, as LeakSanitizer
    reads memory when it looks for pointers."""
    words = set()
    for o in [obj, *gc.get_referents(obj)]:
        if isinstance(o, type):
            continue
        size = type(o).__sizeof__(o)
        raw = ctypes.string_at(id(o), size)
        words.update(int.from_bytes(raw[i : i + 8], sys.byteorder) for i in range(0, size - 7, 8))
    return words


def test_every_wrapper_holds_its_native_pointer_where_a_leak_checker_sees_it():
    # A wrapper that CPython never frees at exit (a reference cycle through a class, as seed 003's
    # cells make) must show LeakSanitizer the object it owns. The ctypes backend kept only a Python
    # int, whose 30-bit digits are no pointer: the Array, Map and object were reported as leaked.
    pair = testing.TestIntPair(1, 2)
    wrappers = [
        packedfun.convert([1, 2]),
        packedfun.convert({"a": 1}),
        packedfun.List([1]),
        packedfun.Dict({1: 2}),
        packedfun.Shape([3]),
        packedfun.from_dlpack(np.zeros(3)),
        packedfun.get_global_func("testing.echo"),
        pair,
        testing.echo(pair),
    ]
    for wrapper in wrappers:
        assert wrapper.handle in _words_one_hop_away(wrapper), type(wrapper)


@pytest.mark.deselect_if(
    packedfun.BACKEND != "ctypes", reason="a ctypes property: _core releases in C (tp_dealloc)"
)
def test_wrapper_release_needs_neither_globals_nor_builtins():
    # At exit, the last collection frees wrappers after the interpreter wiped every module's
    # globals, and builtins were no longer found either: the ctypes __del__ failed on its first
    # lookup and left the native object unreleased (a Shape in pytest's parametrize data, seen by
    # LeakSanitizer in the sanitized run). Run it with neither.
    from packedfun._ctypes.values import Function, Object

    for cls in (Object, Function):
        original = cls.__del__
        bare = types.FunctionType(
            original.__code__, {"__builtins__": {}}, "__del__", original.__defaults__
        )
        wrapper = packedfun.List([1]) if cls is Object else packedfun.Function(lambda: None)
        handle = wrapper.handle
        count = ctypes.c_uint64.from_address(handle)
        packedfun.List([wrapper])  # a native reference comes and goes: the object stays valid
        keep = packedfun.Array([wrapper])  # one more native reference keeps the object alive
        before = count.value
        bare(wrapper)
        assert wrapper.handle == 0 and count.value == before - 1
        del keep


def test_numpy_array_behind_a_tensor_alive_at_exit_is_released():
    # docs/python-guide.md's example left at exit: the Tensor dies while the interpreter tears
    # down, when Py_IsInitialized() is already 0. _core's deleter tested that and kept the array
    # (96 B reported at exit); ctypes went through NumPy's __dlpack__, whose deleter does the same.
    code = """
import functools, sys, weakref
import numpy as np
import packedfun
a = np.arange(4.0)
t = packedfun.from_dlpack(a)
# No cycle through __main__ (the collector clears weak references inside the cycles it frees):
# the interpreter drops t, then probe, whose callback then runs.
probe = weakref.ref(a, functools.partial(print, "array released", file=sys.stdout, flush=True))
del a
"""
    proc = _child(code)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("array released"), (proc.stdout, proc.stderr[-3000:])


def test_numpy_tensor_shares_memory_and_read_only_flag():
    # The ctypes backend now imports NumPy arrays itself (as _core does), not through __dlpack__.
    a = np.arange(6, dtype=np.float32).reshape(2, 3)[:, ::2]
    t = packedfun.from_dlpack(a)
    assert t.shape == (2, 2) and t.strides == (3, 2) and str(t.dtype) == "float32"
    np.from_dlpack(t)[1, 1] = 42.0
    assert a[1, 1] == 42.0
    frozen = np.arange(3.0)
    frozen.flags.writeable = False
    assert not np.from_dlpack(packedfun.from_dlpack(frozen)).flags.writeable
    with pytest.raises(BufferError, match="from_dlpack"):
        packedfun.from_dlpack(np.array(["x"], dtype=object))
