# Where packedfun's headers and runtime live, and their identity for packedfun.cpp cache keys.
from __future__ import annotations

import os
import re
from functools import cache

__all__ = ["include_dirs", "lib_dir", "identity"]

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@cache
def include_dirs() -> tuple[str, ...]:
    """Include directories for packedfun.h and dlpack.h: the package's include/ (installed, or
    mirrored there by the dev build), else the source tree's include/ and third_party/dlpack."""
    installed = os.path.join(_PKG_DIR, "include")
    if os.path.exists(os.path.join(installed, "packedfun", "c_api.h")):
        return (installed,)
    repo = os.path.dirname(os.path.dirname(_PKG_DIR))
    in_tree = os.path.join(repo, "include")
    if os.path.exists(os.path.join(in_tree, "packedfun", "c_api.h")):
        return (in_tree, os.path.join(repo, "third_party", "dlpack", "include"))
    return (installed,)


@cache
def lib_dir() -> str:
    """The directory of the libpackedfun.so extensions link against (the one Python loaded)."""
    packaged = os.path.join(_PKG_DIR, "lib")
    if os.path.exists(os.path.join(packaged, "libpackedfun.so")):
        return packaged
    try:
        from .._backend import core

        return os.path.dirname(os.path.abspath(core.LIB_PATH))
    except (ImportError, AttributeError, OSError):
        return packaged


def _header_abi_version() -> int:
    header = os.path.join(include_dirs()[0], "packedfun", "c_api.h")
    try:
        with open(header, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return -1
    found = dict(re.findall(r"#define PACKEDFUN_ABI_VERSION_(MAJOR|MINOR) (\d+)", text))
    return (int(found.get("MAJOR", 0)) << 16) | int(found.get("MINOR", 0))


def abi_version() -> int:
    """The loaded runtime's ABI version, or the headers' when the runtime cannot be loaded."""
    try:
        from .._backend import core

        return int(core.ABI_VERSION)
    except (ImportError, AttributeError, OSError):
        return _header_abi_version()


def _headers_fingerprint() -> str:
    """Newest mtime and count of packedfun's own headers: a reinstall or header edit changes it."""
    newest, count = 0, 0
    for inc in include_dirs():
        for root, _dirs, files in os.walk(os.path.join(inc, "packedfun")):
            for file in files:
                newest = max(newest, os.stat(os.path.join(root, file)).st_mtime_ns)
                count += 1
    return f"{newest}:{count}"


@cache
def identity() -> str:
    """Everything about the installed packedfun that a built extension depends on."""
    return "\n".join(
        [
            f"abi={abi_version()}",
            f"headers={_headers_fingerprint()}",
            f"include={':'.join(include_dirs())}",
            f"lib={lib_dir()}",
        ]
    )
