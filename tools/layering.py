# Measures the Python package's layering: import circles, hidden imports, messages written twice.
"""Static measures of how ``python/packedfun`` is layered.

Run ``python tools/layering.py`` for the figures; ``tests/python/test_layering.py`` asserts them.

The import graph is read without importing anything: every ``import`` / ``from ... import`` of
every ``python/packedfun/**.py`` file (at any depth: a function-level import is still an edge),
plus the compiled binding ``packedfun._core``, whose edges are the ``PyImport_ImportModule("...")``
calls in ``src/python/*.c``. A circle is a strongly connected component of more than one module.

Messages in two languages: a string literal (documentation left out) of the compiled binding
(``src/python/*.c``) and one of the ctypes binding (``python/packedfun/_ctypes/*.py``, f-strings
with their fields blanked) that share a run of words (at least five words, or a whole literal of at
least three) are one message written twice.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "python" / "packedfun"
C_BINDING = ROOT / "src" / "python"
CORE = "packedfun._core"

#: Function-level imports of the package's own modules that are allowed: each a documented lazy
#: load (module, imported module) with the reason. Keep this list short and every reason true.
LAZY_IMPORTS: dict[tuple[str, str], str] = {
    # The C++ JIT pulls in the compiler driver, hashing, the build cache: only load_inline needs it.
    ("packedfun.module", "packedfun.cpp._cache"): "C++ JIT build cache, loaded by load_inline only",
    ("packedfun.cpp", "packedfun"): "cpp sits above the package; load_inline reaches it lazily",
    # pyelftools is an optional dependency, loaded when a native backtrace is first symbolized.
    (
        "packedfun.error",
        "packedfun._native_frames",
    ): "symbolizer (pyelftools), first backtrace only",
    # stubgen is a command-line tool run against an installed package.
    ("packedfun.stubgen", "packedfun._backend"): "stubgen is a tool: it imports on demand",
    ("packedfun.stubgen", "packedfun._rules.signature"): "stubgen is a tool: it imports on demand",
    ("packedfun.stubgen", "packedfun.registry"): "stubgen is a tool: it imports on demand",
    ("packedfun.stubgen", "packedfun.module"): "stubgen is a tool: it imports on demand",
    ("packedfun.stubgen", "packedfun._py_class"): "stubgen is a tool: it imports on demand",
    # cpp's build helpers answer paths without loading the runtime; they load it only when asked.
    ("packedfun.cpp._package", "packedfun._backend"): "runtime loaded only for its path/ABI",
    # The import hook is installed before packedfun may be imported (sitecustomize, .pth).
    ("packedfun.tvm_ffi_compat", "packedfun"): "the tvm_ffi alias imports packedfun when installed",
    ("packedfun.libinfo", "packedfun.module"): "libinfo is imported by extensions' packages first",
    (
        "packedfun",
        "packedfun.dataclasses",
    ): "tvm-ffi's top-level `method`: dataclasses on first use",
    (
        "packedfun.tvm_ffi_compat",
        "packedfun.module",
    ): "the hook imports no runtime at interpreter start; libtvm_ffi's path only when asked",
}

#: Modules that may import lazily whatever they need: the lazy-namespace hook.
LAZY_HOOKS = {"packedfun._lazy"}


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _resolve(mod: str, is_pkg: bool, level: int, target: str | None) -> str:
    if level == 0:
        return target or ""
    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def _in_function(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return True
    return False


def _type_checking_only(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def imports(modules: dict[str, Path]) -> list[tuple[str, str, int, bool]]:
    """Every (importer, imported, line, function_level) edge between the package's modules."""
    edges = []
    for mod, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        parents = {c: p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(tree):
            if _type_checking_only(node, parents):
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(mod, is_pkg, node.level, node.module)
                for a in node.names:
                    sub = f"{base}.{a.name}"
                    targets.append(sub if sub in modules or sub == CORE else base)
            for t in targets:
                # `import a.b.c` names a.b.c; keep the longest prefix that is one of ours.
                while t and t not in modules and t != CORE:
                    t = t.rpartition(".")[0]
                if t and t != mod:
                    edges.append((mod, t, node.lineno, _in_function(node, parents)))
    for c in sorted(C_BINDING.glob("*.c")):
        for m in re.finditer(r'PyImport_ImportModule\("(packedfun[\w.]*)"\)', c.read_text()):
            edges.append((CORE, m.group(1), 0, False))
    return edges


def circles(edges) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    graph: dict[str, set[str]] = {}
    for a, b, _, _ in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def within_one_backend(comp: list[str]) -> bool:
    """A circle among one backend's own files (the ctypes backend's modules) is its own business."""
    return all(m.startswith("packedfun._ctypes.") for m in comp)


def function_level_imports(edges):
    return [e for e in edges if e[3]]


def unexplained_function_level_imports(edges):
    return [
        e
        for e in function_level_imports(edges)
        if e[0] not in LAZY_HOOKS and (e[0], e[1]) not in LAZY_IMPORTS
    ]


# ---- messages written in two languages -------------------------------------------------------

_C_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)


def _c_literals() -> list[tuple[str, str]]:
    """String literals of the compiled binding, adjacent literals joined (file, text)."""
    out = []
    for path in sorted(C_BINDING.glob("*.[ch]")):
        src = re.sub(r"/\*.*?\*/|//[^\n]*", " ", path.read_text(), flags=re.S)
        src = re.sub(r"^\s*#\s*include[^\n]*", " ", src, flags=re.M)
        # Join "a" "b" (C's adjacent literal concatenation) before reading them.
        src = re.sub(r'"\s+"', "", src)
        for m in _C_STRING.finditer(src):
            before, after = src[: m.start()].rstrip(), src[m.end() :]
            if re.match(r"\s*(,\s*(NULL|0)\s*)?}", after) and before.endswith(","):
                continue  # documentation: the last text field of a method/getset/member entry
            if re.search(r"\.(tp_|m_)?doc\s*=$|PyDoc_STR(VAR\(\w+,)?\s*\($", before):
                continue  # documentation of a type or module
            text = re.sub(r"%[-+ #0-9.]*[a-zA-Z]+", " ", m.group(1))
            out.append((path.name, text))
    return out


def _py_literals(paths) -> list[tuple[str, str]]:
    out = []
    for path in paths:
        tree = ast.parse(path.read_text())
        docs = {
            id(n.body[0].value)
            for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and n.body
            and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if id(node) in docs:
                continue  # documentation, not a message
            if isinstance(node, ast.JoinedStr):
                text = "".join(v.value if isinstance(v, ast.Constant) else " " for v in node.values)
                out.append((path.name, str(text)))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                out.append((path.name, node.value))
    return out


def _shared(a: list[str], b: list[str], run: int = 5) -> str | None:
    grams = {tuple(a[i : i + run]) for i in range(len(a) - run + 1)}
    for i in range(len(b) - run + 1):
        if tuple(b[i : i + run]) in grams:
            return " ".join(b[i : i + run])
    if 3 <= len(a) < run and a == b:
        return " ".join(a)
    return None


def messages_in_two_languages() -> list[tuple[str, str, str]]:
    """(C file, ctypes file, shared words) for each C literal also written in the ctypes binding."""
    py = [(f, _words(t)) for f, t in _py_literals(sorted((PACKAGE / "_ctypes").glob("*.py")))]
    py = [(f, w) for f, w in py if len(w) >= 3]
    found = []
    for cfile, text in _c_literals():
        cw = _words(text)
        if len(cw) < 3:
            continue
        for pfile, pw in py:
            hit = _shared(cw, pw)
            if hit:
                found.append((cfile, pfile, hit))
                break
    return found


def main() -> int:
    modules = package_modules()
    edges = imports(modules)
    comps = circles(edges)
    flat = function_level_imports(edges)
    bad = unexplained_function_level_imports(edges)
    msgs = messages_in_two_languages()
    verbose = "-v" in sys.argv
    print(f"modules: {len(modules) + 1} (with {CORE}), import edges: {len(edges)}")
    print(f"circles: {len(comps)}, files in them: {sum(map(len, comps))}")
    for c in comps:
        tag = " (one backend's own)" if within_one_backend(c) else ""
        print(f"  {len(c)}{tag}: {' '.join(c)}")
    print(
        f"function-level imports of the package's own modules: {len(flat)}, not allowed: {len(bad)}"
    )
    if verbose:
        for a, b, line, _ in bad:
            print(f"  {a}:{line} -> {b}")
    print(f"messages written in two languages: {len(msgs)}")
    if verbose:
        for c, p, hit in msgs:
            print(f"  {c} / {p}: {hit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
