# Scaling report: per-operation cost as registries, containers, nesting and threads grow.
"""``python benchmarks/scaling.py [--quick] [--sizes 10,1000,100000,1000000]``

For each structure, measures the cost of one operation at several sizes and says whether it stays
flat (or grows as the structure promises). Writes ``results/scaling.md`` (the table) and
``results/scaling.svg`` (the chart). Each figure is the best of ``--repeat`` timed batches (each at
least 2 ms), in CPU ns per operation (this thread's CPU clock; the threads row: the process's),
measured in this one process, so that other load on the machine does not count.

Rows and what they promise:

* registry: ``get_global_func(name)`` O(1); ``list_global_func_names()`` O(log n) per name (the
  names come back sorted).
* object types: returning an object (class lookup), ``isinstance``, the type table's is-instance
  and key lookup — all O(1) in the number of registered types.
* Array: index O(1); iteration O(1) per element; ``convert`` O(1) per element; ``x in arr`` O(n)
  (a sequence scan, reported per element).
* Map: lookup and ``in`` O(1); iteration and ``convert`` O(1) per element; the same with keys built
  to collide in an unseeded hash (the adversarial set) must stay O(1) per operation.
* nesting: ``convert`` of a list nested d deep, O(1) per level (d is capped by Python's recursion
  limit: deeper inputs raise ``RecursionError``).
* threads: ``nop()`` calls per live Python thread count, aggregate ns per call, beside the same
  calls of a Python no-op (CPython's GIL hand-offs among many threads cost in both).
"""

from __future__ import annotations

import argparse
import ctypes
import datetime
import gc
import math
import os
import platform
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
try:
    import packedfun
except ImportError:  # the dev build's tree
    sys.path.insert(0, str(HERE.parent / "python"))
    import packedfun

import packedfun.testing  # noqa: E402,F401 - the testing library (testing.*)
import svgchart  # noqa: E402

MASK64 = (1 << 64) - 1


# Timed samples read this thread's CPU clock, not the wall clock: on a shared machine a wall-clock
# sample long enough to be preempted (the large sizes) counted other processes' time as ours, which
# made rows look super-linear. Each sample repeats op() until it has run at least this long.
_MIN_SAMPLE_NS = 2_000_000


def _best_ns(op, count: int, repeat: int) -> float:
    """Best-of-``repeat`` CPU ns per operation of ``op()``, which performs ``count`` operations."""
    best = float("inf")
    gc.disable()
    try:
        t0 = time.thread_time_ns()
        op()
        once = max(1, time.thread_time_ns() - t0)
        reps = max(1, -(-_MIN_SAMPLE_NS // once))
        for _ in range(repeat):
            t0 = time.thread_time_ns()
            for _ in range(reps):
                op()
            best = min(best, (time.thread_time_ns() - t0) / (count * reps))
    finally:
        gc.enable()
    return best


def _loop(f, args_list):
    def op():
        for a in args_list:
            f(a)

    return op


def _unmix(h: int) -> int:
    """The inverse of the 64-bit finalizer packedfun's map used before keys were seeded."""
    h ^= h >> 33
    h = (h * pow(0xC4CEB9FE1A85EC53, -1, 1 << 64)) & MASK64
    h ^= h >> 33
    h = (h * pow(0xFF51AFD7ED558CCD, -1, 1 << 64)) & MASK64
    h ^= h >> 33
    return h


def adversarial_int_keys(n: int) -> list:
    """Ints whose unseeded map hash is identical in its low 24 bits (one probe chain)."""
    keys = []
    for i in range(n):
        bits = _unmix((i + 1) << 24) ^ (3 << 56)  # kind kInt in the old hash
        keys.append(bits - (1 << 64) if bits >= 1 << 63 else bits)
    return keys


# ---- the rows ------------------------------------------------------------------------------------
def registry_rows(sizes, repeat):
    f = packedfun.get_global_func("testing.nop")
    lookup, listing, registered = {}, {}, 0
    for n in sizes:
        for i in range(registered, n):
            packedfun.register_global_func(f"scale.fn{i:07d}", f)
        registered = n
        names = [f"scale.fn{(i * 7919) % n:07d}" for i in range(min(n, 2000))]
        lookup[n] = _best_ns(_loop(packedfun.get_global_func, names), len(names), repeat)
        total = len(packedfun.list_global_func_names())
        listing[n] = _best_ns(packedfun.list_global_func_names, total, max(3, repeat // 3))
    for i in range(registered):
        packedfun.remove_global_func(f"scale.fn{i:07d}")
    return [
        ("registry: get_global_func(name)", "O(1)", lookup),
        ("registry: list_global_func_names() per name", "O(log n) per name (sorted)", listing),
    ]


def type_rows(sizes, repeat):
    import packedfun.testing as pt  # noqa: F401 - registers testing.TestIntPair

    # By soname: the runtime this process already loaded (a path could load a second copy).
    lib = ctypes.CDLL("libpackedfun.so")

    class ByteArray(ctypes.Structure):
        _fields_ = [("data", ctypes.c_char_p), ("size", ctypes.c_size_t)]

    def key(text: str) -> ByteArray:
        raw = text.encode()
        return ByteArray(raw, len(raw))

    cls = getattr(packedfun.testing, "TestIntPair", None)
    if cls is None:  # older trees: register the class here, as seed 003 does

        @packedfun.register_object("testing.TestIntPair")
        class TestIntPair(packedfun.Object):
            def __init__(self, a, b):
                self.__init_handle_by_constructor__(TestIntPair.__create__, a, b)

        cls = TestIntPair
    pair = cls(1, 2)
    echo = packedfun.get_global_func("testing.echo")
    pair_index, obj_index = ctypes.c_int32(), ctypes.c_int32()
    lib.PFTypeKeyToIndex(ctypes.byref(key("testing.TestIntPair")), ctypes.byref(pair_index))
    lib.PFTypeKeyToIndex(ctypes.byref(key("packedfun.Object")), ctypes.byref(obj_index))
    rows = {"ret": {}, "isinstance": {}, "c_isinstance": {}, "c_key": {}}
    registered, out = 0, ctypes.c_int32()
    pair_key = key("testing.TestIntPair")
    for n in sizes:
        for i in range(registered, n):
            if lib.PFTypeRegister(
                ctypes.byref(key(f"scale.T{i:07d}")), obj_index, ctypes.byref(out)
            ):
                raise RuntimeError("PFTypeRegister failed")
        registered = n
        batch = [pair] * 1000
        rows["ret"][n] = _best_ns(_loop(echo, batch), 1000, repeat)
        rows["isinstance"][n] = _best_ns(_loop(lambda o: isinstance(o, cls), batch), 1000, repeat)
        is_inst = lib.PFTypeIsInstance
        idx, base = pair_index.value, obj_index.value

        def c_isinstance(f=is_inst, idx=idx, base=base):
            for _ in range(1000):
                f(idx, base)

        rows["c_isinstance"][n] = _best_ns(c_isinstance, 1000, repeat)

        key_ref, out_ref = ctypes.byref(pair_key), ctypes.byref(out)

        def c_key(f=lib.PFTypeKeyToIndex, k=key_ref, o=out_ref):
            for _ in range(1000):
                f(k, o)

        rows["c_key"][n] = _best_ns(c_key, 1000, repeat)
    return [
        ("types: echo(obj) (class lookup on return)", "O(1)", rows["ret"]),
        ("types: isinstance(obj, cls)", "O(1)", rows["isinstance"]),
        ("types: PFTypeIsInstance via ctypes", "O(1)", rows["c_isinstance"]),
        ("types: PFTypeKeyToIndex via ctypes", "O(1)", rows["c_key"]),
    ]


PY_LIST_INDEX = "reference: Python list, lst[i] (same indices)"
PY_LIST_ITER = "reference: Python list iteration per element"
PY_LIST_COPY = "reference: tuple(list) per element"
PY_LIST_IN = "reference: Python `x in list` per element scanned"
PY_DICT_GET = "reference: Python dict, d[key] (same str keys)"
PY_DICT_BUILD = "reference: Python dict(zip(keys, values)) per element"
PY_DICT_ITER = "reference: Python dict items() iteration per element"
PY_THREADS = "reference: threads calling a Python no-op, aggregate ns per call"


def array_rows(sizes, repeat):
    rows: dict = {k: {} for k in ("index", "iter", "convert", "in")}
    refs: dict = {k: {} for k in rows}
    for n in sizes:
        src = list(range(n))
        arr = packedfun.convert(src)
        idx = [(i * 7919) % n for i in range(min(n, 2000))]
        rows["index"][n] = _best_ns(_loop(arr.__getitem__, idx), len(idx), repeat)
        refs["index"][n] = _best_ns(_loop(src.__getitem__, idx), len(idx), repeat)
        rows["iter"][n] = _best_ns(lambda arr=arr: [None for _ in arr], n, repeat)
        refs["iter"][n] = _best_ns(lambda src=src: [None for _ in src], n, repeat)
        rows["convert"][n] = _best_ns(lambda src=src: packedfun.convert(src), n, repeat)
        refs["convert"][n] = _best_ns(lambda src=src: tuple(src), n, repeat)
        rows["in"][n] = _best_ns(lambda arr=arr, n=n: (n - 1) in arr, n, max(3, repeat // 3))
        refs["in"][n] = _best_ns(lambda src=src, n=n: (n - 1) in src, n, max(3, repeat // 3))
    return [
        ("Array: arr[i]", "O(1)", rows["index"], PY_LIST_INDEX),
        ("Array: iteration per element", "O(1) per element", rows["iter"], PY_LIST_ITER),
        ("Array: convert(list) per element", "O(1) per element", rows["convert"], PY_LIST_COPY),
        ("Array: `x in arr` per element scanned", "O(n) scan: O(1) per element", rows["in"],
         PY_LIST_IN),
        (PY_LIST_INDEX, "O(1)", refs["index"]),
        (PY_LIST_ITER, "O(1) per element", refs["iter"]),
        (PY_LIST_COPY, "O(1) per element", refs["convert"]),
        (PY_LIST_IN, "O(n) scan: O(1) per element", refs["in"]),
    ]  # fmt: skip


def map_rows(sizes, repeat):
    names = (
        "get",
        "in",
        "iter",
        "convert",
        "adv_build",
        "adv_get",
        "py_build",
        "py_get",
        "py_iter",
    )
    rows: dict = {k: {} for k in names}
    for n in sizes:
        # Keys of one width at every n: "key9" is a short string stored inline and "key99999" an
        # allocated one, so keys that lengthen with n made the per-element cost grow with n.
        src = {f"key{i:07d}": i for i in range(n)}
        m = packedfun.convert(src)
        probe = [f"key{(i * 7919) % n:07d}" for i in range(min(n, 2000))]
        rows["get"][n] = _best_ns(_loop(m.__getitem__, probe), len(probe), repeat)
        rows["in"][n] = _best_ns(_loop(m.__contains__, probe), len(probe), repeat)
        rows["iter"][n] = _best_ns(lambda m=m: [None for _ in m.items()], n, repeat)
        rows["convert"][n] = _best_ns(lambda src=src: packedfun.convert(src), n, repeat)
        adv = dict.fromkeys(adversarial_int_keys(n), 1)
        rows["adv_build"][n] = _best_ns(lambda adv=adv: packedfun.convert(adv), n, 3)
        madv = packedfun.convert(adv)
        probe_adv = list(adv)[: min(n, 2000)]
        rows["adv_get"][n] = _best_ns(_loop(madv.__getitem__, probe_adv), len(probe_adv), 3)
        keys, values = list(src), list(src.values())
        rows["py_build"][n] = _best_ns(lambda k=keys, v=values: dict(zip(k, v)), n, repeat)
        rows["py_get"][n] = _best_ns(_loop(src.__getitem__, probe), len(probe), repeat)
        rows["py_iter"][n] = _best_ns(lambda src=src: [None for _ in src.items()], n, repeat)
    return [
        ("Map[str,int]: m[key]", "O(1)", rows["get"], PY_DICT_GET),
        ("Map[str,int]: key in m", "O(1)", rows["in"], PY_DICT_GET),
        ("Map[str,int]: items() iteration per element", "O(1) per element", rows["iter"],
         PY_DICT_ITER),
        ("Map[str,int]: convert(dict) per element", "O(1) per element", rows["convert"],
         PY_DICT_BUILD),
        ("Map, adversarial int keys: convert per element", "O(1) per element", rows["adv_build"],
         PY_DICT_BUILD),
        ("Map, adversarial int keys: m[key]", "O(1)", rows["adv_get"], PY_DICT_GET),
        (PY_DICT_GET, "O(1)", rows["py_get"]),
        (PY_DICT_BUILD, "O(1) per element", rows["py_build"]),
        (PY_DICT_ITER, "O(1) per element", rows["py_iter"]),
    ]  # fmt: skip


def nesting_rows(depths, repeat):
    per_level = {}
    for d in depths:
        value: list = [1]
        for _ in range(d - 1):
            value = [value]
        per_level[d] = _best_ns(lambda v=value: packedfun.convert(v), d, repeat)
    return [("convert(list nested d deep) per level", "O(1) per level", per_level)]


def _py_nop():
    pass


def thread_rows(counts, repeat=5, total_calls=200_000):
    return [
        ("threads: nop() aggregate ns per call", "O(1) per call",
         _threads_per_call(packedfun.get_global_func("testing.nop"), counts, repeat, total_calls),
         PY_THREADS),
        (PY_THREADS, "O(1) per call", _threads_per_call(_py_nop, counts, repeat, total_calls)),
    ]  # fmt: skip


def _threads_per_call(nop, counts, repeat, total_calls):
    """CPU ns per call of ``nop()`` made by ``t`` threads at once, for each ``t`` in ``counts``
    (CPython's own GIL hand-offs are in it: the reference row measures them alone). Each figure is
    the best of ``repeat`` runs of at least ``total_calls`` calls in all and 2,000 per thread (a
    thread's share must outlast its start-up and GIL hand-offs), so a stray preemption does not
    decide a figure."""
    per_call = {}
    for t in counts:
        n = max(2000, total_calls // t)
        best = None
        for _ in range(repeat):
            start = threading.Barrier(t + 1)

            def work(n=n, start=start):
                start.wait()
                for _ in range(n):
                    nop()

            threads = [threading.Thread(target=work) for _ in range(t)]
            for th in threads:
                th.start()
            t0 = time.process_time_ns()  # CPU of every thread (see _MIN_SAMPLE_NS)
            start.wait()
            for th in threads:
                th.join()
            sample = (time.process_time_ns() - t0) / (n * t)
            best = sample if best is None else min(best, sample)
        per_call[t] = best
    return per_call


# ---- report --------------------------------------------------------------------------------------
# A row is (name, promise, {n: ns per op}) or, for a packedfun row whose memory walk has a plain
# Python twin measured in the same run, (name, promise, values, reference row's name).
GROWTH_LIMIT = 2.5


def growth(values: dict, promise: str = "O(1)") -> float | None:
    """The largest ratio of the per-op cost at a larger n to that at a smaller n (None: fewer than
    two sizes). Only growth counts: a per-element cost that falls with n is a fixed cost being
    amortised. A row promising O(log n) per operation is judged after dividing by log2(n)."""
    points = [(n, v) for n, v in sorted(values.items()) if v > 0]
    if promise.startswith("O(log n)"):
        points = [(n, v / max(1.0, math.log2(n))) for n, v in points]
    if len(points) < 2:
        return None
    return max(
        points[j][1] / points[i][1] for i in range(len(points)) for j in range(i + 1, len(points))
    )


def verdict(values: dict, promise: str = "O(1)", reference: tuple | None = None) -> str:
    """'flat' unless some larger n costs more than GROWTH_LIMIT times a smaller n per operation.

    ``reference`` (name, values): a plain Python structure doing the same memory walk at the same
    sizes in the same run. A row that grows only as its reference does (their ratio stays within
    the limit) is 'flat relative to' it: the growth is the memory hierarchy's (cache and TLB
    misses at 10^5-10^6 elements), paid by every structure of that size. Only growth beyond the
    reference's, or growth with no reference, is a defect: 'GROWS k×'.
    """
    own = growth(values, promise)
    if own is None:
        return "-"
    if own <= GROWTH_LIMIT:
        return "flat" if not promise.startswith("O(log n)") else "as promised (log n)"
    if reference is None:
        return f"GROWS {own:.1f}×"
    name, ref_values = reference
    short = name.removeprefix("reference: ")
    relative = growth({n: v / ref_values[n] for n, v in values.items() if ref_values.get(n)})
    if relative is not None and relative <= GROWTH_LIMIT:
        return f"flat relative to {short} ({own:.1f}× vs its {growth(ref_values, promise):.1f}×)"
    return f"GROWS {own:.1f}× ({relative or own:.1f}× beyond {short})"


def row_verdicts(rows) -> list:
    """The verdict of each row: a packedfun row against its reference (looked up among
    ``rows``), a reference row alone and marked as one (its growth is never a defect)."""
    by_name = {row[0]: row[2] for row in rows}
    judged = []
    for row in rows:
        if row[0].startswith("reference: "):
            alone = verdict(row[2], row[1])
            judged.append("reference: " + alone.replace("GROWS", "grows"))
        else:
            reference = (row[3], by_name[row[3]]) if len(row) > 3 else None
            judged.append(verdict(row[2], row[1], reference))
    return judged


def render(rows, columns) -> str:
    head = "| operation | promise | " + " | ".join(f"n={c:,}" for c in columns) + " | verdict |"
    lines = [head, "|---|---|" + "---:|" * len(columns) + "---|"]
    for row, judged in zip(rows, row_verdicts(rows)):
        name, promise, values = row[:3]
        cells = [f"{values[c]:.1f}" if c in values else "—" for c in columns]
        lines.append(f"| {name} | {promise} | " + " | ".join(cells) + f" | {judged} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    parser.add_argument("--sizes", help="comma-separated sizes (default 10,1000,100000,1000000)")
    parser.add_argument("--repeat", type=int, default=5, help="timed batches per figure")
    parser.add_argument("--out", help="markdown output ('-' for none; default results/scaling.md)")
    args = parser.parse_args(argv)
    default = "10,1000" if args.quick else "10,1000,100000,1000000"
    sizes = [int(s) for s in (args.sizes or default).split(",")]
    depths = [d for d in (10, 100, 500) if d <= max(sizes)]
    threads = [t for t in (1, 10, 100, 1000) if t <= max(sizes)]
    repeat = 2 if args.quick else args.repeat
    sections = [
        ("Registry and type table (n = registered functions / types)", sizes,
         registry_rows(sizes, repeat) + type_rows(sizes, repeat)),
        ("Containers (n = elements)", sizes, array_rows(sizes, repeat) + map_rows(sizes, repeat)),
        ("Nesting (n = depth; capped by the recursion limit)", depths,
         nesting_rows(depths, repeat)),
        ("Threads (n = live Python threads calling)", threads,
         thread_rows(threads, repeat, 20_000 if args.quick else 200_000)),
    ]  # fmt: skip
    load = os.getloadavg()[0]
    text = [
        "# Scaling report",
        "",
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}; {platform.machine()},"
        f" {os.cpu_count()} cores, load {load:.2f}; Python {platform.python_version()};"
        f" packedfun {packedfun.__version__} ({packedfun.BACKEND}). CPU ns per operation (this"
        f" thread's CPU clock, so other load does not count; threads: the process's), best of"
        f" {repeat} batches of ≥ 2 ms. 'flat' = no larger n costs more than"
        f" {GROWTH_LIMIT}× a smaller n per operation. A packedfun row that grows more is compared"
        " with its reference, the same memory walk over a plain Python list / dict / tuple of the"
        " same size measured in the same run: 'flat relative to <reference>' = its cost grows no"
        f" more than {GROWTH_LIMIT}× as fast as the reference's (the growth is the memory"
        " hierarchy's, paid by every structure of that size); only 'GROWS' (growth beyond the"
        " reference's, or with no reference) is a defect.",
    ]
    series = {}
    for title, columns, rows in sections:
        text += ["", f"## {title}", "", render(rows, columns)]
        for row in rows:
            series[row[0]] = sorted(row[2].items())
    report = "\n".join(text) + "\n"
    print(report)
    out = args.out or ("-" if args.quick else str(HERE / "results" / "scaling.md"))
    if out != "-":
        Path(out).write_text(report)
        chart = svgchart.line_chart(series, "packedfun: cost per operation as n grows", "n",
                                    "ns per operation")  # fmt: skip
        Path(out).with_suffix(".svg").write_text(chart)
        print(f"wrote {out} and {Path(out).with_suffix('.svg')}")
    bad = [
        row[0]
        for _, _, rows in sections
        for row, judged in zip(rows, row_verdicts(rows))
        if judged.startswith("GROWS")
    ]
    if bad:
        print("super-linear or growing rows:", ", ".join(bad))
    return 0


if __name__ == "__main__":
    sys.exit(main())
