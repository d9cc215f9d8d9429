# Extracts the runnable cells of a seed's notebook-style guide (`In [N]:` cells, ```python blocks).
"""Cells of seed 003's Python guide, read from the seed text itself.

A cell starts at an ``In [N]:`` line and runs until the prose resumes: an unindented line with
non-ASCII text that is not a comment, a markdown heading, or an output line such as
``ValueError: message`` (recorded as the exception the cell is expected to raise). Fenced
```` ```python ```` blocks are cells too. ``python extract.py SEED OUT`` writes the cells to OUT,
the checked-in copy the test uses when the seeds are not on the machine.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

CELL_START = re.compile(r"^In \[[^\]]*\]:\s*$")
ERROR_LINE = re.compile(r"^([A-Z]\w*(?:Error|Exception)): (.*)$")
RENAMES = (("tvm_ffi", "packedfun"), ("tvm::ffi", "packedfun"), ("TVM_FFI_", "PACKEDFUN_"))


def _is_prose(line: str) -> bool:
    if not line or line[0].isspace():
        return False
    if line.startswith("## ") or line.startswith("```"):
        return True
    return not line.startswith("#") and not line.isascii()


def _finish(cells: list, lines: list, expect: list | None) -> None:
    while lines and not lines[-1].strip():
        lines.pop()
    if lines:
        cells.append({"code": "\n".join(lines) + "\n", "raises": expect})


def extract(text: str) -> list:
    """The cells of ``text`` in order, as dicts of ``code`` and ``raises`` ([type, message])."""
    cells: list = []
    lines: list | None = None
    fenced = False
    for line in text.splitlines():
        if fenced:
            if line.startswith("```"):
                fenced = False
                _finish(cells, lines or [], None)
                lines = None
            else:
                assert lines is not None
                lines.append(line)
            continue
        if CELL_START.match(line) or line.strip() == "```python":
            if lines is not None:
                _finish(cells, lines, None)
            lines, fenced = [], line.strip() == "```python"
            continue
        if lines is None:
            continue
        error = ERROR_LINE.match(line)
        if error or _is_prose(line):
            _finish(cells, lines, list(error.groups()) if error else None)
            lines = None
            continue
        lines.append(line)
    if lines is not None:
        _finish(cells, lines, None)
    return cells


def rename(code: str) -> str:
    """Only the package and namespace names change: tvm_ffi, tvm::ffi, TVM_FFI_."""
    for old, new in RENAMES:
        code = code.replace(old, new)
    return code


if __name__ == "__main__":
    seed, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.write_text(json.dumps(extract(seed.read_text()), ensure_ascii=False, indent=1) + "\n")
