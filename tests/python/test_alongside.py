# The alongside mechanism of conftest.py: a marked test runs in a child pytest beside the others.
"""Each case runs pytest in a child on a small test file, with this suite's ``conftest.py`` and
``suite.py`` beside it (as ``test_skip_policy.py`` does): the marked tests run in children started
when collection ends, while the other tests run, and report their outcome at the end of the run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

CASES = """
import os
import time
from pathlib import Path

import pytest
import suite

HERE = Path(__file__).resolve().parent


@suite.alongside("writes a file from its own process")
def test_writes_a_file():
    assert os.environ["PACKEDFUN_ALONGSIDE_CHILD"].endswith("::test_writes_a_file")
    (HERE / "written").write_text(str(os.getpid()))


def test_sees_the_file_while_it_runs():
    # the alongside child is started before this test and writes the file meanwhile
    for _ in range(1200):
        if (HERE / "written").exists():
            break
        time.sleep(0.1)
    assert int((HERE / "written").read_text()) != os.getpid()


@suite.alongside("fails")
def test_fails():
    assert 1 + 1 == 3, "the child's own message"


@suite.alongside("skips")
def test_skips():
    pytest.skip("platform: the child's reason")
"""


def _run(tmp_path: Path) -> subprocess.CompletedProcess:
    for name in ("conftest.py", "suite.py"):
        shutil.copy(HERE / name, tmp_path / name)
    (tmp_path / "test_cases.py").write_text(CASES)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PACKEDFUN_TEST_FULL")}
    env.pop("PACKEDFUN_ALONGSIDE_CHILD", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "-rA", "-v",
         str(tmp_path / "test_cases.py")],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600, check=False,
    )  # fmt: skip


def test_alongside_tests_run_in_children_beside_the_others(tmp_path):
    proc = _run(tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out  # test_fails
    # The unmarked test runs first; the marked ones wait for their children at the end.
    order = re.findall(r"^test_cases\.py::(\w+) (PASSED|FAILED|SKIPPED)", out, re.M)
    assert order == [
        ("test_sees_the_file_while_it_runs", "PASSED"),
        ("test_writes_a_file", "PASSED"),
        ("test_fails", "FAILED"),
        ("test_skips", "SKIPPED"),
    ], out
    assert "the child's own message" in out, out  # the child's failure output is reported
    assert re.search(r"SKIPPED \[1\] .*platform: the child's reason", out), out
    assert re.search(r"ALONGSIDE test_cases\.py::test_writes_a_file: passed, \d+ s wall", out), out
    assert (tmp_path / "written").exists()
