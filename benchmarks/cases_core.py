# Core benchmark cases (issue 2): calls with POD and string arguments, callbacks both ways, errors.
"""Cases of the core call path.

A case file is any ``benchmarks/cases_*.py`` with ``make_cases(peers) -> list[Case]``; ``run.py``
picks them all up. Build each case's loops only for the peers that have an equivalent.
"""

from __future__ import annotations

from harness import Case, Target, call_loop, empty_loop, raise_loop
from peers import Peer, Peers

TEN_CHARS = "abcdefghij"
ERROR_MESSAGE = "benchmark error"
# An error crossing takes 1-2 µs (tvm-ffi's 40): 5 ms samples hold thousands of them.
ERROR_SAMPLE_MS = 5.0
CALLBACK_NAME = "bench.py_callback"


def _py_callback() -> None:
    return None


def _expect(peer: str, what: str, got: object, want: object) -> None:
    # A peer computing the wrong thing would make its timing meaningless: fail loudly instead.
    if got != want:
        raise AssertionError(f"{peer}: {what} returned {got!r}, expected {want!r}")


def _simple(peers: Peers, name: str, fn: str, args: tuple, want: object, target: Target) -> Case:
    for p in peers:
        _expect(p.name, f"{fn}{args}", p.fn[fn](*args), want)
    loops = {p.name: call_loop(p.fn[fn], *args) for p in peers}
    return Case(name, loops, empty_loop(len(args)), target)


def _check_callbacks(peers: Peers) -> None:
    calls = []

    def counting() -> None:
        calls.append(1)

    for p in peers:
        del calls[:]
        _expect(p.name, "apply(f)", p.fn["apply"](counting), None)
        p.register_global(_callback_name(p), counting)
        p.fn["call_global"](_callback_name(p))
        _expect(p.name, "number of callback calls", len(calls), 2)


def _callback_name(peer: Peer) -> str:
    # Peers sharing one registry (packedfun's two backends) must not overwrite each other's.
    return f"{CALLBACK_NAME}.{''.join(c if c.isalnum() else '_' for c in peer.name)}"


def _callback_cases(peers: Peers) -> list:
    _check_callbacks(peers)
    apply_loops = {p.name: call_loop(p.fn["apply"], _py_callback) for p in peers}
    by_name = {}
    for p in peers:
        p.register_global(_callback_name(p), _py_callback)
        by_name[p.name] = call_loop(p.fn["call_global"], _callback_name(p))
    callbacks = "callbacks ≤ 2× floor"
    at_most_nanobind = Target("≤ nanobind", faster_than=("nanobind", 1.0))
    return [
        Case("C++ calls a Python callable it receives", apply_loops, empty_loop(1),
             Target("≤ nanobind; " + callbacks, max_ratio=2.0, faster_than=("nanobind", 1.0))),
        Case("… the same callable pre-converted once (convert(f))", _preconverted_loops(peers),
             empty_loop(1), at_most_nanobind),
        *_packed_apply_cases(peers),
        Case("C++ calls a Python global by name", by_name, empty_loop(1),
             Target(callbacks, max_ratio=2.0)),
    ]  # fmt: skip


def _packed_apply_cases(peers: Peers) -> list:
    """The two callback rows with packedfun's packed `testing.apply(f, *args)` (a variadic packed
    body) instead of the typed `apply_typed(f)`, beside the floor and nanobind of the rows above."""
    pf = peers.loaded.get("packedfun")
    if pf is None:
        return []
    packed = pf.raw.get_global_func("testing.apply")
    fc = pf.raw.convert(_py_callback)
    _expect(pf.name, "testing.apply(f)", packed(_py_callback), None)
    others = [p for p in peers if p.name in ("floor", "nanobind")]
    rows = []
    for label, arg in (("", _py_callback), (", pre-converted", fc)):
        loops = {p.name: call_loop(p.fn["apply"], _py_callback) for p in others}
        loops[pf.name] = call_loop(packed, arg)
        rows.append(
            Case(f"C++ calls a Python callable{label}, packed body (testing.apply)", loops,
                 empty_loop(1), Target("≤ nanobind", faster_than=("nanobind", 1.0)))
        )  # fmt: skip
    return rows


def _preconverted_loops(peers: Peers) -> dict:
    """`apply(fc)` with `fc` converted once by the peer's own `convert` (FFI peers; for ctypes the
    CFUNCTYPE wrapper made once and passed to the C function as is), else the bare callable (peers
    with no function object of their own: floor, nanobind)."""
    loops = {}
    for p in peers:
        convert = getattr(p.raw, "convert", None) if p.name in ("packedfun", "tvm-ffi") else None
        if p.name == "packedfun[ctypes]":
            convert = p.raw.to_function
        apply = p.fn["apply"]
        if p.name == "ctypes":  # its `apply` wraps a Python callable per call; this row does not
            apply = p.raw.bench_apply_c
            convert = apply.argtypes[0]
        fc = convert(_py_callback) if convert is not None else _py_callback
        _expect(p.name, "apply(convert(f))", apply(fc), None)
        loops[p.name] = call_loop(apply, fc)
    return loops


def _check_error(peer: Peer) -> None:
    try:
        peer.fn["raise_error"]("ValueError", ERROR_MESSAGE)
    except peer.error as exc:
        if ERROR_MESSAGE not in str(exc):
            raise AssertionError(f"{peer.name}: error message {str(exc)!r} lost the text") from exc
    else:
        raise AssertionError(f"{peer.name}: raise_error did not raise {peer.error.__name__}")


def _error_case(peers: Peers) -> Case:
    for p in peers:
        _check_error(p)
    loops = {
        p.name: raise_loop(p.fn["raise_error"], p.error, "ValueError", ERROR_MESSAGE) for p in peers
    }
    target = Target("≤ 2 µs and ≥ 4× faster than tvm-ffi", max_us=2.0, faster_than=("tvm-ffi", 4.0))
    return Case(
        "C++ error caught in Python",
        loops,
        empty_loop(2, catch=ValueError),
        target,
        show_us=True,
        min_sample_ms=ERROR_SAMPLE_MS,
    )


def make_cases(peers: Peers) -> list:
    """Return the core cases for the loaded peers."""
    pod = "≤ 1.6× floor"
    return [
        _simple(peers, "no-arg call", "nop", (), None, Target("≤ 1.3× floor", max_ratio=1.3)),
        _simple(peers, "add(int, int)", "add_int", (1, 2), 3, Target(pod, max_ratio=1.6)),
        _simple(peers, "three int args", "add3_int", (1, 2, 3), 6, Target(pod, max_ratio=1.6)),
        _simple(peers, "float echo", "echo_float", (2.5,), 2.5, Target(pod, max_ratio=1.6)),
        _simple(peers, "10-char str argument", "str_len", (TEN_CHARS,), 10,
                Target("≤ 2× floor", max_ratio=2.0)),
        *_callback_cases(peers),
        _error_case(peers),
    ]  # fmt: skip
