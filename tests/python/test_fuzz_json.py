# Property tests of the untrusted-input readers: from_json and the DLPack importer (issue 15).
"""``from_json`` of random, truncated and mutated documents and ``from_dlpack`` of random
versioned DLPack structs and hostile producers either give a value or raise a documented exception
(``ValueError``, of which ``json.JSONDecodeError`` and ``binascii.Error`` are subclasses;
``TypeError`` for a type from_json cannot build; ``OverflowError`` and ``BufferError`` for
DLPack), never crash. Round trips of random value graphs come back structurally equal. The cases
that reach native code with hostile input (mutated documents that rebuild tensors and objects,
hostile DLPack structs) run as Hypothesis tests inside a child process, so a crash fails the test
instead of the suite; the child prints its example counts, which the parent checks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import fuzzing
import numpy as np
import packedfun as pf
import pytest
from hypothesis import given
from hypothesis import strategies as st
from packedfun import testing

DOCUMENTED = (ValueError, TypeError)  # TypeError: a type key not registered in this process
IN_CHILD = os.environ.get("PACKEDFUN_FUZZ_CHILD") == "1"
# Run only inside the crash-isolating child that test_hostile_input_in_a_child_process starts;
# elsewhere conftest.py deselects them (they are not skipped: that child runs each of them).
child_only = pytest.mark.crash_isolated

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.binary(max_size=8),
)


def _pairs(draw_ints):
    return st.builds(testing.TestIntPair, draw_ints, draw_ints)


_values = st.recursive(
    st.one_of(_scalars, _pairs(st.integers(-(2**63), 2**63 - 1))),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(max_size=4), inner, max_size=4),
        st.builds(pf.List, st.lists(inner, max_size=3)),
        st.builds(pf.Dict, st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    ),
    max_leaves=12,
)


@given(value=_values, tensor=st.booleans())
def test_json_round_trip_is_structurally_equal(value, tensor):
    fuzzing.count("json-round-trip")
    root = pf.convert([value, value])  # the same subgraph twice: one node, two refs
    if tensor:
        root = pf.convert([root, pf.from_dlpack(np.arange(6, dtype=np.float32).reshape(2, 3))])
    text = pf.to_json(root)
    back = pf.from_json(text)
    if tensor:
        root, back = root[0], back[0]
    assert pf.structural_equal(root, back), (root, back)


@given(value=_values, cut=st.floats(0, 1, exclude_max=True))
def test_truncated_json_raises_value_error(value, cut):
    fuzzing.count("json-truncated")
    text = pf.to_json(pf.convert([value]))
    with pytest.raises(ValueError):
        pf.from_json(text[: int(len(text) * cut)])


_json_any = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=False),
        st.text(max_size=6),
        st.sampled_from(["Array", "Map", "Tensor", "Shape", "testing.TestIntPair", "float32"]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.one_of(
                st.text(max_size=6),
                st.sampled_from(["ref", "type", "items", "fields", "dims", "bytes", "float"]),
            ),
            inner,
            max_size=4,
        ),
    ),
    max_leaves=10,
)


_NODE_KEYS = ["items", "dims", "dtype", "shape", "strides", "offset", "readonly", "data", "fields"]
_node_like = st.builds(
    lambda kind, extra: {"type": kind, **extra},
    st.sampled_from(["Array", "List", "Map", "Dict", "Shape", "Tensor", "testing.TestIntPair"]),
    st.dictionaries(st.sampled_from(_NODE_KEYS), _json_any, max_size=8),
)


def _mutate(doc, path, replacement):
    """Replaces the node reached by following `path` (indices into dict values/list items)."""
    node, parent, key = doc, None, None
    for step in path:
        children = (
            list(node.items())
            if isinstance(node, dict)
            else list(enumerate(node))
            if isinstance(node, list)
            else []
        )
        if not children:
            break
        parent, (key, node) = node, children[step % len(children)]
    if parent is None:
        return replacement
    parent[key] = replacement
    return doc


_TENSOR_DOC = pf.to_json(
    pf.convert(
        [pf.from_dlpack(np.arange(6, dtype=np.int16).reshape(2, 3)), testing.TestIntPair(1, 2)]
    )
)


@child_only
@given(
    value=_values,
    with_tensor=st.booleans(),
    path=st.lists(st.integers(0, 7), max_size=6),
    replacement=st.one_of(_json_any, _node_like),
)
def test_mutated_json_builds_or_raises(value, with_tensor, path, replacement):
    fuzzing.count("json-mutated")
    doc = json.loads(_TENSOR_DOC if with_tensor else pf.to_json(pf.convert([value])))
    text = json.dumps(_mutate(doc, path, replacement))
    try:
        result = pf.from_json(text)
    except DOCUMENTED:
        return
    repr(result)  # whatever was built must be usable


@child_only
@given(doc=_json_any)
def test_random_json_documents_build_or_raise(doc):
    fuzzing.count("json-random")
    if isinstance(doc, dict) and "nodes" in doc:
        doc["packedfun_json"] = 1
    try:
        pf.from_json(json.dumps(doc))
    except DOCUMENTED:
        pass


@pytest.mark.parametrize(
    "node",
    [
        {"type": "Array"},
        {"type": "Array", "items": {"a": 1}},
        {"type": "Shape", "dims": 5},
        {"type": "Tensor"},
        {"type": "Tensor", "dtype": "float32", "shape": [10**9, 10**9], "strides": [1, 1],
         "offset": 0, "readonly": False, "data": ""},
        {"type": "Tensor", "dtype": "float32", "shape": [4], "strides": [-1], "offset": 0,
         "readonly": False, "data": "AAAAAAAAAAAAAAAAAAAAAA=="},
        {"type": "Tensor", "dtype": "int8", "shape": [2], "strides": [1], "offset": 15,
         "readonly": True, "data": "AAAAAAAAAAAAAAAAAAAAAA=="},
    ],
)  # fmt: skip
def test_malformed_nodes_raise_value_error(node):
    """Found by the mutated-document fuzzing: missing or mistyped node fields raised KeyError or
    TypeError, and a Tensor node whose layout reaches past its data was built (reading it would
    read foreign memory: NumPy accepts such a layout over an empty buffer)."""
    doc = {"packedfun_json": 1, "root": {"ref": 0}, "nodes": [node]}
    with pytest.raises(ValueError, match="from_json|Tensor"):
        pf.from_json(json.dumps(doc))


@pytest.mark.parametrize(
    "root", [{"device": 5}, {"ref": [1]}, {"ref": True}, {"bytes": 5}, {"float": []}, {"dtype": 5}]
)
def test_malformed_values_raise_value_error(root):
    with pytest.raises(ValueError, match="from_json"):
        pf.from_json(json.dumps({"packedfun_json": 1, "root": root, "nodes": []}))


def test_deeply_nested_text_raises_value_error():
    with pytest.raises(ValueError, match="nested too deeply"):
        pf.from_json('{"packedfun_json": 1, "root": ' + "[" * 100_000 + "]" * 100_000 + "}")


# ---- DLPack: versioned structs and hostile producers ---------------------------------------------
@child_only
@given(
    major=st.one_of(st.just(1), st.integers(0, 2**32 - 1)),
    minor=st.integers(0, 2**32 - 1),
    flags=st.integers(0, 2**64 - 1),
    ndim=st.integers(-2, 8),
    shape=st.lists(st.integers(-(2**63), 2**63 - 1), min_size=8, max_size=8),
    code=st.integers(0, 255),
    bits=st.integers(0, 255),
    lanes=st.integers(0, 65535),
    device_type=st.integers(-4, 40),
    offset=st.integers(0, 2**64 - 1),
)
def test_hostile_versioned_dlpack_imports_or_raises(
    major, minor, flags, ndim, shape, code, bits, lanes, device_type, offset
):
    import dlpack_structs as ds

    fuzzing.count("dlpack-versioned-hostile")
    managed, keep = ds.versioned(major, minor, flags, ndim, shape, code, bits, lanes, device_type)
    managed.dl_tensor.byte_offset = offset
    capsule = ds.capsule(managed, b"dltensor_versioned")
    ds.deleted.clear()
    try:
        tensor = pf.from_dlpack(capsule)
    except (ValueError, TypeError, BufferError, OverflowError, MemoryError):
        assert ds.deleted == [ds.address(managed)]
        return
    assert major == 1
    repr(tensor), str(tensor.dtype), tensor.shape, tensor.device
    del tensor
    assert ds.deleted == [ds.address(managed)]


class _Producer:
    def __init__(self, capsule, device):
        self.capsule, self.device = capsule, device

    def __dlpack__(self, **kwargs):
        if isinstance(self.capsule, BaseException):
            raise self.capsule
        return self.capsule

    def __dlpack_device__(self):
        return self.device


@child_only
@given(
    capsule=st.one_of(
        st.none(),
        st.integers(),
        st.text(max_size=4),
        st.just(ValueError("producer refuses")),
        st.just(BufferError("no")),
        st.sampled_from([b"dltensor", b"used_dltensor", b"other", b"dltensor_versioned"]),
    ),
    device=st.one_of(
        st.none(),
        st.tuples(st.integers(-(2**40), 2**40), st.integers(-(2**40), 2**40)),
        st.tuples(st.integers(0, 20)),
        st.text(max_size=3),
    ),
)
def test_hostile_dlpack_producers_raise(capsule, device):
    import dlpack_structs as ds

    fuzzing.count("dlpack-producer")
    if isinstance(capsule, bytes):  # a capsule of that name around a zeroed struct
        capsule = ds.capsule_named_zero(capsule)
    with pytest.raises((ValueError, TypeError, BufferError, OverflowError)):
        pf.from_dlpack(_Producer(capsule, device))


@pytest.mark.deselect_if(IN_CHILD, reason="starts the crash-isolating child: not from inside it")
def test_hostile_input_in_a_child_process():
    """Runs the child_only tests above in a child process (a crash fails this test)."""
    env = dict(os.environ, PACKEDFUN_FUZZ_CHILD="1")
    here = Path(__file__).resolve().parent
    env["PYTHONPATH"] = os.pathsep.join([str(here), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", __file__,
         "-k", "mutated or random_json or hostile_versioned or hostile_dlpack_producers"],
        capture_output=True, text=True, timeout=1800, env=env,
    )  # fmt: skip
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-6000:]
    assert "4 passed" in output, output[-3000:]
    counts = [line for line in output.splitlines() if line.startswith("fuzz examples:")]
    assert counts, output[-3000:]
    print(counts[-1])


@pytest.fixture(scope="module", autouse=True)
def _report_counts():
    yield
    if fuzzing.EXAMPLES:
        print("\nfuzz examples:", json.dumps(fuzzing.EXAMPLES, sort_keys=True))
