# Benchmark harness: cases, interleaved timing of every peer in one process, medians and the table.
"""The machinery behind ``benchmarks/run.py``.

A :class:`Case` holds, per peer, a *loop*: a function ``loop(n)`` that makes the call under test
``n`` times. The harness times the loops of all peers of a case round-robin, one sample per peer per
repetition (starting with a different peer each time), subtracts the cost of an empty loop of the
same shape measured in the same repetition, and reports the median nanoseconds per call. Samples
are short (well under a scheduler time slice) and many, so a busy machine spoils few of them.
"""

from __future__ import annotations

import gc
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable

Loop = Callable[[int], None]

# Peer column order in the table; the first is the floor every ratio is relative to.
PEER_ORDER = ["floor", "packedfun", "packedfun[ctypes]", "tvm-ffi", "nanobind", "ctypes"]
FLOOR = "floor"
EMPTY = "(empty loop)"


def _compile_loop(call_src: str, names: dict, catch: type | None = None) -> Loop:
    """Build ``loop(n)`` around ``call_src``, with every name it uses bound as a fast local."""
    if catch is not None:
        names = {**names, "_exc": catch}
        body = ["try:", f"    {call_src}", "except _exc:", "    pass"]
    else:
        body = [call_src]
    params = "".join(f", {k}={k}" for k in names)  # defaults bound once: LOAD_FAST in the loop
    lines = [
        f"def _make({', '.join(names)}):",
        f"    def loop(n{params}):",
        "        for _ in range(n):",
        *("            " + line for line in body),
        "    return loop",
    ]
    scope: dict = {}
    exec(compile("\n".join(lines), f"<bench loop: {call_src}>", "exec"), scope)
    return scope["_make"](**names)


def call_loop(func: Callable, *args) -> Loop:
    """Return ``loop(n)`` calling ``func(*args)`` n times."""
    names = {"_f": func, **{f"_a{i}": a for i, a in enumerate(args)}}
    call = "_f(" + ", ".join(f"_a{i}" for i in range(len(args))) + ")"
    return _compile_loop(call, names)


def raise_loop(func: Callable, exc: type, *args) -> Loop:
    """Return ``loop(n)`` calling ``func(*args)`` n times, catching ``exc`` each time."""
    names = {"_f": func, **{f"_a{i}": a for i, a in enumerate(args)}}
    call = "_f(" + ", ".join(f"_a{i}" for i in range(len(args))) + ")"
    return _compile_loop(call, names, catch=exc)


def empty_loop(num_args: int, catch: type | None = None) -> Loop:
    """Return a loop shaped like a call loop minus the call: the overhead to subtract."""
    names = {f"_a{i}": None for i in range(num_args)}
    return _compile_loop("pass", names, catch=catch)


@dataclass
class Target:
    """A goal for packedfun in one case, checked against the same run's numbers."""

    text: str
    max_ratio: float | None = None  # packedfun / floor
    max_us: float | None = None  # packedfun absolute microseconds per call
    faster_than: tuple | None = None  # (peer, factor): peer / packedfun >= factor; or several

    def check(self, ns: dict) -> bool | None:
        """True/False when packedfun was measured, None when it could not be judged."""
        pf = ns.get("packedfun")
        if pf is None:
            return None
        ok = True
        if self.max_ratio is not None:
            if ns.get(FLOOR) is None:
                return None
            ok &= pf <= self.max_ratio * ns[FLOOR]
        if self.max_us is not None:
            ok &= pf <= self.max_us * 1000.0
        if self.faster_than is not None:
            pairs = self.faster_than
            for peer, factor in pairs if isinstance(pairs[0], tuple) else (pairs,):
                if ns.get(peer) is not None:
                    ok &= ns[peer] >= factor * pf
        return bool(ok)


@dataclass
class Case:
    """One row of the table: the loops of every peer that has an equivalent."""

    name: str
    loops: dict  # peer -> Loop
    empty: Loop
    target: Target | None = None
    show_us: bool = False  # also print packedfun's absolute time in microseconds
    group: str = "core"
    # Shortest sample for this case, in ms (0: the run's --sample-ms). A call of microseconds
    # gets only a few hundred iterations into the default 0.5 ms sample, and the first ones after
    # the round's gc.collect() run on a cold cache: such cases ask for longer samples.
    min_sample_ms: float = 0.0


@dataclass
class Result:
    """Median nanoseconds per call for each peer of a case (overhead of the empty loop removed)."""

    case: Case
    ns: dict = field(default_factory=dict)
    spread: dict = field(default_factory=dict)  # peer -> (q1, q3) of the samples
    best: dict = field(default_factory=dict)  # peer -> fastest sample minus the fastest empty loop


def _calibrate(loop: Loop, sample_ns: float) -> int:
    n = 16
    while True:
        t0 = time.perf_counter_ns()
        loop(n)
        dt = time.perf_counter_ns() - t0
        if dt >= sample_ns / 8 or n >= 1 << 24:
            return max(16, int(n * sample_ns / max(dt, 1)))
        n *= 4


def measure(case: Case, repeat: int, sample_ns: float) -> Result:
    """Time every loop of ``case`` interleaved, ``repeat`` samples each: medians and best-of."""
    loops = {EMPTY: case.empty, **case.loops}
    sample_ns = max(sample_ns, case.min_sample_ms * 1e6)
    sizes = {peer: _calibrate(loop, sample_ns) for peer, loop in loops.items()}
    samples: dict = {peer: [] for peer in loops}
    order = list(loops)
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for rep in range(repeat):
            start = rep % len(order)
            for peer in order[start:] + order[:start]:
                n = sizes[peer]
                t0 = time.perf_counter_ns()
                loops[peer](n)
                samples[peer].append((time.perf_counter_ns() - t0) / n)
            gc.collect()
    finally:
        if gc_was_enabled:
            gc.enable()
    # Subtract the empty loop of the same round: drifts in machine speed hit both alike.
    empty = samples.pop(EMPTY)
    result = Result(case=case)
    fastest_empty = min(empty)
    for peer, values in samples.items():
        net = sorted(max(v - e, 0.0) for v, e in zip(values, empty))
        result.ns[peer] = statistics.median(net)
        result.spread[peer] = (net[len(net) // 4], net[(3 * len(net)) // 4])
        result.best[peer] = max(min(values) - fastest_empty, 0.0)
    return result
