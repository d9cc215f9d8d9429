# docs/reference/abi-history.md stays in step with include/packedfun/c_api.h.
"""The ABI history table lists every entry point and flag that ``c_api.h`` declares, names nothing
the header lacks, and has a row for the header's current minor version.

When this fails after adding to ``c_api.h``: add the name to the row of its ABI version in
``docs/reference/abi-history.md`` (see CONTRIBUTING.md, "A C ABI entry point").
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEADER = ROOT / "include" / "packedfun" / "c_api.h"
HISTORY = ROOT / "docs" / "reference" / "abi-history.md"

pytestmark = [
    pytest.mark.skipif(
        not (HEADER.is_file() and HISTORY.is_file()), reason="not running from a source checkout"
    ),
    pytest.mark.deselect_if(
        os.environ.get("PACKEDFUN_BACKEND") == "ctypes"
        or os.environ.get("PACKEDFUN_PYTHON_MATRIX") == "child",
        reason="reads source text only: run once, by the main default-backend pass",
    ),
]

# Entry points, and the flags, tags and policies a library or binding may set or test.
_ENTRY = re.compile(r"PACKEDFUN_API\s+[^;(]*?\b(PF\w+)\s*\(")
_FLAG = re.compile(r"#define\s+((?:PACKEDFUN_(?:FIELD|METHOD|FUNCTION|DLTENSOR|VIEW)_|kPFGIL)\w+)")
_NAME = re.compile(r"^(?:PF|PACKEDFUN_|kPF)\w+$")


def header_names(text: str) -> set[str]:
    """The entry points and flags declared by a ``c_api.h`` text."""
    return set(_ENTRY.findall(text)) | set(_FLAG.findall(text))


def history_rows(text: str) -> dict[str, set[str]]:
    """ABI version ("1.4") -> the C names in backticks on that version's table rows."""
    rows: dict[str, set[str]] = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not re.fullmatch(r"\d+\.\d+", cells[0]):
            continue
        names = {n for n in re.findall(r"`([^`]+)`", " ".join(cells[1:])) if _NAME.match(n)}
        rows.setdefault(cells[0], set()).update(names)
    return rows


def test_parsers_on_a_small_sample():
    header = (
        "PACKEDFUN_API int PFFooCreate(PFAny* out);\n"
        "PACKEDFUN_API void* PFBarGet(int32_t a,\n    int32_t b);\n"
        "#define PACKEDFUN_FUNCTION_FLAG_X 8u\n#define PACKEDFUN_API\n"
    )
    assert header_names(header) == {"PFFooCreate", "PFBarGet", "PACKEDFUN_FUNCTION_FLAG_X"}
    table = "| ABI | Area | Added |\n|---|---|---|\n| 1.2 | X | `PFFooCreate`, `x.y`, `PFBarGet` |"
    assert history_rows(table) == {"1.2": {"PFFooCreate", "PFBarGet"}}


def test_every_entry_point_and_flag_is_in_the_table():
    declared = header_names(HEADER.read_text(encoding="utf-8"))
    listed = set().union(*history_rows(HISTORY.read_text(encoding="utf-8")).values())
    assert len(declared) > 80, "the header parser found too few declarations"
    missing = sorted(declared - listed)
    assert not missing, (
        f"declared in c_api.h but not in docs/reference/abi-history.md: {missing}; "
        "add each to the row of the ABI version that added it"
    )


def test_the_table_names_nothing_the_header_lacks():
    text = HEADER.read_text(encoding="utf-8")
    listed = set().union(*history_rows(HISTORY.read_text(encoding="utf-8")).values())
    unknown = sorted(n for n in listed if not re.search(rf"\b{re.escape(n)}\b", text))
    assert not unknown, f"docs/reference/abi-history.md names what c_api.h lacks: {unknown}"


def test_the_table_has_a_row_for_the_current_version():
    text = HEADER.read_text(encoding="utf-8")
    major = re.search(r"#define PACKEDFUN_ABI_VERSION_MAJOR (\d+)", text).group(1)
    minor = re.search(r"#define PACKEDFUN_ABI_VERSION_MINOR (\d+)", text).group(1)
    rows = history_rows(HISTORY.read_text(encoding="utf-8"))
    assert f"{major}.{minor}" in rows, f"no row for ABI {major}.{minor} in abi-history.md"
