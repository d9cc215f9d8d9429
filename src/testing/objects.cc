// The "testing.*" object types and container functions behind packedfun.testing.
#include <packedfun/packedfun.h>

#include <atomic>
#include <functional>
#include <string>
#include <utility>

namespace packedfun {
namespace testing {
namespace {
using namespace ::packedfun::literals;  // NOLINT(build/namespaces): "b"_a in argument lists

std::atomic<int64_t> live_objects{0};

/*! Counts the live testing objects, so tests can prove each is freed exactly once. */
struct LiveCounter {
  LiveCounter() noexcept { live_objects.fetch_add(1, std::memory_order_relaxed); }
  LiveCounter(const LiveCounter&) = delete;
  ~LiveCounter() { live_objects.fetch_sub(1, std::memory_order_relaxed); }
};

// ---- TestIntPair: the Python guide's example object ---------------------------------------------

class TestIntPairObj : public Object {
 public:
  int64_t a;
  int64_t b;
  LiveCounter counter;

  TestIntPairObj(int64_t a, int64_t b) : a(a), b(b) {}
  int64_t Sum() const { return a + b; }

  PACKEDFUN_DECLARE_OBJECT_INFO_FINAL("testing.TestIntPair", TestIntPairObj, Object);
};

class TestIntPair : public ObjectRef {
 public:
  explicit TestIntPair(int64_t a, int64_t b) { data_ = make_object<TestIntPairObj>(a, b); }
  PACKEDFUN_DEFINE_OBJECT_REF_METHODS_NULLABLE(TestIntPair, ObjectRef, TestIntPairObj);
};

PACKEDFUN_STATIC_INIT_BLOCK() {
  reflection::ObjectDef<TestIntPairObj>("A pair of integers.")
      .def_ro("a", &TestIntPairObj::a, "the first integer")
      .def_ro("b", &TestIntPairObj::b, "the second integer")
      .def("sum", &TestIntPairObj::Sum, "a + b")
      .gil(GILPolicy::kHold)
      .def_static(
          "__create__", [](int64_t a, int64_t b) { return TestIntPair(a, b); }, {"a", "b"_a = 0},
          "TestIntPair(a, b=0)")
      .gil(GILPolicy::kHold);
}

// ---- a hierarchy: Base -> Derived -> MoreDerived ----------------------------------------------

class BaseObj : public Object {
 public:
  int64_t value = 0;
  LiveCounter counter;
  explicit BaseObj(int64_t value) : value(value) {}
  PACKEDFUN_DECLARE_OBJECT_INFO("testing.Base", BaseObj, Object);
};

class DerivedObj : public BaseObj {
 public:
  String label;
  DerivedObj(int64_t value, String label) : BaseObj(value), label(std::move(label)) {}
  PACKEDFUN_DECLARE_OBJECT_INFO("testing.Derived", DerivedObj, BaseObj);
};

/*! Never registered in Python: arrives there as a Derived, its own field still readable. */
class MoreDerivedObj : public DerivedObj {
 public:
  double extra;
  MoreDerivedObj(int64_t value, String label, double extra)
      : DerivedObj(value, std::move(label)), extra(extra) {}
  PACKEDFUN_DECLARE_OBJECT_INFO_FINAL("testing.MoreDerived", MoreDerivedObj, DerivedObj);
};

class Base : public ObjectRef {
 public:
  PACKEDFUN_DEFINE_OBJECT_REF_METHODS_NULLABLE(Base, ObjectRef, BaseObj);
};
class Derived : public Base {
 public:
  PACKEDFUN_DEFINE_OBJECT_REF_METHODS_NULLABLE(Derived, Base, DerivedObj);
};

/*! The type key of the object, read through the C ABI (so it is the most derived one). */
String TypeKeyOfBase(Base self) { return String(detail::TypeKeyOf(self.type_index())); }

PACKEDFUN_STATIC_INIT_BLOCK() {
  reflection::ObjectDef<BaseObj>("Root of the testing hierarchy.")
      .def_ro("value", &BaseObj::value, "an integer")
      .def("type_key", &TypeKeyOfBase, "the object's most derived type key")
      .gil(GILPolicy::kHold)
      .def_static(
          "__create__", [](int64_t v) { return Base(make_object<BaseObj>(v)); }, "Base(value)")
      .gil(GILPolicy::kHold);
  reflection::ObjectDef<DerivedObj>("Derives testing.Base.")
      .def_ro("label", &DerivedObj::label, "a string")
      .def_static(
          "__create__",
          [](int64_t v, String label) { return Derived(make_object<DerivedObj>(v, label)); },
          "Derived(value, label)");
  reflection::ObjectDef<MoreDerivedObj>("Derives testing.Derived; not registered in Python.")
      .def_ro("extra", &MoreDerivedObj::extra, "a float");
}

// ---- mutable fields (def_rw) --------------------------------------------------------------------

class MutableObj : public Object {
 public:
  int64_t count = 0;
  double ratio = 0.0;
  String name;
  Base child;  // nullable reference
  int32_t small = 0;
  LiveCounter counter;
  PACKEDFUN_DECLARE_OBJECT_INFO_FINAL("testing.Mutable", MutableObj, Object);
};

class Mutable : public ObjectRef {
 public:
  PACKEDFUN_DEFINE_OBJECT_REF_METHODS_NULLABLE(Mutable, ObjectRef, MutableObj);
};

PACKEDFUN_STATIC_INIT_BLOCK() {
  reflection::ObjectDef<MutableObj>("Read-write fields of several types.")
      .def_rw("count", &MutableObj::count, "int")
      .def_rw("ratio", &MutableObj::ratio, "float")
      .def_rw("name", &MutableObj::name, "str")
      .def_rw("child", &MutableObj::child, "testing.Base or None")
      .def_rw("small", &MutableObj::small, "int32 (OverflowError outside its range)")
      .def_static(
          "__create__",
          [](int64_t count, String name) {
            ObjectPtr<MutableObj> p = make_object<MutableObj>();
            p->count = count;
            p->name = std::move(name);
            return Mutable(std::move(p));
          },
          "Mutable(count, name)");
}

// ---- a tree of nodes (examples/tree_walk) -------------------------------------------------------

class TreeNode;

class TreeNodeObj : public Object {
 public:
  String name;
  Array<TreeNode> children;
  LiveCounter counter;
  TreeNodeObj(String name, Array<TreeNode> children)
      : name(std::move(name)), children(std::move(children)) {}
  PACKEDFUN_DECLARE_OBJECT_INFO_FINAL("testing.TreeNode", TreeNodeObj, Object);
};

class TreeNode : public ObjectRef {
 public:
  PACKEDFUN_DEFINE_OBJECT_REF_METHODS(TreeNode, ObjectRef, TreeNodeObj);
};

int64_t CountNodes(const TreeNode& node) {
  int64_t n = 1;
  for (TreeNode child : node->children) n += CountNodes(child);
  return n;
}

PACKEDFUN_STATIC_INIT_BLOCK() {
  reflection::ObjectDef<TreeNodeObj>("A named node with child nodes.")
      .def_ro("name", &TreeNodeObj::name, "the node's name")
      .def_ro("children", &TreeNodeObj::children, "the child nodes")
      .def_static(
          "__create__",
          [](String name, Array<TreeNode> children) {
            return TreeNode(make_object<TreeNodeObj>(std::move(name), std::move(children)));
          },
          "TreeNode(name, children)");
}

// ---- functions ----------------------------------------------------------------------------------

Array<int64_t> MakeArray(int64_t n) {
  if (n < 0) throw Error("ValueError", "testing.make_array: n must be >= 0");
  std::vector<int64_t> items(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) items[static_cast<size_t>(i)] = i;
  return Array<int64_t>(items);
}

int64_t ArraySum(Array<int64_t> arr) {
  int64_t total = 0;
  for (int64_t x : arr) total += x;
  return total;
}

Any MapGet(Map<String, Any> map, String key) { return map.at(key); }

List<Any> ListAppend(List<Any> list, Any x) {
  list.push_back(x);
  return list;
}

Dict<String, Any> DictSet(Dict<String, Any> dict, String key, Any value) {
  dict.Set(key, value);
  return dict;
}

PACKEDFUN_REGISTER_GLOBAL("testing.object_live_count").set_body_typed([]() -> int64_t {
  return live_objects.load(std::memory_order_relaxed);
});
PACKEDFUN_REGISTER_GLOBAL("testing.make_array").set_body_typed(MakeArray);
PACKEDFUN_REGISTER_GLOBAL("testing.array_sum").set_body_typed(ArraySum);
PACKEDFUN_REGISTER_GLOBAL("testing.make_map").set_body_typed([]() {
  return Map<String, Any>({{"a", Any(1)}, {"b", Any(2.5)}, {"c", Any(String("three"))}});
});
PACKEDFUN_REGISTER_GLOBAL("testing.map_get").set_body_typed(MapGet);
PACKEDFUN_REGISTER_GLOBAL("testing.make_list").set_body_typed([](int64_t n) {
  List<Any> list;
  for (int64_t i = 0; i < n; ++i) list.push_back(Any(i));
  return list;
});
PACKEDFUN_REGISTER_GLOBAL("testing.list_append").set_body_typed(ListAppend);
PACKEDFUN_REGISTER_GLOBAL("testing.make_dict").set_body_typed([]() {
  return Dict<String, Any>({{"x", Any(1)}, {"y", Any(String("why"))}});
});
PACKEDFUN_REGISTER_GLOBAL("testing.dict_set").set_body_typed(DictSet);
PACKEDFUN_REGISTER_GLOBAL("testing.make_shape").set_body_typed([](Shape s) { return s; });
PACKEDFUN_REGISTER_GLOBAL("testing.shape_numel").set_body_typed([](Shape s) { return s.numel(); });
PACKEDFUN_REGISTER_GLOBAL("testing.make_more_derived")
    .set_body_typed([](int64_t v, String label, double extra) {
      return Base(make_object<MoreDerivedObj>(v, std::move(label), extra));
    });
PACKEDFUN_REGISTER_GLOBAL("testing.tree_count").set_body_typed(CountNodes);
PACKEDFUN_REGISTER_GLOBAL("testing.make_tree").set_body_typed([](int64_t depth, int64_t fanout) {
  std::function<TreeNode(int64_t, std::string)> build = [&](int64_t d, std::string name) {
    std::vector<TreeNode> kids;
    for (int64_t i = 0; d > 0 && i < fanout; ++i) {
      kids.push_back(build(d - 1, name + "." + std::to_string(i)));
    }
    return TreeNode(make_object<TreeNodeObj>(String(name), Array<TreeNode>(kids)));
  };
  return build(depth, "root");
});

}  // namespace
}  // namespace testing
}  // namespace packedfun
