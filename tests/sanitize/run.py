# Builds packedfun with ASan+UBSan and runs the Python test suite on both backends under it.
"""Usage::

    python tests/sanitize/run.py             # the whole tests/python suite, both backends
    python tests/sanitize/run.py --subset    # the native surface only (a quick check)
    python tests/sanitize/run.py -- -k map   # extra arguments go to pytest
    python tests/sanitize/run.py --files test_threads.py test_gc_cycles.py  # these files only

Steps: configure and build the runtime, the compiled extension and the testing library with
``-fsanitize=address,undefined`` (gcc) into ``build/sanitize``; stage an importable copy of the
package there; run pytest on the two backends side by side (one core each), each with the ASan
runtime preloaded (CPython itself is not instrumented), ``PYTHONMALLOC=malloc`` (so ASan sees every
Python allocation) and leak checking on, with the reviewed suppressions of ``lsan.supp`` (CPython's
own allocations only). Before the passes, a child on each backend leaks a packedfun object on
purpose: the run fails unless the leak check reports it (so a clean run means the check was on).
Any sanitizer report fails the run; a test that runs past
``PACKEDFUN_SANITIZE_TEST_TIMEOUT`` seconds (600) fails (``per_test_timeout.py``), and a backend's
pass still running after ``PACKEDFUN_SANITIZE_TIMEOUT`` seconds (3600) is killed and fails. The
files of ``EXCLUDED`` are not run, each for its reason, nor those of ``EXCLUDED_ON`` in one
backend's pass (unless ``--files`` names only such files), nor the single tests of
``DESELECTED``. ``--files`` takes file names of
``tests/python`` (with or without the directory) and runs only those, on both backends
(``PACKEDFUN_SANITIZE_BACKEND=_core`` or ``ctypes`` for one).
Exit status: 0 clean, 1 failures or reports, 77 no sanitizer runtime.
"""

from __future__ import annotations

import contextlib
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
BUILD = REPO / "build" / "sanitize"
# Held (filelock) by whoever builds in BUILD: this runner while it builds and stages, and
# tests/python/test_cpp_unit.py while it builds and runs the C++ unit tests there. The passes run
# from the staged copy, so the C++ unit tests may build in the tree while they run.
LOCK = REPO / "build" / "sanitize.lock"
STAGE = BUILD / "python"
REPORTS = BUILD / "reports"  # one file per process that reported (pytest would hide stderr)
SKIP_STATUS = 77
#: Seconds a backend's pass may run before it is killed (PACKEDFUN_SANITIZE_TIMEOUT).
PASS_TIMEOUT = float(os.environ.get("PACKEDFUN_SANITIZE_TIMEOUT", "3600"))
# The subset of ``--subset`` (a quick check while developing): the native surface (calls,
# conversion, errors, callbacks, objects, containers, tensors, modules, the JIT cache) and the
# property tests.
SUBSET = [
    "test_function.py", "test_convert.py", "test_error.py", "test_callback.py",
    "test_object.py", "test_container.py", "test_container_fastpaths.py", "test_registry.py",
    "test_tensor.py", "test_tensor_fastpaths.py", "test_tensor_lifetime.py", "test_module.py",
    "test_reliability_defects.py", "test_fuzz_convert.py", "test_fuzz_containers.py",
    "test_fuzz_tensor.py", "test_gc_cycles.py", "test_soak.py", "test_cpp_cache.py",
    "test_processes.py",
]  # fmt: skip
# Never under the sanitizer, each for its reason (docs/reliability.md lists them too). None of them
# runs packedfun's Python-facing code in its own process, so the whole-suite run leaves nothing out.
EXCLUDED = {
    "test_sanitized_suite.py": "starts this runner: it would recurse",
    "test_cpp_unit.py": "the C++ unit tests (CTest, no Python): the main run already runs them "
    "plain and under ASan+UBSan (in this build tree, with the tests added)",
    "test_tvm_ffi_cpp_conformance.py": "compiles apache-tvm-ffi's C++ tests (no Python) without "
    "the sanitizers, so their header code would run uninstrumented: the main run runs them, and "
    "packedfun's own C++ unit tests run under ASan+UBSan",
    "test_python_versions.py": "re-runs the whole suite on a second CPython with its own "
    "unsanitized pip build: no code of its own to check",
    "test_ci_script.py": "checks the text of .ci/run and README.md (no packedfun code runs)",
    "test_skip_policy.py": "runs pytest on a small generated suite to check the skip policy of "
    "conftest.py (no packedfun code runs)",
    "test_quick_split.py": "runs pytest on small generated suites to check the quick run's second "
    "process (conftest.py; no packedfun code runs)",
    "test_lint.py": "runs ruff, mypy and clang-format on the source text",
    "test_packaging.py": "pip-installs packedfun and an example project (an unsanitized build); "
    "the example's calls are covered by the suite's own tests",
    "test_example_python_packaging.py": "builds an unsanitized packedfun wheel and pip-installs "
    "an example package against it: a packaging test, as test_packaging.py",
    "test_wheel.py": "builds a release wheel with pip (whose isolated build environment has its "
    "own sitecustomize, so the compilers it starts would inherit the preload) and tests the "
    "installed, unsanitized wheel in a fresh virtual environment: a packaging test, as "
    "test_packaging.py",
    "test_benchmarks_smoke.py": "times packedfun against its peers' extensions, built "
    "unsanitized, in a child with no sanitizer: only timings are checked",
    "test_scaling_smoke.py": "a timing report run in a child process (timings are not tested)",
    "test_sanitize_forced_unwind.py": "builds and runs its own ASan program (no packedfun), with "
    "and without the forced-unwind preload, which the run's environment would impose on it",
    "test_sanitize_dtls.py": "builds and runs its own ASan program (no packedfun), with and "
    "without the ASan option the run's environment would impose on it",
    "test_gpu_check.py": "the GPU check's dry run builds its own unsanitized packedfun "
    "(build/gpu-check) and runs the GPU test files on that build; its other tests read the "
    "check's tables and the test files' text",
}
# Left out of one backend's pass only. The ctypes pass runs the same native code as the _core
# pass; it is there for what the ctypes backend does natively (its own buffers, handles and
# lifetimes). These files spend most of their time elsewhere: compiling, or in apache-tvm-ffi's
# suite through the bridge, whose native side the _core pass runs under the sanitizers and whose
# ctypes side the plain ctypes re-run runs. Together about 4 minutes of CI's 2 cores.
EXCLUDED_ON = {
    "ctypes": {
        "test_tvm_ffi_conformance.py": "apache-tvm-ffi's Python suite through the bridge: its "
        "native side runs in the _core pass, its ctypes side in the plain ctypes re-run",
        "test_tvm_ffi_examples.py": "builds apache-tvm-ffi's examples (CMake, g++, nvcc) and runs "
        "them through the bridge: its native side runs in the _core pass, its ctypes side in the "
        "plain ctypes re-run",
    },
}
# Single tests left out of both passes (node ids under tests/python), each for its reason.
_NVCC_ONLY = (
    "an nvcc build of one of apache-tvm-ffi's CUDA examples: without a GPU it only compiles (the "
    "compilers run unsanitized; no packedfun code runs), and on a GPU its torch CUDA run would "
    "need ASan's shadow-gap protection off; the main run and the GPU check run it"
)
DESELECTED = {
    "test_tvm_ffi_examples.py::test_quickstart_cuda": _NVCC_ONLY,
    "test_tvm_ffi_examples.py::test_kernel_library": _NVCC_ONLY,
    "test_tvm_ffi_examples.py::test_cubin_launcher": _NVCC_ONLY,
}
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
    out = subprocess.run([gcc, "-print-file-name=libubsan.so"], capture_output=True, text=True)
    if not os.path.exists(out.stdout.strip()):
        return None  # the build links it (-fsanitize=undefined); it needs no preload
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


def configure_args(*, cpp_tests: bool = False) -> list:
    """The CMake configure command of ``build/sanitize``. tests/python/test_cpp_unit.py configures
    the same tree with ``cpp_tests=True`` and builds the C++ unit tests there, so the sanitized
    runtime is compiled once for both (each configure only adds or drops the test targets; the
    runtime's compile lines are the same)."""
    # -O1: what the sanitizers' authors recommend (-O2 takes longer to compile for no more
    # findings); line tables (-g1) for file:line in the reports (full -g costs a third more compile
    # time for variable and type information no report prints); no compiler launcher, so a fresh
    # CI machine and this one build alike.
    gen = ["-G", "Ninja"] if shutil.which("ninja") else []
    flags = "-O1 -g1 -DNDEBUG"
    return [
        "cmake", "-S", REPO, "-B", BUILD, *gen, "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
        f"-DCMAKE_C_FLAGS_RELWITHDEBINFO={flags}", f"-DCMAKE_CXX_FLAGS_RELWITHDEBINFO={flags}",
        "-DPACKEDFUN_SANITIZE=ON", f"-DPACKEDFUN_BUILD_TESTS={'ON' if cpp_tests else 'OFF'}",
        "-DPACKEDFUN_MIRROR_INPLACE=OFF", "-DCMAKE_C_COMPILER=gcc", "-DCMAKE_CXX_COMPILER=g++",
        f"-DPython_EXECUTABLE={sys.executable}",
    ]  # fmt: skip


def build_lock():  # noqa: ANN201 - a filelock.FileLock, or a null context without filelock
    """LOCK, for building in BUILD and staging from it (the test extra installs filelock; a
    manual run without it builds unguarded)."""
    try:
        import filelock
    except ImportError:
        return contextlib.nullcontext()
    BUILD.parent.mkdir(parents=True, exist_ok=True)
    return filelock.FileLock(str(LOCK), timeout=3600)


def build() -> None:
    _run(configure_args())
    _run(["cmake", "--build", BUILD, "-j", os.environ.get("PACKEDFUN_SANITIZE_JOBS", "2")])


def build_forced_unwind_shim(dest: Path) -> Path:
    """``forced_unwind.c`` built into ``dest``: the preload that makes pthread_exit unpoison the
    thread's stack before its forced unwind, as ASan itself does before a C++ throw (ASan
    intercepts neither pthread_exit nor _Unwind_ForcedUnwind; see the file and
    docs/reliability.md). Built plain: it only calls into the ASan runtime preloaded before it."""
    shim = dest / "libpackedfun_forced_unwind.so"
    _run(["gcc", "-O1", "-shared", "-fPIC", HERE / "forced_unwind.c", "-o", shim, "-ldl"])
    return shim


def stage() -> Path:
    """An importable packedfun under build/sanitize/python: the Python sources plus what
    ``cmake --install`` puts into the package (the sanitized libraries, _core, the headers and the
    CMake package config), the layout ``pip install`` gives."""
    source, package = REPO / "python" / "packedfun", STAGE / "packedfun"
    if package.exists():
        shutil.rmtree(package)
    ignore = shutil.ignore_patterns("lib", "include", "share", "_core*.so", "__pycache__")
    shutil.copytree(source, package, ignore=ignore)
    # beside the package, as in site-packages: the tvm_ffi switch's interpreter-start finder
    shutil.copy2(REPO / "python" / "_packedfun_tvm_ffi.py", STAGE / "_packedfun_tvm_ffi.py")
    _run(["cmake", "--install", BUILD, "--prefix", package], stdout=subprocess.DEVNULL)
    return package


def forced_unwind_suppressions(*more: str) -> Path:
    """lsan.supp, lsan_forced_unwind.supp and the files `more` in one file (LeakSanitizer reads a
    single one)."""
    files = ["lsan.supp", "lsan_forced_unwind.supp", *more]
    path = BUILD / files[-1]
    text = "".join((HERE / name).read_text() for name in files)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def environment(preload: str, backend: str) -> dict:
    reports = REPORTS / backend
    env = dict(os.environ)
    env.update(
        LD_PRELOAD=preload,
        PYTHONMALLOC="malloc",
        PYTHONPATH=os.pathsep.join([str(HERE), str(STAGE)]),
        # intercept_tls_get_addr=0: gcc 12's libasan guesses the extent of each dynamic TLS
        # block from its address, and one that starts 16 bytes into a page is read as glibc
        # 2.19's layout, its "header" being ASan's own chunk header: the leak check at exit then
        # scans from a small number and crashes ("Tracer caught signal 11", one process in a few
        # hundred; dtls_repro.c, docs/reliability.md). Without the guess the blocks stay what
        # they are, heap blocks that glibc's DTV points to, so their contents are still scanned.
        ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=0:"
        "intercept_tls_get_addr=0:"
        f"allocator_may_return_null=1:print_summary=1:log_path={reports / 'asan'}",
        UBSAN_OPTIONS=f"print_stacktrace=1:halt_on_error=1:log_path={reports / 'ubsan'}",
        LSAN_OPTIONS=f"suppressions={HERE / 'lsan.supp'}:print_suppressions=0",
        # only for the children that end daemon threads mid-call (lsan_forced_unwind.supp)
        PACKEDFUN_SANITIZE_FORCED_UNWIND_LSAN_OPTIONS=f"suppressions={forced_unwind_suppressions()}"
        ":print_suppressions=0",
        # only for the processes of examples/distributed (lsan_distributed.supp)
        PACKEDFUN_SANITIZE_DISTRIBUTED_LSAN_OPTIONS="suppressions="
        f"{forced_unwind_suppressions('lsan_distributed.supp')}:print_suppressions=0",
        PACKEDFUN_SANITIZE_REPORTS=str(reports),  # sitecustomize notes each process's argv there
        PACKEDFUN_BACKEND=backend,
        PACKEDFUN_CACHE_DIR=str(BUILD / "jit"),  # shared: each JIT module compiles once
        PACKEDFUN_CTYPES_SUITE="1",  # the ctypes pass is run here, not as a child of the first
        PACKEDFUN_PYTHON_MATRIX="0",  # nor the second-Python run
        PYTHONDONTWRITEBYTECODE="1",
        PACKEDFUN_FUZZ=os.environ.get("PACKEDFUN_FUZZ", "15"),  # ASan makes each example slower
    )
    env.pop("PACKEDFUN_SANITIZE_PRELOAD", None)
    return env


# A native object nobody references any more: one reference taken through the C ABI and never
# given back, the wrapper dropped, in a thread that then ends (so no stale copy of the pointer
# stays on a live stack). The leak check at exit must report it.
LEAK_CANARY = """
import ctypes, os, threading
import packedfun
from packedfun import config

lib = ctypes.CDLL(os.path.join(config.get_lib_dir(), "libpackedfun.so"))
lib.PFObjectIncRef.argtypes = [ctypes.c_void_p]

def leak():
    lost = packedfun.List(["deliberately leaked"])
    lib.PFObjectIncRef(lost.handle)

thread = threading.Thread(target=leak)
thread.start()
thread.join()
print("leaked", flush=True)
"""


# The same kind of leak made inside a call of a bound method with six arguments: the Array the
# compiled backend converts the list argument to, which the callback keeps a reference to. Called
# from Python code, CPython unpacks the bound method (no method_vectorcall on the stack); called
# from C (Thread.run's `self._target(*args)`), method_vectorcall calls the Function directly and
# is on the allocation's stack, the call shape whose argument array lsan_distributed.supp
# suppresses for the Dask processes alone.
LEAK_CANARY_BOUND_METHOD = LEAK_CANARY.replace(
    """def leak():
    lost = packedfun.List(["deliberately leaked"])
    lib.PFObjectIncRef(lost.handle)""",
    """import types

def keep(converted, *rest):
    lib.PFObjectIncRef(converted.handle)

apply = types.MethodType(packedfun.get_global_func("testing.apply"), keep)

def leak():
    apply(["deliberately leaked"], 2, 3, 4, 5, 6)""",
)
LEAK_CANARY_BOUND_METHOD_FROM_C = LEAK_CANARY_BOUND_METHOD.replace(
    'apply(["deliberately leaked"], 2, 3, 4, 5, 6)',
    'threading.Thread(target=apply, args=(["deliberately leaked"], 2, 3, 4, 5, 6)).run()',
)
assert LEAK_CANARY != LEAK_CANARY_BOUND_METHOD != LEAK_CANARY_BOUND_METHOD_FROM_C


def _canary_reported(env: dict, backend: str, name: str, code: str, frame: str) -> bool:
    reports = BUILD / "leak_canary" / backend / name
    shutil.rmtree(reports, ignore_errors=True)
    reports.mkdir(parents=True)
    for key in ("ASAN_OPTIONS", "UBSAN_OPTIONS"):
        env[key] = env[key].replace(str(REPORTS / backend), str(reports))
    env["PACKEDFUN_SANITIZE_REPORTS"] = str(reports)
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, text=True,
                          capture_output=True, timeout=300)  # fmt: skip
    text = "".join(p.read_text(errors="replace") for p in reports.glob("asan.*"))
    reported = (
        proc.stdout == "leaked\n"
        and proc.returncode != 0
        and "ERROR: LeakSanitizer: detected memory leaks" in text
        and frame in text  # where the object it leaked was made
    )
    if not reported:
        print(f"leak check canary ({backend}, {name}): exit {proc.returncode}, stdout "
              f"{proc.stdout!r}\n{proc.stderr[-3000:]}\n{text[-3000:]}", flush=True)  # fmt: skip
    return reported


def leak_check_is_live(preload: str, backend: str) -> bool:
    """True when a deliberately leaked packedfun object is reported by the leak check at exit
    of a process in this run's environment (leak checking on, the suppressions not hiding it):
    with lsan.supp, with the larger set the daemon-thread children get (lsan_forced_unwind.supp),
    also when the object is made under a bound-method call from C, and with the set of the Dask
    processes (lsan_distributed.supp), where the object is made under a bound-method call from
    Python (from C, method_vectorcall would hide it there: lsan_distributed.supp says why that is
    kept to those processes)."""
    env = environment(preload, backend)
    forced = dict(env, LSAN_OPTIONS=env["PACKEDFUN_SANITIZE_FORCED_UNWIND_LSAN_OPTIONS"])
    dask = dict(env, LSAN_OPTIONS=env["PACKEDFUN_SANITIZE_DISTRIBUTED_LSAN_OPTIONS"])
    method, from_c = LEAK_CANARY_BOUND_METHOD, LEAK_CANARY_BOUND_METHOD_FROM_C
    return all([
        _canary_reported(dict(env), backend, "plain", LEAK_CANARY, "PFListCreate"),
        _canary_reported(dict(forced), backend, "forced-unwind", LEAK_CANARY, "PFListCreate"),
        _canary_reported(dict(forced), backend, "forced-unwind-method-from-c", from_c,
                         "PFArrayCreate"),
        _canary_reported(dict(dask), backend, "distributed", LEAK_CANARY, "PFListCreate"),
        _canary_reported(dict(dask), backend, "distributed-method", method, "PFArrayCreate"),
    ])  # fmt: skip


def start_backend(backend: str, files: list, extra: list, preload: str) -> subprocess.Popen:
    """Starts one backend's pytest; its output goes to reports/<backend>/pytest.log."""
    reports = REPORTS / backend
    shutil.rmtree(reports, ignore_errors=True)
    reports.mkdir(parents=True)
    # EXCLUDED_ON leaves files out of a pass, unless they are all it was asked to run (--files)
    kept = [f for f in files if f not in EXCLUDED_ON.get(backend, {})] or files
    tests = [str(REPO / "tests" / "python" / f) for f in kept]
    ignores = [f"--ignore={REPO / 'tests' / 'python' / f}" for f in EXCLUDED]
    ignores += [f"--deselect=tests/python/{node}" for node in DESELECTED]
    cmd = [
        sys.executable, "-m", "pytest", *tests, *ignores, "-q", "-rfEs", "-p", "no:cacheprovider",
        "-p", "per_test_timeout", "-o", "addopts=",
        # pytest's default fd capture would swallow what a sanitizer writes to stderr (UBSan does
        # so here despite its log_path) if the process then dies: the report must reach the log
        "--capture=sys", "--durations=25", *extra,  # where each pass's time goes, in its log
    ]  # fmt: skip
    print(f"== backend {backend}: {len(files)} test files", flush=True)
    log = open(reports / "pytest.log", "w")  # noqa: SIM115 - closed by the child's exit
    env = environment(preload, backend)
    return subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)


def wait_all(procs: dict, limit: float) -> dict:
    """Exit codes by backend; a pass still running after `limit` seconds is killed (124)."""
    deadline, codes = time.monotonic() + limit, {}
    for backend, proc in procs.items():
        try:
            codes[backend] = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            codes[backend] = 124
            with open(REPORTS / backend / "pytest.log", "a") as log:
                log.write(f"\n== backend {backend}: killed after {limit:.0f} s "
                          "(PACKEDFUN_SANITIZE_TIMEOUT)\n")  # fmt: skip
    return codes


def summarize(backend: str, code: int, seconds: float) -> bool:
    """Prints one backend's output, reports and summary line; True when it was clean."""
    reports = REPORTS / backend
    output = (reports / "pytest.log").read_text(errors="replace")
    print(output[-6000:], flush=True)
    found = sorted(p for p in reports.iterdir() if p.name.startswith(("asan.", "ubsan.")))
    for report in found:
        pid = report.name.rsplit(".", 1)[-1]
        argv = reports / f"argv.{pid}"
        who = argv.read_text(errors="replace") if argv.exists() else "?"
        text = report.read_text(errors="replace")
        print(f"---- {report.name} (process: {who})\n{text[:8000]}", flush=True)
        output += text
    lines = REPORT.findall(output)
    summary = re.findall(r"^=*\s*((?:\d+ (?:passed|failed)).*?)\s*=*$", output, re.M)
    counts = summary[-1] if summary else "no summary"
    print(f"== backend {backend}: exit {code}, {len(found)} sanitizer reports "
          f"({len(lines)} report lines), {counts}, {seconds:.0f} s", flush=True)  # fmt: skip
    return code == 0 and not lines


def parse(argv: list) -> tuple:
    """(test files, extra pytest arguments) from the command line; see the module docstring."""
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    argv = argv[: argv.index("--")] if "--" in argv else argv
    if "--files" in argv:
        files = [Path(f).name for f in argv[argv.index("--files") + 1 :]]
        unknown = [f for f in files if not (REPO / "tests" / "python" / f).is_file()]
        if not files or unknown:
            raise SystemExit(
                f"--files: no such test file in tests/python: {unknown or 'none given'}"
            )
        return files, extra
    if "--subset" in argv or os.environ.get("PACKEDFUN_SANITIZE") == "subset":
        return SUBSET, extra
    files = sorted(p.name for p in (REPO / "tests" / "python").glob("test_*.py"))
    return [f for f in files if f not in EXCLUDED], extra


def main(argv: list) -> int:
    files, extra = parse(argv)
    preload = asan_runtime()
    if preload is None:
        print("no ASan/UBSan runtime (gcc -print-file-name=libasan.so found none): skipped")
        return SKIP_STATUS
    began = time.monotonic()
    with build_lock():
        build()
        stage()
        preload += ":" + str(build_forced_unwind_shim(BUILD))
    print(f"== sanitized build and staging: {time.monotonic() - began:.0f} s", flush=True)
    backends = ["_core", "ctypes"]
    if os.environ.get("PACKEDFUN_SANITIZE_BACKEND"):
        backends = [os.environ["PACKEDFUN_SANITIZE_BACKEND"]]
    live = [leak_check_is_live(preload, b) for b in backends]
    print(f"== leak check canary: a deliberately leaked object was reported on "
          f"{sum(live)} of {len(backends)} backends", flush=True)  # fmt: skip
    limit = PASS_TIMEOUT
    start, codes = time.monotonic(), {}
    if os.environ.get("PACKEDFUN_SANITIZE_SERIAL") == "1":
        for backend in backends:
            codes.update(wait_all({backend: start_backend(backend, files, extra, preload)}, limit))
    else:  # the two passes side by side: one core each on the 2-core CI machine
        procs = {b: start_backend(b, files, extra, preload) for b in backends}
        codes = wait_all(procs, limit)
    seconds = time.monotonic() - start
    clean = [summarize(b, codes[b], seconds) for b in backends]
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"== sanitized run: {time.monotonic() - began:.0f} s wall, "
          f"{usage.ru_utime + usage.ru_stime:.0f} s CPU (build included), "
          f"load {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
    return 0 if all(clean) and all(live) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
