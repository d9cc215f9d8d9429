# Cold build time and library size of tvm-ffi sources, built with packedfun and with apache-tvm-ffi.
"""Side by side, in one run, on the same machine and compiler:

* **quickstart kernel**: apache-tvm-ffi's ``examples/quickstart/compile/add_one_cpu.cc`` (from its
  pinned source distribution, as ``tests/python/test_tvm_ffi_examples.py`` fetches it), compiled
  with the command of the example's ``raw_compile.sh`` (``g++ -shared -O3 -fPIC
  -fvisibility=hidden`` and the config tool's flags). packedfun builds the unchanged source
  against its ``tvm/ffi`` header tree (``$(packedfun-config --includedir)/packedfun/compat``),
  apache-tvm-ffi against its own headers.
* **one-function load_inline module**: ``cpp.load_inline`` of ``int64_t add(int64_t, int64_t)``
  into a fresh build directory, each library's own form (packedfun: ``packedfun.cpp``;
  tvm-ffi: ``tvm_ffi.cpp``), each in a child process so nothing is warm.

Each row: wall time and CPU time (user + system of the compiler and build tools, so other load on
the machine matters less), best of ``--repeat`` cold builds; the built library's file size and
``.text`` size. ``packedfun / tvm-ffi`` is the ratio of the two.

    python benchmarks/build_cost.py [--repeat 3] [--cxx g++]

apache-tvm-ffi is needed (``pip install apache-tvm-ffi``); its sdist is downloaded once (cached,
``PACKEDFUN_TVM_FFI_SDIST_CACHE`` for offline runs).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

INLINE_SOURCE = "int64_t add(int64_t a, int64_t b) { return a + b; }\n"

_INLINE_CHILD = r"""
import json, sys, time
lib, build_dir = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
if lib == "packedfun":
    import packedfun.cpp as cpp
    path = cpp.build_inline("pf_build_cost", cpp_sources=SOURCE, functions="add",
                            build_directory=build_dir)
else:
    import tvm_ffi.cpp as cpp
    path = cpp.build_inline("pf_build_cost", cpp_sources=SOURCE, functions="add",
                            build_directory=build_dir)
print(json.dumps({"seconds": time.perf_counter() - t0, "path": path}))
""".replace("SOURCE", repr(INLINE_SOURCE))


def _timed(cmd: list[str], env: dict | None = None) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the children, stdout); raises when the command fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"$ {' '.join(cmd)}\n{proc.stdout[-2000:]}{proc.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout


def _config(module: str, *flags: str) -> list[str]:
    out = subprocess.run([sys.executable, "-m", module, *flags], capture_output=True, text=True,
                         check=True).stdout  # fmt: skip
    return out.split()


def _text_size(path: str) -> int:
    size = shutil.which("size")
    if size is None:
        return -1
    out = subprocess.run([size, "-A", path], capture_output=True, text=True, check=True).stdout
    return next((int(line.split()[1]) for line in out.splitlines() if line.startswith(".text")), -1)


def quickstart_command(lib: str, cxx: str, out: str) -> list[str]:
    import tvm_ffi_sdist

    src = os.path.join(tvm_ffi_sdist.examples_dir(), "quickstart", "compile", "add_one_cpu.cc")
    cmd = [cxx, "-shared", "-O3", src, "-fPIC", "-fvisibility=hidden"]
    if lib == "packedfun":  # the documented line: the tree of the packedfun that is linked
        (include,) = _config("packedfun.config", "--includedir")
        cmd += [f"-I{os.path.join(include, 'packedfun', 'compat')}"]
        cmd += _config("packedfun.config", "--cxxflags", "--ldflags", "--libs")
    else:
        # Without packedfun's switch: this is apache-tvm-ffi's own config tool.
        cmd += _config("tvm_ffi.config", "--cxxflags", "--ldflags", "--libs")
    return cmd + ["-o", out]


def build_once(lib: str, what: str, cxx: str) -> dict:
    """One cold build: wall and CPU seconds, the library's file and .text sizes."""
    work = tempfile.mkdtemp(prefix="pf_build_cost_")
    try:
        env = {k: v for k, v in os.environ.items() if k != "PACKEDFUN_AS_TVM_FFI"}
        env["CXX"] = cxx
        if what == "quickstart":
            out = os.path.join(work, "add_one_cpu.so")
            wall, cpu, _ = _timed(quickstart_command(lib, cxx, out), env)
        else:
            wall, cpu, stdout = _timed([sys.executable, "-c", _INLINE_CHILD, lib, work], env)
            out = json.loads(stdout.strip().splitlines()[-1])["path"]
        return {"wall": wall, "cpu": cpu, "bytes": os.path.getsize(out), "text": _text_size(out)}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure(what: str, cxx: str, repeat: int) -> dict:
    """Best (least CPU) of ``repeat`` cold builds per library, the two alternating so that a
    change of load on the machine falls on both."""
    best: dict = {}
    for _ in range(repeat):
        for lib in ("packedfun", "tvm-ffi"):
            row = build_once(lib, what, cxx)
            if lib not in best or row["cpu"] < best[lib]["cpu"]:
                best[lib] = row
    return best


def table(results: dict) -> str:
    lines = [
        "| build | packedfun wall s | tvm-ffi wall s | packedfun CPU s | tvm-ffi CPU s | CPU ratio "
        "| packedfun bytes (.text) | tvm-ffi bytes (.text) | size ratio |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for what, pair in results.items():
        p, t = pair["packedfun"], pair["tvm-ffi"]
        lines.append(
            f"| {what} | {p['wall']:.2f} | {t['wall']:.2f} | {p['cpu']:.2f} | {t['cpu']:.2f} "
            f"| {p['cpu'] / t['cpu']:.2f}x | {p['bytes']} ({p['text']}) | {t['bytes']} "
            f"({t['text']}) | {p['bytes'] / t['bytes']:.2f}x |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="cold builds per row (best is shown)")
    ap.add_argument("--cxx", default=os.environ.get("CXX", "g++"), help="the C++ compiler")
    args = ap.parse_args(argv)
    results = {}
    for what, label in (("quickstart", "quickstart add_one_cpu.cc (raw_compile.sh line)"),
                        ("inline", "load_inline, one function")):  # fmt: skip
        results[label] = measure(what, args.cxx, args.repeat)
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
