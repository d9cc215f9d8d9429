# Runs examples/tree_walk (seed 004): C++ walks a Python-built tree, calling back per node.
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import packedfun
import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "tree_walk" / "run_tree_walk.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("run_tree_walk", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_walk_counts_and_calls_back_in_order(example, capsys):
    count, visited = example.main()
    assert count == 6
    assert visited == ["root", "a", "a1", "a2", "b", "b1"]
    out = capsys.readouterr().out
    assert out.startswith("Begin of visit\n") and "    Find node: a2\n" in out
    assert "Total number of nodes: 6" in out


def test_nodes_reach_the_callback_as_the_registered_class(example):
    mod = example.load()
    tree_node = example.define_tree_node()
    seen = []

    def visit_node(message, node=None, depth=0):
        if node is not None:
            seen.append((type(node), node.name, depth, len(node.children)))

    packedfun.register_global_func("example.visit_node", visit_node, override=True)
    leaf = tree_node("leaf")
    assert mod.count_nodes(tree_node("top", [leaf, leaf])) == 3  # a shared child is visited twice
    assert seen == [(tree_node, "top", 0, 2), (tree_node, "leaf", 1, 0), (tree_node, "leaf", 1, 0)]


def test_errors_in_the_callback_propagate(example):
    mod = example.load()
    tree_node = example.define_tree_node()

    def visit_node(message, node=None, depth=0):
        if node is not None and node.name == "bad":
            raise KeyError("bad node")

    packedfun.register_global_func("example.visit_node", visit_node, override=True)
    with pytest.raises(KeyError, match="bad node"):
        mod.count_nodes(tree_node("root", [tree_node("bad")]))


def test_script_runs():
    # The child imports the same packedfun this test runs on (installed or in-tree).
    package_parent = str(Path(packedfun.__file__).resolve().parents[1])
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(filter(None, [package_parent, os.environ.get("PYTHONPATH")])),
    )
    out = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, env=env,
                         timeout=600, check=True).stdout  # fmt: skip
    assert "Total number of nodes: 6" in out and "Visited: root, a, a1, a2, b, b1" in out
