# Thread cases (issue 9): trivial calls under the default GIL policy, which releases the GIL.
"""Cases of the GIL policy.

packedfun's core benchmark functions (``testing.nop``, ``testing.add_int``, ``testing.str_len``,
``testing.apply``, ``testing.test_raise_error``) are declared trivial (the GIL stays held: the rows
of the core cases). These rows call the same bodies registered without a declaration (the same
names with ``_release``), so each call releases and re-takes the GIL, as apache-tvm-ffi does on
every call. The other peers run their usual functions (they never release).
"""

from __future__ import annotations

from cases_core import ERROR_SAMPLE_MS
from harness import Case, Target, call_loop, empty_loop, raise_loop
from peers import Peers

TEN_CHARS = "abcdefghij"
ERROR_MESSAGE = "benchmark error"

_RELEASED = {
    "nop": "testing.nop_release",
    "add_int": "testing.add_int_release",
    "apply": "testing.apply_release",
    "str_len": "testing.str_len_release",
    "raise_error": "testing.test_raise_error_release",
}


def _func(peer, key: str):
    if peer.name in ("packedfun", "packedfun[ctypes]"):
        f = peer.raw.get_global_func(_RELEASED[key])
        if f.gil_policy != "release":
            raise AssertionError(f"{peer.name}: {_RELEASED[key]} does not release the GIL")
        return f
    return peer.fn[key]


def _case(peers: Peers, name: str, key: str, args: tuple, want: object) -> Case:
    loops = {}
    for p in peers:
        f = _func(p, key)
        if f(*args) != want:
            raise AssertionError(f"{p.name}: {key}{args} returned {f(*args)!r}")
        loops[p.name] = call_loop(f, *args)
    target = Target("≥ 1.5× faster than tvm-ffi", faster_than=("tvm-ffi", 1.5))
    return Case(name, loops, empty_loop(len(args)), target)


def _preconverted_case(peers: Peers) -> Case:
    """apply(fc) with fc = convert(f) made once by the FFI peers (the others pass f itself)."""
    loops = {}
    for p in peers:
        f = _func(p, "apply")
        convert = getattr(p.raw, "convert", None) if p.name in ("packedfun", "tvm-ffi") else None
        if p.name == "packedfun[ctypes]":
            convert = p.raw.to_function
        fc = convert(_none) if convert is not None else _none
        if f(fc) is not None:
            raise AssertionError(f"{p.name}: apply(convert(f)) returned {f(fc)!r}")
        loops[p.name] = call_loop(f, fc)
    target = Target("≥ 1.5× faster than tvm-ffi", faster_than=("tvm-ffi", 1.5))
    return Case(
        "… the same callable pre-converted, default GIL policy", loops, empty_loop(1), target
    )


def _error_case(peers: Peers) -> Case:
    loops = {}
    for p in peers:
        f = _func(p, "raise_error")
        try:
            f("ValueError", ERROR_MESSAGE)
        except p.error as exc:
            if ERROR_MESSAGE not in str(exc):
                raise AssertionError(f"{p.name}: error message {str(exc)!r} lost the text") from exc
        else:
            raise AssertionError(f"{p.name}: raise_error did not raise")
        loops[p.name] = raise_loop(f, p.error, "ValueError", ERROR_MESSAGE)
    target = Target("≥ 1.5× faster than tvm-ffi", faster_than=("tvm-ffi", 1.5))
    return Case(
        "C++ error caught in Python, default GIL policy",
        loops,
        empty_loop(2, catch=ValueError),
        target,
        show_us=True,
        min_sample_ms=ERROR_SAMPLE_MS,
    )


def make_cases(peers: Peers) -> list:
    """Return the GIL-policy cases for the loaded peers."""
    return [
        _case(peers, "no-arg call, default GIL policy (released)", "nop", (), None),
        _case(peers, "add(int, int), default GIL policy (released)", "add_int", (1, 2), 3),
        _case(peers, "10-char str argument, default GIL policy", "str_len", (TEN_CHARS,), 10),
        _case(peers, "C++ calls a Python callable, default GIL policy", "apply", (_none,), None),
        _preconverted_case(peers),
        _error_case(peers),
    ]


def _none() -> None:
    return None
