# Sphinx extension: the C ABI reference, generated from the comments of include/packedfun/c_api.h.
"""``c-abi-reference`` directive: renders ``c_api.h`` without Doxygen.

The header is read as a sequence of items: block comments, preprocessor lines and declarations
(up to the ``;`` that closes them at brace depth 0). A banner comment (a title between two rules of
dashes) opens a section; a ``/*! ... */`` comment documents the declaration that follows it, and a
plain comment directly above ``#define`` lines documents those macros; any other plain comment is a
note in the flow (e.g. "Added in ABI 1.3"). ``/*!< ... */`` member comments stay in the rendered
struct and enum bodies, where the reader expects them.

An exported function (``PACKEDFUN_API``) or typedef without a doc comment is a warning, so the build
(warnings are errors) fails when a declaration is added undocumented.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)

_RULE = re.compile(r"^\s*\*?\s*-{10,}\s*$")
_OWNERSHIP = re.compile(r"\b(borrowed|new ref(?:erence)?|stolen)\b")
_SKIPPED_DEFINES = re.compile(
    r"^#\s*define\s+(PACKEDFUN_C_API_H_|PACKEDFUN_EXPORT|PACKEDFUN_API)\b"
)


@dataclass
class Item:
    kind: str  # "comment", "doc", "pp", "decl"
    text: str
    line: int
    blank_before: bool = False


@dataclass
class Entry:
    names: list[str]
    code: str
    doc: str
    line: int


@dataclass
class Section:
    title: str
    intro: str = ""
    body: list[object] = field(default_factory=list)  # Entry or str (a note)


def _tokenize(text: str) -> list[Item]:
    """Splits the header into comments, preprocessor lines and declarations."""
    items: list[Item] = []
    i, n, line = 0, len(text), 1
    blank = False
    while i < n:
        c = text[i]
        if c == "\n":
            # a blank line separates a plain comment from what follows
            j = i + 1
            while j < n and text[j] in " \t":
                j += 1
            if j < n and text[j] == "\n":
                blank = True
            i, line = i + 1, line + 1
            continue
        if c in " \t":
            i += 1
            continue
        start_line = line
        if text.startswith("/*", i):
            end = text.index("*/", i) + 2
            body = text[i:end]
            if text[text.rfind("\n", 0, i) + 1 : i].strip():  # trailing `} /* extern "C" */`
                line += text.count("\n", i, end)
                i = end
                continue
            kind = "doc" if body.startswith("/*!") and not body.startswith("/*!<") else "comment"
            items.append(Item(kind, body, start_line, blank))
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            items.append(Item("comment", "/*" + text[i + 2 : end] + "*/", start_line, blank))
        elif c == "#":
            end = i
            while True:
                nl = text.find("\n", end)
                if nl < 0:
                    end = n
                    break
                if text[nl - 1] == "\\":
                    end = nl + 1
                    continue
                end = nl
                break
            items.append(Item("pp", text[i:end], start_line, blank))
        elif re.match(r'extern\s+"C"\s*{', text[i:]):  # opens a block, declares nothing
            end = text.index("{", i) + 1
        else:
            depth, end = 0, i
            while end < n:
                ch = text[end]
                if text.startswith("/*", end):
                    end = text.index("*/", end) + 2
                    continue
                if ch == "{":
                    depth += 1
                elif ch == "}":
                    depth -= 1
                    if depth < 0:  # the closing brace of extern "C"
                        break
                elif ch == ";" and depth == 0:
                    end += 1
                    break
                end += 1
            if end == i:  # a lone closing brace
                end = i + 1
            items.append(Item("decl", text[i:end], start_line, blank))
        line += text.count("\n", i, end)
        i = end
        blank = False
    return items


def _comment_lines(body: str) -> list[str]:
    """The text lines of a block comment, without the comment markers and the leading ` * `.

    The first line and the continuation lines are dedented separately (`/*! Text` vs ` *  text`),
    so only lines indented beyond their neighbours (tables of terms) keep leading spaces.
    """
    inner = re.sub(r"^/\*!?", "", body)
    inner = re.sub(r"\*/$", "", inner)
    lines = [re.sub(r"^\s*\*(?!/)", "", s.rstrip(), count=1) for s in inner.split("\n")]
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        return []
    return [lines[0].strip(), *textwrap.dedent("\n".join(lines[1:])).split("\n")][: len(lines)]


def _banner(body: str) -> tuple[str, str] | None:
    """(title, intro) when the comment is a section banner: a title between two dash rules."""
    lines = body.split("\n")
    rules = [k for k, s in enumerate(lines) if _RULE.match(s.replace("/*", " "))]
    if len(rules) < 2 or rules[0] != 0 or rules[1] - rules[0] < 2:
        return None
    title = " ".join(
        re.sub(r"^\s*\*", "", s).strip() for s in lines[rules[0] + 1 : rules[1]]
    ).strip()
    intro = "\n".join(_comment_lines("/*" + "\n".join(lines[rules[1] + 1 :])))
    return title, intro


def _decl_names(code: str) -> list[str]:
    """The name(s) a declaration or #define introduces, for index entries and anchors."""
    if code.startswith("#"):
        m = re.match(r"#\s*define\s+(\w+)", code)
        return [m.group(1)] if m else []
    m = re.search(r"}\s*(\w+)\s*;\s*$", code)  # typedef struct/enum {...} Name;
    if m:
        return [m.group(1)]
    m = re.search(r"\(\s*\*\s*(\w+)\s*\)\s*\(", code)  # typedef int (*Name)(...)
    if m and code.startswith("typedef"):
        return [m.group(1)]
    m = re.search(r"(\w+)\s*\(", code)  # a function declaration
    if m:
        return [m.group(1)]
    m = re.search(r"(\w+)\s*;\s*$", code)
    return [m.group(1)] if m else []


def parse_header(text: str) -> tuple[str, list[Section]]:
    """The prose preamble and the sections of a c_api.h-style header."""
    items = _tokenize(text)
    preamble: list[str] = []
    sections = [Section("Versions and exported symbols")]
    pending: Item | None = None  # a comment waiting for the declaration it documents

    def flush_note() -> None:
        nonlocal pending
        if pending is not None and pending.kind == "comment":
            sections[-1].body.append("\n".join(_comment_lines(pending.text)))
        elif pending is not None:  # a doc comment with nothing after it
            logger.warning("c_api.h:%d: doc comment documents nothing", pending.line)
        pending = None

    for idx, item in enumerate(items):
        if item.kind in ("comment", "doc"):
            banner = _banner(item.text) if item.kind == "comment" else None
            if banner is not None:
                flush_note()
                sections.append(Section(banner[0], banner[1]))
                continue
            if idx < 2 and item.kind == "comment" and len(sections) == 1:
                preamble.append("\n".join(_comment_lines(item.text)))
                continue
            flush_note()
            pending = item
            continue
        if item.kind == "pp":
            if not item.text.startswith("#define") or _SKIPPED_DEFINES.match(item.text):
                flush_note()
                continue
            last = sections[-1].body[-1] if sections[-1].body else None
            if (
                pending is None
                and not item.blank_before
                and isinstance(last, Entry)
                and (last.code.startswith("#define"))
            ):
                last.code += "\n" + item.text  # a run of macros under one comment
                last.names += _decl_names(item.text)
                continue
            if pending is not None and (pending.kind == "doc" or not item.blank_before):
                sections[-1].body.append(
                    Entry(_decl_names(item.text), item.text, _doc_text(pending), item.line)
                )
                pending = None
                continue
            flush_note()
            sections[-1].body.append(Entry(_decl_names(item.text), item.text, "", item.line))
            continue
        code = item.text.strip()
        if code.startswith("extern") or code in ("}", "};") or re.fullmatch(r"struct \w+;", code):
            flush_note()
            continue
        code = re.sub(r"^PACKEDFUN_API\s+", "", code)
        doc = ""
        if pending is not None and pending.kind == "doc":
            doc = _doc_text(pending)
            pending = None
        else:
            flush_note()
            logger.warning("c_api.h:%d: undocumented declaration: %s", item.line, code[:60])
        sections[-1].body.append(Entry(_decl_names(code), code, doc, item.line))
    flush_note()
    return "\n\n".join(preamble), [s for s in sections if s.body or s.intro]


def _doc_text(item: Item) -> str:
    return "\n".join(_comment_lines(item.text))


def _inline(text: str) -> list[nodes.Node]:
    """Text with `code` spans as literals and the ownership words in bold."""
    out: list[nodes.Node] = []
    for k, part in enumerate(text.split("`")):
        if k % 2:
            out.append(nodes.literal(part, part))
            continue
        pos = 0
        for m in _OWNERSHIP.finditer(part):
            out.append(nodes.Text(part[pos : m.start()]))
            out.append(nodes.strong(m.group(0), m.group(0)))
            pos = m.end()
        out.append(nodes.Text(part[pos:]))
    return out


def _prose(text: str) -> list[nodes.Node]:
    """Paragraphs split on blank lines; indented lines (tables of terms) stay preformatted."""
    out: list[nodes.Node] = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = block.split("\n")
        if len(lines) >= 2 and re.fullmatch(r"-{3,}", lines[1].strip()):
            out.append(nodes.rubric(lines[0].strip(), lines[0].strip()))
            lines = lines[2:]
            if not lines:
                continue
        if any(s.startswith(" ") for s in lines):
            body = "\n".join(lines)
            out.append(nodes.literal_block(body, body))
        else:
            out.append(nodes.paragraph("", "", *_inline(" ".join(s.strip() for s in lines))))
    return out


class CABIReference(SphinxDirective):
    """Renders the C ABI header named by the argument (relative to the page)."""

    required_arguments = 1
    option_spec = {"title-level": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        rel, path = self.env.relfn2path(self.arguments[0], self.env.docname)
        header = Path(path)
        if not header.is_file():
            logger.warning("c-abi-reference: %s not found", header, location=self.get_location())
            return []
        self.env.note_dependency(rel)
        preamble, sections = parse_header(header.read_text(encoding="utf-8"))
        result: list[nodes.Node] = _prose(preamble)
        for sec in sections:
            sid = "c-abi-" + re.sub(r"[^a-z0-9]+", "-", sec.title.lower()).strip("-")
            node = nodes.section(ids=[sid])
            node += nodes.title(sec.title, sec.title)
            node += _prose(sec.intro) if sec.intro else []
            for part in sec.body:
                if isinstance(part, str):
                    note = nodes.note()
                    note += _prose(part)
                    node += note
                    continue
                node += self._entry(part)
            result.append(node)
        return result

    def _entry(self, entry: Entry) -> list[nodes.Node]:
        ids = [f"c-abi-{name}" for name in entry.names]
        container = nodes.container(classes=["c-abi-entry"], ids=ids)
        if entry.names:
            label = ", ".join(entry.names)
            container += nodes.rubric(label, "", nodes.literal(label, label))
        block = nodes.literal_block(entry.code, entry.code, language="c")
        block.source, block.line = str(self.get_source_info()[0]), entry.line
        container += block
        container += _prose(entry.doc) if entry.doc else []
        return [container]


def setup(app):
    app.add_directive("c-abi-reference", CABIReference)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
