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


# ---- arguments that mutate each other: read as they were at the call, under both GIL policies --

# A C function declaring a view argument (a std::vector<int64_t> parameter's way in): it reports
# how many ints it read and their sum, through the view's read_int64 while the items are plain,
# else through the Array the view materializes (which converts the rest, running their hooks).
_VSUM = r"""
#include <packedfun/c_api.h>

static int answer(int64_t count, int64_t sum, PFAny* result) {
  PFAny cells[2];
  int64_t values[2] = {count, sum};
  for (int i = 0; i < 2; ++i) {
    cells[i].type_index = kPFTypeInt;
    cells[i].zero_padding = 0;
    cells[i].v_int64 = values[i];
  }
  return PFArrayCreate(cells, 2, result);
}

int __packedfun_vsum(void* self, const PFAny* args, int32_t n, PFAny* result) {
  (void)self;
  if (n != 2) return PFErrorSetRaisedFromCStr("TypeError", "vsum: expected 2 arguments");
  if (args[0].type_index == kPFTypeContainerView) {
    const PFContainerView* view = (const PFContainerView*)args[0].v_ptr;
    int64_t buf[64], sum = 0;
    int64_t want = view->size < 64 ? view->size : 64;
    int64_t got = view->vtable->read_int64(view, 0, buf, want);
    if (got == view->size) {
      for (int64_t i = 0; i < got; ++i) sum += buf[i];
      return answer(got, sum, result);
    }
  }
  PFAny owned;
  if (PFAnyViewToOwned(&args[0], &owned) != 0) return -1;
  if (owned.type_index != kPFTypeArray) {
    PFAnyRelease(&owned);
    return PFErrorSetRaisedFromCStr("TypeError", "vsum: expected a sequence");
  }
  const PFSeqObject* seq = (const PFSeqObject*)owned.v_obj;
  int64_t sum = 0, count = seq->size;
  for (int64_t i = 0; i < count; ++i) {
    if (seq->data[i].type_index != kPFTypeInt) {
      PFAnyRelease(&owned);
      return PFErrorSetRaisedFromCStr("TypeError", "vsum: expected ints");
    }
    sum += seq->data[i].v_int64;
  }
  PFAnyRelease(&owned);
  return answer(count, sum, result);
}
const int32_t __packedfun_gil__vsum = kPFGILHold;
const uint32_t __packedfun_view_args__vsum = 1;
"""
_vsum_module = []


def _vsum():
    if not _vsum_module:
        import tempfile

        from cmake_project import build_c_library

        out = build_c_library(_VSUM, Path(tempfile.mkdtemp(prefix="pf-fuzz-")) / "libvsum.so")
        _vsum_module.append(pf.load_module(str(out)))
    return _vsum_module[0].vsum


@st.composite
def _mutating_arguments(draw):
    """A recipe: a list of small ints with hostile items, and a second argument (an int, or a
    hostile whose hooks mutate the list when the call converts it, after the list)."""
    items = draw(st.lists(st.integers(-1000, 1000), max_size=20))
    inside = [(draw(st.sampled_from(_MODES)), draw(st.integers(0, len(items))))
              for _ in range(draw(st.integers(0, 2)))]  # fmt: skip
    second = draw(st.one_of(st.integers(-5, 5), st.sampled_from(_MODES)))
    return items, inside, second


def _call_outcome(f, recipe):
    items, inside, second = recipe
    value: list = list(items)
    hostiles = []
    for mode, at in inside:
        hostiles.append(Hostile(mode, "index"))
        value.insert(min(at, len(value)), hostiles[-1])
    before = [7 if isinstance(v, Hostile) else v for v in value]
    other = second if isinstance(second, int) else Hostile(second, "index")
    for h in [*hostiles, other]:
        if isinstance(h, Hostile):
            h.owner = value
    try:
        count, total = f(value, other)
    except RuntimeError as exc:  # an item's hook changed the list's size while it converted
        assert "changed size during conversion" in str(exc), exc
        assert hostiles, "only an item converting the list may change what the call reads"
        return "size changed"
    assert (count, total) == (len(before), sum(before)), (before, value)
    return count, total


@child_only
@given(recipe=_mutating_arguments(), gil=st.sampled_from(["hold", "release"]))
def test_arguments_are_read_as_they_were_at_the_call(recipe, gil):
    # The list is read as it was when the call converted it, whatever its own items or a later
    # argument do to it (the callee saw the mutated list under "hold" only), the same under both
    # GIL policies (a view under "hold" on _core, an Array otherwise).
    fuzzing.count("mutating-arguments")
    vsum = _vsum()
    vsum.gil_policy = gil
    try:
        outcome = _call_outcome(vsum, recipe)
    finally:
        vsum.gil_policy = "hold"
    other = "release" if gil == "hold" else "hold"
    vsum.gil_policy = other
    try:
        assert _call_outcome(vsum, recipe) == outcome
    finally:
        vsum.gil_policy = "hold"
    echo = pf.testing.echo_array_int  # a typed Array<int64_t> parameter: no view, same rule
    items, inside, _ = recipe

    def echo_pair(value, other):
        out = echo(value)
        return len(out), sum(out)

    _call_outcome(echo_pair, (items, inside, 0))


# ---- deep values of mixed kinds, and cycles, through every way a value is copied --------------

_KINDS = ("Array", "List", "Map", "Dict")


def _mixed_chain(depth: int, kinds: list, leaf):
    value = pf.List([leaf])
    for i in range(depth):
        kind = kinds[i % len(kinds)]
        value = getattr(pf, kind)([value] if kind in ("Array", "List") else {"k": value})
    return value


@child_only
@given(
    depth=st.integers(1, MAX_DEPTH),
    kinds=st.lists(st.sampled_from(_KINDS), min_size=1, max_size=4),
    leaf=_plain,
    op=st.sampled_from(["deepcopy", "copy", "difference", "python", "convert", "equal"]),
)
def test_deep_mixed_values_never_crash(depth, kinds, leaf, op):
    fuzzing.count("deep-mixed")
    import copy

    value = _mixed_chain(depth, kinds, leaf)
    try:
        if op == "deepcopy":
            assert pf.structural_equal(copy.deepcopy(value), value)
        elif op == "copy":
            copy.copy(value)
        elif op == "difference":  # the same chain with another leaf: found at the bottom
            other = _mixed_chain(depth, kinds, "another leaf")
            equal = pf.structural_equal(value, other)
            assert equal == (pf.structural_first_difference(value, other) is None)
        elif op == "python":  # a Python nest as deep: converted, or RecursionError
            nest: list = [leaf]
            for _ in range(depth):
                nest = [nest]
            pf.testing.echo(nest)
        elif op == "convert":
            assert pf.structural_equal(pf.convert(value), value)
        elif op == "equal":
            assert pf.structural_equal(value, pf.from_json(pf.to_json(value)))
    except RecursionError:
        pass
    del value


@child_only
@given(
    length=st.integers(1, 5),
    kinds=st.lists(st.sampled_from(["List", "Dict"]), min_size=1, max_size=5),
    leaf=_plain,
    way=st.sampled_from(["pickle", "deepcopy", "json"]),
)
def test_cyclic_values_survive_copies(length, kinds, leaf, way):
    # A ring of Lists and Dicts (a cycle no Python collector sees) comes back from pickle,
    # deepcopy and JSON as an equal ring with an equal hash; repr and free it without recursing.
    fuzzing.count("cyclic-copies")
    import copy

    nodes = [getattr(pf, kinds[i % len(kinds)])() for i in range(length)]
    for i, node in enumerate(nodes):
        nxt = nodes[(i + 1) % length]
        if isinstance(node, pf.List):
            node.extend([leaf, nxt])
        else:
            node.update({"v": leaf, "next": nxt})
    copied = {
        "pickle": lambda v: pickle.loads(pickle.dumps(v)),
        "deepcopy": copy.deepcopy,
        "json": lambda v: pf.from_json(pf.to_json(v)),
    }[way](nodes[0])
    assert pf.structural_equal(copied, nodes[0])
    assert pf.structural_hash(copied) == pf.structural_hash(nodes[0])
    repr(copied)
    ring, node = [], copied
    for _ in range(length):  # break the copy's cycle too
        ring.append(node)
        node = node[1] if isinstance(node, pf.List) else node["next"]
    for node in nodes + ring:
        node.clear()


# ---- hostile tensor and object nodes, packed plain containers ----------------------------------

_dim = st.one_of(
    st.integers(-3, 8), st.sampled_from([2**31, 2**62, 2**63, 2**64]), st.text(max_size=2)
)
_meta = st.one_of(
    st.tuples(
        st.sampled_from(
            ["int8", "float32", "bool", "complex128", ">i8", "datetime64", "O", "i8", 3]
        ),
        st.lists(_dim, max_size=3).map(tuple),
        st.lists(_dim, max_size=3).map(tuple),
        _dim,
        st.booleans(),
    ),
    st.lists(_plain, max_size=6).map(tuple),
    _plain,
)
_tensor_node = st.tuples(st.just("T"), _meta, st.one_of(st.binary(max_size=64), _plain))
_object_node = st.tuples(
    st.just("O"),
    st.sampled_from(["testing.TestIntPair", "testing.NoSuchType", "", 5]),
    st.lists(_item, max_size=3),
)


@child_only
@given(
    nodes=st.lists(st.one_of(_node, _tensor_node, _object_node), min_size=1, max_size=5),
    root=_ref,
)
def test_hostile_tensor_and_object_nodes_load_or_raise(nodes, root):
    fuzzing.count("hostile-tensor-object")
    try:
        value = pickle.loads(pickle.dumps(_Graph(nodes, root)))
    except (ValueError, TypeError):
        return
    repr(value)


@child_only
@given(
    which=st.integers(0, 1),
    edits=st.lists(st.tuples(st.integers(0, 200), st.integers(0, 255)), max_size=4),
    cut=st.integers(0, 200),
)
def test_damaged_packed_containers_load_or_raise_value_error(which, edits, cut):
    # The bytes a pickled plain container travels as, damaged: ValueError or a usable container
    # whose every str is text (a str that is not UTF-8 is refused at load, not at each read).
    fuzzing.count("packed-bytes")
    unpack = pf.get_global_func("packedfun.container_unpack_plain")
    pack = pf.get_global_func("packedfun.container_pack_plain")
    data = bytearray(
        pack(pf.convert([["text", 1, 2.5, None, True, b"\x00"], {"k": "v", 2: 3.5}][which]))
    )
    for at, byte in edits:
        data[at % len(data)] = byte
    data = bytes(data[: max(cut, 17)]) if cut < len(data) else bytes(data)
    try:
        value = unpack(data)
    except ValueError:
        return
    for item in value.items() if isinstance(value, (pf.Map, pf.Dict)) else value:
        repr(item)


@child_only
@given(
    segment=st.integers(0, 15),
    field=st.sampled_from(["offset", "size"]),
    past=st.integers(1, 2**40),
)
def test_library_segments_past_the_end_raise_oserror(segment, field, past):
    # A program header whose segment reaches past the end of the file (a damaged copy whose
    # digest matches its bytes) is refused before the loader maps it.
    import struct

    fuzzing.count("module-segments")
    data = bytearray(_library())
    (phoff,) = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    loads = [
        i for i in range(phnum) if struct.unpack_from("<I", data, phoff + i * phentsize)[0] == 1
    ]
    at = phoff + loads[segment % len(loads)] * phentsize
    p_offset, p_filesz = (
        struct.unpack_from("<QQ", data, at + 8)[0],
        struct.unpack_from("<Q", data, at + 32)[0],
    )
    if field == "offset":
        struct.pack_into("<Q", data, at + 8, len(data) - p_filesz + past)
    else:
        struct.pack_into("<Q", data, at + 32, len(data) - p_offset + past)
    digest = hashlib.sha256(data).hexdigest()
    with pytest.raises(OSError, match="past the end of the file"):
        _module._load_shipped(f"fuzzed{digest[:12]}", digest, bytes(data))


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
    assert "11 passed" in output, output[-3000:]
    counts = [line for line in output.splitlines() if line.startswith("fuzz examples:")]
    assert counts, output[-3000:]
    print(counts[-1])


@pytest.fixture(scope="module", autouse=True)
def _report_counts():
    yield
    if fuzzing.EXAMPLES:
        print("\nfuzz examples:", json.dumps(fuzzing.EXAMPLES, sort_keys=True))
