# pytest hooks of the Python suite: the tests a run leaves to another run, deselected with reasons.
"""The README's test command runs this suite several times: the main run, its ctypes re-run
(``test_ctypes_backend.py``), the sanitized passes on both backends (``test_sanitized_suite.py``)
and the second-Python run (``test_python_versions.py``, with ``PACKEDFUN_PYTHON_MATRIX=child``; its
ctypes re-run inherits it). A test that does not apply to a run is deselected there, not skipped,
so that a skip always means something is missing (a GPU):

* ``@pytest.mark.deselect_if(condition, reason=...)``: deselected where ``condition`` holds, e.g. a
  test of one backend's mechanism in the other backend's run, or a backend-independent test in the
  ctypes re-run (the main run has it).
* In the second-Python run, the tests whose subject does not depend on the Python version
  (``VERSION_INDEPENDENT``), which the main run covers, so that the second interpreter costs CI
  minutes only where it can find something new.
* In the full run's ctypes re-run, when the sanitized run also runs the whole suite on the ctypes
  backend (``suite.sanitized_run_covers_ctypes()``): the tests that pass runs
  (``suite.in_sanitized_ctypes_pass``), so the plain re-run runs only what it leaves out (files its
  runner excludes, files whose sizes change under the sanitizers, tests of the installed files).

* In the quick run (the default), the tests of the full run only (``@suite.full_only``): the
  ctypes re-run, the second Python, the sanitized runs, the cluster tests (``suite.py``).

A test marked ``@suite.alongside(why)`` (the ctypes re-run, the second-Python run: tests that only
wait for a child run of the suite) runs in a child pytest of its own, started as soon as collection
ends, so that it runs beside the other tests instead of after them; the test itself is moved to
the end of the run, where it waits for that child and takes its outcome (passed, failed with the
child's output, or skipped with the child's reason, which the skip policy then judges here). The
child gets ``PACKEDFUN_ALONGSIDE_CHILD`` set to the test's id and runs the test body itself.

The end of the run lists what was deselected, by reason, and every skip with its reason. In the
full run and in CI a skip whose reason is not in ``suite.ALLOWED_SKIPS`` is made a failure here
(``pytest_runtest_makereport``, ``pytest_make_collect_report``): a test that cannot run where it
should is never green."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import suite

SECOND_PYTHON_RUN = os.environ.get("PACKEDFUN_PYTHON_MATRIX") == "child"
# The re-runs of this suite that the main run starts (its ctypes pass, the sanitized passes of
# tests/sanitize/run.py, the second-Python run) do not collect test_sanitized_suite.py: the main
# run drives the sanitized run once for both backends, and a re-run starting it again would recurse.
SUITE_RERUN = (
    SECOND_PYTHON_RUN
    or os.environ.get("PACKEDFUN_CTYPES_SUITE") == "1"
    or bool(os.environ.get("PACKEDFUN_SANITIZE_PRELOAD"))
)


# The full run's ctypes re-run, when the sanitized run's ctypes pass runs the whole suite on the
# same backend: it runs only what that pass leaves out (suite.in_sanitized_ctypes_pass says which).
CTYPES_REMAINDER = suite.CTYPES_REMAINDER and os.environ.get("PACKEDFUN_CTYPES_SUITE") == "1"


def pytest_ignore_collect(collection_path, config):  # noqa: ANN001, ANN201 - pytest hook
    if SUITE_RERUN and collection_path.name == "test_sanitized_suite.py":
        return True
    return None


# file name (or file::test) -> why the main run's result holds for every Python version
VERSION_INDEPENDENT = {
    "test_cpp_unit.py": "the C++ unit tests (CTest) involve no Python",
    "test_tvm_ffi_cpp_conformance.py": "apache-tvm-ffi's C++ tests built with g++: no Python",
    "test_lint.py": "the linters and formatters check source text with pinned versions",
    "test_benchmarks_smoke.py": "benchmark smoke run (timings are not tested)",
    "test_scaling_smoke.py": "scaling benchmark smoke run (timings are not tested)",
    "test_soak.py": "long leak and growth checks",
    "test_docs.py::test_site_builds_without_warnings": "the Sphinx build reads source text",
    "test_cpp_cuda.py": "nvcc builds: the compiler's work is the same on any Python",
    "test_config.py::test_flags_work_with_nvcc": "an nvcc build with the printed flags",
    "test_tvm_ffi_examples.py::test_quickstart_cuda": "an nvcc build of the example",
    "test_tvm_ffi_examples.py::test_cubin_launcher": "an nvcc build of the example's cubin",
    "test_example_add_one.py::test_cuda_version_compiles": "an nvcc build of the example",
    "test_gpu_check.py::test_dry_run_builds_and_says_no_cuda_device_for_every_row": (
        "the GPU check's dry run builds with CMake; on a GPU it runs under that machine's Python"
    ),
}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "deselect_if(condition, reason): deselected (not skipped) where condition holds: the test "
        "does not apply to this run (tests/python/conftest.py)",
    )
    config.addinivalue_line(
        "markers",
        "alongside(reason): runs in a child pytest started when collection ends, beside the other "
        "tests; the test takes its outcome at the end of the run (tests/python/conftest.py)",
    )
    # The full run ends with its slowest tests, so CI's output shows where its budget goes.
    if suite.FULL and not config.option.durations:
        config.option.durations = 30


def _deselection_reason(item: pytest.Item) -> str | None:
    # Tests marked crash_isolated (hostile input to native code) run only inside the child process
    # that their file starts for them (PACKEDFUN_FUZZ_CHILD=1), which runs every one of them.
    if item.get_closest_marker("crash_isolated") and os.environ.get("PACKEDFUN_FUZZ_CHILD") != "1":
        return "run by the crash-isolating child process of their file"
    for mark in item.iter_markers("deselect_if"):
        if mark.args[0]:
            return mark.kwargs["reason"]
    if CTYPES_REMAINDER and suite.in_sanitized_ctypes_pass(item):
        return (
            "ctypes re-run: the sanitized run's ctypes pass runs it in this full run (the same "
            "backend, under ASan+UBSan)"
        )
    if SECOND_PYTHON_RUN:
        key = item.path.name
        reason = VERSION_INDEPENDENT.get(key) or VERSION_INDEPENDENT.get(f"{key}::{item.name}")
        if reason is not None:
            return f"second-Python run: {reason}"
    return None


_DESELECTED: dict[str, int] = {}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The second process's files leave first: it deselects (and counts) their tests itself.
    if _splits_quick_run(config):
        _split_quick_run(config, items)
    keep, drop = [], []
    for item in items:
        reason = _deselection_reason(item)
        if reason is None:
            keep.append(item)
        else:
            drop.append(item)
            _DESELECTED[reason] = _DESELECTED.get(reason, 0) + 1
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    # The alongside tests wait at the end; their children run meanwhile.
    if not suite.ALONGSIDE_CHILD:
        late = [item for item in items if item.get_closest_marker("alongside")]
        if late:
            items[:] = [item for item in items if not item.get_closest_marker("alongside")] + late


# ---- the quick run on two processes -------------------------------------------------------------
# The quick run (the default `python -m pytest`, whole suite) runs every other test file in a second
# pytest process started when collection ends, so that both cores of a 2-core machine work (most of
# the suite is one Python process waiting on itself). The full run does not split: its alongside
# children (the ctypes re-run, the second Python, the sanitized passes) keep the cores busy. The
# second process is a plain pytest run of its files (same conftest, same rules); the main run waits
# for it at the end, takes its deselections and skips into the closing list, prints its summary, and
# fails when it failed.
# PACKEDFUN_QUICK_SPLIT=0 runs the quick run in one process.
QUICK_PART = os.environ.get("PACKEDFUN_QUICK_PART", "")  # "2" in the second process
_QUICK_SECOND: list = []  # the second process's _Alongside, once started


def _splits_quick_run(config: pytest.Config) -> bool:
    return (
        not suite.FULL
        and not SUITE_RERUN
        and not suite.ALONGSIDE_CHILD
        and not QUICK_PART
        and os.environ.get("PACKEDFUN_QUICK_SPLIT", "1") != "0"
        and config.args_source == pytest.Config.ArgsSource.TESTPATHS  # no files named
        and not config.option.keyword
        and not config.option.markexpr
        and not config.option.collectonly
        and not config.option.maxfail  # -x, --maxfail: one process stops where it should
    )


def _split_quick_run(config: pytest.Config, items: list[pytest.Item]) -> None:
    files = sorted({item.path for item in items})
    second = set(files[1::2])
    items[:] = [item for item in items if item.path not in second]
    config.stash[_SECOND_FILES] = sorted(second)


_SECOND_FILES = pytest.StashKey[list]()


def _start_second_process(session: pytest.Session) -> None:
    files = session.config.stash.get(_SECOND_FILES, None)
    if files:
        _QUICK_SECOND.append(_Alongside(session.config, [str(f) for f in files], "second process"))


def _merge_second_process(session: pytest.Session) -> None:
    """Waits for the second process; its deselections and skips join this run's, and its failure
    fails this run."""
    for job in _QUICK_SECOND:
        if session.exitstatus == pytest.ExitCode.INTERRUPTED:
            job.kill()
            continue
        job.wait()  # its exit code and summary.json are its outcome (no junit report to read)
        try:
            summary = json.loads((job.folder / "summary.json").read_text())
        except (OSError, ValueError):
            summary = {"deselected": {}, "skipped": {}}
        for reason, count in summary["deselected"].items():
            _DESELECTED[reason] = _DESELECTED.get(reason, 0) + count
        for reason, ids in summary["skipped"].items():
            _SKIPPED.setdefault(reason, []).extend(ids)
        if job.proc.returncode != 0 and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _write_summary_for_the_main_run() -> None:
    path = os.environ.get("PACKEDFUN_QUICK_PART_SUMMARY")
    if QUICK_PART and path:
        Path(path).write_text(json.dumps({"deselected": _DESELECTED, "skipped": _SKIPPED}))


# ---- tests run alongside the others (suite.alongside) -------------------------------------------
ALONGSIDE_LIMIT = 2 * 3600  # s; the tests' own subprocess timeouts are shorter


class _Alongside:
    """The child pytest that runs one alongside test; its outcome, wall and CPU seconds."""

    def __init__(self, config: pytest.Config, targets: list[str], name: str) -> None:
        """Runs pytest on `targets`: one alongside test (its node id), or the quick run's second
        process (its files, `name` "second process")."""
        self.nodeid = name
        self.folder = Path(tempfile.mkdtemp(prefix="packedfun-alongside-"))
        self.xml, self.log = self.folder / "report.xml", self.folder / "output.log"
        if name == "second process":
            env = dict(os.environ, PACKEDFUN_QUICK_PART="2",
                       PACKEDFUN_QUICK_PART_SUMMARY=str(self.folder / "summary.json"))  # fmt: skip
        else:
            env = dict(os.environ, PACKEDFUN_ALONGSIDE_CHILD=name)
        cmd = [sys.executable, "-m", "pytest", *targets, "-q", "-rfEs", "-p", "no:cacheprovider",
               "-o", "addopts=", f"--junitxml={self.xml}"]  # fmt: skip
        self.began = time.monotonic()
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen(
                cmd, cwd=config.rootpath, env=env, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        self.outcome: tuple[str, str] | None = None
        self.wall = self.cpu = 0.0

    def wait(self) -> int | None:
        """The child's exit code (None when it ran past ALONGSIDE_LIMIT and was killed); records
        its wall time and the CPU time of its whole process tree."""
        if self.proc.returncode is not None:
            return self.proc.returncode
        while True:
            pid, status, usage = os.wait4(self.proc.pid, os.WNOHANG)
            if pid:
                self.proc.returncode = code = os.waitstatus_to_exitcode(status)
                self.wall = time.monotonic() - self.began
                self.cpu = usage.ru_utime + usage.ru_stime
                return code
            if time.monotonic() - self.began > ALONGSIDE_LIMIT:
                self.kill()
                return None
            time.sleep(0.5)

    def result(self) -> tuple[str, str]:
        """("passed" | "failed" | "skipped", message), waiting for the child."""
        if self.outcome is None:
            self.outcome = self._outcome(self.wait())
        return self.outcome

    def _outcome(self, code: int | None) -> tuple[str, str]:
        output = self.log.read_text(errors="replace") if self.log.exists() else ""
        if code is None:
            return "failed", f"still running after {ALONGSIDE_LIMIT} s: killed\n{output[-12000:]}"
        cases = list(ET.parse(self.xml).getroot().iter("testcase")) if self.xml.exists() else []
        if len(cases) != 1:
            ran = f"the child pytest (exit {code}) ran {len(cases)} tests"
            return "failed", f"{ran}:\n{output[-12000:]}"
        for child in cases[0]:
            if child.tag in ("failure", "error"):
                return "failed", output[-12000:]
            if child.tag == "skipped":
                return "skipped", child.get("message", "")
        if code != 0:
            return "failed", f"the child pytest exited {code}:\n{output[-12000:]}"
        return "passed", output[-6000:]

    def kill(self) -> None:
        if self.proc.returncode is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
            except (ProcessLookupError, ChildProcessError):
                pass


_ALONGSIDE: dict[str, _Alongside] = {}


def pytest_collection_finish(session: pytest.Session) -> None:
    if suite.ALONGSIDE_CHILD or session.config.option.collectonly:
        return
    for item in session.items:
        if item.get_closest_marker("alongside"):
            _ALONGSIDE[item.nodeid] = _Alongside(session.config, [item.nodeid], item.nodeid)
    _start_second_process(session)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    _merge_second_process(session)
    _write_summary_for_the_main_run()


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):  # noqa: ANN001, ANN201 - pytest hook
    job = _ALONGSIDE.get(pyfuncitem.nodeid)
    if job is None:
        return None
    state, message = job.result()
    print(f"ran alongside in a child pytest: {job.wall:.0f} s wall, {job.cpu:.0f} s CPU\n{message}")
    if state == "skipped":
        pytest.skip(message)
    if state == "failed":
        pytest.fail(f"the child pytest running this test failed:\n{message}", pytrace=False)
    return True


def pytest_unconfigure(config: pytest.Config) -> None:
    for job in [*_ALONGSIDE.values(), *_QUICK_SECOND]:
        job.kill()
        shutil.rmtree(job.folder, ignore_errors=True)


# ---- skip policy (suite.ALLOWED_SKIPS) ----------------------------------------------------------
_SKIPPED: dict[str, list[str]] = {}  # reason -> test ids


def _skip_reason(longrepr) -> str:  # noqa: ANN001 - a (path, line, message) tuple or a repr
    text = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return text.removeprefix("Skipped: ")


def _enforce(report, nodeid: str) -> None:  # noqa: ANN001 - a TestReport or CollectReport
    """Records a skip; in a strict run (full or CI) turns a skip for a reason not in the list into
    a failure that says so."""
    if not report.skipped or hasattr(report, "wasxfail"):
        return
    reason = _skip_reason(report.longrepr)
    _SKIPPED.setdefault(reason, []).append(nodeid)
    if suite.STRICT and suite.allowed_skip(reason) is None:
        run = "full run (PACKEDFUN_TEST_FULL=1)" if suite.FULL else "CI run (CI=true)"
        allowed = "; ".join(suite.ALLOWED_SKIPS)
        report.outcome = "failed"
        report.longrepr = (
            f"skipped in the {run} for a reason the skip policy does not allow: {reason}\n"
            f"(allowed: {allowed}; tests/python/suite.py, docs/testing.md)"
        )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):  # noqa: ANN001, ANN201 - pytest hook
    outcome = yield
    _enforce(outcome.get_result(), item.nodeid)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):  # noqa: ANN001, ANN201 - pytest hook
    outcome = yield
    _enforce(outcome.get_result(), collector.nodeid)


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # noqa: ANN001
    write = terminalreporter.write_line
    run = "full run" if suite.FULL else "quick run (PACKEDFUN_TEST_FULL=1: the full run)"
    terminalreporter.write_sep("-", f"not run in this {run}, and why (tests/python/suite.py)")
    for reason, count in sorted(_DESELECTED.items()):
        write(f"DESELECTED [{count}] {reason}")
    for reason, ids in sorted(_SKIPPED.items()):
        allowed = suite.allowed_skip(reason)
        if allowed:
            verdict = f"allowed: {allowed}"
        else:
            verdict = (
                "made a failure: not allowed" if suite.STRICT else "the full run fails on this"
            )
        write(
            f"SKIPPED [{len(ids)}] {reason} ({verdict}): {ids[0]}{' ...' if len(ids) > 1 else ''}"
        )
    if not _DESELECTED and not _SKIPPED:
        write("nothing: every collected test ran")
    for nodeid, job in _ALONGSIDE.items():
        state = job.outcome[0] if job.outcome else "not waited for"
        write(f"ALONGSIDE {nodeid}: {state}, {job.wall:.0f} s wall, {job.cpu:.0f} s CPU")
    for job in _QUICK_SECOND:
        output = job.log.read_text(errors="replace") if job.log.exists() else ""
        lines = [line for line in output.splitlines() if line.strip()]
        last = lines[-1].strip("= ") if lines else "no output"
        terminalreporter.write_sep("-", "the quick run's second process (every other test file)")
        if job.proc.returncode != 0:
            write(output[-12000:])
        write(f"SECOND PROCESS: {last}; {job.wall:.0f} s wall, {job.cpu:.0f} s CPU "
              f"(PACKEDFUN_QUICK_SPLIT=0 runs the quick run in one process)")  # fmt: skip
