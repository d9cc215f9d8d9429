# Stateful property tests: packedfun.List and packedfun.Dict driven side by side with list and dict.
"""Hypothesis runs random sequences of mutations and queries on a native container and on the
Python built-in it imitates; after every step both must hold the same items, and every operation
must give the same result or raise the same exception type."""

from __future__ import annotations

import fuzzing
import packedfun as pf
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

# NaN is left out: its key semantics (no NaN finds another) are pinned by their own tests.
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False),
    st.text(max_size=5),
    st.binary(max_size=5),
)
keys = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-4, 4),
    st.floats(-4, 4, allow_nan=False),
    st.text(max_size=2),
)
indices = st.integers(-8, 8)


def _outcome(call):
    """(result, None) or (None, exception type) of call()."""
    try:
        return call(), None
    except Exception as err:  # the type is compared with the model's
        return None, type(err)


def _plain(v):
    if isinstance(v, (pf.Array, pf.List)):
        return [_plain(x) for x in v]
    return v


class ListMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.native = pf.List()
        self.model: list = []

    def _both(self, op):
        got, got_err = _outcome(lambda: op(self.native))
        want, want_err = _outcome(lambda: op(self.model))
        assert got_err == want_err, (got_err, want_err)
        assert _plain(got) == want or (got is None and want is None), (got, want)

    @rule(value=scalars)
    def append(self, value):
        fuzzing.count("stateful-list-steps")
        self._both(lambda c: c.append(value))

    @rule(index=indices, value=scalars)
    def insert(self, index, value):
        self._both(lambda c: c.insert(index, value))

    @rule(index=indices)
    def pop(self, index):
        self._both(lambda c: c.pop(index))

    @rule()
    def pop_last(self):
        self._both(lambda c: c.pop())

    @rule(index=indices, value=scalars)
    def setitem(self, index, value):
        self._both(lambda c: c.__setitem__(index, value))

    @rule(index=indices)
    def delitem(self, index):
        self._both(lambda c: c.__delitem__(index))

    @rule(index=indices)
    def getitem(self, index):
        self._both(lambda c: c[index])

    @rule(values=st.lists(scalars, max_size=4))
    def extend(self, values):
        self._both(lambda c: c.extend(values))

    @rule(value=scalars)
    def query(self, value):
        self._both(lambda c: value in c)
        self._both(lambda c: c.count(value))
        self._both(lambda c: c.index(value))

    @rule(value=scalars)
    def remove(self, value):
        self._both(lambda c: c.remove(value))

    @rule(start=indices, stop=indices)
    def slice(self, start, stop):
        self._both(lambda c: c[start:stop])

    @precondition(lambda self: len(self.model) < 3)
    @rule()
    def clear(self):
        self._both(lambda c: c.clear())

    @rule()
    def reverse(self):
        self._both(lambda c: c.reverse())

    @invariant()
    def same_items(self):
        assert len(self.native) == len(self.model)
        assert list(self.native) == self.model


class DictMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.native = pf.Dict()
        self.model: dict = {}

    def _both(self, op):
        got, got_err = _outcome(lambda: op(self.native))
        want, want_err = _outcome(lambda: op(self.model))
        assert got_err == want_err, (got_err, want_err)
        assert got == want, (got, want)

    @rule(key=keys, value=scalars)
    def setitem(self, key, value):
        fuzzing.count("stateful-dict-steps")
        self._both(lambda c: c.__setitem__(key, value))

    @rule(key=keys)
    def delitem(self, key):
        self._both(lambda c: c.__delitem__(key))

    @rule(key=keys)
    def lookups(self, key):
        self._both(lambda c: c[key])
        self._both(lambda c: key in c)
        self._both(lambda c: c.get(key, "default"))

    @rule(key=keys)
    def pop(self, key):
        self._both(lambda c: c.pop(key))

    @rule(key=keys, value=scalars)
    def pop_default_and_setdefault(self, key, value):
        self._both(lambda c: c.pop(key, value))
        self._both(lambda c: c.setdefault(key, value))

    @rule(other=st.dictionaries(keys, scalars, max_size=3))
    def update(self, other):
        self._both(lambda c: c.update(other))

    @rule()
    def popitem(self):
        self._both(lambda c: c.popitem())

    @precondition(lambda self: len(self.model) < 3)
    @rule()
    def clear(self):
        self._both(lambda c: c.clear())

    @invariant()
    def same_items(self):
        assert len(self.native) == len(self.model)
        assert list(self.native.items()) == list(self.model.items())
        assert list(self.native) == list(self.model)


_steps = settings(stateful_step_count=30)
TestListAgainstList = _steps(ListMachine).TestCase
TestDictAgainstDict = _steps(DictMachine).TestCase
