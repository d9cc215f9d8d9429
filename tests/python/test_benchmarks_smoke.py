# Smoke test of the benchmark harness: `benchmarks/run.py --quick` completes and prints every row.
"""Runs the benchmark with a tiny repetition count. Never asserts a timing: only that the harness,
the peer builds and every case work, and that each installed peer got measured."""

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import suite

REPO_ROOT = Path(__file__).resolve().parents[2]
RUN = REPO_ROOT / "benchmarks" / "run.py"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
CORE_ROWS = [
    "no-arg call",
    "add(int, int)",
    "three int args",
    "float echo",
    "10-char str argument",
    "C++ calls a Python callable it receives",
    "C++ calls a Python global by name",
    "C++ error caught in Python",
]

pytestmark = [
    pytest.mark.deselect_if(
        os.environ.get("PACKEDFUN_BACKEND") == "ctypes",
        reason="measures the default backend; runs in the default-backend pass",
    ),
    suite.full_only("builds the benchmark peers and runs every row once (about 40 s)"),
]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    if not RUN.is_file():
        pytest.skip("not running from a source checkout")
    if shutil.which("cmake") is None and not IN_CI:
        pytest.skip("cmake is needed to build the native peers")
    out = tmp_path_factory.mktemp("bench") / "quick.md"
    proc = _run_script(RUN, "--quick", "--out", out)
    text = out.read_text()
    assert text.strip() in proc.stdout
    return text


def _run_script(script: Path, *args) -> subprocess.CompletedProcess:
    """Runs a benchmark script from the repository root; fails the test when it fails."""
    proc = subprocess.run(
        [sys.executable, str(script), *map(str, args)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-8000:]
    return proc


def _row(text: str, name: str) -> list:
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] == name:
            return cells
    raise AssertionError(f"no row {name!r} in:\n{text}")


def _header(text: str) -> list:
    line = next(line for line in text.splitlines() if line.startswith("| case |"))
    return [c.strip() for c in line.strip().strip("|").split("|")]


def test_every_core_row_is_printed(report):
    header = _header(report)
    for name in CORE_ROWS:
        assert len(_row(report, name)) == len(header)


def test_floor_and_packedfun_are_measured_everywhere(report):
    header = _header(report)
    for column in ("floor", "packedfun"):
        assert column in header, f"{column} missing from the table:\n{report}"
        index = header.index(column)
        for name in CORE_ROWS:
            assert re.search(r"\d", _row(report, name)[index]), (name, column, report)


@pytest.mark.parametrize(
    "peer, module", [("tvm-ffi", "tvm_ffi"), ("nanobind", "nanobind"), ("ctypes", "ctypes")]
)
def test_installed_peers_are_measured(report, peer, module):
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:  # absent, or only a same-named folder
        assert f"not measured: {peer}" in report
        suite.require(module)
    assert peer in _header(report), f"{peer} was not measured:\n{report}"


def test_every_row_states_a_target_and_verdict(report):
    for name in CORE_ROWS:
        cells = _row(report, name)
        assert cells[-2], name
        assert cells[-1] in ("yes", "**no**", "n/a"), cells


def test_peer_folders_are_not_taken_for_installed_peers(monkeypatch):
    # benchmarks/ holds folders named like peers (nanobind/, tvmffi/): on sys.path, as run.py puts
    # it, Python imports them as empty namespace packages when the peer is absent.
    monkeypatch.syspath_prepend(str(RUN.parent))
    import build_peers

    assert importlib.util.find_spec("tvmffi") is not None  # the folder, as a namespace package
    assert not build_peers.installed("tvmffi")
    assert not build_peers.installed("no_such_peer_module")
    assert build_peers.installed("json")


def test_parameter_form_matrix_runs_every_form():
    """benchmarks/param_forms.py builds its three sides and prints a row per form, with every
    installed peer measured (a peer failing to build would leave its column out)."""
    out_dir = Path(__file__).resolve().parents[2] / "benchmarks"
    proc = _run_script(out_dir / "param_forms.py", "--repeat", "3")
    sys.path.insert(0, str(out_dir))
    import param_forms

    header = next(line for line in proc.stdout.splitlines() if line.startswith("| form |"))
    for peer, module in (("nanobind", "nanobind"), ("tvm-ffi", "tvm_ffi")):
        if suite.require(module):
            assert peer in header, proc.stdout
    assert "Not measured" not in proc.stdout, proc.stdout
    for label, _, _ in param_forms.ROWS + param_forms.ERROR_ROWS:
        row = _row(proc.stdout, label)
        assert row[1] != "—" and row[2] != "—", row  # nanobind and packedfun measured
