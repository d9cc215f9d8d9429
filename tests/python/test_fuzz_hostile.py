# Property tests of hostile inputs: self-mutating containers, deep and cyclic values, malformed
# value graphs and damaged library bytes.
"""Containers whose elements mutate them while they convert (from ``__index__``, ``__float__``,
``__eq__``, ``__hash__``) convert to the snapshot they were or raise ``RuntimeError``/``TypeError``;
deep and cyclic values free, hash, compare and serialize; malformed value graphs raise
``ValueError``; damaged library bytes raise ``OSError``. Everything runs as Hypothesis tests inside
one child process (a crash fails the parent test, not the suite); sizes are small by default and
grow with ``PACKEDFUN_FUZZ=long``."""

from __future__ import annotations

import gc
import hashlib
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import fuzzing
import packedfun as pf
import pytest
from hypothesis import given
from hypothesis import strategies as st
from packedfun import _pickle
from packedfun import module as _module

IN_CHILD = os.environ.get("PACKEDFUN_FUZZ_CHILD") == "1"
child_only = pytest.mark.crash_isolated
LONG = os.environ.get("PACKEDFUN_FUZZ", "").strip().lower() == "long"
MAX_DEPTH = 20_000 if LONG else 2_000

_plain = st.one_of(
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=True),
    st.text(max_size=20),
    st.none(),
    st.booleans(),
)
_MODES = ("clear", "pop", "append", "replace", "none", "collect")


class Hostile:
    """Runs `mode` on `owner` from whichever hook conversion calls."""

    def __init__(self, mode: str, hook: str):
        self.owner, self.mode, self.hook, self.busy = None, mode, hook, False

    def _mutate(self):
        o = self.owner
        if o is None or self.busy:  # the dict's own lookups call __eq__ again: once is enough
            return
        self.busy = True
        try:
            self._run(o)
        finally:
            self.busy = False

    def _run(self, o):
        if self.mode == "clear":
            o.clear()
        elif self.mode == "pop" and len(o):
            o.popitem() if isinstance(o, dict) else o.pop()
        elif self.mode == "append":
            o.update({object(): 1}) if isinstance(o, dict) else o.append("x" * 20)
        elif self.mode == "replace":
            if isinstance(o, dict):
                for k in list(o):
                    o[k] = "replaced value, long enough to be viewed"
            else:
                for i in range(len(o)):
                    o[i] = "replaced item, long enough to be viewed"
        gc.collect() if self.mode == "collect" else None

    def __index__(self):
        self._mutate()
        return 7

    def __float__(self):
        self._mutate()
        return 7.5

    def __hash__(self):
        self._mutate()
        return 11

    def __eq__(self, other):
        self._mutate()
        return self is other


@st.composite
def _mutating(draw):
    """A recipe (plain data, so Hypothesis can print it) for a container holding hostiles."""
    kind = draw(st.sampled_from(["list", "dict", "nested"]))
    items = draw(st.lists(_plain, max_size=30))
    hostiles = [
        (draw(st.sampled_from(_MODES)), draw(st.sampled_from(["index", "float", "key"])),
         draw(st.integers(0, len(items))))
        for _ in range(draw(st.integers(1, 3)))
    ]  # fmt: skip
    return kind, items, hostiles


def _build(recipe):
    kind, items, specs = recipe
    hostiles = [Hostile(mode, hook) for mode, hook, _ in specs]
    if kind in ("list", "nested"):
        value: list | dict = list(items)
        for h, (_, _, at) in zip(hostiles, specs):
            value.insert(min(at, len(value)), h)
    else:
        value = {f"key {i} of some length": v for i, v in enumerate(items)}
        for j, h in enumerate(hostiles):
            if h.hook == "key":
                value[h] = j
            else:
                value[f"hostile {j}"] = h
    for h in hostiles:
        h.owner = value
    return [value, "outer string item"] if kind == "nested" else value


@child_only
@given(recipe=_mutating(), build=st.sampled_from(["convert", "echo", "ctor"]))
def test_self_mutating_containers_convert_or_raise(recipe, build):
    fuzzing.count("self-mutating")
    value = _build(recipe)
    n = len(value)
    if build == "echo" and isinstance(value, dict):
        # A function argument keeps dict keys by content (no key refusal: typed C++ parameters may
        # read them by content), so every hostile key, converted through __index__, is the key 7:
        # they share one entry, as equal keys do in a dict.
        hostile_keys = sum(isinstance(k, Hostile) for k in value)
        n -= max(hostile_keys - 1, 0)
    f = {
        "convert": pf.convert,
        "echo": pf.testing.echo,
        "ctor": pf.Map if isinstance(value, dict) else pf.Array,
    }[build]
    try:
        out = f(value)
    except RuntimeError as exc:  # ours, or dict()'s own when a constructor copies the dict
        assert "changed size during conversion" in str(exc) or "dict mutated during" in str(exc)
    except TypeError as exc:  # a key no lookup could find again (convert, constructors)
        assert build != "echo", exc
    else:
        assert len(out) == n
        del out
    gc.collect()


@st.composite
def _deep(draw):
    """A recipe (depth, kind, leaf) for a chain: Hypothesis prints it, never the chain."""
    kind = draw(st.sampled_from(["Array", "List", "Map", "Dict"]))
    return draw(st.integers(1, MAX_DEPTH)), kind, draw(_plain)


def _chain(recipe):
    depth, kind, leaf = recipe
    make = getattr(pf, kind)
    value = make([leaf]) if kind in ("Array", "List") else make({"leaf": leaf})
    for _ in range(depth):
        value = make([value]) if kind in ("Array", "List") else make({"k": value})
    return value


@child_only
@given(recipe=_deep(), op=st.sampled_from(["free", "hash", "eq", "repr", "json", "pickle"]))
def test_deep_values_never_crash(recipe, op):
    fuzzing.count("deep")
    value = _chain(recipe)
    try:
        if op == "hash":
            pf.structural_hash(value)
            hash(value)
        elif op == "eq":
            other = pf.from_json(pf.to_json(value))
            assert pf.structural_equal(value, other)
            assert pf.structural_hash(value) == pf.structural_hash(other)
            value == other  # noqa: B015 - may raise RecursionError, nothing else
        elif op == "repr":
            repr(value)
        elif op == "json":
            pf.from_json(pf.to_json(value))
        elif op == "pickle":
            pickle.loads(pickle.dumps(value))
    except RecursionError:
        pass
    except TypeError:
        assert op == "hash"  # List, Map and Dict are unhashable
    del value


@child_only
@given(
    length=st.integers(1, 6),
    kind=st.sampled_from(["List", "Dict"]),
    leaves=st.lists(st.integers(0, 3), min_size=6, max_size=6),
)
def test_cyclic_values_hash_as_they_compare(length, kind, leaves):
    fuzzing.count("cyclic")

    def ring(n, leaf):
        nodes = [getattr(pf, kind)() for _ in range(n)]
        for i, node in enumerate(nodes):
            nxt = nodes[(i + 1) % n]
            if kind == "List":
                node.extend([leaf, nxt])
            else:
                node.update({"v": leaf, "next": nxt})
        return nodes

    a, b = ring(length, leaves[0]), ring(length * 2, leaves[1])
    equal = pf.structural_equal(a[0], b[0])
    assert equal == (leaves[0] == leaves[1])
    if equal:
        assert pf.structural_hash(a[0]) == pf.structural_hash(b[0])
    for nodes in (a, b):  # break the native cycles no collector frees
        for node in nodes:
            node.clear()


_ref = st.tuples(st.integers(-5, 8))
_item = st.one_of(_plain, _ref, st.tuples(st.integers(0, 3), st.integers(0, 3)))
_node = st.one_of(
    st.tuples(st.sampled_from("ALMDSQ"), st.lists(_item, max_size=5)),
    st.tuples(st.sampled_from("AO"), st.lists(_item, max_size=3), st.lists(_item, max_size=3)),
    st.just(()),
    st.none(),
)


class _Graph:
    def __init__(self, nodes, root):
        self.nodes, self.root = nodes, root

    def __reduce__(self):
        return (_pickle._load_graph, (self.nodes, self.root))


@child_only
@given(nodes=st.lists(_node, max_size=6), root=st.one_of(_ref, _plain))
def test_hostile_value_graphs_load_or_raise_value_error(nodes, root):
    fuzzing.count("hostile-graph")
    try:
        pickle.loads(pickle.dumps(_Graph(nodes, root)))
    except (ValueError, TypeError):  # TypeError: a Shape of strs, an object of no registered type
        pass


def _library() -> bytes:
    path = os.path.join(os.path.dirname(pf.__file__), "lib", "libpackedfun_testing.so")
    with open(path, "rb") as f:
        return f.read()


@child_only
@given(cut=st.floats(0.0, 0.999))
def test_truncated_library_bytes_raise_oserror(cut):
    # Truncation only: bytes flipped inside the ELF headers can still crash the system loader
    # (glibc validates little of a library it maps), which only loading in another process avoids.
    fuzzing.count("module-bytes")
    data = _library()
    data = data[: max(1, int(len(data) * cut))]
    digest = hashlib.sha256(data).hexdigest()
    with pytest.raises(OSError):
        _module._load_shipped(f"fuzzed{digest[:12]}", digest, data)


@pytest.mark.deselect_if(IN_CHILD, reason="starts the crash-isolating child: not from inside it")
def test_hostile_values_in_a_child_process(tmp_path):
    """Runs the child_only tests above in a child process (a crash fails this test)."""
    env = dict(os.environ, PACKEDFUN_FUZZ_CHILD="1", PACKEDFUN_CACHE_DIR=str(tmp_path / "cache"))
    here = Path(__file__).resolve().parent
    env["PYTHONPATH"] = os.pathsep.join([str(here), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", __file__,
         "-k", "not in_a_child_process"],
        capture_output=True, text=True, timeout=1800, env=env,
    )  # fmt: skip
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-6000:]
    assert "5 passed" in output, output[-3000:]
    counts = [line for line in output.splitlines() if line.startswith("fuzz examples:")]
    assert counts, output[-3000:]
    print(counts[-1])


@pytest.fixture(scope="module", autouse=True)
def _report_counts():
    yield
    if fuzzing.EXAMPLES:
        print("\nfuzz examples:", json.dumps(fuzzing.EXAMPLES, sort_keys=True))
