# Values benchmark (issue 12): pickle, 64 MiB tensor via protocol 5, structural_hash, module ship.
"""Run ``python benchmarks/values.py``: prints a markdown table (medians, interleaved rounds).

Rows: pickle round trips of an Array of 10,000 ints and a Map of 1,000 str->int beside the same
``list``/``dict``; a 64 MiB float32 tensor through protocol 5 with out-of-band buffers (throughput
and peak-RSS growth of the sending side); ``structural_hash`` of Array trees of 10k/100k/1M nodes
and of reflected ``testing.TreeNode`` trees of 10k/100k/1M objects; and unpickling an
already-received ``load_inline`` module in a fresh process (second time).
"""

from __future__ import annotations

import os
import pickle
import resource
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import numpy as np  # noqa: E402
import packedfun  # noqa: E402


def _median(fn, rounds=15):
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _roundtrip(value):
    return lambda: pickle.loads(pickle.dumps(value, 5))


def pickle_rows():
    arr, lst = packedfun.Array(list(range(10_000))), list(range(10_000))
    mp, dct = packedfun.Map({str(i): i for i in range(1000)}), {str(i): i for i in range(1000)}
    rows = []
    for name, ours, peer in (("Array 10k ints", arr, lst), ("Map 1k str->int", mp, dct)):
        a, b = [], []
        for _ in range(21):  # interleaved
            a.append(_median(_roundtrip(ours), 1))
            b.append(_median(_roundtrip(peer), 1))
        ma, mb = statistics.median(a), statistics.median(b)
        rows.append(
            (
                f"pickle dumps+loads {name}",
                f"{ma * 1e6:.0f} us",
                f"{mb * 1e6:.0f} us",
                f"{ma / mb:.2f}x",
            )
        )
    return rows


def tensor_row():
    array = np.ones(16 << 20, dtype="float32")  # 64 MiB
    tensor = packedfun.from_dlpack(array)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        buffers = []
        data = pickle.dumps(tensor, 5, buffer_callback=buffers.append)
        back = pickle.loads(data, buffers=buffers)
        best = min(best, time.perf_counter() - t0)
    grew = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert back.shape == tensor.shape
    gib_s = (64 / 1024) / best
    return [
        (
            "64 MiB tensor, protocol 5 out of band",
            f"{gib_s:.1f} GiB/s",
            f"peak RSS +{grew:.0f} MiB",
            "",
        )
    ]


def _tree(n, fan=4):
    """A complete ``fan``-ary tree of ``testing.TreeNode`` objects with n leaves; (root, nodes)."""
    from packedfun import testing
    from packedfun.object import type_info

    assert testing.echo(1) == 1  # loads the testing library
    info = type_info(packedfun._backend.core.type_key_to_index("testing.TreeNode"))
    make = next(m["func"] for m in info["methods"] if m["name"] == "__create__")
    level = [make("leaf", packedfun.Array([])) for _ in range(n)]
    count = n
    while len(level) > 1:
        level = [make("inner", packedfun.Array(level[i : i + fan])) for i in range(0, n, fan)]
        n = len(level)
        count += n
    return level[0], count


def hash_rows():
    rows = []
    for n in (10_000, 100_000, 1_000_000):
        value = packedfun.Array([packedfun.Array([i, str(i)]) for i in range(n // 3)])
        t = _median(lambda v=value: packedfun.structural_hash(v), 3)
        rows.append(
            (
                f"structural_hash, Array tree, {n} nodes",
                f"{t * 1e3:.1f} ms",
                f"{t / n * 1e9:.0f} ns/node",
                "",
            )
        )
    for n in (7_500, 75_000, 750_000):  # leaves; the tree has n * 4/3 TreeNode objects
        root, count = _tree(n)
        t = _median(lambda v=root: packedfun.structural_hash(v), 3)
        rows.append(
            (
                f"structural_hash, TreeNode tree, {count} objects",
                f"{t * 1e3:.1f} ms",
                f"{t / count * 1e9:.0f} ns/object",
                "",
            )
        )
        del root
    return rows


SHIP = r"""
import pickle, sys, time
sys.path.insert(0, {py!r})
import packedfun
t = time.perf_counter(); import packedfun.cpp; imp = time.perf_counter() - t  # one-time import
data = open({path!r}, "rb").read()
t0 = time.perf_counter(); mod = pickle.loads(data); t1 = time.perf_counter()
assert mod.twice(2) == 4
print(t1 - t0, imp)
"""


def ship_row():
    from packedfun import cpp

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["PACKEDFUN_CACHE_DIR"] = os.path.join(tmp, "cache")
        mod = cpp.load_inline(
            "bench_ship",
            cpp_sources="int64_t twice(int64_t x) { return 2 * x; }",
            functions="twice",
        )
        path = os.path.join(tmp, "mod.pkl")
        with open(path, "wb") as f:
            pickle.dump(mod, f)
        py = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python")
        code = SHIP.format(py=py, path=path)
        env = dict(os.environ, PACKEDFUN_CACHE_DIR=os.path.join(tmp, "worker"))
        first, _ = map(
            float, subprocess.check_output([sys.executable, "-c", code], env=env).split()
        )
        received = os.path.join(tmp, "worker", "received")
        files = sorted(os.path.join(d, f) for d, _, fs in os.walk(received) for f in fs)
        stats = [os.stat(f).st_mtime_ns for f in files]
        second, imp = map(
            float, subprocess.check_output([sys.executable, "-c", code], env=env).split()
        )
        unchanged = stats == [os.stat(f).st_mtime_ns for f in files]
        return [
            (
                "ship load_inline module, fresh process",
                f"1st {first * 1e3:.1f} ms",
                f"2nd {second * 1e3:.1f} ms",
                "no new file" if unchanged else "FILES CHANGED",
            )
        ]


def main():
    print(
        f"load average: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores), "
        f"backend {packedfun.BACKEND}"
    )
    print("| case | packedfun | peer / note | ratio |\n|---|---|---|---|")
    for row in pickle_rows() + tensor_row() + hash_rows() + ship_row():
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
