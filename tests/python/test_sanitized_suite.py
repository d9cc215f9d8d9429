# Runs tests/sanitize/run.py: the Python suite on both backends under ASan+UBSan (issue 13).
"""Runs when ``PACKEDFUN_SANITIZE=1`` (the subset) or ``PACKEDFUN_SANITIZE=all`` (every file) is
set: a sanitized build plus two sanitized passes take about 10 minutes on a loaded 2-core machine,
past the default run's budget. Skipped with the reason when gcc's ASan runtime is missing, on the
ctypes backend (the runner covers both backends itself) and inside a sanitized or ctypes child."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RUNNER = REPO / "tests" / "sanitize" / "run.py"
sys.path.insert(0, str(RUNNER.parent))
import run as sanitize  # noqa: E402

pytestmark = pytest.mark.skipif(
    os.environ.get("PACKEDFUN_BACKEND") == "ctypes"
    or os.environ.get("PACKEDFUN_CTYPES_SUITE") == "1"
    or bool(os.environ.get("PACKEDFUN_SANITIZE_PRELOAD"))
    or os.environ.get("PACKEDFUN_SANITIZE") == "0",
    reason="the sanitized run covers both backends from the default-backend pass",
)
ENABLED = os.environ.get("PACKEDFUN_SANITIZE", "") in ("1", "all")


def test_python_suite_is_clean_under_asan_and_ubsan():
    if not ENABLED:
        pytest.skip("set PACKEDFUN_SANITIZE=1 (subset) or =all to run the suite under ASan+UBSan")
    if sanitize.asan_runtime() is None:
        pytest.skip("gcc's ASan runtime (gcc -print-file-name=libasan.so) is not installed")
    if not (REPO / "CMakeLists.txt").is_file():
        pytest.skip("not running from a source checkout")
    filelock = pytest.importorskip("filelock")
    (REPO / "build").mkdir(exist_ok=True)
    with filelock.FileLock(str(REPO / "build" / "sanitize.lock"), timeout=3600):
        proc = subprocess.run(
            [sys.executable, str(RUNNER)], cwd=REPO, capture_output=True, text=True, timeout=3000
        )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-12000:]
    summaries = [line for line in output.splitlines() if line.startswith("== backend ")]
    assert sum("passed" in line and "0 sanitizer report" in line for line in summaries) == 2, (
        output[-6000:]
    )
