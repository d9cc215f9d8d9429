# No test asserts a duration: timings belong to benchmarks/, as ratios against peers.
"""Reads every test file's syntax tree: a value read from a clock (``time.perf_counter()``,
``monotonic()``, ``time()``, ``process_time()``, ``*_ns`` forms) taints the names it is assigned or
appended to, and whatever is computed from them; an ``assert`` that uses a tainted name or reads a
clock itself fails this test. Deadlines that only bound a wait (``while ... < deadline``) and
timeouts are fine: they decide when to give up, not whether the code was fast."""

from __future__ import annotations

import ast
from pathlib import Path

HERE = Path(__file__).resolve().parent
CLOCKS = {"perf_counter", "monotonic", "time", "process_time", "thread_time"}
CLOCKS |= {f"{name}_ns" for name in CLOCKS}


def _is_clock_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    owner = func.value if isinstance(func, ast.Attribute) else None
    return name in CLOCKS and (owner is None or getattr(owner, "id", None) == "time")


def _uses(node: ast.AST, tainted: set) -> bool:
    return any(
        _is_clock_call(n) or (isinstance(n, ast.Name) and n.id in tainted) for n in ast.walk(node)
    )


def _targets(node: ast.AST) -> list:
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    # xs.append(clock value) / xs.extend(...) taints xs
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("append", "extend", "insert")
            and isinstance(node.func.value, ast.Name)):  # fmt: skip
        return [node.func.value.id]
    return []


def timed_asserts(source: str, filename: str = "<test>") -> list:
    """``file:line`` of each assert that depends on a clock reading."""
    tree = ast.parse(source, filename)
    tainted: set = set()
    changed = True
    while changed:  # names computed from tainted names are tainted too
        changed = False
        for node in ast.walk(tree):
            value = getattr(node, "value", None) if not isinstance(node, ast.Call) else node
            if value is None or not isinstance(value, ast.AST):
                continue
            args = node.args if isinstance(node, ast.Call) else [value]
            if not any(_uses(a, tainted) for a in args):
                continue
            for name in _targets(node):
                if name not in tainted:
                    tainted.add(name)
                    changed = True
    return [
        f"{filename}:{node.lineno}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Assert) and _uses(node.test, tainted)
    ]


def test_no_test_asserts_a_duration():
    found = []
    for path in sorted(HERE.rglob("*.py")):
        found += timed_asserts(path.read_text(encoding="utf-8"), str(path.relative_to(HERE)))
    assert not found, f"tests assert timings (move them to benchmarks/): {found}"


def test_the_check_finds_timed_asserts():
    timed = """
import time, statistics
def test_a():
    start = time.perf_counter()
    work()
    elapsed = time.perf_counter() - start
    assert elapsed < 0.1
def test_b():
    times = []
    for _ in range(3):
        t0 = time.monotonic()
        times.append(time.monotonic() - t0)
    assert statistics.median(times) < 0.005
def test_c():
    assert time.time() - sent < 5.0
"""
    assert timed_asserts(timed) == ["<test>:7", "<test>:13", "<test>:15"]
    untimed = """
import time
def test_d():
    deadline = time.monotonic() + 10
    while not done() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert done()
    start = time.perf_counter()
    print(time.perf_counter() - start)
    assert result == 3
"""
    assert timed_asserts(untimed) == []
