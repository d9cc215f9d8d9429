"""Containers changed by their own elements' conversion, and list/tuple/dict subclasses.

A container is read as it was when its conversion began (a copy of its items is taken before the
first element whose conversion runs Python code); a size change while its elements convert raises
RuntimeError after the element that made it; unfilled slots are never read. Subclasses are read
from their storage, never through overridden methods. The same on both backends (the suite's
ctypes run covers the second).
"""

import gc
import subprocess
import sys

import packedfun as pf
import pytest
from packedfun import testing

CHANGED = r"(list|dict) changed size during conversion"


class Clears:
    """A number whose conversion clears (or shrinks, or grows) the container holding it."""

    def __init__(self, how="clear", kind="index"):
        self.owner, self.how, self.kind = None, how, kind

    def _mutate(self):
        o = self.owner
        if self.how == "clear":
            o.clear()
        elif self.how == "shrink":
            o.popitem() if isinstance(o, dict) else o.pop()
        elif self.how == "grow":
            o.update({"zz": 1}) if isinstance(o, dict) else o.append(1)

    def __index__(self):
        self._mutate()
        return 3

    def __float__(self):
        self._mutate()
        return 3.0


def _dict(how, kind="index"):
    x = Clears(how, kind)
    d = {"a": 1, "b": x, "c": 5, "a long key, over seven bytes": "a long value, viewed"}
    x.owner = d
    return d


def _list(how, kind="index"):
    x = Clears(how, kind)
    lst = [1, "a long str, viewed not copied", x, 5, 2.5]
    x.owner = lst
    return lst


@pytest.mark.parametrize("how", ["clear", "shrink", "grow"])
@pytest.mark.parametrize("make", [_dict, _list])
def test_a_container_changed_by_an_element_raises_runtime_error(make, how):
    # _core built a Map with a garbage key (<packedfun.Object <type 1690668704>>) from the unfilled
    # slots a cleared dict left, or failed with "cannot convert a value of type index -208...".
    for build in (pf.convert, pf.Array if make is _list else pf.Map):
        if build is not pf.convert:
            continue  # constructors convert a copy: covered below
        with pytest.raises(RuntimeError, match=CHANGED):
            build(make(how))
    for nested in (lambda v: [v], lambda v: {"k": v}, lambda v: ([0, v], 1)):
        with pytest.raises(RuntimeError, match=CHANGED):
            pf.convert(nested(make(how)))


@pytest.mark.parametrize("make", [_dict, _list])
def test_an_argument_changed_by_an_element_raises_runtime_error(make):
    for how in ("clear", "shrink", "grow"):
        v = make(how)
        # arguments keep a number as Opaque unless a parameter asks for one: nest it in the
        # typed echo for ints/floats and check that nothing is read from an unfilled slot
        try:
            out = testing.echo(v)
        except RuntimeError as exc:
            assert "changed size during conversion" in str(exc)
        else:
            assert len(out) in (0, 4, 5)


class Replaces:
    """Replaces the list's str items with new ones (the originals lose their last reference)."""

    def __init__(self, owner):
        self.owner = owner

    def __index__(self):
        for i, item in enumerate(self.owner):
            if isinstance(item, str):
                self.owner[i] = "replaced " * 3 + str(i)
        gc.collect()
        return 7


def test_items_replaced_in_place_are_read_as_they_were():
    # The str views taken before the __index__ ran borrowed strs the list then dropped.
    for kind in (pf.convert, pf.List, pf.Array):
        lst = ["".join(["original, longer than seven ", str(i)]) for i in range(3)]
        lst.append(None)
        lst[3] = Replaces(lst)
        lst.append("".join(["after ", "the replacer ", "x" * 20]))
        out = kind(lst)
        assert list(out)[:3] == [f"original, longer than seven {i}" for i in range(3)]
        assert list(out)[4] == "after the replacer " + "x" * 20
    d = {"".join(["a key longer than seven ", str(i)]): "v" * 9 + str(i) for i in range(3)}

    class ReplacesValues:
        def __index__(self):
            for k in list(d):
                d[k] = "new value " + k
            gc.collect()
            return 1

    d["n"] = ReplacesValues()
    got = pf.convert(d)
    assert [got[k] for k in list(got)[:3]] == ["v" * 9 + str(i) for i in range(3)]


class MutatingKey:
    """A dict key whose __eq__/__hash__ clear the dict holding it."""

    def __init__(self):
        self.owner = None

    def __hash__(self):
        if self.owner is not None:
            self.owner.clear()
        return 1

    def __eq__(self, other):
        if self.owner is not None:
            self.owner.clear()
        return self is other


def test_a_key_whose_eq_or_hash_changes_the_dict_is_no_crash():
    key = MutatingKey()
    d = {"a": 1, key: 2, "c": "x" * 30}
    key.owner = d
    try:
        out = pf.convert(d)
    except (RuntimeError, TypeError) as exc:  # refused as a key, or changed size
        assert "changed size" in str(exc) or "key" in str(exc)
    else:
        assert len(out) == 3


class ClearingKey:
    """Keys that collide, whose comparison empties the dict being copied."""

    def __init__(self):
        self.owner = None

    def __hash__(self):
        return 11

    def __eq__(self, other):
        if self.owner is not None:
            self.owner.clear()
        return self is other


@pytest.mark.parametrize("ctor", [pf.Map, pf.Dict])
def test_a_constructor_copying_a_dict_changed_by_its_keys_raises_runtime_error(ctor):
    """The dict's own error, as dict(d) raises it: the copy never retries the dict as pairs."""
    first, second = ClearingKey(), ClearingKey()
    d = {"gone": 0, first: 1, second: 2, "c": 3}
    del d["gone"]  # a deleted slot: dict's copy then inserts entry by entry, comparing the keys
    first.owner = second.owner = d
    with pytest.raises(RuntimeError, match="changed size|mutated"):
        ctor(d)
    with pytest.raises(TypeError, match="cannot convert dictionary update sequence element"):
        ctor([1, 2])  # not a mapping: read as pairs, as dict([1, 2]) is


class Shadow(list):
    """A list subclass whose methods disagree with its storage."""

    def __iter__(self):
        return iter([1000])

    def __len__(self):
        return 1

    def __getitem__(self, i):
        return 1000


class ShadowTuple(tuple):
    def __iter__(self):
        return iter([1000])

    def __len__(self):
        return 1

    def __getitem__(self, i):
        return 1000


class ShadowDict(dict):
    def items(self):
        return [("x", 1000)]

    def __iter__(self):
        return iter(["x"])

    def __len__(self):
        return 1


def test_subclasses_are_read_from_their_storage():
    # _core read the storage ([1, 2, 3]) and ctypes the methods ([1000]): one rule, storage.
    for value, expected in (
        (Shadow([1, 2, 3]), [1, 2, 3]),
        (ShadowTuple((1, 2, 3)), [1, 2, 3]),
        ([Shadow([4, 5])], [[4, 5]]),
    ):
        assert pf.convert(value) == expected
        assert testing.echo(value) == expected
    d = ShadowDict(a=1, b=2)
    assert dict(pf.convert(d)) == {"a": 1, "b": 2}
    assert dict(testing.echo(d)) == {"a": 1, "b": 2}


def test_a_callback_result_changed_by_its_own_conversion_raises():
    def result():
        return _list("clear")

    with pytest.raises(RuntimeError, match=CHANGED):
        testing.apply(result)


def test_mutation_during_conversion_never_crashes_a_child():
    # A child process: the crash this pins read freed memory; a dying child fails the test.
    script = r"""
import gc, packedfun as pf
from packedfun import testing
class C:
    def __init__(s, o): s.o = o
    def __index__(s):
        s.o.clear(); gc.collect(); return 1
for n in (3, 20, 300):
    for make in (list, dict):
        items = ["s" * 40 + str(i) for i in range(n)]
        v = list(items) if make is list else {k: k for k in items}
        c = C(v)
        if make is list:
            v.insert(n // 2, c)
        else:
            v["c"] = c
        del items
        for f in (pf.convert, testing.echo, pf.Array if make is list else pf.Map):
            try:
                f(v)
            except RuntimeError:
                pass
            v = list(["s" * 40 + str(i) for i in range(n)]) if make is list else {
                "s" * 40 + str(i): "s" * 40 for i in range(n)}
            c = C(v)
            if make is list:
                v.insert(n // 2, c)
            else:
                v["c"] = c
print("ok")
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-3000:]


def test_a_shape_dimension_out_of_range_names_shape_and_int64():
    # was a bare "OverflowError: int too big to convert"
    with pytest.raises(OverflowError, match=r"^Shape: dimension 1: int too large for int64$"):
        pf.Shape([1, 2**63])
    with pytest.raises(OverflowError, match=r"^Shape: dimension 0: int too small for int64$"):
        pf.Shape([-(2**63) - 1])
    assert list(pf.Shape([2**63 - 1])) == [2**63 - 1]
