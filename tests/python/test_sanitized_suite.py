# Runs tests/sanitize/run.py: the whole Python suite on both backends under ASan+UBSan (issue 13).
"""Part of the full run (``PACKEDFUN_TEST_FULL=1``, what CI runs; ``PACKEDFUN_SANITIZE=1`` adds it
to the quick run): builds packedfun with ASan+UBSan and runs every test file on both backends
under it (the runner lists the few files it leaves out, and why; docs/reliability.md too): zero
sanitizer reports and zero failures, with leak checking shown to be live (the runner's deliberate
leak is reported). gcc's sanitizer runtimes (``gcc -print-file-name=libasan.so`` and
``libubsan.so``) are needed: without them the test skips, which the full run's skip policy makes a
failure (``suite.py``). ``PACKEDFUN_SANITIZE=subset`` runs the runner's short subset instead. It
runs alongside (``suite.alongside``): its child starts when collection ends, beside the main run.
In its turn it left the main run's last third to one core (ci60: load average 1.0 there); tried
alongside before (ci58), it gained little while the plain ctypes re-run still ran the whole suite
again, which the ctypes remainder (``conftest.py``) no longer does.

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

MODE = suite.SANITIZE_MODE


@pytest.mark.deselect_if(
    not suite.FULL and MODE not in ("1", "all", "subset"),
    reason="full run only (PACKEDFUN_TEST_FULL=1, or PACKEDFUN_SANITIZE=1): the whole suite on "
    "both backends under ASan+UBSan",
)
@pytest.mark.skipif(MODE == "0", reason="PACKEDFUN_SANITIZE=0 turns the sanitized run off")
@suite.alongside("child runs of the whole suite, one per backend: they run beside the main run")
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


# ---- the plain ctypes re-run keeps what the sanitized ctypes pass leaves out --------------------
_READS_SANITIZER = re.compile(r"PACKEDFUN_SANITIZE_PRELOAD|\bLD_PRELOAD\b")


def test_files_that_change_under_the_sanitizers_stay_in_the_plain_ctypes_rerun():
    """A test file that reads whether it runs sanitized (and so runs smaller or checks less there)
    is run whole by the plain ctypes re-run too: it is listed in suite.SANITIZER_SENSITIVE or
    left out of the sanitized passes altogether."""
    support = {"conftest.py", "suite.py"}
    left_out = set(sanitize.EXCLUDED) | set(sanitize.EXCLUDED_ON["ctypes"])
    readers = {
        p.name
        for p in (REPO / "tests" / "python").glob("*.py")
        if p.name not in support and _READS_SANITIZER.search(p.read_text())
    }
    assert "test_soak.py" in readers  # the pattern finds the suite's way of asking
    assert readers - left_out <= set(suite.SANITIZER_SENSITIVE), sorted(
        readers - left_out - set(suite.SANITIZER_SENSITIVE)
    )
    assert set(suite.SANITIZER_SENSITIVE) <= readers, "an entry that no longer reads it"


def _collected_by_ctypes_rerun(remainder: str) -> tuple[set, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PACKEDFUN_ALONGSIDE")}
    env.update(PACKEDFUN_BACKEND="ctypes", PACKEDFUN_CTYPES_SUITE="1", PACKEDFUN_TEST_FULL="1")
    env.update(PACKEDFUN_CTYPES_REMAINDER=remainder, PACKEDFUN_QUICK_SPLIT="0")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/python", "--collect-only", "-q",
         "-p", "no:cacheprovider", "-o", "addopts="],
        capture_output=True, text=True, timeout=600, cwd=REPO, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return {line for line in proc.stdout.splitlines() if "::" in line}, proc.stdout


@suite.full_only("collects the suite twice as the full run's ctypes re-run does")
def test_the_plain_ctypes_rerun_runs_only_what_the_sanitized_ctypes_pass_leaves_out():
    narrowed, output = _collected_by_ctypes_rerun("1")
    files = {node.split("::")[0].rsplit("/", 1)[-1] for node in narrowed}
    # what the sanitized ctypes pass leaves out, and the files that run differently there
    assert "test_tvm_ffi_conformance.py" in files  # EXCLUDED_ON["ctypes"]
    assert "test_skip_policy.py" in files  # EXCLUDED
    assert {"test_soak.py", "test_gc_cycles.py"} <= files  # SANITIZER_SENSITIVE
    # a test of the installed package's files (the sanitized passes run a staged copy), which
    # runs wherever packedfun is pip-installed (CI), not from a dev tree
    pth_test = any("test_installed_wheel_carries_the_pth_file" in n for n in narrowed)
    assert pth_test == suite.packedfun_in_site_dir()
    # and nothing else: the sanitized ctypes pass runs the rest on the same backend
    assert "test_function.py" not in files and "test_container.py" not in files
    assert "the sanitized run's ctypes pass runs it" in output  # the reason, counted at the end
    whole, _ = _collected_by_ctypes_rerun("0")
    assert narrowed < whole and len(whole) > 5 * len(narrowed), (len(narrowed), len(whole))
