# Keyword-argument and default benchmark cases (issue 10): f(1, b=2), f(1), f(1, 2), Pair(a=, b=).
"""Calls by keyword and with a default filled in, side by side.

The function is ``add(a, b=2)`` in every peer: packedfun's ``testing.add_kw`` (names and default
from its metadata record, bound natively), nanobind's ``add_kw`` (``nb::arg("a"), nb::arg("b") =
2``) and apache-tvm-ffi's ``add_int`` behind ``tvm_ffi.utils.kwargs_wrapper.make_kwargs_wrapper``
(its keyword route: a generated Python function in front of the positional call). The ``floor``
column of the function rows is the C extension's positional ``add_int(1, 2)``, the lower bound of
the same work. The construction rows compare packedfun with itself: the floor there is
packedfun's positional ``TestIntPair(1, 2)`` (tvm-ffi's constructor takes no keywords).
"""

from __future__ import annotations

from harness import Case, Target, _compile_loop, call_loop, empty_loop
from peers import Peers

VS_PEERS = (("nanobind", 1.0), ("tvm-ffi", 3.0))
VS_TEXT = "≤ nanobind; ≥ 3× faster than tvm-ffi's kwargs_wrapper"


def _adders(peers: Peers) -> dict:
    """Per peer: add(a, b=2) taking keywords."""
    made = {}
    for p in peers:
        if p.name == "packedfun":
            made[p.name] = p.raw.get_global_func("testing.add_kw")
        elif p.name == "packedfun[ctypes]":
            made[p.name] = p.raw.get_global_func("testing.add_kw")
        elif p.name == "nanobind":
            made[p.name] = p.raw.add_kw
        elif p.name == "tvm-ffi":
            from tvm_ffi.utils.kwargs_wrapper import make_kwargs_wrapper

            made[p.name] = make_kwargs_wrapper(p.fn["add_int"], ["a", "b"], (2,))
    for name, add in made.items():
        if (add(1, b=5), add(1), add(1, 5), add(b=1, a=2)) != (6, 3, 6, 3):
            raise AssertionError(f"{name}: add(a, b=2) computed a wrong sum")
    return made


def _floor(peers: Peers) -> dict:
    floor = peers.loaded.get("floor")
    return {"floor": call_loop(floor.fn["add_int"], 1, 2)} if floor is not None else {}


def _function_cases(peers: Peers) -> list:
    adders = _adders(peers)
    floor = _floor(peers)
    kw = {
        n: _compile_loop("_f(_a0, b=_a1)", {"_f": f, "_a0": 1, "_a1": 2}) for n, f in adders.items()
    }
    return [
        Case("add(1, b=2) by keyword", {**floor, **kw}, empty_loop(2),
             Target(VS_TEXT, faster_than=VS_PEERS), group="kwargs"),
        Case("add(1) filling the default b=2",
             {**floor, **{n: call_loop(f, 1) for n, f in adders.items()}}, empty_loop(1),
             Target(VS_TEXT, faster_than=VS_PEERS), group="kwargs"),
        Case("add(1, 2) positional, with names",
             {**floor, **{n: call_loop(f, 1, 2) for n, f in adders.items()}}, empty_loop(2),
             Target("≤ 1.6× floor", max_ratio=1.6), group="kwargs"),
    ]  # fmt: skip


def _pair_cases(peers: Peers) -> list:
    pf = peers.loaded.get("packedfun")
    if pf is None:
        return []
    mod = pf.raw

    @mod.register_object("testing.TestIntPair")
    class Pair(mod.Object):
        pass

    if (Pair(a=1, b=2).b, Pair(1, b=2).b, Pair(1, 2).b) != (2, 2, 2):
        raise AssertionError("packedfun: TestIntPair(a=1, b=2) is wrong")
    positional = {"floor": call_loop(Pair, 1, 2)}
    by_name = _compile_loop("_f(a=_a0, b=_a1)", {"_f": Pair, "_a0": 1, "_a1": 2})
    mixed = _compile_loop("_f(_a0, b=_a1)", {"_f": Pair, "_a0": 1, "_a1": 2})
    return [
        Case("construct TestIntPair(a=1, b=2) (floor: TestIntPair(1, 2))",
             {**positional, "packedfun": by_name}, empty_loop(2),
             Target("≤ 1.3× positional construction", max_ratio=1.3), group="kwargs"),
        Case("construct TestIntPair(1, b=2) (floor: TestIntPair(1, 2))",
             {**positional, "packedfun": mixed}, empty_loop(2),
             Target("≤ 1.3× positional construction", max_ratio=1.3), group="kwargs"),
    ]  # fmt: skip


def make_cases(peers: Peers) -> list:
    """The keyword and default rows of the table."""
    return _function_cases(peers) + _pair_cases(peers)
