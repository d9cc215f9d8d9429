# The prepared GPU check (tools/gpu_check/run.py): its list of GPU tests is complete, its table
# reads pytest's results right, and its dry run (no CUDA device) builds and exits 0.
import importlib.util
import os
import re
import subprocess
import sys
import textwrap

import pytest
import suite

ROOT = suite.REPO
RUN = ROOT / "tools" / "gpu_check" / "run.py"

_spec = importlib.util.spec_from_file_location("gpu_check_run", RUN)
gpu_check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gpu_check)

# A skip for want of a GPU, as the suite writes it (suite.ALLOWED_SKIPS' first entry).
_GPU_SKIP = re.compile(r"""(skip\(|reason=)\s*["']no CUDA (GPU|device)""")
# Files whose "no CUDA" skips are not tests of their own.
EXEMPT = {
    "tests/python/test_skip_policy.py",  # a sample suite it writes and runs in a child
    # Not yet in the check: its CUDA steps need apache-tvm-ffi's sdist (examples/) from PyPI,
    # which the device machine cannot reach; packing it (PACKEDFUN_TVM_FFI_SDIST_CACHE) is open.
    "tests/python/test_tvm_ffi_examples.py",
}


def test_every_test_file_that_skips_without_a_gpu_is_in_the_check():
    listed = set(gpu_check.GPU_TEST_FILES)
    for path in listed:
        assert (ROOT / path).is_file(), path
    skipping = {
        f"tests/python/{p.name}"
        for p in (ROOT / "tests" / "python").glob("test_*.py")
        if _GPU_SKIP.search(p.read_text())
    }
    assert "tests/python/test_gpu.py" in skipping  # the pattern finds the suite's way of skipping
    assert skipping - EXEMPT <= listed, (
        f"not run by the GPU check: {sorted(skipping - EXEMPT - listed)}"
    )


def test_every_row_names_tests_that_exist():
    names = []
    for path in gpu_check.GPU_TEST_FILES:
        source = (ROOT / path).read_text()
        names += [f"{path}::{n}" for n in re.findall(r"^def (test_\w+)", source, re.M)]
    for row, pattern in gpu_check.ROWS:
        assert any(re.search(pattern.replace("$", ""), n) for n in names), row


JUNIT = textwrap.dedent("""\
    <testsuites><testsuite>
    <testcase classname="tests.python.test_gpu" name="test_torch_tensors_zero_copy_in_and_x"/>
    <testcase classname="tests.python.test_gpu" name="test_cupy_arrays_zero_copy_and_y">
      <failure message="AssertionError: the consumer's kernel ran before">trace</failure>
    </testcase>
    <testcase classname="tests.python.test_gpu" name="test_jax_arrays_zero_copy_in">
      <skipped message="cupy cannot be imported"/>
    </testcase>
    <testcase classname="tests.python.test_gpu" name="test_use_stream_forms_order[raw int]"/>
    <testcase classname="tests.python.test_gpu" name="test_use_stream_forms_order[use_stream]">
      <error message="fixture failed"/>
    </testcase>
    </testsuite></testsuites>
""")


def test_the_table_reads_pytests_results(tmp_path):
    xml = tmp_path / "r.xml"
    xml.write_text(JUNIT)
    results = gpu_check.pytest_results(str(xml))
    assert results["tests/python/test_gpu.py::test_jax_arrays_zero_copy_in"][0] == "skip"
    rows = dict(gpu_check.ROWS)
    assert gpu_check.row_status(results, rows["DLPack zero-copy in/out: torch"]) == (
        "pass",
        "1 test(s)",
    )
    status, why = gpu_check.row_status(
        results, rows["DLPack zero-copy + producer stream protocol: CuPy"]
    )
    assert status == "FAIL" and "consumer's kernel" in why
    assert gpu_check.row_status(results, rows["DLPack zero-copy in: JAX"])[0] == "skip"
    forms = rows["stream: use_stream / use_raw_stream / StreamContext / int"]
    assert gpu_check.row_status(results, forms)[0] == "FAIL"  # one form of two failed
    assert gpu_check.row_status(results, rows["8 threads, 8 streams"])[0] == "missing"
    assert gpu_check.pytest_results(str(tmp_path / "absent.xml")) == {}


@pytest.mark.deselect_if(
    os.environ.get("PACKEDFUN_BACKEND") == "ctypes",
    reason="the dry run runs both backends itself: runs in the default-backend pass",
)
@suite.full_only("builds packedfun with CMake, runs the GPU test files twice (1-2 minutes)")
def test_dry_run_builds_and_says_no_cuda_device_for_every_row(tmp_path):
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k not in ("OUT", "PACKEDFUN_BACKEND")}
    proc = subprocess.run(
        # the default build folder (build/gpu-check): a rebuild there is incremental
        [sys.executable, str(RUN), "--dry-run", "--out", str(out)],
        capture_output=True, text=True, timeout=600, cwd=ROOT, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    summary = (out / "summary.md").read_text()
    assert "| build (CMake, sm_90) | pass |" in summary, summary
    for row, _ in gpu_check.ROWS:
        assert f"| {row} | skip | skip | no CUDA device |" in summary, (row, summary)
    assert "| other tests in the GPU files (CPU parts) | pass |" in summary, summary
    assert summary.count("| skip | no CUDA device |") >= 8  # the speed rows
    assert len(os.listdir(out)) <= 8  # the device tool brings back 8 files at most
