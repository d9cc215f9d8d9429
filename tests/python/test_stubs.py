# Tests that python/packedfun/_core.pyi describes the compiled module packedfun._core truthfully.
import ast
import os

import packedfun
import suite

core = suite.require("packedfun._core")
STUB = os.path.join(os.path.dirname(packedfun.__file__), "_core.pyi")


def stub_tree():
    with open(STUB, encoding="utf-8") as f:
        return ast.parse(f.read())


def top_level_names(tree):
    names = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
    return names


def test_stub_names_match_module():
    stubbed = set(top_level_names(stub_tree()))
    public = {name for name in dir(core) if not name.startswith("_")}
    assert stubbed == public


def test_stub_class_members_exist():
    for name, node in top_level_names(stub_tree()).items():
        if not isinstance(node, ast.ClassDef):
            continue
        cls = getattr(core, name)
        for member in node.body:
            if isinstance(member, ast.FunctionDef):
                assert hasattr(cls, member.name), f"{name}.{member.name}"
            elif isinstance(member, ast.AnnAssign):
                assert hasattr(cls, member.target.id), f"{name}.{member.target.id}"
