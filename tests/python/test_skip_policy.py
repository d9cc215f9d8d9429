# The suite's skip policy (suite.py, conftest.py): in the full run only listed reasons may skip.
"""Each case runs pytest in a child on a small test file, with this suite's ``conftest.py`` and
``suite.py`` beside it, in the quick and the full run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import suite

HERE = Path(__file__).resolve().parent

CASES = """
import pytest
import suite


def test_missing_package():
    suite.require("packedfun_no_such_package")


def test_importorskip():
    pytest.importorskip("packedfun_no_such_package")


def test_no_gpu():
    pytest.skip("no CUDA GPU: compile-and-load only")


@pytest.mark.skipif(True, reason="platform: not this OS")
def test_platform():
    pass


def test_runs():
    assert suite.require("json").dumps(1) == "1"
"""


def _run(tmp_path: Path, full: bool) -> subprocess.CompletedProcess:
    for name in ("conftest.py", "suite.py"):
        shutil.copy(HERE / name, tmp_path / name)
    (tmp_path / "test_cases.py").write_text(CASES)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PACKEDFUN_TEST_FULL")}
    if full:
        env["PACKEDFUN_TEST_FULL"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "-rA",
         str(tmp_path / "test_cases.py")],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300, check=False,
    )  # fmt: skip


def test_full_run_fails_a_skip_the_policy_does_not_list(tmp_path):
    proc = _run(tmp_path, full=True)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1, output
    assert "2 failed, 1 passed, 2 skipped" in output, output
    # The failures name the package; the allowed skips stay skips, with their reasons listed.
    assert "install packedfun_no_such_package" in output, output
    assert "could not import 'packedfun_no_such_package'" in output, output
    assert "for a reason the skip policy does not allow: could not import" in output, output
    assert "made a failure: not allowed" in output, output
    assert "allowed: no CUDA GPU" in output and "allowed: a platform" in output, output
    assert "not run in this full run, and why" in output, output


def test_quick_run_skips_and_lists_each_reason(tmp_path):
    proc = _run(tmp_path, full=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert "1 passed, 4 skipped" in output, output
    summary = output.split("not run in this quick run", 1)[1]
    assert summary.count("the full run fails on this") == 2, summary
    assert "install packedfun_no_such_package" in summary, summary
    assert "no CUDA GPU: compile-and-load only (allowed: no CUDA GPU" in summary, summary


def test_allowed_reasons_are_one_short_list():
    assert suite.allowed_skip("no CUDA GPU: compile-and-load only")
    assert suite.allowed_skip("nvcc is not installed")
    assert suite.allowed_skip("platform: dis shows specialization since 3.11")
    for reason in ("could not import 'jax': No module named 'jax'", "no C compiler",
                   "gcc's ASan runtime is not installed", "PACKEDFUN_SANITIZE=0",
                   "not running from a source checkout", "torch is not installed"):  # fmt: skip
        assert suite.allowed_skip(reason) is None, reason
    assert len(suite.ALLOWED_SKIPS) <= 4


def test_require_skips_where_the_extra_leaves_the_package_out(monkeypatch):
    # torch is in the test extra on Python 3.11 only: elsewhere its tests skip for that reason.
    monkeypatch.setattr(suite, "_extra_markers", lambda: {"torch": "python_version == '2.7'"})
    monkeypatch.setattr(suite, "STRICT", True)
    monkeypatch.setitem(sys.modules, "torch", None)  # importing it raises ImportError
    with pytest.raises(pytest.skip.Exception, match="not in the test extra on this Python: torch"):
        suite.require("torch")
    monkeypatch.setattr(suite, "_extra_markers", lambda: {"torch": "python_version >= '3'"})
    with pytest.raises(pytest.fail.Exception, match=r"install torch \(pip install"):
        suite.require("torch")


def test_test_extra_markers_are_read_from_pyproject():
    if not (suite.REPO / "pyproject.toml").is_file():
        pytest.skip("not running from a source checkout")
    assert suite._extra_markers().get("torch") == "python_version == '3.11'"
