# The documentation site: Sphinx builds docs/ with warnings as errors, and the pages' examples run.
"""Three checks on ``docs/``.

1. ``sphinx-build -W --keep-going`` builds the site (``docs/conf.py``) into a temporary folder:
   a broken cross-reference, a page in no toctree, a docstring with bad markup, an undocumented
   C ABI declaration fails the test, with Sphinx's messages.
2. The ```` ```python ```` blocks of each page run, in order, as one script in a child process
   (so a page's later blocks see its earlier names), from a scratch directory with a scratch JIT
   cache. A failure names the page and its Markdown line.
3. The docstring examples (``>>>``) of ``packedfun`` and of every module the API reference
   documents run under doctest, each docstring in a fresh namespace.

4. The ```` ```cpp ```` blocks of each page compile, in order, as one translation unit (the
   umbrella header in front, ``#line`` directives pointing errors at the Markdown lines), into a
   shared library built with ``packedfun.cpp.build_inline``; the page's python blocks run with
   that library loaded, so a page calls the functions its C++ registers. A block preceded by
   ``<!-- cpp: body -->`` holds statements: it is compiled as the body of a function that is
   never called (code that needs a running program: a file to load, a Python callback).

5. The ```` ```bash ```` / ```` ```sh ```` blocks of each page run with ``bash -e`` in a scratch
   directory, in order, after the page's file blocks were written there: a block whose previous
   non-empty line is ```` `name`: ```` (```` `CMakeLists.txt`: ````) is that file's content. Other
   CMake blocks are fragments or synopses: they carry a not-run marker naming where the complete
   file is built.

Not-run blocks: a block whose fence is directly preceded by a line
``<!-- not-run: <reason> -->`` is shown but not executed (for code that needs a GPU or an artefact
the page cannot build). The reason is required. Use it sparingly: prefer an example that runs.
A block that needs an optional package this environment lacks (``ModuleNotFoundError`` for a
module that the test process cannot find either) skips its page with that reason.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import packedfun
import packedfun.cpp
import pytest
import suite

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PACKAGE_PARENT = str(Path(packedfun.__file__).resolve().parents[1])

_FENCE = re.compile(r"^```(?:python|py)[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
_NOT_RUN = re.compile(r"^<!--\s*not-run:(.*?)-->[ \t]*$")
_CPP_FENCE = re.compile(r"^([ \t]*)```(?:cpp|c\+\+)[ \t]*\n(.*?)^\1```[ \t]*$", re.M | re.S)
_CPP_BODY = "<!-- cpp: body -->"
_ANY_FENCE = re.compile(r"^([ \t]*)```([\w+-]*)[ \t]*\n(.*?)^\1```[ \t]*$", re.M | re.S)
_FILE_NAME = re.compile(r"^`([\w.-]+)`:$")
_SHELLS = ("bash", "sh", "shell")
_MISSING = "DOCS-TEST-MISSING-MODULE:"

# Runs the blocks given as JSON on stdin in one namespace; tracebacks point at the Markdown lines.
_DRIVER = f"""
import json, sys
blocks = json.load(sys.stdin)
namespace = {{"__name__": "__main__"}}
for page, line, code in blocks:
    try:
        exec(compile("\\n" * (line - 1) + code, page, "exec"), namespace)
    except ModuleNotFoundError as err:
        print("{_MISSING}" + str(err.name), file=sys.stderr)
        raise
"""


def _pages() -> list[Path]:
    if not (DOCS / "conf.py").is_file():
        return []
    return sorted(p for p in DOCS.rglob("*.md") if not any(s.startswith("_") for s in p.parts))


def python_blocks(text: str) -> list[tuple[int, str, str | None]]:
    """(first code line, code, not-run reason or None) of each python block of a Markdown text."""
    lines = text.split("\n")
    blocks = []
    for m in _FENCE.finditer(text):
        fence_line = text.count("\n", 0, m.start())  # 0-based index of the fence line
        above = lines[fence_line - 1] if fence_line > 0 else ""
        marker = _NOT_RUN.match(above.strip())
        reason = marker.group(1).strip() if marker else None
        blocks.append((fence_line + 2, m.group(1), reason))
    return blocks


def cpp_blocks(text: str) -> list[tuple[int, str, str | None]]:
    """(first code line, code, marker) of each C++ block: the marker is ``"body"``, a not-run
    reason, or None. Indented blocks (inside a list item) are dedented."""
    lines = text.split("\n")
    blocks = []
    for m in _CPP_FENCE.finditer(text):
        fence_line = text.count("\n", 0, m.start())
        above = lines[fence_line - 1].strip() if fence_line > 0 else ""
        marker = _NOT_RUN.match(above)
        reason = marker.group(1).strip() if marker else ("body" if above == _CPP_BODY else None)
        indent = len(m.group(1))
        code = "\n".join(line[indent:] for line in m.group(2).split("\n"))
        blocks.append((fence_line + 2, code, reason))
    return blocks


def cpp_translation_unit(page: Path) -> str | None:
    """The page's C++ blocks as one translation unit (None when it has none to compile)."""
    parts = []
    for k, (line, code, marker) in enumerate(cpp_blocks(page.read_text(encoding="utf-8"))):
        if marker not in (None, "body"):
            continue
        located = f'#line {line} "{page}"\n{code}'
        if marker == "body":
            located = f"[[maybe_unused]] static void docs_block_{k}() {{\n{located}\n}}"
        parts.append(located)
    return "\n".join(parts) + "\n" if parts else None


_LIBRARIES: dict[str, str] = {}


def page_library(page: Path, cache: Path) -> str | None:
    """Builds (once per session) the shared library of the page's C++ blocks; its path."""
    source = cpp_translation_unit(page)
    if source is None:
        return None
    if str(page) not in _LIBRARIES:
        import packedfun.cpp

        name = "docs_" + re.sub(r"[^A-Za-z0-9_]", "_", page.relative_to(ROOT).as_posix()[:-3])
        _LIBRARIES[str(page)] = packedfun.cpp.build_inline(
            name, cpp_sources=source, extra_cflags=["-Wall"], build_directory=cache
        )
    return _LIBRARIES[str(page)]


def _cpp_pages() -> list[str]:
    pages = [*_pages(), ROOT / "README.md"] if (DOCS / "conf.py").is_file() else []
    return [p.relative_to(ROOT).as_posix() for p in pages if cpp_translation_unit(p) is not None]


@pytest.fixture(scope="session")
def cpp_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("docs_cpp_cache")


@pytest.mark.parametrize("page", _cpp_pages())
def test_cpp_blocks_compile(page, cpp_cache):
    try:
        page_library(ROOT / page, cpp_cache)
    except packedfun.cpp.CompilerNotFoundError as exc:
        pytest.skip(str(exc))


def test_cpp_blocks_parser():
    text = "```cpp\nint a;\n```\n<!-- cpp: body -->\n```cpp\nf();\n```\n  ```cpp\n  int b;\n  ```\n"
    assert cpp_blocks(text) == [(2, "int a;\n", None), (6, "f();\n", "body"), (9, "int b;\n", None)]


def fenced_blocks(text: str) -> list[tuple[str, int, str, str | None, str | None]]:
    """(language, first code line, code, not-run reason, file name) of every fenced block."""
    lines = text.split("\n")
    out = []
    for m in _ANY_FENCE.finditer(text):
        fence_line = text.count("\n", 0, m.start())
        above = lines[fence_line - 1].strip() if fence_line > 0 else ""
        marker = _NOT_RUN.match(above)
        k = fence_line - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        named = _FILE_NAME.match(lines[k].strip()) if k >= 0 else None
        indent = len(m.group(1))
        code = "\n".join(line[indent:] for line in m.group(3).split("\n"))
        out.append((m.group(2), fence_line + 2, code, marker.group(1).strip() if marker else None,
                    named.group(1) if named else None))  # fmt: skip
    return out


def _shell_pages() -> list[str]:
    pages = [*_pages(), ROOT / "README.md"] if (DOCS / "conf.py").is_file() else []
    return [
        p.relative_to(ROOT).as_posix()
        for p in pages
        if any(lang in _SHELLS and reason is None
               for lang, _, _, reason, _ in fenced_blocks(p.read_text(encoding="utf-8")))
    ]  # fmt: skip


def test_cmake_blocks_are_files_or_say_why_not():
    problems = []
    for page in [*_pages(), ROOT / "README.md"]:
        for lang, line, _, reason, name in fenced_blocks(page.read_text(encoding="utf-8")):
            if lang == "cmake" and reason is None and name is None:
                problems.append(f"{page.relative_to(ROOT)}:{line}: a cmake block neither named")
    assert not problems, "\n".join(problems) + " as a file (`CMakeLists.txt`:) nor marked not-run"


@pytest.mark.parametrize("page", _shell_pages())
def test_shell_blocks_run(page, tmp_path):
    blocks = fenced_blocks((ROOT / page).read_text(encoding="utf-8"))
    for _lang, _, code, reason, name in blocks:
        if name is not None and reason is None:
            (tmp_path / name).write_text(code)
    env = _child_env(tmp_path)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    for lang, line, code, reason, _ in blocks:
        if lang not in _SHELLS or reason is not None:
            continue
        proc = subprocess.run(
            ["bash", "-e", "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
            timeout=600, check=False,
        )  # fmt: skip
        output = proc.stdout[-3000:] + proc.stderr[-3000:]
        assert proc.returncode == 0, f"{page}:{line}: failed\n{output}"


def _child_env(tmp: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [PACKAGE_PARENT, env.get("PYTHONPATH")]))
    env["PACKEDFUN_CACHE_DIR"] = str(tmp / "cache")
    return env


def test_python_blocks_parser():
    text = "x\n```python\na = 1\n```\n<!-- not-run: needs a GPU -->\n```python\ngpu()\n```\n"
    assert python_blocks(text) == [(3, "a = 1\n", None), (7, "gpu()\n", "needs a GPU")]


def test_not_run_markers_name_a_reason_and_precede_a_block():
    problems = []
    for page in _pages():
        text = page.read_text(encoding="utf-8")
        marked = {line - 2 for line, _, reason in python_blocks(text) if reason is not None}
        marked |= {line - 2 for _, line, _, reason, _ in fenced_blocks(text) if reason is not None}
        for k, line in enumerate(text.split("\n"), start=1):
            m = _NOT_RUN.match(line.strip())
            if m and not m.group(1).strip():
                problems.append(f"{page.relative_to(ROOT)}:{k}: not-run marker without a reason")
            elif m and k not in marked:
                problems.append(f"{page.relative_to(ROOT)}:{k}: not-run marker above no code block")
    assert not problems, "\n".join(problems)


def _pages_with_examples() -> list[str]:
    """Pages with at least one runnable python block, so no page is collected only to be
    skipped: a page whose every block is marked not-run names where each is tested instead (the
    marker test above checks those markers)."""
    return [
        p.relative_to(DOCS).as_posix()
        for p in _pages()
        if any(reason is None for _, _, reason in python_blocks(p.read_text(encoding="utf-8")))
    ]


@pytest.mark.parametrize("page", _pages_with_examples())
def test_page_examples_run(page, tmp_path, cpp_cache):
    path = DOCS / page
    blocks = python_blocks(path.read_text(encoding="utf-8"))
    runnable = [[str(path), line, code] for line, code, reason in blocks if reason is None]
    if not runnable:
        pytest.skip("every python block of the page is marked not-run")
    library = page_library(path, cpp_cache)
    if library is not None:  # the functions the page's C++ registers, for its python blocks
        runnable.insert(0, [str(path), 1, f"__import__('packedfun').load_module({library!r})\n"])
    proc = subprocess.run(
        [sys.executable, "-c", _DRIVER],
        input=json.dumps(runnable),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_child_env(tmp_path),
        timeout=600,
        check=False,
    )
    if proc.returncode != 0:
        missing = re.search(re.escape(_MISSING) + r"(\S+)", proc.stderr)
        if missing and importlib.util.find_spec(missing.group(1).split(".")[0]) is None:
            suite.require(missing.group(1))  # skips or fails (the full run) naming the package
    assert proc.returncode == 0, f"{page}: an example failed\n{proc.stderr[-6000:]}"


@pytest.mark.deselect_if(
    os.environ.get("PACKEDFUN_CTYPES_SUITE") == "1",
    reason="the Sphinx build reads source text and docstrings: built once, by the default-backend "
    "pass (not again by the ctypes re-run or the sanitized passes)",
)
def test_site_builds_without_warnings(tmp_path):
    if not (DOCS / "conf.py").is_file():
        pytest.skip("not running from a source checkout")
    for module in ("sphinx", "myst_parser"):
        suite.require(module)
    cmd = [
        sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
        str(DOCS), str(tmp_path / "html"), "-d", str(tmp_path / "doctrees"),
    ]  # fmt: skip
    proc = subprocess.run(
        cmd, capture_output=True, text=True, env=_child_env(tmp_path), timeout=600, check=False
    )
    assert proc.returncode == 0, f"sphinx-build failed:\n{proc.stdout[-3000:]}{proc.stderr[-8000:]}"
    index = (tmp_path / "html" / "index.html").read_text(encoding="utf-8")
    pages = ("python-guide", "reference/c-abi", "reference/cpp-api", "reference/python-api")
    for page in (*pages, "performance"):
        assert f'href="{page}.html"' in index, f"{page} is not linked from the index"


# Runs the docstring examples (>>>) of the given modules with doctest, each docstring in a fresh
# namespace (an example imports what it uses, as a reader would); prints "DOCTEST tries failures".
_DOCTEST_DRIVER = """
import doctest, importlib, sys
tries = failures = 0
for name in sys.argv[1:]:
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in doctest.DocTestFinder(exclude_empty=True).find(module, name, globs={}):
        runner.run(test)
    tries, failures = tries + runner.tries, failures + runner.failures
print("DOCTEST", tries, failures)
"""


def _documented_modules() -> list[str]:
    page = DOCS / "reference" / "python-api.md"
    if not page.is_file():
        return []
    return re.findall(r"automodule:: (packedfun(?:\.\w+)*)", page.read_text())


def test_docstring_examples_run(tmp_path):
    # The API reference is generated from the docstrings: their examples are the site's too.
    modules = ["packedfun", *_documented_modules()]
    if len(modules) == 1:
        pytest.skip("not running from a source checkout")
    proc = subprocess.run(
        [sys.executable, "-c", _DOCTEST_DRIVER, *modules],
        capture_output=True, text=True, cwd=tmp_path, env=_child_env(tmp_path), timeout=600,
        check=False,
    )  # fmt: skip
    summary = re.search(r"^DOCTEST (\d+) (\d+)$", proc.stdout, re.M)
    assert proc.returncode == 0 and summary, proc.stdout[-6000:] + proc.stderr[-3000:]
    tries, failures = map(int, summary.groups())
    assert failures == 0, proc.stdout[-8000:]
    assert tries >= 10, f"only {tries} docstring examples found in {modules}"


def test_api_reference_covers_every_public_module():
    page = DOCS / "reference" / "python-api.md"
    if not page.is_file():
        pytest.skip("not running from a source checkout")
    documented = set(re.findall(r"automodule:: (packedfun(?:\.\w+)*)", page.read_text()))
    package = Path(packedfun.__file__).parent
    public = {
        f"packedfun.{p.stem if p.is_file() else p.name}"
        for p in package.iterdir()
        if not p.name.startswith("_")
        and ((p.suffix == ".py" and p.stem != "demo") or (p / "__init__.py").is_file())
    }
    missing = sorted(public - documented)
    assert not missing, f"add these modules to docs/reference/python-api.md: {missing}"


def _cpp_api_extension():
    if importlib.util.find_spec("sphinx") is None or not (DOCS / "_ext" / "cpp_api.py").is_file():
        pytest.skip("the C++ API reference is built from a source checkout with Sphinx")
    spec = importlib.util.spec_from_file_location("cpp_api", DOCS / "_ext" / "cpp_api.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("cpp_api", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_every_public_cpp_declaration_has_a_comment():
    # The same check as the site build's warning, quicker and with every name listed at once.
    cpp_api = _cpp_api_extension()
    found, missing = set(), []
    for header in cpp_api.headers(ROOT / "include" / "packedfun"):
        _, entries, undocumented = cpp_api.parse_header(header)
        found |= {entry.name for entry in entries}
        missing += [f"{header.name}:{line}: {name}" for line, name in undocumented]
    assert not missing, "document these declarations (a comment above each):\n" + "\n".join(missing)
    expected = {"Function", "Any", "GlobalDef", "ObjectDef", "Module", "TensorView", "Error"}
    assert expected | {"PACKEDFUN_REGISTER_GLOBAL", "PACKEDFUN_CHECK"} <= found


def test_cpp_api_parser_finds_an_undocumented_declaration(tmp_path):
    cpp_api = _cpp_api_extension()
    header = tmp_path / "thing.h"
    header.write_text(
        "// A header.\nnamespace packedfun {\n/*! Documented. */\nclass Good {\n int x;\n};\n\n"
        "int Bad(int a);\nnamespace detail {\nint Hidden();\n}\n}  // namespace packedfun\n"
        "#define PACKEDFUN_NAKED(x) x\n"
    )
    opening, entries, missing = cpp_api.parse_header(header)
    assert opening == "A header."
    assert [(e.name, e.doc) for e in entries][:2] == [("Good", "Documented."), ("Bad", "")]
    assert [name for _, name in missing] == ["Bad", "PACKEDFUN_NAKED"]
