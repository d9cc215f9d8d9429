# Supported Pythons: packedfun built and tested on a second CPython (its compiled backend).
"""CI runs the suite on the interpreter that runs this file. This test covers a second one: it
takes the newest installed CPython that ``requires-python`` admits, other than the running version
(pyenv's ``versions/`` folders and ``python3.N`` on PATH are searched), builds packedfun into a
fresh virtual environment there with ``pip install ".[test]"``, and runs ``tests/python`` with it
on the compiled backend, whose C code is what meets each version's C API (the ctypes re-run is the
main Python's: see ``test_ctypes_backend.py``). It runs with ``PACKEDFUN_PYTHON_MATRIX=child``,
so it never starts this test again, and ``tests/python/conftest.py`` deselects there what does
not depend on the Python version (the C++ unit tests, linters, benchmark and soak runs, the
sanitized suite, the Sphinx build, nvcc builds) to stay in budget.

Skipped with the reason when no such interpreter is installed or with
``PACKEDFUN_PYTHON_MATRIX=0``; deselected inside the ctypes, sanitized and second-Python re-runs.
"""

from __future__ import annotations

import glob
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import suite

REPO = Path(__file__).resolve().parents[2]
PYPROJECT = REPO / "pyproject.toml"
MODE = os.environ.get("PACKEDFUN_PYTHON_MATRIX", "")

pytestmark = pytest.mark.deselect_if(
    MODE == "child"
    or os.environ.get("PACKEDFUN_BACKEND") == "ctypes"
    or os.environ.get("PACKEDFUN_CTYPES_SUITE") == "1"
    or bool(os.environ.get("PACKEDFUN_SANITIZE_PRELOAD")),
    reason="checks and starts the second-Python run: from the main run only",
)
# PACKEDFUN_PYTHON_MATRIX=0: a quick local run without the second Python (a skip: the user chose it)
skip_when_off = pytest.mark.skipif(MODE == "0", reason="PACKEDFUN_PYTHON_MATRIX=0")


def requires_python_floor() -> tuple[int, int]:
    """(major, minor) of ``requires-python = ">=X.Y"`` in pyproject.toml."""
    match = re.search(r'^requires-python\s*=\s*">=\s*(\d+)\.(\d+)', PYPROJECT.read_text(), re.M)
    assert match is not None, "pyproject.toml has no requires-python = '>=X.Y'"
    return int(match.group(1)), int(match.group(2))


def _interpreter_paths() -> list[str]:
    roots = {os.environ.get("PYENV_ROOT", ""), os.path.expanduser("~/.pyenv")}
    paths = [
        p for r in roots if r for p in glob.glob(os.path.join(r, "versions", "*", "bin", "python3"))
    ]
    paths += [p for m in range(8, 30) if (p := shutil.which(f"python3.{m}"))]
    return sorted({os.path.realpath(p) for p in paths})


def _version(exe: str) -> tuple[int, int] | None:
    """(major, minor) of a final-release CPython, else None."""
    code = (
        "import sys; v = sys.version_info; print(sys.implementation.name, v.releaselevel, *v[:2])"
    )
    try:
        out = subprocess.run([exe, "-c", code], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    parts = out.split()
    if len(parts) != 4 or parts[:2] != ["cpython", "final"]:
        return None
    return int(parts[2]), int(parts[3])


def second_python() -> tuple[str, tuple[int, int]] | None:
    """The newest installed CPython >= the floor whose version differs from the running one."""
    floor, running = requires_python_floor(), sys.version_info[:2]
    found = {}
    for exe in _interpreter_paths():
        version = _version(exe)
        if version is not None and version >= floor and version != running:
            found.setdefault(version, exe)
    if not found:
        return None
    best = max(found)
    return found[best], best


class _Clock:
    """Wall and CPU seconds (children's user + sys) of each step, for the CI budget."""

    def __init__(self) -> None:
        self.laps: list[str] = []
        self._wall, self._cpu = time.monotonic(), self._children_cpu()

    @staticmethod
    def _children_cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    def lap(self, what: str) -> None:
        wall, cpu = time.monotonic(), self._children_cpu()
        load = os.getloadavg()[0]
        self.laps.append(
            f"{what}: {wall - self._wall:.0f} s wall, {cpu - self._cpu:.0f} s CPU, load {load:.1f}"
        )
        self._wall, self._cpu = wall, cpu


def _child_env() -> dict:
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
    }
    env["PACKEDFUN_PYTHON_MATRIX"] = "child"
    env["PACKEDFUN_SANITIZE"] = "0"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _classifier_versions() -> set[tuple[int, int]]:
    found = re.findall(r'"Programming Language :: Python :: (\d+)\.(\d+)"', PYPROJECT.read_text())
    return {(int(a), int(b)) for a, b in found}


def test_classifiers_name_the_supported_versions():
    if not PYPROJECT.is_file():
        pytest.skip("not running from a source checkout")
    versions, floor = _classifier_versions(), requires_python_floor()
    assert versions and min(versions) == floor, (sorted(versions), floor)
    assert versions == {(floor[0], m) for m in range(floor[1], max(versions)[1] + 1)}, versions
    choice = second_python()
    if choice is not None:  # the newest version CI tests is one the package says it supports
        assert choice[1] in versions, f"add a classifier for {choice[1]} to pyproject.toml"


@pytest.mark.deselect_if(not IN_CI, reason="CI only (CI=true): a developer may run any Python")
def test_ci_main_run_is_the_oldest_supported_python():
    # With the second-Python run below (the newest installed), CI covers the oldest and the newest
    # supported versions only if the main run is on the requires-python floor.
    assert sys.version_info[:2] == requires_python_floor(), (
        f"CI runs on {sys.version_info[0]}.{sys.version_info[1]}; the main run must use the "
        f"requires-python floor {requires_python_floor()} (the second run covers the newest)"
    )


@suite.full_only("the suite on a second CPython, both backends")
@suite.alongside("a child run of the whole suite: it runs beside the main run")
@skip_when_off
def test_suite_passes_on_a_second_python(tmp_path):
    if not PYPROJECT.is_file():
        pytest.skip("not running from a source checkout")
    choice = second_python()
    floor = requires_python_floor()
    if choice is None:
        pytest.skip(
            f"no CPython >= {floor[0]}.{floor[1]} other than {sys.version_info[0]}."
            f"{sys.version_info[1]} is installed (searched pyenv's versions/, python3.N on PATH)"
        )
    exe, version = choice
    venv = tmp_path / "venv"
    env = _child_env()
    subprocess.run([exe, "-m", "venv", str(venv)], check=True, timeout=300, env=env)
    python = str(venv / "bin" / "python")
    clock = _Clock()
    install = subprocess.run(
        [python, "-m", "pip", "install", "-q", f"{REPO}[test]"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=1800, check=False,
    )  # fmt: skip
    clock.lap("pip install .[test]")
    assert install.returncode == 0, f"pip install on {version}:\n{install.stderr[-8000:]}"

    # The run below must test the package just built for this interpreter, on the compiled backend.
    probe = subprocess.run(
        [python, "-c", "import packedfun; print(packedfun.BACKEND, packedfun.__file__)"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120, check=True,
    )  # fmt: skip
    backend, location = probe.stdout.split()
    assert backend == "_core" and location.startswith(str(venv)), probe.stdout + probe.stderr

    cmd = [python, "-m", "pytest", str(REPO / "tests" / "python"), "-q", "-p", "no:cacheprovider",
           "-o", "addopts=", "-m", "not soak", "-rfEs", "--durations=15"]  # fmt: skip
    run = subprocess.run(
        cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=3000, check=False
    )
    clock.lap("pytest, both backends")
    output = run.stdout + run.stderr
    print(f"Python {version[0]}.{version[1]} ({exe}): {'; '.join(clock.laps)}")
    print(output[-6000:])
    assert run.returncode == 0, f"suite on Python {version[0]}.{version[1]}:\n{output[-12000:]}"
