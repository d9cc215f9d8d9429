# Test helper: builds an external CMake project, or a one-file C library, against packedfun.
"""Shared by the tests that play an extension author: ``build_external(source, build)`` configures
``source`` with ``-Dpackedfun_DIR=$(packedfun-config --cmakedir)`` and builds it;
``build_c_library(text, out)`` compiles C11 source text into a shared library linked to the
installed runtime; ``run(cmd)`` runs a command and fails the test with its output when it exits
non-zero."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import packedfun
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def run(cmd: list, **kwargs) -> subprocess.CompletedProcess:
    """Runs `cmd` (15 min at most); a non-zero exit fails the test with the command's output."""
    proc = subprocess.run(
        [str(c) for c in cmd], capture_output=True, text=True, check=False, timeout=900, **kwargs
    )
    if proc.returncode != 0:
        pytest.fail(f"$ {' '.join(map(str, cmd))}\n{(proc.stdout + proc.stderr)[-6000:]}")
    return proc


def cmake_dir() -> Path:
    """The folder of packedfunConfig.cmake (what ``packedfun-config --cmakedir`` prints)."""
    out = run([sys.executable, "-m", "packedfun.config", "--cmakedir"]).stdout.strip()
    path = Path(out)
    assert (path / "packedfunConfig.cmake").is_file(), out
    return path


def build_external(source: Path, build: Path) -> Path:
    """Configures and builds the CMake project `source` into `build`; returns `build`. Without
    cmake the test skips, except in CI, where it fails."""
    cmake = shutil.which("cmake")
    if cmake is None:
        if IN_CI:
            pytest.fail("cmake is required in CI")
        pytest.skip("cmake not found")
    configure = [cmake, "-S", source, "-B", build, f"-Dpackedfun_DIR={cmake_dir()}"]
    if shutil.which("ninja"):
        configure += ["-G", "Ninja"]
    run(configure)
    run([cmake, "--build", build, "-j", "2"])
    return build


def build_c_library(text: str, out: Path) -> Path:
    """Compiles the C11 source `text` into the shared library `out` (the source is written beside
    it) against the headers and runtime of the imported packedfun; returns `out`. A warning fails
    the test like an error; without a C compiler the test skips."""
    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    pkg = Path(packedfun.__file__).resolve().parent
    src = out.with_suffix(".c")
    src.write_text(text)
    run([cc, "-std=c11", "-Wall", "-Werror", "-shared", "-fPIC", f"-I{pkg / 'include'}", src,
         "-o", out, f"-L{pkg / 'lib'}", "-lpackedfun", f"-Wl,-rpath,{pkg / 'lib'}"])  # fmt: skip
    return out
