# Source generation for packedfun.cpp: the packedfun include prelude and the `functions` exports.
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

__all__ = ["normalize_sources", "normalize_functions", "decorate"]

_PRELUDE = "#include <packedfun/packedfun.h>\n"
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def normalize_sources(sources: str | Sequence[str] | None, what: str) -> str:
    """One source text from a string or a list of strings (joined by newlines)."""
    if sources is None:
        return ""
    if isinstance(sources, str):
        return sources
    if isinstance(sources, Sequence) and all(isinstance(s, str) for s in sources):
        return "\n".join(sources)
    raise TypeError(f"{what} must be a str or a list of str, got {type(sources).__name__}")


def normalize_functions(
    functions: str | Sequence[str] | Mapping[str, str | None] | None,
) -> dict[str, str | None]:
    """Maps every function to export onto its docstring (None when it has none)."""
    if functions is None:
        items: dict[str, str | None] = {}
    elif isinstance(functions, str):
        items = {functions: None}
    elif isinstance(functions, Mapping):
        items = dict(functions)
    elif isinstance(functions, Sequence):
        items = dict.fromkeys(functions)
    else:
        raise TypeError(
            "functions must be a name, a list of names or a dict name -> docstring, "
            f"got {type(functions).__name__}"
        )
    for name, doc in items.items():
        if not isinstance(name, str) or not _IDENTIFIER.match(name):
            raise ValueError(f"function name {name!r} is not a valid C++ identifier")
        if doc is not None and not isinstance(doc, str):
            raise TypeError(
                f"docstring of {name!r} must be a str or None, got {type(doc).__name__}"
            )
    return items


def _c_string_literal(text: str) -> str:
    """A C string literal for `text`; non-printable bytes become 3-digit octal escapes (which,
    unlike \\x escapes, cannot swallow a following hex digit)."""
    out = []
    for byte in text.encode("utf-8"):
        ch = chr(byte)
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif 0x20 <= byte < 0x7F and ch != "?":
            out.append(ch)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


_NOT_A_NAME = frozenset(
    "auto bool char const double float int long short signed unsigned void volatile".split()
)
_OPEN = {"(": ")", "<": ">", "[": "]", "{": "}"}


def _split_top_level(text: str) -> list[str]:
    """``text`` split at the commas outside any bracket pair (template arguments included)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in _OPEN:
            depth += 1
        elif ch in _OPEN.values():
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


def _param_name(param: str) -> str | None:
    """The name of one C++ parameter declaration (``const std::vector<int>& xs = {}``)."""
    declarator = _split_top_level(param.replace("=", ",", 1))[0] if "=" in param else param
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", re.sub(r"<[^<>]*>", " ", declarator))
    if len(words) < 2 or words[-1] in _NOT_A_NAME or words[-2] in ("struct", "class", "enum"):
        return None  # unnamed
    return words[-1]


def parameter_names(source: str, name: str) -> list[str] | None:
    """The parameter names of the function ``name`` as ``source`` defines or declares it (the
    keyword names of a ``load_inline`` export); None when they cannot be read unambiguously (no
    declaration, overloads with other names, an unnamed parameter, a variadic one)."""
    found: set[tuple[str, ...]] = set()
    pattern = rf"(?:^|[\s*&>])(?<![.:]){re.escape(name)}\s*\("
    for m in re.finditer(pattern, source):
        start = source.index(name, m.start())
        before = source[source.rfind("\n", 0, start) + 1 : start].rstrip()
        if not re.search(r"[A-Za-z0-9_>*&]$", before) or re.search(
            r"\b(return|else|case|new|throw|co_return)$", before
        ):
            continue  # a call, not a declaration: no return type in front
        depth, i = 1, m.end()
        while i < len(source) and depth:
            depth += {"(": 1, ")": -1}.get(source[i], 0)
            i += 1
        after = source[i : i + 80].lstrip()
        if not re.match(r"(?:(?:const|noexcept|override)\s*)*(?:->[^{;]*)?[{;]", after):
            continue
        inner = source[m.end() : i - 1].strip()
        if inner in ("", "void"):
            found.add(())
            continue
        names = [_param_name(p) for p in _split_top_level(inner)]
        if any(n is None for n in names) or "..." in inner:
            return None
        found.add(tuple(n for n in names if n is not None))
    return list(found.pop()) if len(found) == 1 else None


def export_block(functions: Mapping[str, str | None], source: str = "") -> str:
    """The lines that export every function under its own name (and its docstring, if any); the
    parameters are named as ``source`` declares them, where it can be read."""
    lines = []
    for name, doc in functions.items():
        params = parameter_names(source, name) or []
        args = "".join(f', "{p}"' for p in params)
        lines.append(f"PACKEDFUN_DLL_EXPORT_TYPED_FUNC({name}, {name}{args});")
        if doc:  # an empty docstring is no docstring: none is exported
            lines.append(f"PACKEDFUN_DLL_EXPORT_DOC({name}, {_c_string_literal(doc)});")
    return "\n".join(lines)


_TVM_FFI_PRELUDE = "#include <packedfun/compat/tvm_ffi.h>\n"


def decorate(
    source: str, functions: Mapping[str, str | None] | None, tvm_ffi_compat: bool = False
) -> str:
    """`source` with the packedfun include (and, when asked, the apache-tvm-ffi compatibility
    header) in front and, when given, the exports appended."""
    text = _PRELUDE + (_TVM_FFI_PRELUDE if tvm_ffi_compat else "") + source
    if not text.endswith("\n"):
        text += "\n"
    if functions:
        text += "\n// exports generated by packedfun.cpp\n" + export_block(functions, source) + "\n"
    return text


#: What apache-tvm-ffi's own ``load_inline`` puts in front of inline sources.
_TVM_FFI_NATIVE_PRELUDE = "".join(
    f"#include <tvm/ffi/{h}>\n"
    for h in ("container/tensor.h", "dtype.h", "error.h", "extra/c_env_api.h", "function.h")
)
_TVM_FFI_WRITTEN = re.compile(r"\btvm::ffi\b|\bTVM_FFI_[A-Z]|\bTVMFFI[A-Z]|<tvm/ffi/")
_PACKEDFUN_WRITTEN = re.compile(r"\bpackedfun::|\bPACKEDFUN_[A-Z]|<packedfun/")


def written_for_tvm_ffi(sources: list[str]) -> bool:
    """Whether the sources are written for apache-tvm-ffi (its C++ names, macros, C names or
    headers) and not for packedfun."""
    text = "\n".join(sources)
    return bool(_TVM_FFI_WRITTEN.search(text)) and not _PACKEDFUN_WRITTEN.search(text)


def decorate_tvm_ffi(source: str, functions: Mapping[str, str | None] | None) -> str:
    """`source` as apache-tvm-ffi's ``load_inline`` builds it: its headers in front and its
    export macros appended."""
    text = _TVM_FFI_NATIVE_PRELUDE + source
    if not text.endswith("\n"):
        text += "\n"
    if functions:
        text += "\n// exports generated by packedfun.cpp (apache-tvm-ffi's export macros)\n"
        for name, doc in functions.items():
            text += f"TVM_FFI_DLL_EXPORT_TYPED_FUNC({name}, {name});\n"
            if doc:  # as apache-tvm-ffi: an empty docstring is not exported
                text += f"TVM_FFI_DLL_EXPORT_TYPED_FUNC_DOC({name}, {_c_string_literal(doc)});\n"
    return text
