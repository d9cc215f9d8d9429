# The name CPython prints for reflected objects (the type key) and what keeps its name (issue 14).
"""A registered class's ``tp_name`` is its native type key (``_core``), so CPython's own messages
read ``'testing.TestIntPair' object has no attribute 'zz'`` with no ``__getattr__`` hook, which
would turn off attribute-access specialization. The ctypes backend keeps a hook that words the
missing-attribute message identically. Tests that register classes run in a child process, so that
the classes other test files registered stay the registered ones here."""

import dis
import gc
import os
import subprocess
import sys
import textwrap
import tracemalloc

import pytest
from packedfun import testing
from packedfun._backend import BACKEND, core
from packedfun.object import type_info

testing.echo(0)  # loads the testing library, which registers its native types
ON_CORE = BACKEND == "_core"


def _pair(a=1, b=2):
    methods = type_info(core.type_key_to_index("testing.TestIntPair"))["methods"]
    return {m["name"]: m["func"] for m in methods}["__create__"](a, b)


def _missing(obj, name="zz"):
    with pytest.raises(AttributeError) as info:
        getattr(obj, name)
    assert info.value.name == name and info.value.obj is obj
    return str(info.value)


def _run_child(code: str) -> str:
    """Runs ``code`` in a fresh interpreter on this backend under the debug allocator (which stops
    on a buffer freed through the wrong allocator, or freed twice); returns its stdout. Under the
    sanitized run its hooks sit on malloc instead of pymalloc: LeakSanitizer does not scan
    pymalloc's arenas, so the objects they hold pointers to would be reported as leaked."""
    sanitized = bool(os.environ.get("PACKEDFUN_SANITIZE_PRELOAD"))
    env = {**os.environ, "PYTHONMALLOC": "malloc_debug" if sanitized else "debug"}
    src = "import packedfun as pf\nfrom packedfun import testing\ntesting.echo(0)\n"
    proc = subprocess.run(
        [sys.executable, "-c", src + textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


# ---- the missing-attribute message, both backends -----------------------------------------------
def test_missing_attribute_names_the_type_key_in_cpythons_words():
    pair = _pair()
    assert _missing(pair) == "'testing.TestIntPair' object has no attribute 'zz'"
    assert not hasattr(pair, "zz") and getattr(pair, "zz", 5) == 5
    assert (pair.a, pair.b, pair.sum()) == (1, 2, 3)  # fields and methods are untouched


def test_class_made_for_an_unregistered_type_is_named_by_its_key():
    obj = testing.make_more_derived(5, "more", 1.5)
    assert _missing(obj, "nope") == "'testing.MoreDerived' object has no attribute 'nope'"
    cls = type(obj)
    assert (cls.__name__, cls.__module__) == ("MoreDerived", "packedfun.object")
    assert obj.extra == 1.5


def test_user_subclass_goes_by_its_own_name():
    class Mine(type(_pair())):
        def total(self):
            return self.sum() * 10

    mine = Mine(3, 4)
    assert _missing(mine) == "'Mine' object has no attribute 'zz'"
    assert (mine.a, mine.total(), type(mine).__name__) == (3, 70, "Mine")
    assert repr(mine) == "testing.TestIntPair(a=3, b=4)"


def test_user_getattr_wins():
    class Lenient(type(_pair())):
        def __getattr__(self, name):
            return f"default {name}"

    assert Lenient(1, 2).zz == "default zz" and Lenient(1, 2).a == 1


def test_other_cpython_messages_name_the_class_as_the_backend_can():
    pair = _pair()
    shown = "testing.TestIntPair" if ON_CORE else type(pair).__name__
    with pytest.raises(TypeError, match=f"^'{shown}' object is not callable$"):
        pair()
    with pytest.raises(TypeError, match=f"for \\+: '{shown}' and 'int'$"):
        pair + 1
    with pytest.raises(TypeError, match=f"^'{shown}' object is not subscriptable$"):
        pair[0]


def test_packedfuns_own_messages_name_the_type_key_on_both_backends():
    pair = _pair()
    with pytest.raises(AttributeError, match=r"^field 'a' of testing\.TestIntPair is read-only$"):
        pair.a = 5

    class Mine(type(pair)):
        pass

    with pytest.raises(AttributeError, match=r"^field 'a' of Mine is read-only$"):
        Mine(1, 2).a = 5


def test_set_type_name_refuses_what_it_cannot_name():
    with pytest.raises(TypeError, match="packedfun.Object subclass"):
        core.set_type_name(int, "x.y")
    with pytest.raises(TypeError, match="packedfun.Object subclass"):
        core.set_type_name(_pair(), "x.y")
    with pytest.raises(TypeError, match="must be a str"):
        core.set_type_name(type(_pair()), 5)


# ---- _core: the type key is tp_name, without an attribute hook ----------------------------------
needs_core = pytest.mark.deselect_if(
    not ON_CORE, reason="a _core property: tp_name is set by the compiled backend"
)


@needs_core
def test_no_attribute_hook_on_core():
    for cls in (type(_pair()), type(testing.make_more_derived(1, "x", 2.0))):
        assert not any("__getattr__" in c.__dict__ for c in cls.__mro__)
        assert cls.__getattribute__ is object.__getattribute__


def _specialized(code, name: str) -> bool:
    """Whether the instructions that load ``name`` in ``code`` are now a specialized form."""
    ops = [
        i.opname
        for i in dis.get_instructions(code, adaptive=True)
        if i.argval == name and i.opname.startswith(("LOAD_ATTR", "LOAD_METHOD"))
    ]
    assert ops, name
    # 3.11 keeps a failed one as LOAD_*_ADAPTIVE, 3.12+ as the plain instruction
    return all(
        op not in ("LOAD_ATTR", "LOAD_METHOD") and not op.endswith("_ADAPTIVE") for op in ops
    )


@needs_core
@pytest.mark.skipif(
    sys.version_info < (3, 11), reason="platform: dis shows specialization since 3.11"
)
def test_method_loads_specialize_like_a_plain_class():
    class Plain:
        def sum(self):
            return 3

    def call_sum(obj):
        return obj.sum()

    def call_sum_too(obj):  # a second code object: each specializes on its own
        return obj.sum()

    plain, pair = Plain(), _pair()
    for _ in range(200):
        call_sum(plain)
        call_sum_too(pair)
    if not _specialized(call_sum.__code__, "sum"):
        pytest.skip("platform: this interpreter does not specialize here (tracing, coverage)")
    assert _specialized(call_sum_too.__code__, "sum")


@needs_core
def test_type_name_storage_is_freed_with_the_class():
    long_key = "x." + "k" * 200_000  # long, so that few rounds (each a gc.collect) show a leak
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(10):
            cls = type("Tmp", (core.Object,), {"__slots__": ()})
            core.set_type_name(cls, long_key)
            core.set_type_name(cls, long_key + "2")  # the first copy is freed
            cls.__name__ = "Renamed"  # tp_name goes back to ht_name; the copy is kept until...
            del cls  # ...type_dealloc frees it
            gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 500_000, grown  # 10 leaked copies would be ~4 MB


def test_set_type_name_refuses_null_characters():
    cls = type("Tmp", (core.Object,), {"__slots__": ()})
    with pytest.raises(ValueError, match="null"):
        core.set_type_name(cls, "a\0b")
    assert cls.__name__ == "Tmp"


# ---- registered classes (child process) ---------------------------------------------------------
def test_registered_class_keeps_its_python_names_and_pickles():
    out = _run_child(
        """
        import pickle

        @pf.register_object("testing.TestIntPair")
        class Pair(pf.Object):
            pass

        p = Pair(1, 2)
        print(Pair.__name__, Pair.__qualname__, Pair.__module__, repr(Pair))
        back = pickle.loads(pickle.dumps(p))
        print(type(back) is Pair, back == p or (back.a, back.b) == (1, 2), repr(p))
        try:
            p.zz
        except AttributeError as e:
            print(e)
        """
    )
    assert out.splitlines() == [
        "Pair Pair __main__ <class '__main__.Pair'>",
        "True True testing.TestIntPair(a=1, b=2)",
        "'testing.TestIntPair' object has no attribute 'zz'",
    ]


def test_registered_subclasses_rename_and_reregistration():
    out = _run_child(
        """
        @pf.register_object("testing.Base")
        class Base(pf.Object):
            pass

        @pf.register_object("testing.Derived")
        class Derived(Base):
            pass

        class Unregistered(Derived):
            pass

        def missing(obj):
            try:
                obj.zz
            except AttributeError as e:
                return str(e)

        for obj in (Base(1), Derived(2, "d"), Unregistered(3, "u")):
            print(missing(obj))
        Derived.__name__ = "Renamed"  # CPython points tp_name at the new name
        print(missing(Derived(4, "r")), Derived.__qualname__)
        pf.register_object("testing.Derived")(Derived)  # registering again: the key again
        print(missing(Derived(5, "r")))
        """
    )
    assert out.splitlines() == [
        "'testing.Base' object has no attribute 'zz'",
        "'testing.Derived' object has no attribute 'zz'",
        "'Unregistered' object has no attribute 'zz'",
        "'Renamed' object has no attribute 'zz' Derived",
        "'testing.Derived' object has no attribute 'zz'",
    ]
