# Test helper: builds an external CMake project against the installed packedfun.
"""Shared by the tests that play an extension author: ``build_external(source, build)`` configures
``source`` with ``-Dpackedfun_DIR=$(packedfun-config --cmakedir)`` and builds it; ``run(cmd)``
runs a command and fails the test with its output when it exits non-zero."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

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
