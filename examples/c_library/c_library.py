# examples/c_library: builds c_library.c with the C compiler (as C11) and calls it from Python.
"""Build the plain-C library and use it through ``packedfun.load_module``.

Usage::

    python examples/c_library/c_library.py [LIBRARY]

With LIBRARY (an already built ``c_library.so``) the build step is skipped; otherwise the
library is compiled with ``$CC`` (default ``cc``) into a temporary directory.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import packedfun
import packedfun.config

HERE = Path(__file__).resolve().parent


def build(out_dir: str) -> str:
    """Compiles c_library.c as C11 against the packedfun package found by Python."""
    lib = os.path.join(out_dir, "c_library.so")
    cc = shlex.split(os.environ.get("CC", "cc"))
    cmd = [
        *cc,
        "-std=c11",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-shared",
        "-fPIC",
        *packedfun.config.get_cflags().split(),
        str(HERE / "c_library.c"),
        "-o",
        lib,
        *packedfun.config.get_ldflags().split(),
        *packedfun.config.get_libs().split(),
    ]
    subprocess.run(cmd, check=True)
    return lib


def main(lib: str) -> None:
    mod = packedfun.load_module(lib)
    print(f"add(2, 3) -> {mod.add(2, 3)}")
    print(f"add.__doc__ -> {mod.add.__doc__!r}")
    print(f"greet('C') -> {mod.greet('C')!r}")
    print(f"mod(40, 2) -> {mod(40, 2)}  (the entry function, {mod.entry_name!r})")
    try:
        mod.add(1, "two")
    except TypeError as exc:
        print(f"add(1, 'two') -> TypeError: {exc}")
    mul = packedfun.get_global_func("c_library.mul")
    print(f"global c_library.mul(6, 7) -> {mul(6, 7)}")
    print(f"'sub' in mod -> {'sub' in mod}")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(sys.argv[1])
    else:
        with tempfile.TemporaryDirectory() as tmp:
            main(build(tmp))
