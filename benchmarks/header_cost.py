# What the C++ headers cost an extension: text size of a one-function module and parse time.
"""Compile-side cost of packedfun's public C++ headers, side by side with apache-tvm-ffi's.

* **Text size**: the same one-function module (``int64_t add(int64_t, int64_t)`` exported with each
  library's typed-export macro) built as a shared library at ``-Os`` with hidden visibility; the
  ``.text`` section's size and ``size``'s text column (all read-only sections) are shown.
* **Parse time**: ``-fsyntax-only`` of a file that includes only the umbrella header
  (``packedfun/packedfun.h``; for tvm-ffi ``tvm/ffi/tvm_ffi.h``), the compiler's CPU time (user +
  system, so other load on the machine matters less than for wall time) and wall time, each the
  best of ``--repeat`` runs.

    python benchmarks/header_cost.py [--repeat 5] [--cxx g++]

Measures the headers of this checkout (``--source`` names another one, e.g. a worktree of an older
commit, for a before/after table); apache-tvm-ffi is optional (``pip install apache-tvm-ffi``),
shown as "not measured" without it.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

PACKEDFUN_MODULE = """\
#include <packedfun/packedfun.h>
int64_t Add(int64_t a, int64_t b) { return a + b; }
PACKEDFUN_DLL_EXPORT_TYPED_FUNC(add, Add);
"""
TVM_FFI_MODULE = """\
#include <tvm/ffi/tvm_ffi.h>
int64_t Add(int64_t a, int64_t b) { return a + b; }
TVM_FFI_DLL_EXPORT_TYPED_FUNC(add, Add);
"""
PACKEDFUN_UMBRELLA = "#include <packedfun/packedfun.h>\n"
TVM_FFI_UMBRELLA = "#include <tvm/ffi/tvm_ffi.h>\n"

FLAGS = ["-std=c++17", "-Os", "-fPIC", "-shared", "-fvisibility=hidden",
         "-fvisibility-inlines-hidden"]  # fmt: skip


def packedfun_includes(root: Path = REPO) -> list[str] | None:
    if (root / "include" / "packedfun" / "packedfun.h").is_file():  # a source checkout
        return [str(root / "include"), str(root / "third_party" / "dlpack" / "include")]
    tree = REPO / "python" / "packedfun" / "include"
    if (tree / "packedfun" / "packedfun.h").is_file():
        return [str(tree)]
    try:
        import packedfun.config as config  # the installed package
    except ImportError:
        return None
    return [config.get_include_dir()] if hasattr(config, "get_include_dir") else None


def tvm_ffi_includes() -> list[str] | None:
    dirs = []
    for flag in ("--includedir", "--dlpack-includedir"):
        proc = subprocess.run([sys.executable, "-m", "tvm_ffi.config", flag],
                              capture_output=True, text=True, check=False)  # fmt: skip
        if proc.returncode != 0 or not proc.stdout.strip():
            return None if flag == "--includedir" else dirs
        dirs.append(proc.stdout.strip())
    return dirs


def cpu_seconds(cmd: list[str]) -> tuple[float, float]:
    """The child's (user + system CPU time, wall time); raises when the command fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr[-4000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def text_sizes(library: Path) -> tuple[int, int]:
    """(.text section size, `size`'s text column) of a shared library."""
    sections = subprocess.run(["size", "-A", str(library)], capture_output=True, text=True,
                              check=True).stdout  # fmt: skip
    dot_text = int(re.search(r"^\.text\s+(\d+)", sections, re.M).group(1))
    berkeley = subprocess.run(["size", str(library)], capture_output=True, text=True,
                              check=True).stdout.splitlines()[1].split()  # fmt: skip
    return dot_text, int(berkeley[0])


def measure(cxx: str, includes: list[str], module: str, umbrella: str, repeat: int,
            work: Path, tag: str) -> dict:  # fmt: skip
    inc = [f"-I{d}" for d in includes]
    src = work / f"{tag}_module.cc"
    src.write_text(module)
    lib = work / f"{tag}_module.so"
    cpu_seconds([cxx, *FLAGS, *inc, str(src), "-o", str(lib)])
    dot_text, text = text_sizes(lib)
    header = work / f"{tag}_umbrella.cc"
    header.write_text(umbrella)
    runs = [cpu_seconds([cxx, "-std=c++17", "-fsyntax-only", *inc, str(header)])
            for _ in range(repeat)]  # fmt: skip
    return {"dot_text": dot_text, "text": text, "parse": min(cpu for cpu, _ in runs),
            "parse_wall": min(wall for _, wall in runs)}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="parse runs per header (best of)")
    parser.add_argument("--cxx", default=os.environ.get("CXX", "g++"))
    parser.add_argument("--source", type=Path, default=REPO,
                        help="the packedfun checkout whose include/ is measured")  # fmt: skip
    args = parser.parse_args()
    if shutil.which(args.cxx) is None:
        print(f"no C++ compiler {args.cxx!r}", file=sys.stderr)
        return 1
    peers = {"packedfun": (packedfun_includes(args.source), PACKEDFUN_MODULE, PACKEDFUN_UMBRELLA),
             "tvm-ffi": (tvm_ffi_includes(), TVM_FFI_MODULE, TVM_FFI_UMBRELLA)}  # fmt: skip
    version = subprocess.run([args.cxx, "--version"], capture_output=True, text=True,
                             check=False).stdout.splitlines()[0]  # fmt: skip
    print(
        f"compiler: {version}; module flags: {' '.join(FLAGS)}; parse: -fsyntax-only, "
        f"CPU time, best of {args.repeat}; load average {os.getloadavg()[0]:.1f}\n"
    )
    print("| library | .text (bytes) | text, all read-only (bytes) | umbrella parse, CPU (s) "
          "| umbrella parse, wall (s) |")  # fmt: skip
    print("|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="pf_header_cost_") as tmp:
        for name, (includes, module, umbrella) in peers.items():
            if includes is None:
                print(f"| {name} | not measured | | | |")
                continue
            r = measure(args.cxx, includes, module, umbrella, args.repeat, Path(tmp),
                        name.replace("-", "_"))  # fmt: skip
            print(f"| {name} | {r['dot_text']} | {r['text']} | {r['parse']:.2f} "
                  f"| {r['parse_wall']:.2f} |")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
