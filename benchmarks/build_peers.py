# Builds the native benchmark peers with CMake into benchmarks/_build (one target at a time, -j1).
"""Build the floor, nanobind, ctypes and tvm-ffi peer libraries.

Each peer is its own CMake target, built separately, so one that fails to build (or whose Python
package is not installed) only drops that peer from the table.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
BUILD_DIR = HERE / "_build" / f"py{sys.version_info[0]}{sys.version_info[1]}"
OUT_DIR = BUILD_DIR / "out"

# peer name -> CMake target
TARGETS = {
    "floor": "pf_bench_floor",
    "ctypes": "pf_bench_ctypes",
    "nanobind": "pf_bench_nb",
    "tvm-ffi": "pf_bench_tvmffi",
}


@dataclass
class BuildResult:
    """What the build produced: the output directory and, per peer, the reason it is missing."""

    out_dir: Path
    built: set = field(default_factory=set)
    missing: dict = field(default_factory=dict)


def _run(cmd: list, log: list) -> bool:
    proc = subprocess.run(
        [str(c) for c in cmd], capture_output=True, text=True, check=False, timeout=1800
    )
    if proc.returncode != 0:
        log.append(f"$ {' '.join(map(str, cmd))}\n{(proc.stdout + proc.stderr)[-3000:]}")
    return proc.returncode == 0


def installed(module: str) -> bool:
    """Whether ``module`` is an installed package rather than a folder of this benchmark tree.

    benchmarks/ is on ``sys.path`` and holds folders named after peers (``nanobind/``), which
    Python would otherwise import as empty namespace packages when the real peer is absent.
    """
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return False
    return HERE not in Path(spec.origin).resolve().parents


def _configure_args(result: BuildResult) -> list:
    args = [f"-DPython_EXECUTABLE={sys.executable}", "-DCMAKE_BUILD_TYPE=Release"]
    if installed("nanobind"):
        import nanobind

        args.append(f"-DBENCH_NANOBIND_DIR={nanobind.cmake_dir()}")
    else:
        result.missing["nanobind"] = "nanobind is not installed"
    if installed("tvm_ffi"):
        from tvm_ffi import libinfo

        includes = ";".join(libinfo.include_paths())
        args += [
            f"-DBENCH_TVMFFI_INCLUDE={includes}",
            f"-DBENCH_TVMFFI_LIB={libinfo.find_libtvm_ffi()}",
        ]
    else:
        result.missing["tvm-ffi"] = "apache-tvm-ffi is not installed"
    return args


def build_target(target: str) -> tuple[Path | None, str]:
    """Configure the benchmark tree and build one extra target (``pf_bench_nb_forms``).

    Returns the output directory, or None and the tail of the failing command's log.
    """
    cmake = shutil.which("cmake")
    if cmake is None:
        return None, "cmake not found"
    log: list = []
    cmd = [cmake, "-S", HERE, "-B", BUILD_DIR, *_configure_args(BuildResult(out_dir=OUT_DIR))]
    if shutil.which("ninja"):
        cmd += ["-G", "Ninja"]
    if _run(cmd, log) and _run([cmake, "--build", BUILD_DIR, "--target", target, "-j", "2"], log):
        return OUT_DIR, ""
    return None, "\n".join(log)[-3000:]


def build(verbose: bool = False) -> BuildResult:
    """Configure and build every peer whose prerequisites are present.

    Parameters
    ----------
    verbose : bool
        Print the build log of targets that failed.

    Returns
    -------
    BuildResult
        The directory holding the built modules and the peers that could not be built, with why.
    """
    result = BuildResult(out_dir=OUT_DIR)
    cmake = shutil.which("cmake")
    if cmake is None:
        result.missing.update({peer: "cmake not found" for peer in TARGETS})
        return result
    log: list = []
    cmd = [cmake, "-S", HERE, "-B", BUILD_DIR, *_configure_args(result)]
    if shutil.which("ninja"):
        cmd += ["-G", "Ninja"]
    if not _run(cmd, log):
        result.missing.update({peer: "CMake configure failed" for peer in TARGETS})
    else:
        for peer, target in TARGETS.items():
            if peer in result.missing:
                continue
            if _run([cmake, "--build", BUILD_DIR, "--target", target, "-j", "1"], log):
                result.built.add(peer)
            else:
                result.missing[peer] = f"build of {target} failed"
    if verbose and log:
        print("\n".join(log), file=sys.stderr)
    return result
