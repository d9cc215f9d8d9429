# Measures the tvm-ffi bridge's translation cost from C (issue 17): direct call vs packedfun call.
"""``python benchmarks/tvmffi_adapter_cost.py`` builds ``tvmffi/adapter_cost.c`` against packedfun
and the kernel library of ``cases_tvmffi_kernels.py``, then prints a markdown table: the kernel's
``__tvm_ffi_add`` symbol called directly, the same function through ``PFFunctionCall`` (the bridge's
fast path: POD arguments handed over unchanged), and the difference (target ≤ 15 ns)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(HERE.parent / "python"))
    import cases_tvmffi_kernels
    import packedfun

    lib = cases_tvmffi_kernels._library()
    pkg = Path(packedfun.__file__).parent
    exe = cases_tvmffi_kernels.BUILD / "adapter_cost"
    cc = os.environ.get("CC") or shutil.which("cc") or "gcc"
    subprocess.run([cc, "-O2", "-I", str(pkg / "include"), str(HERE / "tvmffi" / "adapter_cost.c"),
                    "-o", str(exe), "-L", str(pkg / "lib"), "-lpackedfun", "-ldl",
                    "-Wl,-rpath," + str(pkg / "lib")], check=True)  # fmt: skip
    tvm_lib = None
    import importlib.util

    spec = importlib.util.find_spec("tvm_ffi")
    if spec is not None and spec.submodule_search_locations:
        tvm_lib = os.path.join(list(spec.submodule_search_locations)[0], "lib", "libtvm_ffi.so")
    env = dict(os.environ)
    if tvm_lib and "PACKEDFUN_TVM_FFI_LIBRARY" not in env:
        env["PACKEDFUN_TVM_FFI_LIBRARY"] = tvm_lib
    print(f"load average: {os.getloadavg()[0]:.2f} (1 min)")
    return subprocess.run([str(exe), lib], env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
