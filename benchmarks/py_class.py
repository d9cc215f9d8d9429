# Python-defined object types (py_class): construct/read/set, C++ field reads, structural walks.
"""Run ``python benchmarks/py_class.py [--quick]``: prints a markdown table (medians of
interleaved rounds, one process).

Rows, each beside its peers measured in the same rounds:

- a 3-field class constructed with keywords, a field read, a field set: packedfun's ``py_class``,
  apache-tvm-ffi's ``py_class`` (when installed), ``@dataclass(slots=True)`` and the C++-defined
  ``testing.TestIntPair`` (2 read-only fields: construct and read only), and two descriptors
  written in C, which CPython's attribute specialization leaves on the generic path as it leaves
  every C-level descriptor other than a ``__slots__`` member: ``slice.start`` (a member of a C
  type that only returns the stored object: the floor of that path) and a ``ctypes.Structure``
  field (``c_int64``, converting on read and write as packedfun's field does). A field of a
  Python-defined or C++-defined object is such a descriptor; it cannot be a ``__slots__`` member,
  since the value lives in the native object, where C++ reads and writes it;
- a C++ function (``load_inline``) reading one field by name through reflection, 1000 times per
  call: a Python-defined instance against a C++-defined one (``testing.TestIntPair``);
- ``structural_hash`` and ``structural_first_difference`` over trees of 10k and 100k nodes:
  Python-defined nodes against the C++-defined ``testing.TreeNode`` of the same shape.
"""

from __future__ import annotations

import dataclasses
import gc
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import packedfun  # noqa: E402
from packedfun.dataclasses import py_class  # noqa: E402
from packedfun.structural import structural_first_difference, structural_hash  # noqa: E402

QUICK = "--quick" in sys.argv
ROUNDS = 5 if QUICK else 21


@py_class("bench.Point3")
class Point3(packedfun.Object):
    x: int
    y: int
    z: int


@py_class("bench.PyTreeNode")
class PyTreeNode(packedfun.Object):
    name: str
    children: list


@dataclasses.dataclass(slots=True)
class DPoint3:
    x: int
    y: int
    z: int


def _tvm_ffi_point():
    try:
        from tvm_ffi.dataclasses import py_class as tvm_py_class

        import tvm_ffi
    except Exception:  # not installed, or packedfun stands in for it
        return None
    if getattr(tvm_ffi, "__name__", "") != "tvm_ffi" or tvm_ffi is packedfun:
        return None

    @tvm_py_class("bench.TvmPoint3")
    class TvmPoint3(tvm_ffi.Object):
        x: int
        y: int
        z: int

    return TvmPoint3


def _per_call(fn, n):
    gc.disable()  # a collection inside one sample would dwarf the operation measured
    try:
        t0 = time.perf_counter_ns()
        fn(n)
        return (time.perf_counter_ns() - t0) / n
    finally:
        gc.enable()
        gc.collect()


def _loops(cls):
    def construct(n):
        for _ in range(n):
            cls(x=1, y=2, z=3)

    obj = cls(x=1, y=2, z=3)

    def read(n):
        o = obj
        for _ in range(n):
            o.x  # noqa: B018

    def write(n):
        o = obj
        for _ in range(n):
            o.x = 5

    return {"construct (keywords)": construct, "read a field": read, "set a field": write}


def _native_loops():
    """The C++-defined testing.TestIntPair (two read-only int fields: no set row)."""
    import packedfun.testing

    cls = packedfun.testing.TestIntPair

    def construct(n):
        for _ in range(n):
            cls(a=1, b=2)

    obj = cls(a=1, b=2)

    def read(n):
        o = obj
        for _ in range(n):
            o.a  # noqa: B018

    return {"construct (keywords)": construct, "read a field": read}


def _c_member_loops():
    """The generic attribute path with the cheapest C-level data descriptor: a member of a C type
    (``slice.start``, which only returns the stored object)."""
    obj = slice(1, 2, 3)

    def read(n):
        o = obj
        for _ in range(n):
            o.start  # noqa: B018

    return {"read a field": read}


def _ctypes_field_loops():
    """A C-level data descriptor that converts an int on read and write: a ctypes field."""
    import ctypes

    class CPoint3(ctypes.Structure):
        _fields_ = [("x", ctypes.c_int64), ("y", ctypes.c_int64), ("z", ctypes.c_int64)]

    loops = _loops(CPoint3)
    del loops["construct (keywords)"]
    return loops


def micro_rows():
    peers = {"packedfun py_class": Point3, "dataclass(slots=True)": DPoint3}
    tvm = _tvm_ffi_point()
    if tvm is not None:
        peers["tvm-ffi py_class"] = tvm
    loops = {name: _loops(cls) for name, cls in peers.items()}
    peers["C++-defined (TestIntPair)"] = None
    loops["C++-defined (TestIntPair)"] = _native_loops()
    peers["C member (slice.start)"] = None
    loops["C member (slice.start)"] = _c_member_loops()
    peers["ctypes field"] = None
    loops["ctypes field"] = _ctypes_field_loops()
    n = 2000 if QUICK else 20000
    rows = []
    for case in ("construct (keywords)", "read a field", "set a field"):
        samples = {name: [] for name in peers}
        for r in range(ROUNDS):
            order = list(peers)
            order = order[r % len(order) :] + order[: r % len(order)]
            for name in order:
                if case in loops[name]:
                    samples[name].append(_per_call(loops[name][case], n))
        med = {name: statistics.median(v) for name, v in samples.items() if v}
        rows.append((case, med))
    return list(peers), rows


CPP = r"""
#include <packedfun/packedfun.h>
namespace refl = packedfun::reflection;
int64_t read_field_n(packedfun::ObjectRef obj, std::string name, int64_t n) {
  int64_t s = 0;
  for (int64_t i = 0; i < n; ++i) s += refl::GetField(obj, name).cast<int64_t>();
  return s;
}
"""


def cpp_rows():
    from packedfun import cpp, testing

    assert testing.echo(1) == 1
    mod = cpp.load_inline("bench_py_class", cpp_sources=CPP, functions=["read_field_n"])
    pair_ctor = packedfun.get_global_func("testing.make_int_pair", allow_missing=True)
    if pair_ctor is None:
        from packedfun.object import type_info

        info = type_info(packedfun._backend.core.type_key_to_index("testing.TestIntPair"))
        pair_ctor = next(m["func"] for m in info["methods"] if m["name"] == "__create__")
    native, py = pair_ctor(1, 2), Point3(1, 2, 3)
    assert mod.read_field_n(native, "a", 10) == 10 and mod.read_field_n(py, "x", 10) == 10
    n = 1000
    a, b = [], []
    for _ in range(ROUNDS):
        a.append(_per_call(lambda k: mod.read_field_n(py, "x", k), n))
        b.append(_per_call(lambda k: mod.read_field_n(native, "a", k), n))
    return statistics.median(a), statistics.median(b)


def _native_tree(n, fan=4):
    from packedfun.object import type_info

    info = type_info(packedfun._backend.core.type_key_to_index("testing.TreeNode"))
    make = next(m["func"] for m in info["methods"] if m["name"] == "__create__")
    return _tree(lambda name, kids: make(name, packedfun.Array(kids)), n, fan)


def _tree(make, n, fan=4):
    level = [make("leaf", []) for _ in range(n - 1)] + [make("last", [])]
    while len(level) > 1:
        level = [make("inner", level[i : i + fan]) for i in range(0, len(level), fan)]
    return level[0]


def _timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _walk_pair(py1, py_copy, nt1, nt2, rounds):
    cases = (
        ("structural_hash", lambda: structural_hash(py1), lambda: structural_hash(nt1)),
        (
            "first mismatch (equal trees)",
            lambda: structural_first_difference(py1, py_copy),
            lambda: structural_first_difference(nt1, nt2),
        ),
    )
    out = []
    for what, fpy, fnt in cases:
        a, b = [], []
        for _ in range(rounds):
            a.append(_timed(fpy))
            b.append(_timed(fnt))
        out.append((what, statistics.median(a), statistics.median(b)))
    return out


def walk_rows():
    import copy

    rows = []
    sizes = (10_000,) if QUICK else (10_000, 100_000)
    rounds = 3 if QUICK else 7
    for n in sizes:
        py1, py2 = _tree(PyTreeNode, n), _tree(PyTreeNode, n)
        nt1, nt2 = _native_tree(n), _native_tree(n)
        assert structural_first_difference(py1, py2) is None
        for what, a, b in _walk_pair(py1, copy.deepcopy(py1), nt1, nt2, rounds):
            rows.append((f"{what}, {n // 1000}k leaves", a, b))
    return rows


def main():
    names, rows = micro_rows()
    print(f"load average {os.getloadavg()[0]:.1f}; medians of {ROUNDS} interleaved rounds\n")
    print("| ns per operation | " + " | ".join(names) + " | vs dataclass | vs tvm-ffi |")
    print("|---|" + "---|" * (len(names) + 2))
    for case, med in rows:
        ours = med["packedfun py_class"]
        vs_dc = ours / med["dataclass(slots=True)"]
        vs_tvm = f"{ours / med['tvm-ffi py_class']:.2f}x" if "tvm-ffi py_class" in med else "n/a"
        cells = " | ".join(f"{med[n]:.0f}" if n in med else "n/a" for n in names)
        print(f"| {case} | {cells} | {vs_dc:.2f}x | {vs_tvm} |")
    py, native = cpp_rows()
    print("\n| C++ reads one field by name (ns per read) | Python-defined | C++-defined | ratio |")
    print("|---|---|---|---|")
    print(f"| refl::GetField | {py:.1f} | {native:.1f} | {py / native:.2f}x |")
    print("\n| tree walk (ms) | Python-defined nodes | C++-defined nodes | ratio |")
    print("|---|---|---|---|")
    for what, a, b in walk_rows():
        print(f"| {what} | {a * 1e3:.1f} | {b * 1e3:.1f} | {a / b:.2f}x |")


if __name__ == "__main__":
    main()
