#!/usr/bin/env python3
# The prepared GPU check: builds packedfun from this tree without network, installs the carried
# wheels, runs every GPU row on both backends and the speed rows, prints one summary table.
"""Usage (docs/testing.md, "The GPU check")::

    python3 tools/gpu_check/run.py [--out DIR] [--dry-run] [--build-dir DIR]

On a machine with a CUDA GPU (a lent one: Python 3.12 with CUDA torch, JAX, CuPy, nvcc, CMake,
ninja; no network) it

1. installs the wheels ``tools/gpu_check/pack.sh`` put in ``tools/gpu_check/wheels/`` (into a
   private ``--target`` folder put on ``PYTHONPATH``; the image's packages are left alone),
2. builds packedfun with CMake + ninja into ``build/gpu-check`` (the C++ unit tests off; outputs
   mirrored into ``python/packedfun``, used through ``PYTHONPATH``), CUDA code for sm_90,
3. runs the GPU test files on the ``_core`` and ``ctypes`` backends (pytest, one child each, with
   a timeout), and ``benchmarks/gpu_launch.py`` (launch cost against the peers, build times),
4. prints one table (row, backend results, figure) and writes it to ``OUT/summary.md`` with the
   logs beside it (at most 8 files: the device tool brings back 8).

Without a CUDA device (``--dry-run``, or none found) it does the same build, checks that the
wheels are packed, runs the GPU test files (they skip), prints "no CUDA device" for every GPU row
and exits 0. The exit status is 0 when every row passed (or, dry, when the build and the
collection worked), 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WHEELS = os.path.join(HERE, "wheels")

# The test files holding every test that skips without a CUDA device (test_gpu_check.py keeps this
# list complete: a test file with a "no CUDA" skip that is not here fails it).
GPU_TEST_FILES = [
    "tests/python/test_gpu.py",
    "tests/python/test_cpp_cuda.py",
    "tests/python/test_example_add_one.py",
    "tests/python/test_stream_env.py",
]

# The rows of the table: (row, the tests that make it, as regular expressions over pytest ids).
ROWS = [
    ("CUDA-skipping tests elsewhere (cpp_cuda, example add_one, torch stream)",
     r"test_cpp_cuda\.py::test_cuda_kernel_runs$|test_example_add_one\.py::test_cuda_kernel_runs"
     r"|test_stream_env\.py::test_torch_current_stream_is_the_callees_stream_on_a_gpu"),
    ("DLPack zero-copy in/out: torch", r"test_gpu\.py::test_torch_tensors_zero_copy"),
    ("DLPack zero-copy + producer stream protocol: CuPy", r"test_gpu\.py::test_cupy_"),
    ("DLPack zero-copy in: JAX", r"test_gpu\.py::test_jax_"),
    ("stream: torch current stream orders the launch", r"test_gpu\.py::test_kernel_runs_on_torch"),
    ("stream: use_stream / use_raw_stream / StreamContext / int",
     r"test_gpu\.py::test_use_stream_forms"),
    ("stream: torch.Stream / torch.cuda.Stream objects", r"test_gpu\.py::test_torch_stream_obj"),
    ("stream: CUDA graph capture and replay", r"test_gpu\.py::test_launch_is_captured"),
    ("allocator: outputs and temporaries from torch's caching allocator",
     r"test_gpu\.py::test_outputs_and_temporaries"),
    ("load_inline .cu: cold then warm, result", r"test_gpu\.py::test_load_inline_cu"),
    ("tvm-ffi-built kernel on the caller's stream", r"test_gpu\.py::test_tvm_ffi_kernel"),
    ("8 threads, 8 streams", r"test_gpu\.py::test_eight_threads"),
]  # fmt: skip
NOT_APPLICABLE = [
    ("tvm-ffi CUDA launch helpers (embedded cubin, launcher, NVRTC)",
     "n/a: packedfun has none (docs/migration-from-tvm-ffi.md lists them as not provided)"),
]  # fmt: skip
BACKENDS = ["_core", "ctypes"]


class Log:
    """Everything printed goes to stdout and to OUT/check.log. `deadline` (monotonic seconds) caps
    every step's timeout, so that the summary is written before the device call's own limit."""

    def __init__(self, out: str, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds
        self.out = out
        self.file = open(os.path.join(out, "check.log"), "a")
        self.t0 = time.monotonic()

    def __call__(self, text: str) -> None:
        line = f"[{time.monotonic() - self.t0:6.1f}s] {text}"
        print(line, flush=True)
        self.file.write(line + "\n")
        self.file.flush()


def run(cmd, log: Log, logfile: str, timeout: float, env=None, cwd=ROOT) -> tuple[int, float]:
    """Runs `cmd` with its output in OUT/logfile; returns (exit status, seconds); 124 on timeout."""
    t0 = time.monotonic()
    timeout = min(timeout, log.deadline - t0 - 10)  # 10 s kept for the summary
    if timeout < 5:
        log(f"no time left for: {' '.join(cmd[:4])}")
        return 124, 0.0
    with open(os.path.join(log.out, logfile), "a") as f:
        f.write(f"$ {' '.join(cmd)}\n")
        f.flush()
        try:
            proc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, timeout=timeout,
                                  env=env, cwd=cwd)  # fmt: skip
            rc = proc.returncode
        except subprocess.TimeoutExpired:
            f.write(f"\n*** timed out after {timeout:.0f} s\n")
            rc = 124
    seconds = time.monotonic() - t0
    log(f"{' '.join(cmd[:4])} ... -> {rc} in {seconds:.1f}s (log: {logfile})")
    return rc, seconds


def cuda_device() -> str | None:
    """The GPU's name as torch sees it, or None when there is none."""
    try:
        code = "import torch; print(torch.cuda.is_available() and torch.cuda.get_device_name(0))"
        probe = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                               timeout=120)  # fmt: skip
        if probe.returncode == 0 and probe.stdout.strip() not in ("", "False"):
            return probe.stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        pass
    return None


_VERSIONS = """
import importlib.metadata as m
names = ["torch", "cupy-cuda13x", "cupy-cuda12x", "jax", "jaxlib", "nanobind", "pybind11",
         "apache-tvm-ffi", "pyelftools", "scikit-build-core", "numpy"]
found = []
for n in names:
    try:
        found.append(f"{n} {m.version(n)}")
    except m.PackageNotFoundError:
        pass
print(", ".join(found))
"""


def environment(env: dict) -> str:
    """nvcc, the GPU and the Python packages the check uses, in one line (for check.log)."""
    parts = []
    cuda_bin = os.path.join(env.get("CUDA_HOME", "/usr/local/cuda"), "bin")
    nvcc = shutil.which("nvcc", path=os.pathsep.join([env.get("PATH", ""), cuda_bin]))
    parts.append(f"nvcc {nvcc or 'not found'}")
    for cmd in ([nvcc, "--version"] if nvcc else None, ["nvidia-smi", "-L"],
                [sys.executable, "-c", _VERSIONS]):  # fmt: skip
        if cmd is None or shutil.which(cmd[0]) is None:
            continue
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env).stdout
        except (OSError, subprocess.TimeoutExpired) as err:
            out = str(err)
        parts.append(" ".join(out.strip().splitlines()[-2:])[:300])
    return "; ".join(parts)


def install_wheels(log: Log, env: dict) -> str:
    """Installs the carried wheels into a private folder on PYTHONPATH; returns a status line."""
    wheels = (
        sorted(f for f in os.listdir(WHEELS) if f.endswith(".whl")) if os.path.isdir(WHEELS) else []
    )
    if not wheels:
        return "no wheels carried (tools/gpu_check/pack.sh, then carry tools/gpu_check/wheels)"
    target = os.path.join(os.environ.get("TMPDIR", "/tmp"), "pf-gpu-check-site")
    shutil.rmtree(target, ignore_errors=True)
    rc, _ = run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps",
                 "--no-compile", "--no-cache-dir", "--target", target,
                 *(os.path.join(WHEELS, w) for w in wheels)], log, "build.log", 60)  # fmt: skip
    if rc != 0:
        return f"pip install of the carried wheels failed ({rc})"
    env["PYTHONPATH"] = os.pathsep.join(p for p in [env.get("PYTHONPATH"), target] if p)
    return "installed: " + ", ".join(w.split("-")[0] + " " + w.split("-")[1] for w in wheels)


def build(log: Log, build_dir: str, env: dict) -> int:
    jobs = str(os.cpu_count() or 2)
    rc, _ = run(["cmake", "-S", ".", "-B", build_dir, "-G", "Ninja", "-DPACKEDFUN_BUILD_TESTS=OFF",
                 "-DCMAKE_BUILD_TYPE=Release", f"-DPython_EXECUTABLE={sys.executable}"],
                log, "build.log", 120, env=env)  # fmt: skip
    if rc == 0:
        rc, _ = run(["cmake", "--build", build_dir, "-j", jobs], log, "build.log", 240, env=env)
    return rc


def pytest_results(xml_path: str) -> dict:
    """pytest id -> ("pass"|"fail"|"skip", message) from a junit file."""
    results = {}
    if not os.path.exists(xml_path):
        return results
    for case in ET.parse(xml_path).iter("testcase"):
        classname, name = case.get("classname", ""), case.get("name", "")
        path = classname.replace(".", "/") + ".py"
        test_id = f"{path}::{name}"
        outcome, message = "pass", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome, message = "fail", (child.get("message") or "")[:160]
            elif child.tag == "skipped":
                outcome, message = "skip", (child.get("message") or "")[:160]
        results[test_id] = (outcome, message)
    return results


def row_status(results: dict, pattern: str) -> tuple[str, str]:
    matched = {k: v for k, v in results.items() if re.search(pattern, k)}
    if not matched:
        return "missing", "no test ran"
    fails = [f"{k.split('::')[-1]}: {m}" for k, (o, m) in matched.items() if o == "fail"]
    skips = [m for o, m in matched.values() if o == "skip"]
    if fails:
        return "FAIL", "; ".join(fails)[:200]
    if skips:
        return "skip", skips[0]
    return "pass", f"{len(matched)} test(s)"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="the prepared GPU check (docs/testing.md)")
    ap.add_argument(
        "--out", default=os.environ.get("OUT") or os.path.join(ROOT, "build", "gpu-check-out")
    )
    ap.add_argument("--dry-run", action="store_true", help="as without a CUDA device")
    ap.add_argument("--build-dir", default=os.path.join("build", "gpu-check"))
    ap.add_argument(
        "--no-build",
        action="store_true",
        help="reuse the tree's last build (a re-run on the same machine)",
    )
    ap.add_argument("--no-bench", action="store_true", help="leave out the speed rows")
    ap.add_argument("-k", dest="select", help="only the GPU tests pytest -k selects (a re-run)")
    ap.add_argument("--deadline", type=float, default=480, help="seconds for the whole check")
    ap.add_argument("--test-timeout", type=float, default=150, help="seconds per pytest run")
    ap.add_argument("--bench-timeout", type=float, default=300, help="seconds for the benchmark")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    log = Log(args.out, args.deadline)
    env = dict(os.environ)
    env.update(PYTHONUNBUFFERED="1", PACKEDFUN_CUDA_ARCH=env.get("PACKEDFUN_CUDA_ARCH", "90"),
               TVM_FFI_CUDA_ARCH_LIST=env.get("TVM_FFI_CUDA_ARCH_LIST", "9.0"),
               TORCH_CUDA_ARCH_LIST=env.get("TORCH_CUDA_ARCH_LIST", "9.0"),
               XLA_PYTHON_CLIENT_PREALLOCATE="false")  # fmt: skip
    for nvcc_home in ("/usr/local/cuda",):
        if "CUDA_HOME" not in env and os.path.exists(os.path.join(nvcc_home, "bin", "nvcc")):
            env["CUDA_HOME"] = nvcc_home
    device = None if args.dry_run else cuda_device()
    log(
        f"python {sys.version.split()[0]} at {sys.executable}; device: {device or 'no CUDA device'}"
    )
    packed = subprocess.run([os.path.join(HERE, "pack.sh"), "--check"], capture_output=True,
                            text=True)  # fmt: skip
    log("carried wheels: " + (packed.stdout + packed.stderr).strip().replace("\n", "; "))
    log(install_wheels(log, env) if device else "wheels not installed (dry run)")
    log("environment: " + environment(env))
    build_rc = 0 if args.no_build else build(log, args.build_dir, env)
    if not args.no_build or os.path.isdir(os.path.join(ROOT, "python", "packedfun", "lib")):
        # the build's outputs mirrored into the tree (PACKEDFUN_MIRROR_INPLACE)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in [os.path.join(ROOT, "python"), env.get("PYTHONPATH")] if p
        )
    if build_rc != 0:
        log("the build failed: see build.log")
    results: dict = {}
    rcs: dict = {}
    for backend in BACKENDS:
        if build_rc != 0:
            break
        xml = os.path.join(args.out, f"pytest-{backend.strip('_')}.xml")
        pytest = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs",
                  f"--junitxml={xml}", *GPU_TEST_FILES]  # fmt: skip
        pytest += ["-k", args.select] if args.select else []
        rcs[backend], _ = run(pytest, log, f"pytest-{backend.strip('_')}.log", args.test_timeout,
                              env={**env, "PACKEDFUN_BACKEND": backend})  # fmt: skip
        results[backend] = pytest_results(xml)
        if os.path.exists(xml):
            os.remove(xml)  # the log holds the same; 8 files come back at most
    bench_table = ""
    if build_rc == 0 and not args.no_bench:
        bench_md = os.path.join(args.out, "bench.md")
        bench = [
            sys.executable,
            os.path.join(ROOT, "benchmarks", "gpu_launch.py"),
            "--out",
            bench_md,
        ]
        run(bench + ([] if device else ["--dry-run"]), log, "bench.log", args.bench_timeout,
            env={**env, "PACKEDFUN_BACKEND": "_core"})  # fmt: skip
        if os.path.exists(bench_md):
            bench_table = open(bench_md).read()

    lines = [f"# GPU check: {device or 'no CUDA device'}", "",
             "| row | _core | ctypes | figure / reason |", "|---|---|---|---|"]  # fmt: skip
    ok = build_rc == 0
    missing = []
    lines.append(f"| build (CMake, sm_{env['PACKEDFUN_CUDA_ARCH']}) | "
                 f"{'pass' if build_rc == 0 else 'FAIL'} | | see build.log |")  # fmt: skip
    for row, pattern in ROWS:
        cells, why = [], ""
        for backend in BACKENDS:
            status, message = row_status(results.get(backend, {}), pattern)
            if status == "missing" and rcs.get(backend) not in (None, 0, 1):
                message = f"pytest exited {rcs[backend]} (124: timed out): see its log"
            if not device and status in ("skip", "pass") and build_rc == 0:
                status, message = "skip", "no CUDA device"
            if status == "missing" and args.select:
                status, message = "not selected", f"-k {args.select}"
            if status == "missing" and build_rc == 0:
                missing.append(f"{backend}: {row}")
            cells.append(status)
            why = why or (message if status != "pass" else "")
            ok = ok and (status in ("pass", "not selected") or (not device and status == "skip"))
        lines.append(f"| {row} | {cells[0]} | {cells[1]} | {why or 'pass'} |")
    for row, why in NOT_APPLICABLE:
        lines.append(f"| {row} | n/a | n/a | {why} |")
    others = []
    for backend in BACKENDS:
        covered = [p for _, p in ROWS]
        for test_id, (outcome, message) in results.get(backend, {}).items():
            if not any(re.search(p, test_id) for p in covered) and outcome == "fail":
                others.append(f"{backend} {test_id}: {message}")
    ok = ok and not others
    lines.append(f"| other tests in the GPU files (CPU parts) | "
                 f"{'FAIL' if others else 'pass'} | | {'; '.join(others)[:300]} |")  # fmt: skip
    summary = "\n".join(lines) + "\n"
    if bench_table:
        summary += "\n## Speed (_core backend)\n\n" + bench_table
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write(summary)
    print("\n" + summary, flush=True)
    if not device:
        log("dry run: no CUDA device; every GPU row is 'no CUDA device'")
        if missing:
            log("rows without a test: " + "; ".join(missing))
        return 0 if build_rc == 0 and not others and not missing else 1
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
