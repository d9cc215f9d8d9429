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
import pytest
import suite

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PACKAGE_PARENT = str(Path(packedfun.__file__).resolve().parents[1])

_FENCE = re.compile(r"^```(?:python|py)[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
_NOT_RUN = re.compile(r"^<!--\s*not-run:(.*?)-->[ \t]*$")
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
        for k, line in enumerate(text.split("\n"), start=1):
            m = _NOT_RUN.match(line.strip())
            if m and not m.group(1).strip():
                problems.append(f"{page.relative_to(ROOT)}:{k}: not-run marker without a reason")
            elif m and k not in marked:
                problems.append(
                    f"{page.relative_to(ROOT)}:{k}: not-run marker above no python block"
                )
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
def test_page_examples_run(page, tmp_path):
    path = DOCS / page
    blocks = python_blocks(path.read_text(encoding="utf-8"))
    runnable = [[str(path), line, code] for line, code, reason in blocks if reason is None]
    if not runnable:
        pytest.skip("every python block of the page is marked not-run")
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
    for page in ("python-guide", "reference/c-abi", "reference/python-api", "performance"):
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
