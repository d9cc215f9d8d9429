# Garbage collection of reference cycles that run through native containers and objects.
"""A wrapper that is the only owner of its native object lets the GC see the Python objects that
object keeps alive (through elements and fields that are themselves solely owned), so cycles
through List/Dict/Array/Map elements, Functions wrapping Python callables, Opaque Python objects
and reflected fields are collected; a native object that something else also holds is never
followed (docs/concepts.md, "Garbage collection through native objects"). The ctypes backend
gets there by lending around full collections, so these tests use gc.collect(); a traversal
listed by gc.get_referents exists on _core only."""

import gc
import os
import subprocess
import sys
import textwrap
import weakref

import packedfun as pf
import pytest
from packedfun import testing
from packedfun.object import type_info

CTYPES = os.environ.get("PACKEDFUN_BACKEND") == "ctypes"
needs_traverse = pytest.mark.deselect_if(
    CTYPES, reason="a _core property: ctypes wrappers are Python classes, no tp_traverse"
)


class Tok:
    pass


def _tagged(name, body):
    assert testing.echo(1) == 1  # loads the testing library (testing.Tagged)
    info = type_info(pf._backend.core.type_key_to_index("testing.Tagged"))
    ctor = next(m["func"] for m in info["methods"] if m["name"] == "__create__")
    return ctor(name, body, 0)


def _collected(make) -> bool:
    """Builds a cycle with make() (which returns weak references into it) and reports whether
    gc.collect() freed all of it."""
    refs = make()
    gc.collect()
    return all(r() is None for r in refs)


def _live() -> int:
    gc.collect()
    return testing.object_live_count()


def test_issue_example_list_cycle_collects():
    def make():
        tok = Tok()
        lst = pf.List()
        lst.append(lambda: (tok, lst))
        return [weakref.ref(tok), weakref.ref(lst)]

    assert _collected(make)


def test_cycle_through_dict_collects():
    def make():
        tok = Tok()
        d = pf.Dict()
        d["f"] = lambda: (tok, d)
        return [weakref.ref(tok), weakref.ref(d)]

    assert _collected(make)


def test_cycle_through_array_returned_by_cpp_collects():
    def make():
        tok = Tok()
        holder = []
        arr = testing.echo([lambda: (tok, holder)])  # the Array comes back from C++
        assert isinstance(arr, pf.Array)
        holder.append(arr)
        return [weakref.ref(tok), weakref.ref(arr)]

    assert _collected(make)


def test_cycle_through_map_key_and_opaque_collects():
    def make():
        tok = Tok()
        holder = []
        m = pf.Map({"k": tok})  # tok travels as an Opaque object
        tok.back = holder
        holder.append(m)
        return [weakref.ref(tok), weakref.ref(m)]

    assert _collected(make)


def test_cycle_through_reflected_field_collects():
    def make():
        tok = Tok()
        obj = _tagged("t", None)
        obj.body = lambda: (tok, obj)  # an Any field holding a Function
        return [weakref.ref(tok), weakref.ref(obj)]

    assert _collected(make)


def test_cycle_through_nested_containers_and_field_collects():
    start = _live()

    def make():
        tok = Tok()
        lst = pf.List([testing.TestIntPair(1, 2)])
        inner = pf.Dict({"x": [1, 2], "f": lambda: (tok, lst)})
        lst.append(_tagged("n", pf.List([inner])))  # List -> Tagged.body -> List -> Dict -> f
        return [weakref.ref(tok), weakref.ref(lst)]

    assert _collected(make)
    assert _live() == start  # the TestIntPair inside the cycle was freed exactly once


def test_cycle_through_wrapped_function_collects():
    def make():
        tok = Tok()
        holder = []
        f = pf.Function(lambda: (tok, holder))
        holder.append(f)
        return [weakref.ref(tok), weakref.ref(f)]

    assert _collected(make)


@needs_traverse
def test_referents_show_solely_owned_elements_only():
    def cb():
        return 1

    lst = pf.List([cb, "s", 3])
    assert cb in gc.get_referents(lst)
    testing.store_value(lst)  # native code holds the List too: its elements are not ours alone
    try:
        assert cb not in gc.get_referents(lst)
    finally:
        testing.clear_value()
    assert cb in gc.get_referents(lst)
    f = lst[0]  # a second wrapper of the element Function: shared, so neither follows it
    assert cb not in gc.get_referents(lst) and cb not in gc.get_referents(f)


def test_cycle_held_by_native_code_survives_collection():
    """A cycle whose native object C++ also holds is live: the GC must not free any of it."""
    start = _live()

    def make():
        tok = Tok()
        lst = pf.List([testing.TestIntPair(3, 4)])
        lst.append(lambda: (tok, lst))
        testing.store_value(lst)
        return weakref.ref(tok)

    ref = make()
    for _ in range(3):
        gc.collect()
    assert ref() is not None
    kept = testing.load_value()
    tok, again = kept[1]()
    assert tok is ref() and again[0].a == 3
    del kept, tok, again
    testing.clear_value()
    gc.collect()
    assert ref() is None
    assert _live() == start


def test_collection_never_frees_live_values():
    """Cycles, shared elements and native holders mixed: after each collection everything still
    reachable works; run in a child process (a wrong visit would be a use after free)."""
    code = textwrap.dedent(
        """
        import gc, random, weakref
        import packedfun as pf
        from packedfun import testing

        class Tok:
            pass

        rng = random.Random(7)
        keep = []
        dead = []
        for i in range(400):
            tok = Tok()
            tok.i = i
            lst = pf.List()
            f = lambda tok=tok, lst=lst: (tok.i, len(lst))
            lst.append(f)
            r = rng.random()
            if r < 0.3:
                shared = pf.Dict({"l": lst})  # a second native holder of the List
                keep.append((shared, i))
            elif r < 0.5:
                lst.append(lst)  # the List holds itself (a native cycle: never ours to free)
                keep.append((lst, i))
            elif r < 0.7:
                keep.append((pf.Array([lst, lst]), i))  # the List twice: shared
            else:
                dead.append(weakref.ref(tok))
            if i % 50 == 0:
                gc.collect()
                for holder, j in keep:
                    inner = holder["l"] if isinstance(holder, pf.Dict) else holder
                    inner = inner[0] if isinstance(inner, pf.Array) else inner
                    assert inner[0]()[0] == j
        gc.collect()
        assert sum(r() is not None for r in dead) == 0
        for holder, j in keep:
            inner = holder["l"] if isinstance(holder, pf.Dict) else holder
            inner = inner[0] if isinstance(inner, pf.Array) else inner
            assert inner[0]()[0] == j
        print("ok", len(keep), len(dead))
        # Nothing left in cycles at exit: a List that holds itself is a native cycle no collector
        # can free (it leaks by design), and ctypes wrappers still alive after module teardown
        # cannot release their native objects (a sanitized run reports both as leaks).
        for holder, j in keep:
            if isinstance(holder, pf.List):
                holder.clear()
        for name in ("keep", "holder", "inner", "lst", "f", "tok", "shared"):
            globals().pop(name, None)
        gc.collect()
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=os.environ
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("ok")


def test_collection_races_native_mutation_of_an_argument():
    """One thread grows a List through native calls (which release the GIL) while another
    collects in a loop: the collector never walks a container a running call may be mutating
    (arguments are pinned for released calls). In a child process: a race would crash it."""
    # Each collection walks the whole List (on ctypes in Python code): under AddressSanitizer
    # 6,000 appends took past the sanitized run's 300 s per-test limit; 1,200 still race.
    n = 1200 if os.environ.get("PACKEDFUN_SANITIZE_PRELOAD") else 6000
    code = textwrap.dedent(
        f"""
        import gc, threading
        import packedfun as pf
        from packedfun import testing

        lst = pf.List()
        lst.append(lambda: lst)  # a cycle, so the collector has reason to walk the List
        done = threading.Event()
        failed = []

        def grow():
            try:
                for i in range({n}):
                    testing.list_append(lst, (lambda i=i: i) if i % 3 else i)
            except BaseException as e:  # reported below; the loop must still end
                failed.append(repr(e))
            finally:
                done.set()

        t = threading.Thread(target=grow)
        t.start()
        while not done.is_set():
            gc.collect()
        t.join()
        assert not failed, failed
        half = {n // 2}
        assert len(lst) == {n + 1} and lst[half]() == half - 1 and lst[half + 1] == half
        print("ok")
        del lst, t
        gc.collect()  # the cycle goes before exit (see the test above)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=os.environ
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("ok")


def test_collection_never_holds_another_threads_objects():
    """A full collection looks at wrappers only: it never holds a reference to an object another
    thread is building. The ctypes backend's lending used to walk ``gc.get_objects()`` in Python
    code, so a thread that ran meanwhile found its half-built ``tuple(generator)`` counted twice
    and failed with "SystemError: bad argument to internal function" (seen in CI on 3.13). Here
    the other thread waits inside its generator until the collection has started, then finishes
    the tuple while the main thread is still collecting (a large heap keeps it busy past the
    5 ms switch interval). In a child process, on both backends."""
    code = textwrap.dedent(
        """
        import gc, threading
        import packedfun as pf

        keep = pf.List([lambda: None])  # a wrapper, so there is something to lend
        heap = [[i] for i in range(300_000)]
        started, go, out = threading.Event(), threading.Event(), []

        def items():
            yield 1
            started.set()
            go.wait()
            yield 2

        def build():
            try:
                out.append(tuple(items()))
            except BaseException as e:
                out.append(repr(e))

        t = threading.Thread(target=build)
        t.start()
        started.wait()
        go.set()  # the thread now waits for the GIL, which the collection holds
        gc.collect()
        t.join()
        assert out == [(1, 2)], out
        print("ok")
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=os.environ
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("ok")
