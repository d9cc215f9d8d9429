# std bridge cases (issue 11): a list into std::vector, a dict into std::map/unordered_map.
"""Cases of ``packedfun/stl.h`` conversions against nanobind's stl casters.

Each function sums its container, so the time is the conversion. packedfun's helper is built with
``packedfun.cpp.load_inline`` and nanobind's with the C++ compiler, into ``benchmarks/_build/stl``.
The sums are declared trivial (GIL policy "hold"), as nanobind's functions are and as the core
cases' packedfun functions are: the GIL release of the default policy is measured in
``cases_threads.py``, not here. The "packedfun, Array/Map" column calls the same sums through
exports without view-argument bits (as a library built before ABI 1.4 has): the list or dict
arrives as an Array or Map, the path every std parameter took before container views.
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
BUILD = HERE / "_build" / "stl"
PF_SOURCE = r"""
#include <packedfun/array.h>
#include <packedfun/stl.h>
#include <map>
#include <unordered_map>
int64_t vec_sum(const std::vector<int64_t>& v) {
  int64_t s = 0;
  for (int64_t x : v) s += x;
  return s;
}
double map_sum(const std::map<std::string, double>& d) {
  double s = 0;
  for (const auto& kv : d) s += kv.second;
  return s;
}
double umap_sum(const std::unordered_map<std::string, double>& d) {
  double s = 0;
  for (const auto& kv : d) s += kv.second;
  return s;
}
// The same sums as a library built before ABI 1.4 exports them: without view-argument bits their
// list or dict arrives as an Array or Map ("packedfun, Array/Map" column, the path before views).
#define PF_BENCH_ARRAYS(name)                                                               \
  extern "C" int __packedfun_##name(void*, const PFAny*, int32_t, PFAny*);                  \
  extern "C" PACKEDFUN_EXPORT int __packedfun_##name##_arrays(void* self, const PFAny* args, \
                                                              int32_t n, PFAny* result) {   \
    return __packedfun_##name(self, args, n, result);                                       \
  }
PF_BENCH_ARRAYS(vec_sum)
PF_BENCH_ARRAYS(map_sum)
PF_BENCH_ARRAYS(umap_sum)
int64_t array_sum(packedfun::Array<int64_t> a) {
  int64_t s = 0;
  for (int64_t x : a) s += x;
  return s;
}
"""
NAMES = ("vec_sum", "map_sum", "umap_sum", "array_sum")
ARRAYS_PEER = "packedfun, Array/Map"


def _nanobind_module():
    import nanobind

    out = BUILD / ("pf_bench_nb_stl" + sysconfig.get_config_var("EXT_SUFFIX"))
    if not out.exists():
        static = HERE / "_build" / f"py{sys.version_info[0]}{sys.version_info[1]}"
        lib = static / "libnanobind-static.a"
        if not lib.exists():
            raise RuntimeError("nanobind's static library was not built (run benchmarks/run.py)")
        src = Path(nanobind.source_dir()).parent
        cxx = os.environ.get("CXX") or shutil.which("c++") or "g++"
        cmd = [cxx, "-std=c++17", "-O2", "-shared", "-fPIC", "-fvisibility=hidden",
               "-I", nanobind.include_dir(), "-I", str(src / "ext" / "robin_map" / "include"),
               "-I", sysconfig.get_paths()["include"], str(HERE / "nanobind" / "nb_stl.cc"),
               str(lib), "-o", str(out)]  # fmt: skip
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(result.stderr[-2000:])
    sys.path.insert(0, str(BUILD))
    import pf_bench_nb_stl

    return pf_bench_nb_stl


def _modules(peers: Peers) -> dict:
    """peer -> module with vec_sum/map_sum/umap_sum, for the peers whose helper builds here."""
    BUILD.mkdir(parents=True, exist_ok=True)
    mods = {}
    if "packedfun" in peers.loaded:
        import packedfun.cpp

        mod = packedfun.cpp.load_inline(
            "bench_stl", cpp_sources=PF_SOURCE, functions=list(NAMES), build_directory=str(BUILD)
        )
        for name in NAMES + tuple(n + "_arrays" for n in NAMES[:3]):
            getattr(mod, name).gil_policy = "hold"
        mods["packedfun"] = mod
    if "nanobind" in peers.loaded:
        try:
            mods["nanobind"] = _nanobind_module()
        except Exception as exc:  # a helper that cannot build leaves its column empty
            print(f"cases_stl: nanobind helper not built: {exc}", file=sys.stderr)
    return mods


def make_cases(peers: Peers) -> list:
    """Return the std-container cases for the loaded peers."""
    mods = _modules(peers)
    ints = list(range(100))
    floats = {f"key{i}": float(i) for i in range(100)}
    cases = []
    for label, name, arg, want in (
        ("list of 100 int → std::vector<int64_t>", "vec_sum", ints, sum(ints)),
        ("dict of 100 str→float → std::map", "map_sum", floats, sum(floats.values())),
        ("dict of 100 str→float → std::unordered_map", "umap_sum", floats, sum(floats.values())),
    ):
        loops = {}
        for peer, mod in mods.items():
            f = getattr(mod, name)
            if f(arg) != want:
                raise AssertionError(f"{peer}: {name} returned {f(arg)!r}, expected {want!r}")
            loops[peer] = call_loop(f, arg)
            if peer == "packedfun":  # the same call with the Array/Map in between (before 1.4)
                loops[ARRAYS_PEER] = call_loop(getattr(mod, name + "_arrays"), arg)
        target = Target("≤ nanobind", faster_than=("nanobind", 1.0))
        cases.append(Case(label, loops, empty_loop(1), target, group="stl"))
    cases.extend(_kept_cases(peers, mods, ints))
    return cases


def _kept_cases(peers: Peers, mods: dict, ints: list) -> list:
    """A list kept as a container: into an ``Array<int64_t>`` parameter (nanobind: its vector
    caster, for scale) and through ``testing.echo`` (tvm-ffi: its own ``testing.echo``). The std
    fast paths must not slow these down."""
    array, echo = {}, {}
    if "packedfun" in mods:
        array["packedfun"] = call_loop(mods["packedfun"].array_sum, ints)
    if "nanobind" in mods:
        array["nanobind"] = call_loop(mods["nanobind"].vec_sum, ints)
    if "packedfun" in peers.loaded:
        import packedfun

        pf_echo = packedfun.get_global_func("testing.echo")
        if list(pf_echo(ints)) != ints:
            raise AssertionError("packedfun: testing.echo(list) changed the list")
        echo["packedfun"] = call_loop(pf_echo, ints)
    if "tvm-ffi" in peers.loaded:
        import tvm_ffi

        tvm_echo = tvm_ffi.get_global_func("testing.echo")
        if list(tvm_echo(ints)) != ints:
            raise AssertionError("tvm-ffi: testing.echo(list) changed the list")
        echo["tvm-ffi"] = call_loop(tvm_echo, ints)
    return [
        Case("list of 100 int → Array<int64_t> (nanobind: std::vector)", array, empty_loop(1),
             None, group="stl"),
        Case("list of 100 int → testing.echo → Array", echo, empty_loop(1), None, group="stl"),
    ]  # fmt: skip
