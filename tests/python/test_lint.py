# Runs the pinned linters as tests: ruff (lint + format) on all Python, mypy on the package.
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
import suite

REPO_ROOT = Path(__file__).resolve().parents[2]
PYTHON_DIRS = ["python", "tests", "benchmarks", "examples", "docs"]

pytestmark = pytest.mark.deselect_if(
    os.environ.get("PACKEDFUN_BACKEND") == "ctypes",
    reason="backend-independent: runs in the default-backend pass",
)


def _tool(module: str, *args: str) -> subprocess.CompletedProcess:
    if not (REPO_ROOT / "pyproject.toml").is_file():
        pytest.skip("not running from a source checkout")
    if importlib.util.find_spec(module) is None:
        suite.require(module)
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


def _dirs() -> list:
    return [d for d in PYTHON_DIRS if (REPO_ROOT / d).is_dir()]


def test_ruff_lint():
    proc = _tool("ruff", "check", "--no-cache", *_dirs())
    assert proc.returncode == 0, proc.stdout[-8000:] + proc.stderr[-2000:]


def test_ruff_format():
    proc = _tool("ruff", "format", "--check", "--no-cache", *_dirs())
    assert proc.returncode == 0, proc.stdout[-8000:] + proc.stderr[-2000:]


def test_mypy_package():
    proc = _tool("mypy", "--no-incremental", "python/packedfun")
    assert proc.returncode == 0, proc.stdout[-8000:] + proc.stderr[-2000:]


def _cxx_sources() -> list:
    proc = subprocess.run(
        ["git", "ls-files", "*.c", "*.cc", "*.h", "*.cu"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        pytest.skip("not a git checkout: no list of tracked C/C++ sources")
    return [p for p in proc.stdout.split() if not p.startswith("third_party/")]


def test_clang_format():
    clang_format = suite.require("clang_format")

    sources = _cxx_sources()
    assert sources, "no C/C++ sources found"
    proc = subprocess.run(
        [clang_format.get_executable("clang-format"), "--dry-run", "--Werror", *sources],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-8000:]
