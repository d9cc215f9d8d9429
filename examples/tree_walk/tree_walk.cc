// Seed 004's CallNodeCounter / DmPythonPrint pattern: C++ walks a tree built in Python and calls
// a Python-registered global function for every node it visits.
#include <packedfun/packedfun.h>

#include <cstdint>
#include <string>
#include <utility>

namespace example {

class TreeNode;

/*! A named node with children; built from Python through the reflected `__create__`. */
class TreeNodeObj : public packedfun::Object {
 public:
  packedfun::String name;
  packedfun::Array<TreeNode> children;
  TreeNodeObj(packedfun::String name, packedfun::Array<TreeNode> children)
      : name(std::move(name)), children(std::move(children)) {}
  PACKEDFUN_DECLARE_OBJECT_INFO_FINAL("example.TreeNode", TreeNodeObj, packedfun::Object);
};

class TreeNode : public packedfun::ObjectRef {
 public:
  PACKEDFUN_DEFINE_OBJECT_REF_METHODS(TreeNode, packedfun::ObjectRef, TreeNodeObj);
};

PACKEDFUN_STATIC_INIT_BLOCK() {
  packedfun::reflection::ObjectDef<TreeNodeObj>("A named node with child nodes.")
      .def_ro("name", &TreeNodeObj::name, "the node's name")
      .def_ro("children", &TreeNodeObj::children, "the child nodes")
      .def_static(
          "__create__",
          [](packedfun::String name, packedfun::Array<TreeNode> children) {
            return TreeNode(
                packedfun::make_object<TreeNodeObj>(std::move(name), std::move(children)));
          },
          "TreeNode(name, children)");
}

/*! Visits nodes depth-first (pre-order), reporting each one to the callback. */
class NodeCounter {
 public:
  explicit NodeCounter(packedfun::Function visit) : visit_(std::move(visit)) {}

  static int64_t Count(const TreeNode& root) {
    // Looked up by name at call time, as TVM code does with Registry::Get("DmPythonPrint").
    NodeCounter counter(packedfun::Function::GetGlobalRequired("example.visit_node"));
    counter.visit_("Begin of visit");
    counter.Visit(root, 0);
    counter.visit_("End of visit");
    return counter.count_;
  }

 private:
  void Visit(const TreeNode& node, int64_t depth) {
    ++count_;
    visit_(std::string("Find node: ") + node->name.str(), node, depth);
    for (TreeNode child : node->children) Visit(child, depth + 1);
  }

  packedfun::Function visit_;
  int64_t count_ = 0;
};

int64_t CountNodes(TreeNode root) { return NodeCounter::Count(root); }

}  // namespace example

PACKEDFUN_REGISTER_GLOBAL("example.count_nodes")
    .set_body_typed(example::CountNodes)
    .describe(
        "Walks the tree, calls example.visit_node(message, node, depth) per node, "
        "returns the number of nodes.");
PACKEDFUN_DLL_EXPORT_TYPED_FUNC(count_nodes, example::CountNodes);
PACKEDFUN_DLL_EXPORT_DOC(count_nodes, "Walks the tree calling example.visit_node; the node count.");
