# Runs tests/sanitize/run.py: the whole Python suite on both backends under ASan+UBSan (issue 13).
"""Part of the full run (``PACKEDFUN_TEST_FULL=1``, what CI runs; ``PACKEDFUN_SANITIZE=1`` adds it
to the quick run): builds packedfun with ASan+UBSan and runs every test file on both backends
under it (the runner lists the few files it leaves out, and why; docs/reliability.md too): zero
sanitizer reports and zero failures, with leak checking shown to be live (the runner's deliberate
leak is reported). gcc's sanitizer runtimes (``gcc -print-file-name=libasan.so`` and
``libubsan.so``) are needed: without them the test skips, which the full run's skip policy makes a
failure (``suite.py``). ``PACKEDFUN_SANITIZE=subset`` runs the runner's short subset instead. It
runs in its turn in the main run, not alongside: run beside the main run and its other children,
it gave no measurable gain on the 2-core machine (the full run is CPU-bound) and stretched every
sanitized test (apache-tvm-ffi's suite took 250 s in the ``_core`` pass).

The re-runs of this suite (the ctypes pass, the sanitized passes themselves, the second-Python
run) do not collect this file: the main run already covers both backends from here
(``conftest.py``)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import suite

REPO = Path(__file__).resolve().parents[2]
RUNNER = REPO / "tests" / "sanitize" / "run.py"
sys.path.insert(0, str(RUNNER.parent))
import run as sanitize  # noqa: E402

MODE = os.environ.get("PACKEDFUN_SANITIZE", "")


@pytest.mark.deselect_if(
    not suite.FULL and MODE not in ("1", "all", "subset"),
    reason="full run only (PACKEDFUN_TEST_FULL=1, or PACKEDFUN_SANITIZE=1): the whole suite on "
    "both backends under ASan+UBSan",
)
@pytest.mark.skipif(MODE == "0", reason="PACKEDFUN_SANITIZE=0 turns the sanitized run off")
def test_python_suite_is_clean_under_asan_and_ubsan():
    if sanitize.asan_runtime() is None:
        pytest.skip("gcc's ASan/UBSan runtimes (gcc -print-file-name=libasan.so) are not installed")
    if not (REPO / "CMakeLists.txt").is_file():
        pytest.skip("not running from a source checkout")
    suite.require("filelock")  # the runner holds build/sanitize.lock while it builds
    limit = sanitize.PASS_TIMEOUT + 1200  # + the build
    args = ["--subset"] if MODE == "subset" else []
    proc = subprocess.run(
        [sys.executable, str(RUNNER), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=limit,
    )
    output = proc.stdout + proc.stderr
    summaries = [line for line in output.splitlines() if line.startswith("== backend ")]
    print("\n".join(line for line in output.splitlines() if line.startswith("== ")))
    assert proc.returncode == 0, output[-12000:]
    clean = [s for s in summaries if re.search(r" 0 sanitizer reports .* \d+ passed", s)]
    assert len(clean) == 2 and not any(" failed" in s for s in summaries), output[-6000:]
    assert "reported on 2 of 2 backends" in output, output[-6000:]  # leak checking was live
