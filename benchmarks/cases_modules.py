# Module benchmark cases (issue 5): load_inline warm-cache hits and calls into a loaded module.
"""Cases of ``packedfun.cpp`` and modules, against apache-tvm-ffi's ``tvm_ffi.cpp``.

The table gets the warm-cache ``load_inline`` hit and a call of a module function by attribute.
A cold build cannot be looped, so it is measured one build at a time by running this file::

    python benchmarks/cases_modules.py      # cold one-function builds, packedfun and tvm-ffi
"""

from __future__ import annotations

import functools
import statistics
import sys
import tempfile
import time
from pathlib import Path

from harness import Case, Target, _compile_loop, call_loop, empty_loop
from peers import Peers

HERE = Path(__file__).resolve().parent
JIT_DIR = HERE / "_build" / "jit"
SOURCE = "int64_t add_int(int64_t a, int64_t b) { return a + b; }\n"
# packedfun's copy is declared trivial (it keeps the caller's GIL), as the functions of the call
# rows and nanobind's are: the rows compare the attribute lookup and the call, not the GIL policy.
PF_SOURCE = SOURCE + "PACKEDFUN_DLL_EXPORT_GIL(add_int, kPFGILHold);\n"


def _pf_load(build_directory: Path):
    import packedfun.cpp

    return functools.partial(
        packedfun.cpp.load_inline,
        "bench_mod",
        cpp_sources=PF_SOURCE,
        functions="add_int",
        build_directory=str(build_directory),
    )


def _tvm_load(build_directory: Path):
    import tvm_ffi.cpp

    return functools.partial(
        tvm_ffi.cpp.load_inline,
        "bench_mod",
        cpp_sources=SOURCE,
        functions="add_int",
        build_directory=str(build_directory),
    )


def _loaders(peers: Peers) -> dict:
    loaders = {}
    if "packedfun" in peers.loaded:
        loaders["packedfun"] = _pf_load(JIT_DIR / "packedfun")
    if "tvm-ffi" in peers.loaded:
        loaders["tvm-ffi"] = _tvm_load(JIT_DIR / "tvm-ffi")
    return loaders


def make_cases(peers: Peers) -> list:
    """The warm-hit and module-call cases for every peer that has ``load_inline``."""
    loaders = _loaders(peers)
    modules = {name: load() for name, load in loaders.items()}  # the cold build, once
    for name, mod in modules.items():
        if mod.add_int(40, 2) != 42:
            raise AssertionError(f"{name}: inline add_int(40, 2) returned {mod.add_int(40, 2)!r}")
    if "packedfun" in modules and modules["packedfun"].add_int.gil_policy != "hold":
        raise AssertionError("packedfun: inline add_int was declared kPFGILHold")
    warm = Case(
        "load_inline warm-cache hit",
        {n: call_loop(f) for n, f in loaders.items()},
        empty_loop(0),
        Target("≥ 5× faster than tvm-ffi", faster_than=("tvm-ffi", 5.0)),
        show_us=True,
        group="modules",
    )
    calls = {n: _compile_loop("_m.add_int(1, 2)", {"_m": m}) for n, m in modules.items()}
    if "floor" in peers.loaded:
        calls["floor"] = call_loop(peers.loaded["floor"].fn["add_int"], 1, 2)
    attr = Case(
        "module function by attribute, mod.add_int(1, 2)",
        calls,
        empty_loop(0),
        Target("as fast as a registry call: ≤ 1.6× floor", max_ratio=1.6),
        group="modules",
    )
    cases = [warm, attr]
    if "packedfun" in modules:
        mod = modules["packedfun"]
        cases.append(
            Case(
                "mod.add_int(1, 2) (floor: the same Function in a local, f(1, 2))",
                {
                    "floor": call_loop(mod.add_int, 1, 2),
                    "packedfun": _compile_loop("_m.add_int(1, 2)", {"_m": mod}),
                },
                empty_loop(0),
                Target("≤ 1.2× the same Function in a local", max_ratio=1.2),
                group="modules",
            )
        )
    return cases


def _cold(load_for) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        load_for(Path(tmp))()
        return time.perf_counter() - start


def main() -> int:
    """Times cold builds of the one-function module (fresh cache directory each)."""
    sys.path.insert(0, str(HERE.parent / "python"))
    for name, load_for in (("packedfun", _pf_load), ("tvm-ffi", _tvm_load)):
        times = [_cold(load_for) for _ in range(3)]
        print(
            f"cold build of a one-function module, {name}: median {statistics.median(times):.2f} s"
            f" (runs: {', '.join(f'{t:.2f}' for t in times)})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
