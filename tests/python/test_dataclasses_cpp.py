# C++ sees Python-defined types (py_class) as its own: fields by name, IsInstance, methods, ctor.

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

int64_t sum_x(Array<ObjectRef> items) {
  int64_t s = 0;
  for (const ObjectRef& o : items) s += refl::GetField(o, "x").cast<int64_t>();
  return s;
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
