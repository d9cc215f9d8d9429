# Soak tests: many calls, errors, callback errors and module load cycles must not grow anything.
"""Marked ``soak``. Three sizes: the quick run's (seconds); the full run's
(``PACKEDFUN_TEST_FULL=1``), five times that, not under the sanitizers; and the long soak of
issue 13 (10 million calls, 1 million errors and callback errors, 1,000 module cycles: minutes,
too long for a CI run), which only ``PACKEDFUN_SOAK=full`` runs. Each prints its figures (``-s``
shows them): ns per call, RSS before and after, live native objects, file descriptors and
mappings. RSS is not checked under AddressSanitizer, whose quarantine holds freed memory on
purpose."""

from __future__ import annotations

import gc
import os
import re
import time

import packedfun as pf
import pytest
import suite
from packedfun import testing

pytestmark = pytest.mark.soak

SANITIZED = bool(os.environ.get("PACKEDFUN_SANITIZE_PRELOAD") or os.environ.get("LD_PRELOAD"))
# Under the sanitizers (tests/sanitize/run.py: each call is several times slower, and ASan checks
# every allocation itself) a tenth of the quick size, unless PACKEDFUN_SOAK=full.
if suite.LONG_SOAK:
    CALLS, ERRORS, MODULE_CYCLES = 10_000_000, 1_000_000, 1_000
else:
    _SIZE = 5 if suite.FULL and not SANITIZED else 1
    _SCALE = 10 if SANITIZED else 1
    CALLS = 200_000 * _SIZE // _SCALE
    ERRORS = 20_000 * _SIZE // _SCALE
    MODULE_CYCLES = 40 * _SIZE // _SCALE
MiB = 1 << 20


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _mappings() -> int:
    with open("/proc/self/maps") as f:
        return sum(1 for _ in f)


def _live() -> int:
    gc.collect()
    return testing.object_live_count()


def _loop(body, n: int) -> float:
    """Runs body() n times (in chunks, so the loop itself costs little); seconds per call."""
    start = time.perf_counter()
    for _ in range(n // 10):
        body()
        body()
        body()
        body()
        body()
        body()
        body()
        body()
        body()
        body()
    return (time.perf_counter() - start) / max(1, n - n % 10)


def _soak(name: str, body, n: int) -> None:
    _loop(body, max(1000, n // 10))  # warm-up: caches, free lists, arenas settle
    gc.collect()
    rss, live = _rss(), _live()
    gc.disable()
    try:
        per_call = _loop(body, n)
    finally:
        gc.enable()
    cycles = gc.collect()
    rss_after, live_after = _rss(), _live()
    print(f"\nsoak {name}: n={n} {per_call * 1e9:.0f} ns/call, RSS {rss / MiB:.1f} -> "
          f"{rss_after / MiB:.1f} MiB, live objects {live} -> {live_after}, "
          f"objects freed by gc {cycles}")  # fmt: skip
    assert live_after == live, f"{name}: live native objects {live} -> {live_after}"
    assert cycles < 1000, f"{name}: {cycles} objects were only freed by the cycle collector"
    if not SANITIZED:
        assert rss_after - rss < MiB, f"{name}: RSS grew {(rss_after - rss) / MiB:.2f} MiB"


# testing.object_live_count() counts only the testing library's own objects (TestIntPair and
# kin), not Arrays, Maps or errors. So the bodies below send a fresh TestIntPair through each
# container, error and callback: a leaked container, argument or error that holds it keeps it
# alive, and the live count grows by one per call (test_live_count_sees_a_leaked_container).
def _pair():
    return testing.TestIntPair(1, 2)


def test_soak_calls():
    add = pf.get_global_func("testing.add_int")
    echo = pf.get_global_func("testing.echo")
    text = "a string that is not interned" * 2
    _soak("add_int(1, 2)", lambda: add(1, 2), CALLS)
    _soak("echo(str)", lambda: echo(text), CALLS // 10)
    _soak("echo([1, 'x', {'k': 2.5, 'p': pair}])",
          lambda: echo([1, "x", {"k": 2.5, "p": _pair()}]), CALLS // 100)  # fmt: skip


def test_soak_errors():
    typed = pf.get_global_func("testing.typed_int_only")

    def wrong_type():
        try:
            typed("not an int")
        except TypeError:
            pass
        else:
            raise AssertionError("no TypeError: the soak would measure no error path")

    def wrong_object():
        try:
            typed(_pair())
        except TypeError:
            pass
        else:
            raise AssertionError("no TypeError: the soak would measure no error path")

    _soak("TypeError from a typed call", wrong_type, ERRORS)
    _soak("TypeError from a typed call given an object", wrong_object, ERRORS // 10)


def test_soak_callback_errors():
    apply = pf.get_global_func("testing.apply")

    def failing(x):
        raise ValueError(f"callback failed on {x}")

    def call():
        try:
            apply(failing, _pair())
        except ValueError:
            pass
        else:
            raise AssertionError("no ValueError: the soak would measure no error path")

    _soak("ValueError through a callback", call, ERRORS)


def test_live_count_sees_a_leaked_container():
    # The soak's live-object check must be able to fail: keep what each call returns (a stand-in
    # for a leak of the Array holding the fresh object) and the check reports the growth.
    echo = pf.get_global_func("testing.echo")
    kept = []
    # Counted from what is alive already: in one process with the whole suite (the sanitized run)
    # an earlier file may keep a testing object alive.
    base = _live()
    with pytest.raises(AssertionError, match=r"live native objects (\d+) -> (\d+)") as caught:
        _soak("kept results", lambda: kept.append(echo([_pair()])), 50)
    counts = re.search(r"live native objects (\d+) -> (\d+)", str(caught.value))
    before, after = map(int, counts.groups())
    assert (before - base, after - before) == (1000, 50)  # the warm-up's 1,000 kept theirs too
    kept.clear()
    assert _live() == base


def test_soak_module_load_call_drop(tmp_path):
    cpp = suite.require("packedfun.cpp")
    try:
        path = cpp.build_inline(
            "soak_mod",
            cpp_sources="int64_t soak_twice(int64_t x) { return 2 * x; }",
            functions="soak_twice",
            build_directory=tmp_path,
        )
    except cpp.BuildError as err:  # pragma: no cover - no working compiler
        pytest.skip(f"no compiler: {err}")

    def cycle():
        mod = pf.load_module(path)
        assert mod.soak_twice(21) == 42
        del mod

    for _ in range(5):
        cycle()
    gc.collect()
    fds, maps, live = _fds(), _mappings(), _live()
    start = time.perf_counter()
    for _ in range(MODULE_CYCLES):
        cycle()
    seconds = time.perf_counter() - start
    gc.collect()
    per_cycle = seconds / MODULE_CYCLES * 1e6
    print(f"\nsoak module cycles: n={MODULE_CYCLES} {per_cycle:.0f} us/cycle, fds {fds} -> "
          f"{_fds()}, mappings {maps} -> {_mappings()}, live {live} -> {_live()}")  # fmt: skip
    # ASan maps shadow and allocator regions as it goes: a little more slack there.
    assert _fds() <= fds and _mappings() <= maps + (16 if SANITIZED else 2) and _live() == live
