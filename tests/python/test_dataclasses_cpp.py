# C++ sees Python-defined types (py_class) as its own: fields by name, IsInstance, methods, ctor.

from typing import Optional

import packedfun as pf
import pytest
import suite
from packedfun.dataclasses import method, py_class

cpp = suite.require("packedfun.cpp")

SOURCE = r"""
#include <packedfun/packedfun.h>

#include <string>
#include <vector>

using namespace packedfun;
namespace refl = packedfun::reflection;

Any get_field(ObjectRef obj, std::string name) { return refl::GetField(obj, name); }
void set_field(ObjectRef obj, std::string name, Any value) { refl::SetField(obj, name, value); }
bool is_instance(ObjectRef obj, std::string key) { return refl::IsInstance(obj, key); }
Any call_method(ObjectRef obj, std::string name, int64_t arg) {
  return refl::CallMethod(obj, name, arg);
}
Any construct(std::string key, Any a, Any b) { return refl::Construct(key, a, b); }

// A pass over a tree of Python-defined nodes: counts the nodes, iteratively.
int64_t count_nodes(ObjectRef root) {
  int64_t n = 0;
  std::vector<ObjectRef> stack{root};
  while (!stack.empty()) {
    ObjectRef node = stack.back();
    stack.pop_back();
    ++n;
    if (refl::IsInstance(node, "test_dcc.Bin")) {
      stack.push_back(refl::GetField(node, "lhs").cast<ObjectRef>());
      stack.push_back(refl::GetField(node, "rhs").cast<ObjectRef>());
    }
  }
  return n;
}

// A C++ type a Python class derives from: default-constructible, so ObjectDef registers its
// layout; `live` counts constructed minus destroyed instances.
int64_t live = 0;
class BaseObj : public Object {
 public:
  int64_t w = 7;
  int64_t r = 3;
  String label = "base";
  BaseObj() { ++live; }
  ~BaseObj() { --live; }
  int64_t Twice() const { return 2 * w; }
  PACKEDFUN_DECLARE_OBJECT_INFO("test_dcc.Base", BaseObj, Object);
};
class FixedObj : public Object {  // no default constructor: no layout, cannot be extended
 public:
  explicit FixedObj(int64_t v) : v(v) {}
  int64_t v;
  PACKEDFUN_DECLARE_OBJECT_INFO("test_dcc.Fixed", FixedObj, Object);
};
PACKEDFUN_STATIC_INIT_BLOCK() {
  refl::ObjectDef<BaseObj>()
      .def(refl::init<>())
      .def_rw("w", &BaseObj::w)
      .def_ro("r", &BaseObj::r)
      .def_rw("label", &BaseObj::label)
      .def("twice", &BaseObj::Twice);
  refl::ObjectDef<FixedObj>().def(refl::init<int64_t>()).def_ro("v", &FixedObj::v);
}
// A C++ type given the dataclass surface in Python by c_class.
class PtObj : public Object {
 public:
  int64_t x, y;
  String tag;
  PtObj(int64_t x, int64_t y, String tag) : x(x), y(y), tag(std::move(tag)) {}
  PACKEDFUN_DECLARE_OBJECT_INFO("test_dcc.Pt", PtObj, Object);
};
PACKEDFUN_STATIC_INIT_BLOCK() {
  using namespace packedfun::literals;
  refl::ObjectDef<PtObj>()
      .def(refl::init<int64_t, int64_t, String>(), {"x", "y"_a = 0, "tag"_a = "p"})
      .def_rw("x", &PtObj::x)
      .def_ro("y", &PtObj::y)
      .def_rw("tag", &PtObj::tag);
}
// Reads the C++ part by a plain C++ downcast: the instance really is a BaseObj.
int64_t base_w(ObjectRef obj) {
  const BaseObj* b = obj.as<BaseObj>();
  return b == nullptr ? -1 : b->w + 100 * static_cast<int64_t>(b->label.size());
}
int64_t live_bases() { return live; }
ObjectRef keep(ObjectRef obj) {
  static ObjectRef kept;
  ObjectRef old = kept;
  kept = obj;
  return old;
}

int64_t sum_x(Array<ObjectRef> items) {
  int64_t s = 0;
  for (const ObjectRef& o : items) s += refl::GetField(o, "x").cast<int64_t>();
  return s;
}

// An enum defined in Python as a parameter and a result: the variant after `v` in `all`.
ObjectRef next_variant(ObjectRef v, Array<ObjectRef> all) {
  if (!refl::IsInstance(v, "packedfun.Enum")) throw Error("TypeError", "not an enum variant");
  std::string name = refl::GetField(v, "_str_index").cast<std::string>();
  for (size_t k = 0; k < all.size(); ++k) {
    if (refl::GetField(all[k], "_str_index").cast<std::string>() == name) {
      return all[(k + 1) % all.size()];
    }
  }
  throw Error("KeyError", name);
}
"""
FUNCS = [
    "get_field",
    "set_field",
    "is_instance",
    "call_method",
    "construct",
    "count_nodes",
    "sum_x",
    "base_w",
    "live_bases",
    "keep",
    "next_variant",
]


@py_class("test_dcc.Node")
class Node(pf.Object):
    pass


@py_class("test_dcc.Leaf")
class Leaf(Node):
    x: int = 0

    @method
    def plus(self, k: int) -> int:
        return self.x + k


@py_class("test_dcc.Bin")
class Bin(Node):
    lhs: Node
    rhs: Node


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    cache = tmp_path_factory.mktemp("dataclasses-cpp")
    return cpp.load_inline(
        "dataclasses_cpp", cpp_sources=SOURCE, functions=FUNCS, build_directory=cache
    )


def test_cpp_reads_and_writes_fields_by_name(mod):
    leaf = Leaf(4)
    assert mod.get_field(leaf, "x") == 4
    mod.set_field(leaf, "x", 9)
    assert leaf.x == 9
    with pytest.raises(TypeError, match="expected int, got str"):
        mod.set_field(leaf, "x", "nine")  # the runtime checks the declared type for C++ too
    with pytest.raises(AttributeError, match="'test_dcc.Leaf' has no field 'nope'"):
        mod.get_field(leaf, "nope")
    assert leaf.x == 9


def test_cpp_checks_type_by_key_and_calls_methods(mod):
    leaf = Leaf(1)
    assert mod.is_instance(leaf, "test_dcc.Leaf") and mod.is_instance(leaf, "test_dcc.Node")
    assert not mod.is_instance(leaf, "test_dcc.Bin") and not mod.is_instance(leaf, "no.Such")
    assert mod.call_method(leaf, "plus", 41) == 42


def test_cpp_constructs_through_the_registered_constructor(mod):
    b = mod.construct("test_dcc.Bin", Leaf(1), Leaf(2))
    assert type(b) is Bin and (b.lhs.x, b.rhs.x) == (1, 2)
    with pytest.raises(TypeError, match=r"test_dcc\.Bin\.lhs"):
        mod.construct("test_dcc.Bin", 1, Leaf(2))


def test_cpp_pass_over_a_tree_and_arrays_cross(mod):
    tree = Bin(Bin(Leaf(1), Leaf(2)), Leaf(3))
    assert mod.count_nodes(tree) == 5
    assert mod.sum_x([Leaf(1), Leaf(2), Leaf(39)]) == 42
    arr = pf.convert([Leaf(5)])
    assert mod.sum_x(arr) == 5 and type(arr[0]) is Leaf


def test_py_class_derives_from_a_cpp_type(mod):
    import gc

    @pf.register_object("test_dcc.Base")
    class Base(pf.Object):
        pass

    @py_class("test_dcc.Derived")
    class Derived(Base):
        extra: int = 1
        name: str = "d"

        @method
        def total(self) -> int:
            return self.w + self.extra

    before = mod.live_bases()
    d = Derived(5, w=9)  # own fields positionally; the C++ fields by keyword, else C++ defaults
    assert (d.extra, d.name, d.w, d.r, d.label) == (5, "d", 9, 3, "base")
    assert isinstance(d, Base) and d.twice() == 18 and d.total() == 14  # C++ and Python methods
    assert mod.live_bases() == before + 1  # the C++ part was constructed
    d.label = "xy"
    assert mod.base_w(d) == 209  # C++ reads it as a BaseObj through a plain downcast
    assert mod.is_instance(d, "test_dcc.Base") and mod.is_instance(d, "test_dcc.Derived")
    assert mod.get_field(d, "w") == 9 and mod.get_field(d, "extra") == 5
    mod.set_field(d, "extra", 6)
    assert d.extra == 6
    with pytest.raises(AttributeError):
        d.r = 1  # read-only in C++
    with pytest.raises(TypeError, match="extra"):
        d.extra = "no"
    b = mod.construct("test_dcc.Derived", 2, "c")  # C++ constructs through __create__
    assert type(b) is Derived and (b.extra, b.name, b.w) == (2, "c", 7)
    mod.keep(d)
    assert mod.keep(None) is d  # identity through C++ as for any py_class
    del d, b
    gc.collect()
    assert mod.live_bases() == before  # the C++ destructor ran for both instances

    @py_class("test_dcc.Derived2")
    class Derived2(Derived):  # a py_class under the py_class under C++
        more: Optional[str] = None

    d2 = Derived2(1, "n", "m", label="z")
    assert (d2.extra, d2.more, d2.label, mod.base_w(d2)) == (1, "m", "z", 107)


def test_cpp_parent_bad_cases(mod):
    @pf.register_object("test_dcc.Fixed")
    class Fixed(pf.Object):
        pass

    @pf.register_object("test_dcc.Base")
    class Base(pf.Object):
        pass

    with pytest.raises(TypeError, match="must register its layout"):

        @py_class("test_dcc.FromFixed")
        class FromFixed(Fixed):
            a: int = 0

    with pytest.raises(ValueError, match="'w' is already a field of 'test_dcc.Base'"):

        @py_class("test_dcc.Clash")
        class Clash(Base):
            w: int = 0

    with pytest.raises(TypeError, match="register_object"):

        class Plain(pf.Object):
            pass

        class NotRegistered(Plain):
            pass

        py_class("test_dcc.NotRegistered")(NotRegistered)
    from packedfun._backend import core

    for key in ("test_dcc.FromFixed", "test_dcc.Clash", "test_dcc.NotRegistered"):
        with pytest.raises(KeyError):
            core.type_key_to_index(key)  # nothing half-registered is left behind


def test_c_class_gives_a_cpp_type_the_dataclass_surface(mod):
    import copy
    import inspect
    import pickle

    from packedfun import dataclasses as dc

    @dc.c_class("test_dcc.Pt", eq=True, order=True, unsafe_hash=True)
    class Pt(pf.Object):
        x: int
        y: int = dc.field(compare=False)  # the C++ default (0) stays the constructor's

    p = Pt(1, 2)
    assert (p.x, p.y, p.tag) == (1, 2, "p") and type(p) is Pt
    assert str(inspect.signature(Pt)).startswith("(x: 'int', y: 'int' = 0, tag:")
    assert [f.name for f in dc.fields(Pt)] == ["x", "y", "tag"] and dc.is_dataclass(p)
    assert [(f.init, f.frozen, f.compare) for f in dc.fields(p)][:2] == [
        (True, False, True),
        (True, True, False),
    ]
    assert p == Pt(1, 5) and p != Pt(2, 2) and Pt(1) < Pt(2) and hash(p) == hash(Pt(1, 7))
    assert repr(p).endswith("(x=1, y=2, tag='p')")
    assert dc.asdict(p) == {"x": 1, "y": 2, "tag": "p"} and dc.astuple(p) == (1, 2, "p")
    q = dc.replace(p, tag="q")
    assert (q.x, q.y, q.tag) == (1, 2, "q") and Pt.__match_args__ == ("x", "y", "tag")
    assert pickle.loads(pickle.dumps(p)) == p and copy.deepcopy(p) == p
    assert mod.get_field(p, "x") == 1 and mod.is_instance(p, "test_dcc.Pt")
    with pytest.raises(AttributeError):
        p.y = 3  # read-only in C++

    @dc.c_class("test_dcc.Pt", frozen=True)
    class FrozenPt(pf.Object):
        pass

    f = FrozenPt(4)
    with pytest.raises(AttributeError, match="frozen"):
        f.x = 5
    assert f.x == 4


def test_c_class_bad_input(mod):
    from packedfun import dataclasses as dc

    with pytest.raises(TypeError, match=r"field 'zz' is annotated but the C\+\+ type"):

        @dc.c_class("test_dcc.Pt")
        class Wrong(pf.Object):
            zz: int

    with pytest.raises(KeyError):

        @dc.c_class("test_dcc.NoSuchType")
        class Missing(pf.Object):
            pass

    with pytest.raises(TypeError, match="subclass of packedfun.Object"):
        dc.c_class("test_dcc.Pt")(int)
    with pytest.raises(ValueError, match="order=True requires eq=True"):

        @dc.c_class("test_dcc.Pt", order=True)
        class Ordered(pf.Object):
            pass


def test_py_class_derives_from_a_c_class(mod):
    from packedfun import dataclasses as dc

    @dc.c_class("test_dcc.Base")
    class Base(pf.Object):
        pass

    @py_class("test_dcc.OnCClass", eq=True)
    class OnCClass(Base):
        k: int = 0

    a = OnCClass(1, w=2)
    assert (a.k, a.w, a.label) == (1, 2, "base") and mod.base_w(a) == 402
    assert [f.name for f in dc.fields(a)] == ["w", "r", "label", "k"]  # the C++ fields first
    assert repr(a).endswith("(w=2, r=3, label='base', k=1)")
    assert a == OnCClass(1, w=2) and a != OnCClass(1, w=3)
    b = dc.replace(a, k=5)
    assert (b.k, b.w) == (5, 2) and OnCClass.__match_args__ == ("k",)


def test_python_defined_enum_as_cpp_parameter_and_result(mod):
    from packedfun.dataclasses import Enum, IntEnum, entry

    class Shade(Enum, type_key="test_dcc.Shade"):
        weight: float
        LIGHT = entry(0.5)
        DARK = entry(2.0)

    class Level(IntEnum, type_key="test_dcc.Level"):
        LOW = 1
        HIGH = 7

    assert mod.is_instance(Shade.DARK, "test_dcc.Shade")
    assert mod.is_instance(Level.LOW, "packedfun.IntEnum")
    assert mod.is_instance(Level.LOW, "packedfun.Enum")
    assert mod.get_field(Level.HIGH, "_int_index") == 7
    assert mod.get_field(Shade.DARK, "_str_index") == "DARK"
    assert mod.get_field(Shade.DARK, "weight") == 2.0
    # The variant C++ returns is the class's own object.
    assert mod.next_variant(Shade.LIGHT, list(Shade)) is Shade.DARK
    assert mod.next_variant(Level.HIGH, list(Level)) is Level.LOW
    with pytest.raises(AttributeError, match="no writable field '_int_index'"):
        mod.set_field(Level.LOW, "_int_index", 3)  # the indices are frozen, for C++ too
    with pytest.raises(TypeError, match="not an enum variant"):
        mod.next_variant(Leaf(1), list(Level))
