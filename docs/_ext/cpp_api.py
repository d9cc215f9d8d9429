# Sphinx extension: the C++ API reference, generated from the comments of include/packedfun/*.h.
"""``cpp-api-reference`` directive: renders the public C++ headers without Doxygen.

Each header ``include/packedfun/<name>.h`` (not ``c_api.h``, which has its own page, nor
``detail/`` and ``compat/``) becomes a section: its one-line opening comment, then every public
declaration at namespace scope in ``packedfun`` (outside ``detail`` and anonymous namespaces):
classes and structs, functions and function templates, type aliases, enums, constants, and the
``PACKEDFUN_*`` macros. Each entry shows the declaration's first line and the comment directly
above it (``/*! ... */`` or ``//`` lines). A public declaration without a comment is a warning, so
the site build (warnings are errors) fails until it is documented.

Each entry is a reference label ``cpp-<name>`` (lower case, ``_`` as ``-``: ``cpp-function``,
``cpp-packedfun-register-global``): the guides link with ``{ref}`Function <cpp-function>```.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)

_SKIPPED_HEADERS = {"c_api.h"}
_MACRO = re.compile(r"^#\s*define\s+(PACKEDFUN_[A-Z0-9_]+)")
_GUARD = re.compile(r"_H_$")
_NAMESPACE = re.compile(r"^\s*(?:inline\s+)?namespace\s*([\w:]*)\s*\{")
_DECL_NAME = [
    re.compile(r"^(?:template\s*<.*>\s*)?(?:class|struct|union)\s+(?:\[\[[^\]]*\]\]\s*)?(\w+)"),
    re.compile(r"^(?:template\s*<.*>\s*)?using\s+(\w+)\s*="),
    re.compile(r"^enum\s+(?:class\s+)?(\w+)"),
    re.compile(r"^(?:inline\s+)?(?:static\s+)?(?:constexpr|const)\s+[\w:<>,\s]+?\s(\w+)\s*[={]"),
    re.compile(r"(?:^|[\s*&>])(operator\s*(?:\"\"\s*\w+|[^\s(]+)|[\w:]+)\s*\("),
]


@dataclass
class Entry:
    name: str
    code: str
    doc: str
    line: int


def _clean_comment(lines: list[str]) -> str:
    out = []
    for raw in lines:
        text = raw.strip()
        text = re.sub(r"^/\*!?<?", "", text)
        text = re.sub(r"\*/$", "", text)
        text = re.sub(r"^//+!?", "", text)
        text = re.sub(r"^\*(?!/)", "", text)
        out.append(text.strip())
    return " ".join(t for t in out if t).strip()


_LITERAL = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|//.*$')


def _braces(line: str) -> int:
    """The change of brace depth over a line, string/char literals and // comments left out."""
    code = _LITERAL.sub("", line)
    return code.count("{") - code.count("}")


def _decl_name(code: str) -> str | None:
    if code.startswith("template") and not re.search(r">\s*(class|struct|using|\w)", code):
        return None
    for pattern in _DECL_NAME:
        m = pattern.search(code)
        if m:
            return m.group(1)
    return None


def parse_header(path: Path) -> tuple[str, list[Entry], list[tuple[int, str]]]:
    """(opening comment, public entries, undocumented (line, name)) of one header."""
    lines = path.read_text(encoding="utf-8").split("\n")
    opening = lines[0].lstrip("/ ").strip() if lines and lines[0].startswith("//") else ""
    entries: list[Entry] = []
    missing: list[tuple[int, str]] = []
    comment: list[str] = []
    in_block = False
    depth = 0
    scopes: list[tuple[int, bool]] = []  # (depth at which it opened, public namespace?)
    pending: list[str] = []  # a declaration spanning lines
    pending_line = 0
    group_doc = ""  # a comment above a group of declarations (overloads) with no blank line
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if in_block:
            comment.append(line)
            in_block = "*/" not in line
            continue
        if line.startswith("/*"):
            comment = [line]
            in_block = "*/" not in line
            continue
        if line.startswith("//"):
            comment.append(line)
            continue
        if not line:
            comment = []
            group_doc = ""
            continue
        public = depth == (scopes[-1][0] if scopes else -1) and all(p for _, p in scopes)
        public = public and bool(scopes)
        macro = _MACRO.match(line)
        if macro and not _GUARD.search(macro.group(1)) and not macro.group(1).endswith("_"):
            doc = _clean_comment(comment) or (group_doc if group_doc else "")
            entries.append(Entry(macro.group(1), line.rstrip("\\ "), doc, number))
            group_doc = doc
            if not doc:
                missing.append((number, macro.group(1)))
        if line.startswith("#"):
            comment = [] if not raw.rstrip().endswith("\\") else comment
            continue
        ns = _NAMESPACE.match(line)
        if ns:
            name = ns.group(1)
            inner = bool(scopes) and all(p for _, p in scopes)
            public_ns = (name.startswith("packedfun") or (inner and bool(name))) and (
                "detail" not in name
            )
            scopes.append((depth + _braces(line), public_ns))
            depth += _braces(line)
            comment = []
            continue
        if public and not pending and not line.startswith(("}", "{", ")")):
            pending, pending_line = [line], number
        elif pending:
            pending.append(line)
        if pending and re.search(r"[;{]|\)\s*$", " ".join(pending)) and not line.endswith(","):
            whole = " ".join(pending)
            code = re.split(r"\s*\{", whole, maxsplit=1)[0].rstrip(";").strip()
            name = _decl_name(code)
            forward = re.match(r"^(?:template\s*<.*>\s*)?(class|struct)\s+\w+\s*;$", whole)
            specialization = re.match(r"^template\s*<>", code) or name is None
            specialization = specialization or re.search(rf"\b(class|struct)\s+{name}\s*<", code)
            # A qualified name defines a member declared (and documented) in its class.
            specialization = specialization or "::" in (name or "") or name == "static_assert"
            if not forward and not specialization and not code.startswith(("friend", "return")):
                doc = _clean_comment(comment) or group_doc
                group_doc = doc
                entries.append(Entry(name, code, doc, pending_line))
                if not doc:
                    missing.append((pending_line, name))
            pending = []
            comment = []
        depth += _braces(line)
        while scopes and depth < scopes[-1][0]:
            scopes.pop()
        if not pending:
            comment = []
    return opening, entries, missing


def headers(include_dir: Path) -> list[Path]:
    return sorted(p for p in include_dir.glob("*.h") if p.name not in _SKIPPED_HEADERS)


class CppApiReference(SphinxDirective):
    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        page_dir = Path(self.env.doc2path(self.env.docname)).parent
        include_dir = (page_dir / self.arguments[0]).resolve()
        out: list[nodes.Node] = []
        seen: set[str] = set()  # one anchor per name on the page (the first declaration)
        if not headers(include_dir):
            logger.warning(
                "no headers in %s", include_dir, location=(self.env.docname, self.lineno)
            )
        for header in headers(include_dir):
            self.env.note_dependency(str(header))
            opening, entries, missing = parse_header(header)
            for line, name in missing:
                logger.warning(
                    "%s:%d: public declaration %s has no comment", header, line, name,
                    location=(self.env.docname, self.lineno),
                )  # fmt: skip
            title = f"packedfun/{header.name}"
            section = nodes.section(ids=[nodes.make_id("cpp-header-" + header.stem)])
            section += nodes.title(text=title)
            if opening:
                section += nodes.paragraph(text=opening)
            for entry in entries:
                anchor = label = nodes.make_id("cpp-" + entry.name)
                ids = [] if anchor in seen or not anchor else [anchor]
                seen.add(anchor)
                item = nodes.container()
                if ids:  # a label for {ref}`Function <cpp-function>` from the guides
                    target = nodes.target("", "", ids=ids, names=[label])
                    self.state.document.note_explicit_target(target)
                    item += target
                item += nodes.literal_block(entry.code, entry.code, language="cpp")
                item += nodes.paragraph(text=entry.doc)
                section += item
            out.append(section)
        return out


def setup(app):  # noqa: ANN001, ANN201
    app.add_directive("cpp-api-reference", CppApiReference)
    return {"version": "1", "parallel_read_safe": True}
