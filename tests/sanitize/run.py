# Builds packedfun with ASan+UBSan and runs the Python test suite on both backends under it.
"""Usage::

    python tests/sanitize/run.py            # a representative subset (a few minutes on 2 cores)
    python tests/sanitize/run.py --all      # the whole tests/python suite (PACKEDFUN_SANITIZE=all)
    python tests/sanitize/run.py -- -k map  # extra arguments go to pytest

Steps: configure and build the runtime, the compiled extension and the testing library with
``-fsanitize=address,undefined`` (gcc) into ``build/sanitize``; stage an importable copy of the
package there; run pytest once per backend with the ASan runtime preloaded (CPython itself is not
instrumented), ``PYTHONMALLOC=malloc`` (so ASan sees every Python allocation) and leak checking on,
with the reviewed suppressions of ``lsan.supp`` (CPython's own allocations only). Any sanitizer
report fails the run. Exit status: 0 clean, 1 failures or reports, 77 no sanitizer runtime.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
BUILD = REPO / "build" / "sanitize"
STAGE = BUILD / "python"
REPORTS = BUILD / "reports"  # one file per process that reported (pytest would hide stderr)
SKIP_STATUS = 77
# The subset run by default: the native surface (calls, conversion, errors, callbacks, objects,
# containers, tensors, modules, the JIT cache) and the property tests, without the slow tests
# that only re-run other suites or packaging.
SUBSET = [
    "test_function.py", "test_convert.py", "test_error.py", "test_callback.py",
    "test_object.py", "test_container.py", "test_container_fastpaths.py", "test_registry.py",
    "test_tensor.py", "test_tensor_fastpaths.py", "test_tensor_lifetime.py", "test_module.py",
    "test_reliability_defects.py", "test_fuzz_convert.py", "test_fuzz_containers.py",
    "test_fuzz_tensor.py", "test_gc_cycles.py", "test_soak.py",
]  # fmt: skip
# Never under the sanitizer: they re-run other suites (the C++ tests have their own ASan build,
# the ctypes child is run here directly), lint, package or time things.
EXCLUDED = [
    "test_cpp_unit.py", "test_lint.py", "test_packaging.py", "test_benchmarks_smoke.py",
    "test_sanitized_suite.py",
]  # fmt: skip
REPORT = re.compile(
    r"ERROR: (AddressSanitizer|LeakSanitizer)|runtime error: |SUMMARY: \w+Sanitizer"
)


def asan_runtime() -> str | None:
    """The gcc ASan runtime to preload, or None when there is none."""
    gcc = shutil.which("gcc")
    if gcc is None:
        return None
    out = subprocess.run([gcc, "-print-file-name=libasan.so"], capture_output=True, text=True)
    path = out.stdout.strip()
    if not (os.path.isabs(path) and os.path.exists(path)):
        return None
    # libstdc++ too: CPython does not link it, and ASan's __cxa_throw interceptor must find the
    # real one when the process starts, or the first C++ exception aborts the process.
    out = subprocess.run([gcc, "-print-file-name=libstdc++.so"], capture_output=True, text=True)
    cxx = out.stdout.strip()
    if os.path.isabs(cxx) and os.path.exists(cxx):
        path += ":" + os.path.realpath(cxx)
    return path


def _run(cmd: list, **kwargs) -> None:
    print("$", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, **kwargs)


def build() -> None:
    gen = ["-G", "Ninja"] if shutil.which("ninja") else []
    _run([
        "cmake", "-S", REPO, "-B", BUILD, *gen, "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
        "-DPACKEDFUN_SANITIZE=ON", "-DPACKEDFUN_BUILD_TESTS=OFF",
        "-DPACKEDFUN_MIRROR_INPLACE=OFF", "-DCMAKE_C_COMPILER=gcc", "-DCMAKE_CXX_COMPILER=g++",
        f"-DPython_EXECUTABLE={sys.executable}",
    ])  # fmt: skip
    _run(["cmake", "--build", BUILD, "-j", os.environ.get("PACKEDFUN_SANITIZE_JOBS", "2")])


def stage() -> Path:
    """An importable packedfun under build/sanitize/python with the sanitized binaries."""
    source, package = REPO / "python" / "packedfun", STAGE / "packedfun"
    if package.exists():
        shutil.rmtree(package)
    ignore = shutil.ignore_patterns("lib", "include", "share", "_core*.so", "__pycache__")
    shutil.copytree(source, package, ignore=ignore)
    (package / "lib").mkdir()
    for name in ("libpackedfun.so", "libpackedfun_testing.so"):
        shutil.copy2(BUILD / name, package / "lib" / name)
    for core in BUILD.glob("_core*.so"):
        shutil.copy2(core, package / core.name)
    shutil.copytree(REPO / "include", package / "include")
    shutil.copytree(
        REPO / "third_party" / "dlpack" / "include", package / "include", dirs_exist_ok=True
    )
    return package


def environment(preload: str) -> dict:
    env = dict(os.environ)
    env.update(
        LD_PRELOAD=preload,
        PYTHONMALLOC="malloc",
        PYTHONPATH=os.pathsep.join([str(HERE), str(STAGE)]),
        ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=0:"
        f"allocator_may_return_null=1:print_summary=1:log_path={REPORTS / 'asan'}",
        UBSAN_OPTIONS=f"print_stacktrace=1:halt_on_error=1:log_path={REPORTS / 'ubsan'}",
        LSAN_OPTIONS=f"suppressions={HERE / 'lsan.supp'}:print_suppressions=0",
        PACKEDFUN_CACHE_DIR=str(BUILD / "jit"),
        PACKEDFUN_CTYPES_SUITE="1",  # the ctypes pass is run here, not as a child of the first
        PYTHONDONTWRITEBYTECODE="1",
        PACKEDFUN_FUZZ=os.environ.get("PACKEDFUN_FUZZ", "15"),  # ASan makes each example slower
    )
    env.pop("PACKEDFUN_SANITIZE_PRELOAD", None)
    return env


def run_backend(backend: str, files: list, extra: list, env: dict) -> tuple[int, str, float]:
    env = dict(env, PACKEDFUN_BACKEND=backend)
    tests = [str(REPO / "tests" / "python" / f) for f in files]
    ignores = [f"--ignore={REPO / 'tests' / 'python' / f}" for f in EXCLUDED]
    cmd = [sys.executable, "-m", "pytest", *tests, *ignores, "-q", "-p", "no:cacheprovider", *extra]
    print(f"== backend {backend}: {len(files)} test files", flush=True)
    start = time.monotonic()
    limit = float(os.environ.get("PACKEDFUN_SANITIZE_TIMEOUT", "2400"))
    try:  # a hang (seen once: a process pool in test_cpp_cache.py) must fail, not wait forever
        proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=limit)
        code, output = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else ""
        code, output = 124, out + f"\n== backend {backend}: timed out after {limit:.0f} s"
    print(output[-6000:], flush=True)
    return code, output, time.monotonic() - start


def main(argv: list) -> int:
    run_all = "--all" in argv or os.environ.get("PACKEDFUN_SANITIZE") == "all"
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    preload = asan_runtime()
    if preload is None:
        print("no ASan runtime (gcc -print-file-name=libasan.so found none): skipped")
        return SKIP_STATUS
    build()
    stage()
    if run_all:
        files = sorted(p.name for p in (REPO / "tests" / "python").glob("test_*.py"))
        files = [f for f in files if f not in EXCLUDED]
    else:
        files = SUBSET
    env, status = environment(preload), 0
    for backend in ("_core", "ctypes"):
        shutil.rmtree(REPORTS, ignore_errors=True)
        REPORTS.mkdir(parents=True)
        code, output, seconds = run_backend(backend, files, extra, env)
        for report in sorted(REPORTS.iterdir()):
            text = report.read_text(errors="replace")
            print(f"---- {report.name}\n{text[:8000]}", flush=True)
            output += text
        reports = REPORT.findall(output)
        summary = re.findall(r"^=*\s*(\d+ passed.*?)\s*=*$", output, re.M)
        counts = summary[-1] if summary else "no summary"
        print(f"== backend {backend}: exit {code}, {len(reports)} sanitizer report lines, "
              f"{counts}, {seconds:.0f} s", flush=True)  # fmt: skip
        if code != 0 or reports:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
