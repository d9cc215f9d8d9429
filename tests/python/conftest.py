# pytest hooks of the Python suite: what the second-Python run (test_python_versions.py) skips.
"""``test_python_versions.py`` re-runs this suite on a second CPython with
``PACKEDFUN_PYTHON_MATRIX=child`` (its ctypes re-run inherits it). There, the tests whose subject
does not depend on the Python version, and which the main run covers, are skipped with the reason,
so that the second interpreter costs CI minutes only where it can find something new."""

from __future__ import annotations

import os

import pytest

SECOND_PYTHON_RUN = os.environ.get("PACKEDFUN_PYTHON_MATRIX") == "child"
# The re-runs of this suite that the main run starts (its ctypes pass, the sanitized passes of
# tests/sanitize/run.py, the second-Python run) do not collect test_sanitized_suite.py: the main
# run drives the sanitized run once for both backends, and a re-run starting it again would recurse.
SUITE_RERUN = (
    SECOND_PYTHON_RUN
    or os.environ.get("PACKEDFUN_CTYPES_SUITE") == "1"
    or bool(os.environ.get("PACKEDFUN_SANITIZE_PRELOAD"))
)


def pytest_ignore_collect(collection_path, config):  # noqa: ANN001, ANN201 - pytest hook
    if SUITE_RERUN and collection_path.name == "test_sanitized_suite.py":
        return True
    return None


# file name (or file::test) -> why the main run's result holds for every Python version
VERSION_INDEPENDENT = {
    "test_cpp_unit.py": "the C++ unit tests (CTest) involve no Python",
    "test_lint.py": "the linters and formatters check source text with pinned versions",
    "test_benchmarks_smoke.py": "benchmark smoke run (timings are not tested)",
    "test_scaling_smoke.py": "scaling benchmark smoke run (timings are not tested)",
    "test_soak.py": "long leak and growth checks",
    "test_docs.py::test_site_builds_without_warnings": "the Sphinx build reads source text",
    "test_cpp_cuda.py": "nvcc builds: the compiler's work is the same on any Python",
    "test_config.py::test_flags_work_with_nvcc": "an nvcc build with the printed flags",
    "test_example_add_one.py::test_cuda_version_compiles": "an nvcc build of the example",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Tests marked crash_isolated (hostile input to native code) run only inside the child process
    # that their file starts for them (PACKEDFUN_FUZZ_CHILD=1); elsewhere they are deselected,
    # not skipped, since that child runs every one of them.
    if os.environ.get("PACKEDFUN_FUZZ_CHILD") != "1":
        isolated = [item for item in items if item.get_closest_marker("crash_isolated")]
        if isolated:
            config.hook.pytest_deselected(items=isolated)
            items[:] = [item for item in items if not item.get_closest_marker("crash_isolated")]
    if not SECOND_PYTHON_RUN:
        return
    for item in items:
        key = item.path.name
        reason = VERSION_INDEPENDENT.get(key) or VERSION_INDEPENDENT.get(f"{key}::{item.name}")
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=f"second-Python run: {reason}"))
