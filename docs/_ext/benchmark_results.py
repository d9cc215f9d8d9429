# Sphinx extension: pulls the benchmark run's reports (tables and charts) into a page as they are.
"""Expands ``<!-- benchmark-results: DIR -->`` in a page into includes of ``DIR/*.md`` and
images of ``DIR/*.svg`` (a chart right after the report of the same name), so the performance page
always shows what the last benchmark run wrote and no figure is copied by hand. On GitHub the
comment stays invisible and the page's prose names the folder.
"""

from __future__ import annotations

import re
from pathlib import Path

_MARKER = re.compile(r"^<!--\s*benchmark-results:\s*(\S+)\s*-->\s*$", re.M)


def _expand(page: Path, rel: str) -> str:
    folder = (page.parent / rel).resolve()
    reports = sorted(folder.glob("*.md"), key=lambda p: (p.stem != "latest", p.stem))
    charts = {p.stem: p for p in folder.glob("*.svg")}
    out: list[str] = []
    for report in reports:
        out += ["", f"```{{include}} {rel}/{report.name}", ":heading-offset: 1", "```", ""]
        chart = charts.pop(report.stem, None)
        if chart is not None:
            out += [f"```{{image}} {rel}/{chart.name}", f":alt: {chart.stem} chart", "```", ""]
    for stem, chart in sorted(charts.items()):
        out += [f"```{{image}} {rel}/{chart.name}", f":alt: {stem} chart", "```", ""]
    if not out:
        out = [f"(No benchmark results in `{rel}` yet: run `python benchmarks/run.py`.)"]
    return "\n".join(out)


def _source_read(app, docname: str, source: list[str]) -> None:
    if "benchmark-results" not in source[0]:
        return
    page = Path(app.env.doc2path(docname))
    source[0] = _MARKER.sub(lambda m: _expand(page, m.group(1)), source[0])


def setup(app):
    app.connect("source-read", _source_read)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
