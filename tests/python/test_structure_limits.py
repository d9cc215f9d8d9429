# Large and adversarial structures: many types, hash-flooding keys, deep nests and deep cycles.
"""Behaviour (not timing) of the structures the scaling report (benchmarks/scaling.py) measures.

The report checks costs stay flat; these tests check the same inputs give right answers: the type
table grows past its first chunk, a Map keyed by values built to collide in an unseeded hash is
still a correct map, and cycle detection in ``convert`` works at every depth.
"""

import ctypes
import sys
from pathlib import Path

import packedfun
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from scaling import adversarial_int_keys as _colliding_ints  # noqa: E402 - the report's key set


def test_map_with_keys_built_to_collide_is_a_correct_map():
    keys = _colliding_ints(3000)
    assert len(set(keys)) == len(keys)
    m = packedfun.convert({k: i for i, k in enumerate(keys)})
    assert len(m) == len(keys)
    for i, k in enumerate(keys):
        assert m[k] == i
    assert (keys[0] + 1) not in m
    assert list(m.keys()) == keys  # insertion order kept


def test_dict_mutation_with_colliding_keys():
    keys = _colliding_ints(500)
    d = packedfun.Dict()
    for i, k in enumerate(keys):
        d[k] = i
    for k in keys[::2]:
        del d[k]
    assert len(d) == len(keys) // 2
    for i, k in enumerate(keys):
        assert (k in d) == (i % 2 == 1)
    d[keys[0]] = "back"
    assert d[keys[0]] == "back" and len(d) == len(keys) // 2 + 1


def _runtime():
    # By soname: the runtime this process already loaded (a path could load a second copy).
    lib = ctypes.CDLL("libpackedfun.so")

    class ByteArray(ctypes.Structure):
        _fields_ = [("data", ctypes.c_char_p), ("size", ctypes.c_size_t)]

    def key(text):
        raw = text.encode()
        return ctypes.byref(ByteArray(raw, len(raw)))

    return lib, key


def test_type_table_grows_past_its_first_chunks():
    lib, key = _runtime()
    base = ctypes.c_int32()
    assert lib.PFTypeKeyToIndex(key("packedfun.Object"), ctypes.byref(base)) == 0
    out = ctypes.c_int32()
    indices = []
    for i in range(10000):  # the table's chunks hold 4096 types each
        assert lib.PFTypeRegister(key(f"test_limits.T{i}"), base, ctypes.byref(out)) == 0
        indices.append(out.value)
    assert len(set(indices)) == len(indices)
    for i in (0, 4095, 4096, 9999):
        assert lib.PFTypeKeyToIndex(key(f"test_limits.T{i}"), ctypes.byref(out)) == 0
        assert out.value == indices[i]
        assert lib.PFTypeIsInstance(indices[i], base.value) == 1
    info = packedfun.object.type_info(indices[-1])
    assert info["type_key"] == "test_limits.T9999"


def test_unknown_huge_type_index_is_an_error_not_a_crash():
    with pytest.raises(IndexError):
        packedfun.object.type_info(2**31 - 1)
    with pytest.raises(IndexError):
        packedfun.object.type_info(2**30 + 5)


def _nest(depth, leaf):
    root = [0]
    cur = root
    for _ in range(depth):
        nxt = [1]
        cur.append(nxt)
        cur = nxt
    cur.append(leaf)
    return root, cur


@pytest.mark.parametrize("depth", [1, 63, 64, 65, 200, 600])
def test_container_containing_itself_is_found_at_any_depth(depth):
    root, _ = _nest(depth, None)
    root.append(root)
    with pytest.raises(ValueError, match="contains itself"):
        packedfun.convert(root)


@pytest.mark.parametrize("depth", [10, 100, 300])
def test_cycle_below_the_root_is_found(depth):
    loop = [2]
    loop.append(loop)
    root, _ = _nest(depth, loop)
    with pytest.raises(ValueError, match="contains itself"):
        packedfun.convert(root)


def test_deep_nest_without_cycles_converts_and_shared_children_are_fine():
    root, cur = _nest(500, 7)
    shared = [1, 2]
    cur.append([shared, shared])
    arr = packedfun.convert(root)
    node = arr
    for _ in range(500):
        node = node[1]
    assert node[1] == 7 and list(node[2][0]) == [1, 2] and list(node[2][1]) == [1, 2]
