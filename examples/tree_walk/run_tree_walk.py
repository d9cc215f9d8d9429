# examples/tree_walk: the callback pattern; Python builds a tree, C++ walks it and calls back.
"""Build a tree of ``example.TreeNode`` objects in Python, let C++ walk it.

Usage::

    python examples/tree_walk/run_tree_walk.py [BUILD_DIRECTORY]

``tree_walk.cc`` is compiled with ``packedfun.cpp.load`` (cached after the first run). It defines
the object type ``example.TreeNode`` (fields ``name`` and ``children``, constructor
``__create__``) and the function ``count_nodes(root)``, which visits every node depth-first and,
for each one, calls the global function ``example.visit_node`` that this script registers in
Python (like TVM's ``DmPythonPrint`` example). The script prints every visited name and the count.
"""

from __future__ import annotations

import sys
from pathlib import Path

import packedfun
import packedfun.cpp

HERE = Path(__file__).resolve().parent


def load(build_directory: str | None = None) -> packedfun.Module:
    """Compiles (or reuses) tree_walk.cc; loading it registers example.TreeNode."""
    return packedfun.cpp.load(
        "tree_walk", [str(HERE / "tree_walk.cc")], build_directory=build_directory
    )


def define_tree_node() -> type:
    """The Python class of example.TreeNode (the type exists once the module is loaded)."""

    @packedfun.register_object("example.TreeNode")
    class TreeNode(packedfun.Object):
        def __init__(self, name: str, children: list = ()) -> None:
            self.__init_handle_by_constructor__(TreeNode.__create__, name, list(children))

    return TreeNode


def build_tree(TreeNode: type):  # noqa: N803 - a class passed in
    """root -> (a -> (a1, a2), b -> (b1)): six nodes."""
    a = TreeNode("a", [TreeNode("a1"), TreeNode("a2")])
    b = TreeNode("b", [TreeNode("b1")])
    return TreeNode("root", [a, b])


def main(build_directory: str | None = None) -> tuple[int, list[str]]:
    mod = load(build_directory)
    TreeNode = define_tree_node()  # noqa: N806 - a class
    visited: list[str] = []

    def visit_node(message, node=None, depth=0):
        print(f"{'  ' * depth}{message}")
        if node is not None:
            visited.append(node.name)

    packedfun.register_global_func("example.visit_node", visit_node, override=True)
    count = mod.count_nodes(build_tree(TreeNode))
    print(f"Total number of nodes: {count}")
    print(f"Visited: {', '.join(visited)}")
    return count, visited


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
