"""Deep values: destruction, hash, ==, repr, pickle, JSON and structural operations of long chains
never recurse on the C stack of the runtime. Each case runs in a child process on a thread with a
small stack (512 KiB), so a chain of 20,000 (more with PACKEDFUN_FUZZ=long) overflows it where
any step recurses per level; a dying child fails the test. Python-level operations (hash, ==,
repr) may raise RecursionError, as Python's own containers do, and nothing else."""

import os
import subprocess
import sys

import pytest

DEPTH = 200_000 if os.environ.get("PACKEDFUN_FUZZ", "").strip().lower() == "long" else 20_000

CHILD = r"""
import copy, json, os, pickle, sys, threading
import packedfun as pf

N, KIND, OP = int(sys.argv[1]), sys.argv[2], sys.argv[3]


def chain_from_json():
    node = {"type": KIND, "items": []} if KIND in ("Array", "List") else None
    if node is None:
        nodes = [{"type": KIND, "items": ["k", {"ref": i + 1}]} for i in range(N)]
        nodes.append({"type": KIND, "items": []})
    else:
        nodes = [{"type": KIND, "items": [{"ref": i + 1}]} for i in range(N)] + [node]
    doc = {"packedfun_json": 1, "root": {"ref": 0}, "nodes": nodes}
    return pf.from_json(json.dumps(doc))


def chain_built():
    make = {"Array": pf.Array, "List": pf.List, "Map": pf.Map, "Dict": pf.Dict}[KIND]
    value = make()
    for _ in range(N):
        value = make([value]) if KIND in ("Array", "List") else make({"k": value})
    return value


def work():
    try:
        value = chain_from_json() if OP.endswith("json-built") else chain_built()
        op = OP.split(":")[0]
        if op == "free":
            pass
        elif op in ("hash", "eq", "repr"):
            other = chain_built()
            f = {"hash": hash, "eq": lambda v: v == other, "repr": repr}[op]
            try:
                f(value)
            except RecursionError:
                pass
            except TypeError:
                assert op == "hash" and KIND in ("List", "Map", "Dict")  # unhashable
            del other
        elif op == "pickle":
            back = pickle.loads(pickle.dumps(value))
            assert pf.structural_equal(back, value)
            del back
        elif op == "json":
            back = pf.from_json(pf.to_json(value))
            assert pf.structural_hash(back) == pf.structural_hash(value)
            del back
        elif op == "deepcopy":
            back = copy.deepcopy(value)
            del back
        del value
        print("ok", flush=True)
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        print("raised", type(exc).__name__, str(exc)[:300], flush=True)


# 512 KiB proves the runtime never recurses natively where it walks a value itself (freeing,
# JSON, pickling). hash, == and repr, and everything the ctypes backend does in Python, recurse
# through CPython's own recursion guard, which assumes a thread stack of the usual size: CPython
# itself segfaults hashing a 20,000-deep tuple in a 512 KiB thread (3.11 and 3.13; 3.13 needs over
# 1 MiB), so those run on 4 MiB and must end in RecursionError or a result, never a crash.
python_level = OP in ("hash", "eq", "repr") or os.environ.get("PACKEDFUN_BACKEND") == "ctypes"
threading.stack_size((4096 if python_level else 512) * 1024)
thread = threading.Thread(target=work)
thread.start()
thread.join()
"""


def _run(kind, op, depth=DEPTH):
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(depth), kind, op],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    return proc


@pytest.mark.parametrize("kind", ["Array", "List", "Map", "Dict"])
@pytest.mark.parametrize("op", ["free:json-built", "free", "hash", "eq", "repr", "json"])
def test_a_deep_chain_is_no_crash(kind, op):
    # Freeing a 300,000-node from_json chain killed the process (SIGSEGV) on both backends, and
    # hashing a 100,000-deep Array killed _core (ctypes raised ctypes.ArgumentError).
    proc = _run(kind, op)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", (proc.returncode, proc.stdout,
                                                                  proc.stderr[-2000:])  # fmt: skip


@pytest.mark.parametrize("op", ["pickle:json-built", "deepcopy:json-built"])
def test_a_deep_chain_pickles_and_copies(op):
    proc = _run("Array", op, depth=min(DEPTH, 5000))
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", (proc.returncode, proc.stdout,
                                                                  proc.stderr[-2000:])  # fmt: skip
