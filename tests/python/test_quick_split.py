# The quick run's second process (conftest.py): every other test file in a second pytest process.
"""Each case runs pytest in a child, in a directory holding this suite's ``conftest.py`` and
``suite.py`` and a few small test files, the way the README's quick command runs (no file named,
so the run collects its ``testpaths``): the files alternate between the main process and the
second one, and the main run's verdict, closing list and summary must cover both."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

FILES = {
    # sorted: a and c stay in the main process, b and d go to the second one
    "test_a.py": "def test_a():\n    assert True\n",
    "test_b.py": (
        "import os\nimport pytest\n\n"
        "def test_b_passes():\n    assert True\n\n"
        "def test_b_may_fail():\n    assert os.environ.get('B_FAILS') != '1', 'b failed here'\n\n"
        "def test_b_skips():\n    pytest.skip('platform: the second process skipped this')\n"
    ),
    "test_c.py": "def test_c():\n    assert True\n",
    "test_d.py": (
        "import pytest\n\n"
        "@pytest.mark.deselect_if(True, reason='not for this run: d')\n"
        "def test_d_deselected():\n    assert False\n\n"
        "def test_d():\n    assert True\n"
    ),
}


def _run(tmp_path: Path, *args: str, **env_updates: str) -> subprocess.CompletedProcess:
    for name in ("conftest.py", "suite.py"):
        shutil.copy(HERE / name, tmp_path / name)
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "pytest.ini").write_text("[pytest]\ntestpaths = .\n")
    drop = ("CI", "PACKEDFUN_TEST_FULL", "PACKEDFUN_QUICK_PART", "PACKEDFUN_QUICK_SPLIT",
            "PACKEDFUN_ALONGSIDE_CHILD", "PACKEDFUN_CTYPES_SUITE",
            "PACKEDFUN_PYTHON_MATRIX")  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(env_updates)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", *args],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300, check=False,
    )  # fmt: skip


def _closing_list(out: str) -> str:
    return out.split("not run in this quick run", 1)[1]


def test_second_process_runs_every_other_file_and_its_results_count(tmp_path):
    proc = _run(tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    # The main process ran a and c only; the second process b and d.
    second = next(line for line in out.splitlines() if line.startswith("SECOND PROCESS:"))
    assert "3 passed, 1 skipped, 1 deselected" in second, second
    main_summary = out.strip().splitlines()[-1]
    assert "2 passed" in main_summary and "skipped" not in main_summary, main_summary
    # Its deselection and its skip join the main run's closing list, each once.
    closing = _closing_list(out)
    assert "DESELECTED [1] not for this run: d" in closing, closing
    assert "SKIPPED [1] platform: the second process skipped this" in closing, closing
    assert "test_b.py::test_b_skips" in closing


def test_a_failure_in_the_second_process_fails_the_run_with_its_output(tmp_path):
    proc = _run(tmp_path, B_FAILS="1")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "b failed here" in out  # the second process's failure report, printed by the main run
    second = next(line for line in out.splitlines() if line.startswith("SECOND PROCESS:"))
    assert "1 failed" in second, second


def test_one_process_when_asked_or_when_files_are_named(tmp_path):
    for proc in (
        _run(tmp_path, B_FAILS="1", PACKEDFUN_QUICK_SPLIT="0"),
        _run(tmp_path, "test_a.py", "test_b.py", B_FAILS="1"),
        _run(tmp_path, "-k", "b_may_fail", B_FAILS="1"),
    ):
        out = proc.stdout + proc.stderr
        assert proc.returncode == 1, out
        assert "SECOND PROCESS" not in out, out
        assert "b failed here" in out


def test_the_full_run_does_not_split(tmp_path):
    proc = _run(tmp_path, PACKEDFUN_TEST_FULL="1")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "SECOND PROCESS" not in out, out
    last = out.strip().splitlines()[-1]
    assert "5 passed, 1 skipped, 1 deselected" in last, last
