"""Module bytes that are not a whole library (a truncated copy, corrupted headers) are refused with
OSError before the loader maps them, whether loaded from a file or unpickled; the loader crashed
with SIGBUS on a truncated copy. Each case runs in a child process with a timeout."""

import os
import subprocess
import sys

import packedfun as pf
import pytest

CHILD = r"""
import hashlib, os, pickle, sys
import packedfun as pf
from packedfun import module as m

src, cut, tmp, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
data = open(src, "rb").read()
if mode == "truncate":
    data = data[:cut]
elif mode == "phoff":  # program headers said to lie past the end
    data = bytearray(data)
    data[0x20:0x28] = (len(data) - 8).to_bytes(8, "little")
    data = bytes(data)
elif mode == "segment":  # the first loaded segment said to hold more bytes than the file
    data = bytearray(data)
    phoff = int.from_bytes(data[0x20:0x28], "little")
    for i in range(int.from_bytes(data[0x38:0x3A], "little")):
        ph = phoff + 56 * i
        if int.from_bytes(data[ph:ph + 4], "little") == 1:  # PT_LOAD
            data[ph + 32:ph + 40] = (len(data) * 4).to_bytes(8, "little")
            break
    data = bytes(data)
path = os.path.join(tmp, "lib" + mode + ".so")
with open(path, "wb") as f:
    f.write(data)
for how in ("file", "pickle"):
    try:
        if how == "file":
            pf.load_module(path)
        else:
            # what unpickling a Module runs: its name, the bytes' digest, the bytes
            m._load_shipped("cut" + mode + str(cut), hashlib.sha256(data).hexdigest(), data)
        print(how, "loaded")
    except OSError as exc:
        print(how, "OSError", exc)
"""


def _library() -> str:
    """The testing library shipped beside the runtime: a real library with exports."""
    return os.path.join(os.path.dirname(pf.__file__), "lib", "libpackedfun_testing.so")


@pytest.mark.parametrize(
    "mode,fraction", [("truncate", 0.5), ("truncate", 0.9), ("truncate", 0.02), ("phoff", 0),
                      ("segment", 0)],
)  # fmt: skip
def test_a_damaged_library_is_refused_with_oserror(tmp_path, mode, fraction):
    src = _library()
    cut = max(64, int(os.path.getsize(src) * fraction))
    env = dict(os.environ, PACKEDFUN_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, src, str(cut), str(tmp_path), mode],
        capture_output=True, text=True, timeout=120, check=False, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr[-2000:])
    lines = proc.stdout.splitlines()
    assert len(lines) == 2 and all(" OSError " in line for line in lines), proc.stdout


def test_the_whole_library_still_loads():
    mod = pf.load_module(_library())
    assert mod is not None
