# Formatting native backtraces for Python tracebacks: source file and line from DWARF.
"""The runtime symbolizes an error's frames as lines of the form::

    File "/path/libmy_ext.so", offset 0x1234, in RaiseError

(the user's code only, most recent call last). This module turns the offset into a source file and
line with pyelftools, where the library carries DWARF debug information (built with ``-g``), so a
frame reads like one of Python's own::

    File "/src/my_ext.cc", line 60, in RaiseError

It runs only when a traceback is printed. Debug data is read once per library and kept; any
failure (no pyelftools, a stripped or vanished file, data it cannot parse) leaves the frame as the
runtime wrote it.
"""

from __future__ import annotations

import bisect
import os
import re
import threading
from typing import Any

__all__ = ["format_backtrace"]

_FRAME = re.compile(r'File "(?P<file>[^"]+)", offset 0x(?P<offset>[0-9a-fA-F]+), in (?P<name>.*)')
_HEADER = "Native backtrace (most recent call last):"


def format_backtrace(text: str) -> str:
    """The note text for a native backtrace, or ``""`` when it holds no frame.

    Parameters
    ----------
    text : str
        What ``PFErrorGetBacktrace`` returned: one frame per line, most recent call last; lines
        written by other producers pass through unchanged.

    Returns
    -------
    str
        A header and the frames, each indented like Python's traceback lines.
    """
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    if not lines:
        return ""
    return _HEADER + "\n" + "\n".join("  " + _resolve(line) for line in lines)


def _resolve(line: str) -> str:
    match = _FRAME.fullmatch(line)
    if match is None:
        return line
    try:
        where = _source_line(match["file"], int(match["offset"], 16))
    except Exception:  # printing a traceback must never fail
        where = None
    if where is None:
        return line
    return f'File "{where[0]}", line {where[1]}, in {match["name"]}'


# ---- DWARF line tables ---------------------------------------------------------------------

_lock = threading.Lock()
_tables: dict[str, _LineTable | None] = {}


def _source_line(path: str, address: int) -> tuple[str, int] | None:
    with _lock:
        if path not in _tables:
            _tables[path] = _LineTable.open(path)
        table = _tables[path]
        return None if table is None else table.lookup(address)


class _LineTable:
    """The DWARF line programs of one ELF file, decoded one compilation unit at a time."""

    def __init__(self, dwarf: Any, stream: Any) -> None:
        self._dwarf = dwarf
        self._stream = stream  # kept open: pyelftools reads sections lazily
        self._aranges = dwarf.get_aranges()
        self._units: dict[int, list[tuple[int, int, list[int], list[tuple[str, int]]]]] = {}

    @classmethod
    def open(cls, path: str) -> _LineTable | None:
        try:
            from elftools.elf.elffile import ELFFile
        except ImportError:
            return None
        if not os.path.isfile(path):
            return None
        stream = open(path, "rb")  # noqa: SIM115 - lives as long as the table
        try:
            elf = ELFFile(stream)
            if not elf.has_dwarf_info():
                stream.close()
                return None
            return cls(elf.get_dwarf_info(), stream)
        except Exception:
            stream.close()
            return None

    def lookup(self, address: int) -> tuple[str, int] | None:
        for start, end, addresses, rows in self._sequences_for(address):
            if start <= address < end:
                i = bisect.bisect_right(addresses, address) - 1
                if i >= 0:
                    return rows[i]
        return None

    def _sequences_for(self, address: int) -> list:
        offset = self._aranges.cu_offset_at_addr(address) if self._aranges else None
        if offset is not None:
            return self._unit(offset)
        # No .debug_aranges: try every unit (decoded once each).
        found: list = []
        for unit in self._dwarf.iter_CUs():
            found += self._unit(unit.cu_offset)
        return found

    def _unit(self, offset: int) -> list:
        if offset not in self._units:
            self._units[offset] = _decode_unit(self._dwarf, self._dwarf.get_CU_at(offset))
        return self._units[offset]


def _file_names(program: Any, comp_dir: str) -> list[str]:
    header = program.header
    version = header["version"]
    dirs = [d.decode("utf-8", "replace") if isinstance(d, bytes) else str(d) for d in
            header["include_directory"]]  # fmt: skip
    if version < 5:
        dirs = [comp_dir, *dirs]  # index 0 is the compilation directory
    names = []
    for entry in header["file_entry"]:
        name = (
            entry.name.decode("utf-8", "replace") if isinstance(entry.name, bytes) else entry.name
        )
        index = entry.dir_index
        directory = dirs[index] if 0 <= index < len(dirs) else ""
        if not os.path.isabs(directory):
            directory = os.path.join(comp_dir, directory)
        names.append(os.path.normpath(os.path.join(directory, name)))
    if version < 5:
        names = ["", *names]  # file numbers count from 1
    return names


def _decode_unit(dwarf: Any, unit: Any) -> list:
    """The unit's line sequences as (start, end, row addresses, row (file, line)) tuples."""
    program = dwarf.line_program_for_CU(unit)
    if program is None:
        return []
    top = unit.get_top_DIE()
    comp_dir_attr = top.attributes.get("DW_AT_comp_dir")
    comp_dir = comp_dir_attr.value if comp_dir_attr is not None else b""
    if isinstance(comp_dir, bytes):
        comp_dir = comp_dir.decode("utf-8", "replace")
    names = _file_names(program, comp_dir)
    sequences = []
    addresses: list[int] = []
    rows: list[tuple[str, int]] = []
    for entry in program.get_entries():
        state = entry.state
        if state is None:
            continue
        if state.end_sequence:
            if addresses:
                sequences.append((addresses[0], state.address, addresses, rows))
            addresses, rows = [], []
            continue
        name = names[state.file] if 0 <= state.file < len(names) else "??"
        if addresses and addresses[-1] == state.address:
            rows[-1] = (name, state.line)  # the last row for one address wins
        else:
            addresses.append(state.address)
            rows.append((name, state.line))
    return sequences
