# Thread benchmarks (issue 9): parallel native work under the default GIL policy, native callbacks.
"""``python benchmarks/threads.py [--quick] [--out results/threads.md]``

1. Throughput: 1 and 8 Python threads each calling a native function that does 1 ms of CPU work
   (``testing.spin_ms``, default policy: the GIL is released for the call), aggregate calls per
   second as a ratio to one thread; the same body declared ``hold`` (``testing.spin_ms_hold``)
   beside it, which cannot overlap. On a machine with C idle cores the best possible ratio is
   min(8, C): the load average is printed with the figures. A 1 ms native *wait* (``sleep_ms``,
   no CPU) shows the overlap that the release allows regardless of the cores.
2. Callbacks: ns per call of a Python callable called from C++ (``testing.callback_ns``) on a new
   native thread (no GIL held by anyone; the first callback makes the thread's Python state, later
   ones reuse it) next to the same loop on the calling thread (GIL held).

Everything is measured in this one process; the figures are ratios, the times are for reference.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _import_packedfun():
    try:
        import packedfun
    except ImportError:
        sys.path.insert(0, str(HERE.parent / "python"))
        import packedfun
    import packedfun.testing  # noqa: F401 - registers testing.*

    return packedfun


def throughput(func, threads: int, seconds: float) -> float:
    """Aggregate calls per second of ``func(1.0)`` from ``threads`` Python threads."""
    counts = [0] * threads
    start_line = threading.Barrier(threads + 1)
    stop = threading.Event()

    def work(i: int) -> None:
        start_line.wait()
        while not stop.is_set():
            func(1.0)
            counts[i] += 1

    pool = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    start_line.wait()
    begin = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for t in pool:
        t.join()
    return sum(counts) / (time.perf_counter() - begin)


def callback_ns(pf, calls: int, on_native_thread: bool, repeat: int) -> float:
    measure = pf.get_global_func("testing.callback_ns")
    callback = pf.Function(lambda: None)
    return statistics.median(measure(callback, calls, on_native_thread) for _ in range(repeat))


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="short runs (smoke test)")
    parser.add_argument("--out", help="markdown file ('-' for none; default results/threads.md)")
    args = parser.parse_args(argv)
    out = args.out or ("-" if args.quick else str(HERE / "results" / "threads.md"))
    seconds, calls, repeat = (0.2, 2000, 3) if args.quick else (2.0, 200000, 7)

    pf = _import_packedfun()
    load = os.getloadavg()[0]
    rows = []
    for name, label in [
        ("testing.spin_ms", "default policy (GIL released)"),
        ("testing.spin_ms_hold", "declared hold"),
        ("testing.sleep_ms", "a 1 ms native wait (no CPU), default policy"),
    ]:
        f = pf.get_global_func(name)
        one = throughput(f, 1, seconds)
        eight = throughput(f, 8, seconds)
        what = label if "wait" in label else f"1 ms of native work, {label}"
        rows.append(f"| {what} | {one:.0f}/s | {eight:.0f}/s | "
                    f"{eight / one:.2f}× |")  # fmt: skip
    native = callback_ns(pf, calls, True, repeat)
    calling = callback_ns(pf, calls, False, repeat)
    lines = [
        "# Threads: parallel native calls and native-thread callbacks",
        "",
        f"- {datetime.date.today()}, {platform.python_implementation()} "
        f"{platform.python_version()}, {os.cpu_count()} cores, load average {load:.1f} at start",
        "- `python benchmarks/threads.py`; see the script's docstring for what is measured",
        "",
        "| 8 Python threads vs 1 | 1 thread | 8 threads | aggregate ratio (target ≥ 1.8×) |",
        "|---|---:|---:|---:|",
        *rows,
        "",
        "| C++ calls a Python callable `lambda: None` | ns per callback |",
        "|---|---:|",
        f"| from a native thread (no GIL held by anyone) | {native:.0f} |",
        f"| from the calling thread (GIL held) | {calling:.0f} |",
        f"| ratio | {native / calling:.2f}× |",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if out != "-":
        Path(out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
