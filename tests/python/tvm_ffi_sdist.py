# apache-tvm-ffi's source distribution from PyPI, fetched at test time at a pinned version.
"""One helper for the tests that run apache-tvm-ffi's own material on packedfun: its Python test
suite (``test_tvm_ffi_conformance.py``) and its example directories (``test_tvm_ffi_examples.py``).

The sdist is downloaded once with ``pip download`` into a per-user cache folder (or the folder
``PACKEDFUN_TVM_FFI_SDIST_CACHE`` names, which may hold the archive for offline runs) and unpacked
there whole; nothing of tvm-ffi is copied into this repository."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import tempfile

import pytest

VERSION = "0.1.15"


def cache_dir() -> str:
    return os.environ.get("PACKEDFUN_TVM_FFI_SDIST_CACHE") or os.path.join(
        tempfile.gettempdir(), f"pf_tvm_ffi_sdist_{os.getuid()}_{VERSION}"
    )


def source_root() -> str:
    """The unpacked ``apache_tvm_ffi-<VERSION>`` folder (``examples/``, ``tests/``, ...)."""
    from filelock import FileLock

    cache = cache_dir()
    os.makedirs(cache, exist_ok=True)
    root = os.path.join(cache, f"apache_tvm_ffi-{VERSION}")
    with FileLock(os.path.join(cache, ".lock")):
        if os.path.isdir(root):
            return root
        sdist = os.path.join(cache, f"apache_tvm_ffi-{VERSION}.tar.gz")
        if not os.path.exists(sdist):
            # Only this package from source; its build requirements (for pip's metadata step)
            # come as wheels. A network failure fails the test: this check must not go quiet.
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary",
                   "apache-tvm-ffi", f"apache-tvm-ffi=={VERSION}", "-d", cache]  # fmt: skip
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1200)
            if proc.returncode != 0 or not os.path.exists(sdist):
                pytest.fail(
                    f"could not download apache-tvm-ffi=={VERSION}'s source distribution from "
                    f"PyPI (network down?); set PACKEDFUN_TVM_FFI_SDIST_CACHE to a folder holding "
                    f"{os.path.basename(sdist)}:\n{proc.stderr[-2000:]}"
                )
        unpack = tempfile.mkdtemp(dir=cache)
        with tarfile.open(sdist) as tar:
            safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}  # 3.11.4+
            tar.extractall(unpack, **safe)
        os.replace(os.path.join(unpack, f"apache_tvm_ffi-{VERSION}"), root)
        os.rmdir(unpack)
    return root


def tests_dir() -> str:
    """The sdist's ``tests/python`` folder."""
    return os.path.join(source_root(), "tests", "python")


def examples_dir() -> str:
    """The sdist's ``examples`` folder."""
    return os.path.join(source_root(), "examples")
