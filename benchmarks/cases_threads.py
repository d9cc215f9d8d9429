# Thread cases (issue 9): trivial calls under the default GIL policy, which releases the GIL.
"""Cases of the GIL policy.

packedfun's ``testing.nop``, ``testing.add_int`` and ``testing.apply`` are declared trivial (the
GIL stays held: the "no-arg call", "add(int, int)" and callback rows of the core cases). These rows
call the same bodies registered without a declaration (``testing.nop_release``,
``testing.add_int_release``, ``testing.apply_release``), so each call releases and re-takes the
GIL, as apache-tvm-ffi does on every call. The other peers run their usual functions (they never
release).
"""

from __future__ import annotations

from harness import Case, Target, call_loop, empty_loop
from peers import Peers

_RELEASED = {
    "nop": "testing.nop_release",
    "add_int": "testing.add_int_release",
    "apply": "testing.apply_release",
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


def make_cases(peers: Peers) -> list:
    """Return the GIL-policy cases for the loaded peers."""
    return [
        _case(peers, "no-arg call, default GIL policy (released)", "nop", (), None),
        _case(peers, "add(int, int), default GIL policy (released)", "add_int", (1, 2), 3),
        _case(peers, "C++ calls a Python callable, default GIL policy", "apply", (_none,), None),
    ]


def _none() -> None:
    return None
