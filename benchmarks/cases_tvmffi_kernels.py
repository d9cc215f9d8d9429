# Kernel-library benchmark cases (issue 17): one tvm-ffi-built library, packedfun vs tvm_ffi.
"""The same library, built with ``tvm_ffi.cpp.build_inline`` from ``tvmffi/kernels.cc``, loaded
with ``packedfun.load_module`` (both backends) and with ``tvm_ffi.load_module``: the difference is
the calling machinery only (packedfun's bridge translates at the boundary, see
``docs/tvm-ffi-kernels.md``). Built on first use into ``benchmarks/_build/tvmffi_kernels``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from harness import Case, Target, call_loop, empty_loop, raise_loop
from peers import Peers

HERE = Path(__file__).resolve().parent
BUILD = HERE / "_build" / "tvmffi_kernels"
TARGET = Target("≥ 2× faster than tvm-ffi", faster_than=("tvm-ffi", 2.0))


def _library() -> str:
    """The kernel library's path (built once)."""
    out = BUILD / "pf_bench_tvm_kernels.so"
    if not out.exists():
        import tvm_ffi.cpp

        BUILD.mkdir(parents=True, exist_ok=True)
        built = tvm_ffi.cpp.build_inline(
            "pf_bench_tvm_kernels",
            cpp_sources=(HERE / "tvmffi" / "kernels.cc").read_text(),
            build_directory=str(BUILD),
        )
        if Path(built) != out:
            Path(built).replace(out)
    return str(out)


def _modules(peers: Peers, path: str) -> dict:
    """peer -> an object with the library's functions as attributes."""
    mods: dict = {}
    if "packedfun" in peers.loaded:
        import packedfun

        mods["packedfun"] = packedfun.load_module(path)
    if "packedfun[ctypes]" in peers.loaded:
        backend = peers.loaded["packedfun[ctypes]"].raw
        handle = backend.module_load(path)

        class _Funcs:
            pass

        funcs = _Funcs()
        for name in ("add", "str_len", "add_one_cpu", "fail", "fail_fast"):
            setattr(funcs, name, backend.module_get_function(handle, name, False))
        mods["packedfun[ctypes]"] = funcs
    if "tvm-ffi" in peers.loaded:
        import tvm_ffi

        mods["tvm-ffi"] = tvm_ffi.load_module(path)
    return mods


def _check(mods: dict, np) -> None:
    x = np.arange(4, dtype="float32")
    for name, m in mods.items():
        y = np.zeros(4, dtype="float32")
        m.add_one_cpu(x, y)
        ok = m.add(1, 2) == 3 and m.str_len("ten chars!") == 10 and (y == x + 1).all()
        if not ok:
            raise AssertionError(f"{name}: the tvm-ffi kernel library returned wrong results")


def make_cases(peers: Peers) -> list:
    """The kernel cases, when tvm-ffi, packedfun and NumPy are all there."""
    if "tvm-ffi" not in peers.loaded or "packedfun" not in peers.loaded:
        return []
    try:
        import numpy as np
    except ImportError:
        return []
    try:
        mods = _modules(peers, _library())
    except Exception as exc:  # the compiler or tvm-ffi's build failed: no rows rather than none
        print(f"cases_tvmffi_kernels: kernel library not built: {exc}", file=sys.stderr)
        return []
    _check(mods, np)
    for name, m in mods.items():
        try:
            m.fail_fast()
        except Exception as exc:  # packedfun[ctypes]'s error types are its own
            if "failed fast" not in str(exc):
                raise AssertionError(f"{name}: fail_fast raised {exc!r}") from None
        else:
            raise AssertionError(f"{name}: fail_fast did not raise")
    x, y = np.zeros(4, dtype="float32"), np.zeros(4, dtype="float32")
    items = mods.items()
    loops = {
        "add(1, 2)": ({n: call_loop(m.add, 1, 2) for n, m in items}, 2),
        "str_len('ten chars!')": ({n: call_loop(m.str_len, "ten chars!") for n, m in items}, 1),
        "add_one_cpu(numpy, numpy)": ({n: call_loop(m.add_one_cpu, x, y) for n, m in items}, 2),
    }
    cases = [
        Case(f"tvm-ffi kernel {name}", ls, empty_loop(nargs), TARGET, group="tvm-ffi kernels")
        for name, (ls, nargs) in loops.items()
    ]
    # Two torch tensors: this row measured 1.29-1.40× tvm-ffi's speed, not 2×. Callgrind shows why
    # (docs/tvm-ffi-kernels.md, "Speed"): the work both FFIs must do per call (torch's own DLPack
    # exchange API for the two tensors, which packedfun's own functions use too; the GIL release;
    # the kernel) is already over 1470 of the 1950 instructions that 2× would leave packedfun.
    try:
        import torch

        tx, ty = torch.zeros(4), torch.zeros(4)
        torch_loops = {n: call_loop(m.add_one_cpu, tx, ty) for n, m in mods.items()}
        cases.append(Case("tvm-ffi kernel add_one_cpu(torch, torch)", torch_loops, empty_loop(2),
                          TARGET, group="tvm-ffi kernels"))  # fmt: skip
    except ImportError:
        pass
    fast = {n: raise_loop(m.fail_fast, Exception) for n, m in mods.items()}
    cases.append(Case("tvm-ffi kernel error (set through the C ABI)", fast,
                      empty_loop(0, catch=Exception), TARGET, group="tvm-ffi kernels"))  # fmt: skip
    # TVM_FFI_THROW captures and symbolizes the kernel's stack before either FFI sees the error:
    # that cost is the kernel's, the same for both, so this row carries no target.
    thrown = {n: raise_loop(m.fail, Exception, 7) for n, m in mods.items()}
    cases.append(Case("tvm-ffi kernel TVM_FFI_THROW(ValueError)", thrown,
                      empty_loop(1, catch=Exception), None, group="tvm-ffi kernels"))  # fmt: skip
    return cases
