# Runs the C++ unit tests (GoogleTest, tests/cpp) and the ABI layout test through CMake + CTest.
"""Configure and build the C++ tests in ``build/cpp-tests`` and run them with ``ctest``; then the
same with AddressSanitizer + UndefinedBehaviorSanitizer in ``build/sanitize``, the tree of the
sanitized Python run (``tests/sanitize/run.py``), whose runtime both share.

Outside CI a machine without CMake or GoogleTest skips this test; in CI (``CI=true``) their absence
fails it, so the C++ suite can never silently drop out of the test run.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import suite

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "tests" / "sanitize"))
import run as sanitize  # noqa: E402

BUILD_DIR = REPO_ROOT / "build" / "cpp-tests"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
JOBS = "2"
O2_NO_DEBUG_INFO = [
    "-DCMAKE_BUILD_TYPE=Release",
    "-DCMAKE_C_FLAGS_RELEASE=-O2 -DNDEBUG",
    "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG",
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


def _configure_command(variant: str, cmake: str) -> list:
    if variant == "plain":
        # The plain build leaves the tvm-ffi interop out (no C++ unit test uses it): the runtime
        # must build and pass without it. The runtime is optimized as Release (-O2) without debug
        # info, a third of its compile time (backtraces are named from ELF symbol tables, not
        # DWARF); the tests and GoogleTest are compiled at -O0: they are most of the build, and
        # -O0 takes a quarter of the quick run's C++ build CPU off (they still run in seconds).
        cmd = [
            cmake, "-S", REPO_ROOT, "-B", BUILD_DIR,
            "-DPACKEDFUN_BUILD_TESTS=ON", "-DPACKEDFUN_BUILD_PYTHON=OFF",
            "-DPACKEDFUN_MIRROR_INPLACE=OFF", "-DPACKEDFUN_WITH_TVM_FFI=OFF", *O2_NO_DEBUG_INFO,
            "-DPACKEDFUN_TEST_COMPILE_OPTIONS=-O0",
        ]  # fmt: skip
        return cmd + (["-G", "Ninja"] if shutil.which("ninja") else [])
    # The sanitized build is the sanitized Python run's tree, with the tests added: the runtime
    # (with the interop, as the Python package has it) is compiled once for both, at -O1 with line
    # tables for file:line in the reports. The tests and GoogleTest are compiled at -O0, which
    # halves their compile time under the sanitizers (tests/cpp/test_stl.cc: 22.7 s at -O1, 13.2 s
    # at -O0; gtest-all.cc 25.6 s, 11.7 s), and they still run in seconds.
    return [
        cmake,
        *sanitize.configure_args(cpp_tests=True)[1:],
        "-DPACKEDFUN_TEST_COMPILE_OPTIONS=-O0",
    ]


def _configure(cmd: list, build_dir: Path) -> subprocess.CompletedProcess:
    proc = _run(cmd, timeout=600)
    if proc.returncode != 0 and (build_dir / "CMakeCache.txt").exists():
        # A cache from another generator or another checkout: start over once.
        shutil.rmtree(build_dir)
        proc = _run(cmd, timeout=600)
    return proc


def _build_and_test(variant: str, build_dir: Path) -> None:
    cmake = shutil.which("cmake")
    ctest = shutil.which("ctest")
    if cmake is None or ctest is None:
        _missing("cmake/ctest not found on PATH")
    if not (REPO_ROOT / "CMakeLists.txt").is_file():
        pytest.skip("not running from a source checkout")

    proc = _configure(_configure_command(variant, cmake), build_dir)
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
    "variant",
    [
        "plain",
        pytest.param(
            "asan-ubsan", marks=suite.full_only("the C++ unit tests again under ASan+UBSan")
        ),
    ],
)
def test_cpp_unit_tests_pass(variant):
    filelock = suite.require("filelock")
    build_dir, lock = (
        (BUILD_DIR, BUILD_DIR.with_name("cpp-tests.lock"))
        if variant == "plain"
        else (sanitize.BUILD, sanitize.LOCK)
    )
    build_dir.parent.mkdir(parents=True, exist_ok=True)
    # Two pytest processes (e.g. both backends at once, or this test and the sanitized Python run)
    # must not build the same tree together.
    with filelock.FileLock(str(lock), timeout=3600):
        _build_and_test(variant, build_dir)
        with_bridge = variant != "plain"
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
