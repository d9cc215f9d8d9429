# Object-reference parameters of typed C++ functions: by value and by const&, called from Python.
"""A ``const T&`` parameter of an object reference type borrows the caller's object for the call
(no reference of its own); a by-value ``T`` owns one. Both keep what they keep past the call,
name the parameter in their errors, and leave reference counts as they found them when the body
throws."""

import re

import pytest
import suite

pf = suite.require("packedfun")
cpp = suite.require("packedfun.cpp")

SOURCE = r"""
#include <packedfun/packedfun.h>

#include <optional>
#include <string>

namespace pf = packedfun;

class CounterObj : public pf::Object {
 public:
  int64_t v = 0;
  explicit CounterObj(int64_t v) : v(v) {}
  PACKEDFUN_DECLARE_OBJECT_INFO_FINAL("test_object_params.Counter", CounterObj, pf::Object);
};
class Counter : public pf::ObjectRef {
 public:
  PACKEDFUN_DEFINE_OBJECT_REF_METHODS(Counter, pf::ObjectRef, CounterObj);
};
class MaybeCounter : public pf::ObjectRef {
 public:
  PACKEDFUN_DEFINE_OBJECT_REF_METHODS_NULLABLE(MaybeCounter, pf::ObjectRef, CounterObj);
};

static std::optional<Counter> kept;

Counter make_counter(int64_t v) { return Counter(pf::make_object<CounterObj>(v)); }
int64_t refs_cref(const Counter& c) { return static_cast<int64_t>(c.use_count()); }
int64_t refs_value(Counter c) { return static_cast<int64_t>(c.use_count()); }
int64_t refs_fn_cref(const pf::Function& f) { return static_cast<int64_t>(f.use_count()); }
int64_t refs_fn_value(pf::Function f) { return static_cast<int64_t>(f.use_count()); }
int64_t keep_cref(const Counter& c) {
  kept = c;
  return static_cast<int64_t>(c.use_count());
}
Counter get_kept() { return *kept; }
void drop_kept() { kept.reset(); }
int64_t throw_cref(const Counter& c) {
  throw pf::Error("ValueError", "throw_cref: " + std::to_string(c->v));
}
int64_t add_cref(const Counter& c, int64_t x) { return c->v + x; }
int64_t maybe_cref(const MaybeCounter& c) { return c.defined() ? c->v : -1; }
int64_t call_cref(const pf::Function& f, int64_t x) { return f(x).cast<int64_t>(); }

// By value: the parameter owns its reference, so a body may move it out and keep it.
class TaggedObj : public pf::Object {
 public:
  int64_t tag = 0;
  explicit TaggedObj(int64_t tag) : tag(tag) {}
  PACKEDFUN_DECLARE_OBJECT_INFO_FINAL("test_object_params.Tagged", TaggedObj, pf::Object);
};
class Tagged : public pf::ObjectRef {
 public:
  PACKEDFUN_DEFINE_OBJECT_REF_METHODS(Tagged, pf::ObjectRef, TaggedObj);
};
static std::optional<Counter> moved;
static std::optional<pf::Function> kept_fn;
int64_t keep_value_moved(Counter c) {
  moved = std::move(c);
  return static_cast<int64_t>(moved->use_count());
}
int64_t moved_refs() { return static_cast<int64_t>(moved->use_count()); }
void drop_moved() { moved.reset(); }
int64_t maybe_value(MaybeCounter c) { return c.defined() ? c->v : -1; }
void keep_fn_moved(pf::Function f) { kept_fn = std::move(f); }
int64_t call_kept_fn(int64_t x) { return (*kept_fn)(x).cast<int64_t>(); }
void drop_kept_fn() { kept_fn.reset(); }
Tagged make_tagged(int64_t tag) { return Tagged(pf::make_object<TaggedObj>(tag)); }
int64_t tag_value(Tagged t) { return t->tag; }
int64_t tag_cref(const Tagged& t) { return t->tag; }
int64_t tag_refs(Tagged t) { return static_cast<int64_t>(t.use_count()); }
"""

FUNCTIONS = [
    "make_counter",
    "refs_cref",
    "refs_value",
    "refs_fn_cref",
    "refs_fn_value",
    "keep_cref",
    "get_kept",
    "drop_kept",
    "throw_cref",
    "add_cref",
    "maybe_cref",
    "call_cref",
    "keep_value_moved",
    "moved_refs",
    "drop_moved",
    "maybe_value",
    "keep_fn_moved",
    "call_kept_fn",
    "drop_kept_fn",
    "make_tagged",
    "tag_value",
    "tag_cref",
    "tag_refs",
]


@pytest.fixture(scope="module")
def m(tmp_path_factory):
    cache = tmp_path_factory.mktemp("object-params-cache")
    return cpp.load_inline(
        "object_params", cpp_sources=SOURCE, functions=FUNCTIONS, build_directory=cache
    )


def test_a_const_ref_parameter_takes_no_reference_of_its_own(m):
    c = m.make_counter(3)
    by_value = m.refs_value(c)
    assert m.refs_cref(c) == by_value - 1  # the caller's references only
    assert m.refs_value(c) == by_value  # nothing gained or lost by either call
    f = pf.convert(lambda x: x)
    assert m.refs_fn_cref(f) == m.refs_fn_value(f) - 1


def test_a_const_ref_parameter_kept_past_the_call_is_an_owned_copy(m):
    c = m.make_counter(5)
    base = m.refs_cref(c)
    assert m.keep_cref(c) == base + 1  # the copy stored in `kept` holds its own reference
    del c
    kept = m.get_kept()
    assert m.add_cref(kept, 1) == 6
    m.drop_kept()
    assert m.refs_cref(kept) == base


def test_a_body_that_throws_leaves_the_count_as_it_was(m):
    c = m.make_counter(7)
    base = m.refs_cref(c)
    for _ in range(3):
        with pytest.raises(ValueError, match="throw_cref: 7"):
            m.throw_cref(c)
    assert m.refs_cref(c) == base
    assert m.add_cref(c, 1) == 8


def test_const_ref_parameters_refuse_other_types_naming_the_parameter(m):
    with pytest.raises(TypeError, match=re.escape("argument 'c'") + ".*expected"):
        m.add_cref(1, 2)
    with pytest.raises(TypeError, match=re.escape("argument 'c'")):
        m.add_cref(None, 2)  # not nullable
    with pytest.raises(TypeError, match=re.escape("argument 'x'")):
        m.add_cref(m.make_counter(1), "x")
    with pytest.raises(TypeError, match=re.escape("argument 'f'")):
        m.call_cref(m.make_counter(1), 2)


def test_nullable_const_ref_parameters_take_none(m):
    assert m.maybe_cref(None) == -1
    assert m.maybe_cref(m.make_counter(4)) == 4


def test_a_const_ref_function_parameter_calls_back(m):
    assert m.call_cref(lambda x: x * 2, 21) == 42
    with pytest.raises(KeyError):
        m.call_cref(lambda x: {}[x], 1)


def test_a_by_value_parameter_moved_out_and_kept_owns_its_reference(m):
    c = m.make_counter(9)
    base = m.refs_cref(c)
    assert m.keep_value_moved(c) == base + 1  # the moved-out parameter's own reference
    del c
    assert m.moved_refs() == 1  # the caller's went with it: the kept one alone holds the object
    m.drop_moved()


def test_a_by_value_parameter_call_leaves_the_count_as_it_was(m):
    c = m.make_counter(2)
    base = m.refs_cref(c)
    for _ in range(1000):
        m.refs_value(c)
    assert m.refs_cref(c) == base
    assert m.maybe_value(None) == -1
    assert m.maybe_value(c) == 2
    with pytest.raises(TypeError, match=re.escape("argument 'c'")):
        m.refs_value(None)  # not nullable


def test_a_by_value_function_parameter_moved_out_outlives_the_callers_references(m):
    def triple(x):
        return 3 * x

    m.keep_fn_moved(triple)
    m.keep_fn_moved(lambda x: x + 100)  # replaces the first: its wrapper is released
    del triple
    assert m.call_kept_fn(1) == 101
    with pytest.raises(TypeError):
        m.keep_fn_moved(m.make_counter(1))
    assert m.call_kept_fn(2) == 102
    m.drop_kept_fn()


def test_objects_of_a_registered_class_travel_as_lone_and_mixed_arguments(m):
    assert m.tag_value(m.make_tagged(10)) == 10  # the native type exists from its first use on

    @pf.register_object("test_object_params.Tagged")
    class Tagged(pf.Object):
        pass

    t = m.make_tagged(11)
    assert type(t) is Tagged
    base = m.tag_refs(t)
    for _ in range(100):
        assert m.tag_value(t) == 11
        assert m.tag_cref(t) == 11
    assert m.tag_refs(t) == base
    with pytest.raises(TypeError, match=re.escape("argument 't'") + ".*Tagged"):
        m.tag_value(m.make_counter(1))  # another object type: refused by the body's check
    assert m.add_cref(m.make_counter(4), 1) == 5
