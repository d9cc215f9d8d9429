# Tensor benchmark cases (issue 4): array arguments, already-converted tensors, DLPack both ways.
"""Cases of tensors against nanobind's ``ndarray``, apache-tvm-ffi and ctypes pointer passing.

The functions read ``ndim`` of their argument, so the time is the argument's conversion. Native
helpers of this file are built on first use into ``benchmarks/_build/tensor`` (packedfun's and
tvm-ffi's through their ``cpp.load_inline``; nanobind and ctypes with the C/C++ compiler).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from harness import Case, Target, call_loop, empty_loop
from peers import Peers

HERE = Path(__file__).resolve().parent
BUILD = HERE / "_build" / "tensor"
PF_BODY = "int64_t tensor_ndim(packedfun::TensorView x) { return x->ndim; }\n"
# A trivial body, declared so (it keeps the caller's GIL, as nanobind's functions do): the rows
# compare argument conversion. The "default GIL policy" row builds the same body undeclared.
PF_SOURCE = PF_BODY + "PACKEDFUN_DLL_EXPORT_GIL(tensor_ndim, kPFGILHold);\n"
TVM_SOURCE = "int64_t tensor_ndim(tvm::ffi::TensorView x) { return x.ndim(); }\n"


def _run(cmd: list) -> None:
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])}...: {result.stderr[-2000:]}")


def _nanobind_ndim():
    import nanobind

    out = BUILD / ("pf_bench_nb_tensor" + sysconfig.get_config_var("EXT_SUFFIX"))
    if not out.exists():
        static = HERE / "_build" / f"py{sys.version_info[0]}{sys.version_info[1]}"
        lib = static / "libnanobind-static.a"
        if not lib.exists():
            raise RuntimeError("nanobind's static library was not built (run benchmarks/run.py)")
        src = Path(nanobind.source_dir()).parent
        cxx = os.environ.get("CXX") or shutil.which("c++") or "g++"
        _run([cxx, "-std=c++17", "-O2", "-shared", "-fPIC", "-fvisibility=hidden",
              "-I", nanobind.include_dir(), "-I", str(src / "ext" / "robin_map" / "include"),
              "-I", sysconfig.get_paths()["include"], str(HERE / "tensor" / "nb_tensor.cc"),
              str(lib), "-o", str(out)])  # fmt: skip
    sys.path.insert(0, str(BUILD))
    import pf_bench_nb_tensor

    return pf_bench_nb_tensor.ndim


def _ctypes_ndim():
    import ctypes

    out = BUILD / "libpf_bench_ctypes_tensor.so"
    if not out.exists():
        cc = os.environ.get("CC") or shutil.which("cc") or "gcc"
        _run([cc, "-O2", "-shared", "-fPIC", str(HERE / "tensor" / "ctypes_tensor.c"), "-o",
              str(out)])  # fmt: skip
    lib = ctypes.CDLL(str(out))
    lib.bench_ndim_c.argtypes = [ctypes.c_void_p, ctypes.c_int64]
    lib.bench_ndim_c.restype = ctypes.c_int64
    return lambda a: lib.bench_ndim_c(a.ctypes.data, a.size)


def _loaders(peers: Peers) -> dict:
    """peer -> ndim function, for the peers whose helper builds here."""
    BUILD.mkdir(parents=True, exist_ok=True)
    funcs = {}
    if "packedfun" in peers.loaded:
        import packedfun.cpp

        mod = packedfun.cpp.load_inline(
            "bench_tensor",
            cpp_sources=PF_SOURCE,
            functions="tensor_ndim",
            build_directory=str(BUILD),
        )
        funcs["packedfun"] = mod.tensor_ndim
        if mod.tensor_ndim.gil_policy != "hold":
            raise AssertionError("bench_tensor: tensor_ndim was declared kPFGILHold")
    if "tvm-ffi" in peers.loaded:
        import tvm_ffi.cpp

        mod = tvm_ffi.cpp.load_inline(
            "bench_tensor",
            cpp_sources=TVM_SOURCE,
            functions="tensor_ndim",
            build_directory=str(BUILD / "tvm-ffi"),
        )
        funcs["tvm-ffi"] = mod.tensor_ndim
    for name, make in (("nanobind", _nanobind_ndim), ("ctypes", _ctypes_ndim)):
        if name in peers.loaded:
            try:
                funcs[name] = make()
            except Exception as exc:  # a helper that cannot build leaves its column empty
                print(f"cases_tensor: {name} helper not built: {exc}", file=sys.stderr)
    return funcs


def _checked(funcs: dict, arg) -> dict:
    for name, f in funcs.items():
        if f(arg) != 1:
            raise AssertionError(f"{name}: ndim of {type(arg).__name__} returned {f(arg)!r}")
    return {name: call_loop(f, arg) for name, f in funcs.items()}


def _dlpack_cases(peers: Peers, np) -> list:
    arr = np.zeros(4, dtype="float32")
    from_loops, to_loops = {}, {}
    if "packedfun" in peers.loaded:
        import packedfun

        from_loops["packedfun"] = call_loop(packedfun.from_dlpack, arr)
        to_loops["packedfun"] = call_loop(np.from_dlpack, packedfun.from_dlpack(arr))
    if "tvm-ffi" in peers.loaded:
        import tvm_ffi

        from_loops["tvm-ffi"] = call_loop(tvm_ffi.from_dlpack, arr)
        to_loops["tvm-ffi"] = call_loop(np.from_dlpack, tvm_ffi.from_dlpack(arr))
    return [
        Case("from_dlpack(numpy float32[4])", from_loops, empty_loop(1),
             Target("≥ 2× faster than tvm-ffi", faster_than=("tvm-ffi", 2.0)), group="tensor"),
        Case("numpy.from_dlpack(Tensor)", to_loops, empty_loop(1), None, group="tensor"),
    ]  # fmt: skip


def make_cases(peers: Peers) -> list:
    """Return the tensor cases for the loaded peers (none when NumPy is missing)."""
    try:
        import numpy as np
    except ImportError:
        return []
    funcs = _loaders(peers)
    arr = np.zeros(4, dtype="float32")
    numpy_target = Target("≤ nanobind and ≥ 2.5× faster than tvm-ffi",
                          faster_than=("tvm-ffi", 2.5))  # fmt: skip
    cases = [Case("numpy float32[4] → ndim", _checked(funcs, arr), empty_loop(1), numpy_target,
                  group="tensor")]  # fmt: skip
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        t = torch.zeros(4)
        tfuncs = {k: v for k, v in funcs.items() if k != "ctypes"}
        cases.append(Case("torch float32[4] → ndim", _checked(tfuncs, t), empty_loop(1),
                          Target("≥ 2.5× faster than tvm-ffi", faster_than=("tvm-ffi", 2.5)),
                          group="tensor"))  # fmt: skip
    if "packedfun" in funcs:
        import packedfun.cpp

        released = packedfun.cpp.load_inline(
            "bench_tensor_release",
            cpp_sources=PF_BODY,
            functions="tensor_ndim",
            build_directory=str(BUILD / "release"),
        ).tensor_ndim
        default_funcs = {"packedfun": released}
        if "tvm-ffi" in funcs:
            default_funcs["tvm-ffi"] = funcs["tvm-ffi"]
        cases.append(Case("numpy float32[4] → ndim, default GIL policy",
                          _checked(default_funcs, arr), empty_loop(1),
                          Target("≥ 1.5× faster than tvm-ffi", faster_than=("tvm-ffi", 1.5)),
                          group="tensor"))  # fmt: skip
    converted = {}
    if "packedfun" in funcs:
        import packedfun

        converted["packedfun"] = call_loop(funcs["packedfun"], packedfun.from_dlpack(arr))
        int_only = packedfun.get_global_func("testing.typed_int_only")
        # The reference of the target: an int argument to a one-argument typed packedfun function.
        converted["floor"] = call_loop(int_only, 1)
    if "tvm-ffi" in funcs:
        import tvm_ffi

        converted["tvm-ffi"] = call_loop(funcs["tvm-ffi"], tvm_ffi.from_dlpack(arr))
    cases.append(Case("already-converted Tensor → ndim (floor: packedfun int arg)",
                      converted, empty_loop(1), Target("≤ 1.3× an int argument", max_ratio=1.3),
                      group="tensor"))  # fmt: skip
    return cases + _dlpack_cases(peers, np)
