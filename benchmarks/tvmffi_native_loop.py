# A tvm-ffi library's native loop calling a Function it was handed: packedfun's vs tvm-ffi's.
"""``python benchmarks/tvmffi_native_loop.py [--repeat N] [--calls M]`` builds one library against
apache-tvm-ffi (loops that call a handed-in ``ffi::Function`` M times) and the same bodies twice
(as tvm-ffi functions and as packedfun functions), then prints a markdown table of the cost per
call inside the loop, interleaved rounds, median:

- ``add(i, 1)`` (POD arguments and result) and ``ndim2(a, b)`` (two ``DLTensor*`` to a
  ``TensorView`` body): the loop handed a tvm-ffi Function (the baseline) vs a packedfun Function
  (through the bridge's trampoline);
- a Python callable ``lambda a, b: 0``, handed over by tvm-ffi's own Python API vs by packedfun.

Both packages are used side by side in this process (no ``tvm_ffi`` switch)."""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BUILD = HERE / "_build" / "tvmffi_native_loop"

LOOPS = """
#include <tvm/ffi/tvm_ffi.h>
namespace ffi = tvm::ffi;
int64_t loop_pod(ffi::Function f, int64_t n) {
  int64_t s = 0;
  for (int64_t i = 0; i < n; ++i) s += f(i, int64_t(1)).cast<int64_t>();
  return s;
}
int64_t loop_tensors(ffi::Function f, ffi::TensorView a, ffi::TensorView b, int64_t n) {
  int64_t s = 0;
  for (int64_t i = 0; i < n; ++i) s += f(a, b).cast<int64_t>();
  return s;
}
int64_t add(int64_t a, int64_t b) { return a + b; }
int64_t ndim2(ffi::TensorView a, ffi::TensorView b) { return a.ndim() + b.ndim(); }
class BenchPairObj : public ffi::Object {
 public:
  int64_t a, b;
  BenchPairObj(int64_t a, int64_t b) : a(a), b(b) {}
  int64_t Sum() const { return a + b; }
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("bench_native_loop.Pair", BenchPairObj, ffi::Object);
};
TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::ObjectDef<BenchPairObj>().def(refl::init<int64_t, int64_t>())
      .def_ro("a", &BenchPairObj::a).def("sum", &BenchPairObj::Sum);
  refl::GlobalDef()
      .def("bench_native_loop.echo", [](ffi::ObjectRef x) { return x; })
      .def("bench_native_loop.add", [](int64_t a, int64_t b) { return a + b; });
}
"""

PF_BODIES = """
int64_t add(int64_t a, int64_t b) { return a + b; }
int64_t ndim2(packedfun::TensorView a, packedfun::TensorView b) { return a->ndim + b->ndim; }
PACKEDFUN_DLL_EXPORT_GIL(add, kPFGILHold);
PACKEDFUN_DLL_EXPORT_GIL(ndim2, kPFGILHold);
"""


def _per_call(loop, calls: int, *args) -> float:
    start = time.perf_counter()
    loop(*args, calls)
    return (time.perf_counter() - start) / calls * 1e9


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--calls", type=int, default=200_000)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE.parent / "python"))
    import numpy as np
    import packedfun
    import packedfun.cpp
    import tvm_ffi.cpp

    import tvm_ffi

    BUILD.mkdir(parents=True, exist_ok=True)
    path = tvm_ffi.cpp.build_inline(
        "native_loop",
        cpp_sources=LOOPS,
        functions=["loop_pod", "loop_tensors", "add", "ndim2"],
        build_directory=str(BUILD / "tvm-ffi"),
    )
    theirs = tvm_ffi.load_module(path)  # tvm-ffi's own Python API
    ours = packedfun.load_module(path)  # the same library through packedfun's bridge
    pf = packedfun.cpp.load_inline(
        "native_loop_bodies",
        cpp_sources=PF_BODIES,
        functions=["add", "ndim2"],
        build_directory=str(BUILD / "packedfun"),
    )
    a = np.zeros((2, 3), dtype="float32")
    b = np.zeros((4,), dtype="float32")
    rows = {
        "add(i, 1): tvm-ffi Function": lambda n: _per_call(theirs.loop_pod, n, theirs.add),
        "add(i, 1): packedfun Function": lambda n: _per_call(ours.loop_pod, n, pf.add),
        "ndim2(a, b): tvm-ffi Function": lambda n: _per_call(
            theirs.loop_tensors, n, theirs.ndim2, a, b
        ),
        "ndim2(a, b): packedfun Function": lambda n: _per_call(
            ours.loop_tensors, n, pf.ndim2, a, b
        ),
        "lambda(i, 1): tvm-ffi's Python API": lambda n: _per_call(
            theirs.loop_pod, n, lambda x, y: 0
        ),
        "lambda(i, 1): packedfun": lambda n: _per_call(ours.loop_pod, n, lambda x, y: 0),
    }
    assert ours.loop_pod(pf.add, 10) == theirs.loop_pod(theirs.add, 10) == 55
    assert ours.loop_tensors(pf.ndim2, a, b, 3) == theirs.loop_tensors(theirs.ndim2, a, b, 3) == 9
    times: dict[str, list[float]] = {k: [] for k in rows}
    for _ in range(args.repeat):  # interleaved: every row once per round
        for name, run in rows.items():
            slow = name.startswith("lambda")
            times[name].append(run(args.calls // 10 if slow else args.calls))
    py_rows = _python_rows(tvm_ffi, packedfun)
    py_times: dict[str, list[float]] = {k: [] for k in py_rows}
    for _ in range(args.repeat):
        for name, run in py_rows.items():
            py_times[name].append(run(args.calls // 10))
    _table(times, "call inside the tvm-ffi loop")
    print()
    _table(py_times, "Python calling the tvm-ffi library")
    return 0


def _python_rows(tvm_ffi, packedfun) -> dict:
    """Python -> the library's registered globals and objects: tvm-ffi's API vs packedfun's."""
    t_echo = tvm_ffi.get_global_func("bench_native_loop.echo")
    p_echo = packedfun.get_global_func("bench_native_loop.echo")
    t_add = tvm_ffi.get_global_func("bench_native_loop.add")
    p_add = packedfun.get_global_func("bench_native_loop.add")
    t_obj = tvm_ffi.get_global_func("bench_native_loop.echo")(
        tvm_ffi.register_object("bench_native_loop.Pair")(type("TPair", (tvm_ffi.Object,), {}))(
            2, 3
        )
    )
    p_obj = packedfun.register_object("bench_native_loop.Pair")(
        type("PPair", (packedfun.Object,), {})
    )(2, 3)
    assert t_obj.sum() == p_obj.sum() == 5 and p_echo(p_obj).a == 2

    def loop(f, *a):
        def run(n):
            start = time.perf_counter()
            for _ in range(n):
                f(*a)
            return (time.perf_counter() - start) / n * 1e9

        return run

    return {
        "registered global add(1, 2): tvm-ffi": loop(t_add, 1, 2),
        "registered global add(1, 2): packedfun": loop(p_add, 1, 2),
        "echo(obj), the object both ways: tvm-ffi": loop(t_echo, t_obj),
        "echo(obj), the object both ways: packedfun": loop(p_echo, p_obj),
        "obj.sum() (a reflected method): tvm-ffi": loop(t_obj.sum),
        "obj.sum() (a reflected method): packedfun": loop(p_obj.sum),
    }


def _table(times: dict, title: str) -> None:
    med = {k: statistics.median(v) for k, v in times.items()}
    names = list(times)
    print(f"| {title} | ns/call (median) | vs tvm-ffi |")
    print("|---|---|---|")
    for i in range(0, len(names), 2):
        base, mine = names[i], names[i + 1]
        print(f"| {base} | {med[base]:.1f} | 1.00x |")
        print(f"| {mine} | {med[mine]:.1f} | {med[mine] / med[base]:.2f}x |")


if __name__ == "__main__":
    sys.exit(main())
