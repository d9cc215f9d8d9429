# Runs the C++ unit tests (GoogleTest, tests/cpp) and the ABI layout test through CMake + CTest.
"""Configure and build the C++ tests in ``build/cpp-tests`` and run them with ``ctest``; then the
same with AddressSanitizer + UndefinedBehaviorSanitizer in ``build/cpp-tests-asan``.

Outside CI a machine without CMake or GoogleTest skips this test; in CI (``CI=true``) their absence
fails it, so the C++ suite can never silently drop out of the test run.
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import suite

REPO_ROOT = Path(__file__).resolve().parents[2]
BUILD_DIR = REPO_ROOT / "build" / "cpp-tests"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
JOBS = "2"
O2_NO_DEBUG_INFO = [
    "-DCMAKE_BUILD_TYPE=Release",
    "-DCMAKE_C_FLAGS_RELEASE=-O2 -DNDEBUG",
    "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG",
]
# The sanitized build: -O1 (the sanitizers' authors' advice) with line tables only (-g1, file:line
# in the reports). Measured on tests/cpp/test_function.cc under ASan+UBSan: 42 s of compiler CPU
# at -O2 -g, 23 s at -O1 -g1; the whole build had run past its 30-minute limit on a loaded 2-core
# machine.
O1_LINE_TABLES = [
    "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
    "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG",
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG",
]


def _missing(reason: str) -> None:
    if IN_CI:
        pytest.fail(f"{reason} (CI=true: the C++ unit tests must run in CI)")
    pytest.skip(reason)


def _run(cmd: list, timeout: int) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(c) for c in cmd],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )


def _tail(proc: subprocess.CompletedProcess, limit: int = 8000) -> str:
    return (proc.stdout + proc.stderr)[-limit:]


def _configure(cmake: str, build_dir: Path, extra: list) -> subprocess.CompletedProcess:
    cmd = [
        cmake, "-S", REPO_ROOT, "-B", build_dir,
        "-DPACKEDFUN_BUILD_TESTS=ON", "-DPACKEDFUN_BUILD_PYTHON=OFF",
        "-DPACKEDFUN_MIRROR_INPLACE=OFF", *extra,
    ]  # fmt: skip
    if shutil.which("ninja"):
        cmd += ["-G", "Ninja"]
    proc = _run(cmd, timeout=600)
    if proc.returncode != 0 and (build_dir / "CMakeCache.txt").exists():
        # A cache from another generator or another checkout: start over once.
        shutil.rmtree(build_dir)
        proc = _run(cmd, timeout=600)
    return proc


def _build_and_test(build_dir: Path, extra: list) -> None:
    cmake = shutil.which("cmake")
    ctest = shutil.which("ctest")
    if cmake is None or ctest is None:
        _missing("cmake/ctest not found on PATH")
    if not (REPO_ROOT / "CMakeLists.txt").is_file():
        pytest.skip("not running from a source checkout")

    proc = _configure(cmake, build_dir, extra)
    if proc.returncode != 0:
        if "GTest" in proc.stdout + proc.stderr:
            pytest.fail("CMake could not configure the vendored GoogleTest:\n" + _tail(proc))
        pytest.fail("CMake configure of the C++ tests failed:\n" + _tail(proc))

    # What CTest runs: the test executables (their fixture libraries and the runtime come as
    # dependencies); the abi.layout test builds its objects itself. Not the testing library.
    targets = sorted(p.stem for p in (REPO_ROOT / "tests" / "cpp").glob("test_*.cc"))
    proc = _run([cmake, "--build", build_dir, "-j", JOBS, "--target", *targets], timeout=1800)
    if proc.returncode != 0:
        pytest.fail("Building the C++ tests failed:\n" + _tail(proc))

    proc = _run([ctest, "--test-dir", build_dir, "--output-on-failure", "-j", JOBS], timeout=1800)
    output = proc.stdout + proc.stderr
    if proc.returncode != 0:
        pytest.fail("ctest failed:\n" + _tail(proc))
    # "100% tests passed out of 18" (CMake 4) or "100% tests passed, 0 tests failed out of 18".
    match = re.search(r"(\d+)% tests passed(?:, (\d+) tests failed)? out of (\d+)", output)
    assert match is not None, "ctest printed no summary:\n" + output[-4000:]
    assert match.group(1) == "100" and match.group(2) in (None, "0"), output[-4000:]
    assert int(match.group(3)) > 0, "ctest ran no test:\n" + output[-4000:]
    cpp_tests = re.findall(r"Test +#\d+: cpp\.", output)
    assert cpp_tests, "no GoogleTest executable (tests/cpp/test_*.cc) was registered:\n" + output


@pytest.mark.deselect_if(
    os.environ.get("PACKEDFUN_BACKEND") == "ctypes",
    reason="backend-independent: runs in the default-backend pass",
)
@pytest.mark.parametrize(
    ("variant", "extra"),
    # The plain build leaves the tvm-ffi interop out (no C++ unit test uses it): the runtime must
    # build and pass without it. It is optimized as RelWithDebInfo (-O2) without the debug info,
    # a third of its compile time (backtraces are named from ELF symbol tables, not DWARF). The
    # sanitized build has the interop, as the Python package does, and line tables for file:line
    # in its reports.
    [
        ("plain", ["-DPACKEDFUN_WITH_TVM_FFI=OFF", *O2_NO_DEBUG_INFO]),
        pytest.param(
            "asan-ubsan",
            ["-DPACKEDFUN_SANITIZE=ON", *O1_LINE_TABLES],
            marks=suite.full_only("the C++ unit tests again under ASan+UBSan"),
        ),
    ],
)
def test_cpp_unit_tests_pass(variant, extra):
    filelock = suite.require("filelock")
    build_dir = BUILD_DIR if variant == "plain" else BUILD_DIR.with_name(f"cpp-tests-{variant}")
    build_dir.parent.mkdir(parents=True, exist_ok=True)
    # Two pytest processes (e.g. both backends at once) must not build the same tree together.
    with filelock.FileLock(str(build_dir.parent / f"{build_dir.name}.lock"), timeout=3600):
        _build_and_test(build_dir, extra)
        with_bridge = "-DPACKEDFUN_WITH_TVM_FFI=OFF" not in extra
        assert _has_tvm_ffi_bridge(build_dir / "libpackedfun.so") == with_bridge, (
            f"PACKEDFUN_WITH_TVM_FFI={'ON' if with_bridge else 'OFF'} not honoured"
        )


def _has_tvm_ffi_bridge(library: Path) -> bool:
    """Whether the runtime has the tvm-ffi bridge compiled in (its symbols, hidden but in the
    symbol table of these unstripped builds)."""
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("nm not found on PATH")
    proc = _run([nm, "-C", library], timeout=120)
    assert proc.returncode == 0, _tail(proc)
    assert "PFModuleLoadFromFile" in proc.stdout, "nm listed no runtime symbol"
    return "packedfun::detail::tvmffi::" in proc.stdout
