# Test helper: builds a C++ test source into a packedfun module (packedfun.cpp, else c++ directly).
"""Shared by the tensor tests: ``load(name, source, functions)`` returns the loaded Module."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile

import packedfun

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def _direct_build(name: str, source: str, functions: list) -> str:
    """Compiles with the system C++ compiler, exporting `functions` with the export macro."""
    pkg = os.path.dirname(packedfun.__file__)
    exports = "".join(f"\nPACKEDFUN_DLL_EXPORT_TYPED_FUNC({f}, {f});" for f in functions)
    text = '#include <packedfun/packedfun.h>\n#include "' + source + '"\n' + exports + "\n"
    key = hashlib.sha256(text.encode() + open(source, "rb").read()).hexdigest()[:16]
    out_dir = os.path.join(tempfile.gettempdir(), f"pf_test_{name}_{key}")
    lib = os.path.join(out_dir, f"{name}.so")
    if os.path.exists(lib):
        return lib
    os.makedirs(out_dir, exist_ok=True)
    main = os.path.join(out_dir, "main.cc")
    with open(main, "w") as f:
        f.write(text)
    cxx = os.environ.get("CXX") or shutil.which("c++") or "g++"
    cmd = [cxx, "-std=c++17", "-O1", "-shared", "-fPIC", "-I", os.path.join(pkg, "include"),
           main, "-o", lib + ".tmp", "-L", os.path.join(pkg, "lib"), "-lpackedfun",
           "-Wl,-rpath," + os.path.join(pkg, "lib")]  # fmt: skip
    subprocess.run(cmd, check=True, capture_output=True)
    os.replace(lib + ".tmp", lib)
    return lib


def load(name: str, source: str, functions: list):
    """The Module built from `source` (a path) exporting `functions`."""
    try:
        import packedfun.cpp as cpp
    except ImportError:
        cpp = None
    if cpp is not None and hasattr(cpp, "load_inline"):
        with open(source) as f:
            return cpp.load_inline(name, cpp_sources=f.read(), functions=functions)
    return packedfun.load_module(_direct_build(name, source, functions))
