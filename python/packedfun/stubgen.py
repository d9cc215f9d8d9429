# packedfun.stubgen: writes .pyi stubs for packedfun functions and object types from their metadata.
"""Type stubs from function metadata.

``python -m packedfun.stubgen`` (or the ``packedfun-stubgen`` console script) writes a ``.pyi``
file describing the Functions under a registry prefix (``--prefix mylib``), the functions a
library exports (``--library path/to/libmylib.so``), and the object types registered under the
prefix (fields, methods, constructors). Everything comes from the metadata records (parameter
names, type schemas, defaults) and the type table, so the stub says what the native code says.
The output is deterministic; ``--check`` compares it with the file already there and exits
with status 1 when that file is stale.

Type schemas become annotations as a caller sees them: a parameter of schema ``Array[int]``
accepts any ``Sequence[int]`` (a list converts), a result of that schema is a
:class:`packedfun.Array`; object type keys become the classes of the stub (or the Python class
registered for them, else :class:`packedfun.Object`); unknown schemas become ``Any``.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import keyword
import os
import sys
from typing import Any

__all__ = ["annotation", "generate", "main"]

_OBJECT_INDEX = 64  # kPFTypeObject: the first object type index
_DYNAMIC_INDEX = 128  # the first type index handed out at run time

# Schemas that read the same as Python annotations.
_PLAIN = {"int", "float", "bool", "str", "bytes", "None", "Any"}
# Built-in object schemas: (annotation as a parameter, annotation as a result).
_BUILTIN = {
    "Object": ("packedfun.Object", "packedfun.Object"),
    "Function": ("Callable[..., Any]", "packedfun.Function"),
    "Tensor": ("Any", "packedfun.Tensor"),
    "Shape": ("Sequence[int]", "packedfun.Shape"),
    "Module": ("packedfun.Module", "packedfun.Module"),
    "Device": ("packedfun.Device", "packedfun.Device"),
    "dtype": ("Any", "Any"),
    "Error": ("BaseException", "BaseException"),
    "Opaque": ("Any", "Any"),
}
# Static type indices of reflected fields (kPFType*) and their schemas.
_INDEX_SCHEMA = {
    0: "None",
    1: "int",
    2: "bool",
    3: "float",
    5: "dtype",
    6: "Device",
    8: "str",
    9: "str",
    10: "bytes",
    11: "str",
    12: "bytes",
    64: "Object",
    65: "str",
    66: "bytes",
    67: "Error",
    68: "Function",
    69: "Opaque",
    70: "Shape",
    71: "Tensor",
    72: "Array[Any]",
    73: "Map[Any, Any]",
    74: "List[Any]",
    75: "Dict[Any, Any]",
    76: "Module",
}


# ---- type schemas -> annotations -----------------------------------------------------------------
def _tokens(schema: str) -> list[str]:
    out: list[str] = []
    word = ""
    for ch in schema:
        if ch in "[],;":
            if word.strip():
                out.append(word.strip())
            word = ""
            out.append(ch)
        else:
            word += ch
    if word.strip():
        out.append(word.strip())
    return out


def _parse(tokens: list[str], pos: int) -> tuple[Any, int]:
    """One schema term: ``name`` or ``name[args]`` (``[a, b]`` alone for Callable parameters)."""
    if pos < len(tokens) and tokens[pos] == "[":
        items, pos = _parse_list(tokens, pos + 1)
        return ("[]", items), pos
    if pos >= len(tokens) or tokens[pos] in "[],;":
        raise ValueError("malformed type schema")
    name = tokens[pos]
    pos += 1
    if pos < len(tokens) and tokens[pos] == "[":
        items, pos = _parse_list(tokens, pos + 1)
        return (name, items), pos
    return (name, []), pos


def _parse_list(tokens: list[str], pos: int) -> tuple[list, int]:
    items: list[Any] = []
    while True:
        if pos < len(tokens) and tokens[pos] == "]":
            return items, pos + 1
        item, pos = _parse(tokens, pos)
        items.append(item)
        if pos < len(tokens) and tokens[pos] == ";":  # list[int; 3]: a fixed size
            pos += 2
        if pos < len(tokens) and tokens[pos] == ",":
            pos += 1
        elif pos >= len(tokens) or tokens[pos] != "]":
            raise ValueError("malformed type schema")


class _Namer:
    """Turns parsed schemas into annotations; knows the classes of the stub being written."""

    def __init__(self, classes: dict[str, str]) -> None:
        self.classes = classes  # type key -> annotation
        self.typing: set[str] = set()

    def __call__(self, term: Any, param: bool) -> str:
        name, args = term
        if name == "[]":
            return "[" + ", ".join(self(a, param) for a in args) + "]"
        if name in _PLAIN and not args:
            if name == "Any":
                self.typing.add("Any")
            return name
        inner = [self(a, param) for a in args]
        if name == "Optional" and len(inner) == 1:
            return f"{inner[0]} | None"
        if name in ("Variant", "Union") and inner:
            return " | ".join(dict.fromkeys(inner))
        if name == "Expected" and len(inner) == 1:
            return inner[0]
        if name in ("Array", "list") and len(inner) == 1:
            return self._use("Sequence", f"Sequence[{inner[0]}]") if param else "packedfun.Array"
        if name in ("Map", "dict") and len(inner) == 2:
            if not param:
                return "packedfun.Map"
            return self._use("Mapping", f"Mapping[{inner[0]}, {inner[1]}]")
        if name == "List":
            return "packedfun.List"
        if name == "Dict":
            return "packedfun.Dict"
        if name == "Tuple" and inner:
            return f"tuple[{', '.join(inner)}]" if param else "packedfun.Array"
        if name == "Callable" and len(inner) == 2:
            if not param:
                return "packedfun.Function"
            return self._use("Callable", f"Callable[{inner[0]}, {inner[1]}]")
        if name in _BUILTIN and not args:
            text = _BUILTIN[name][0 if param else 1]
            for word in ("Any", "Callable", "Sequence"):
                if word in text:
                    self._use(word, text)
            return text
        if name in self.classes:
            return self.classes[name]
        self.typing.add("Any")
        return "Any"

    def _use(self, word: str, text: str) -> str:
        self.typing.add(word)
        if "Any" in text.replace(word, ""):
            self.typing.add("Any")
        return text


def annotation(schema: str, param: bool = True, classes: dict[str, str] | None = None) -> str:
    """The Python annotation of a type schema.

    Parameters
    ----------
    schema : str
        A type schema from a metadata record (``"int"``, ``"Optional[Array[int]]"``,
        ``"mylib.Point"``).
    param : bool
        True for a parameter (what a caller may pass: ``Sequence[int]`` for ``Array[int]``),
        False for a result (what comes back: ``packedfun.Array``).
    classes : dict, optional
        Type key -> annotation for the object types the stub defines.

    Returns
    -------
    str
        The annotation; ``"Any"`` for a schema it does not know.
    """
    return _Namer(classes or {})(_term(schema), param)


def _term(schema: str) -> Any:
    try:
        term, pos = _parse(_tokens(schema), 0)
        if pos != len(_tokens(schema)):
            raise ValueError("trailing text")
        return term
    except ValueError:
        return ("Any", [])


# ---- stub text --------------------------------------------------------------------------------
def _default_text(value: Any) -> str:
    if isinstance(value, str) and '"' not in value and repr(value).startswith("'"):
        return '"' + repr(value)[1:-1] + '"'  # the quotes a formatter would choose
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    return "..."


def _def_line(indent: str, name: str, params: list[str], returns: str, tail: str) -> list[str]:
    """``def name(params) -> returns:`` on one line, or one parameter a line (with the trailing
    comma that keeps a formatter from joining them again) when that passes 88 columns."""
    line = f"{indent}def {name}({', '.join(params)}) -> {returns}:{tail}"
    if len(line) <= 88 or not params:
        return [line]
    inner = [f"{indent}    {p}," for p in params]
    return [f"{indent}def {name}("] + inner + [f"{indent}) -> {returns}:{tail}"]


def _params(record: dict | None, namer: _Namer, skip: int = 0) -> list[str]:
    if record is None:
        namer.typing.add("Any")
        return ["*args: Any"]
    parts = []
    for p in (record.get("params") or [])[skip:]:
        name = str(p["name"])
        if not name.isidentifier() or keyword.iskeyword(name):
            namer.typing.add("Any")
            return ["*args: Any"]
        text = f"{name}: {namer(_term(str(p.get('type', 'Any'))), True)}"
        if "default" in p:
            text += f" = {_default_text(p['default'])}"
        parts.append(text)
    return parts


def _returns(record: dict | None, namer: _Namer) -> str:
    if record is None:
        namer.typing.add("Any")
        return "Any"
    return namer(_term(str(record.get("return", "Any"))), False)


def _docstring(text: str | None, indent: str) -> list[str]:
    if not text:
        return []
    first = text.strip().splitlines()[0].replace("\\", "\\\\").replace('"""', "'''")
    return [f'{indent}"""{first}"""']


def _function_lines(name: str, record: dict | None, namer: _Namer, indent: str = "") -> list[str]:
    params = _params(record, namer)
    returns = _returns(record, namer)
    doc = _docstring((record or {}).get("doc"), indent + "    ")
    if doc:
        return _def_line(indent, name, params, returns, "") + doc + [f"{indent}    ...", ""]
    return _def_line(indent, name, params, returns, " ...")


def _method_lines(method: dict, namer: _Namer) -> list[str]:
    from ._rules.signature import metadata_of

    record = metadata_of(method["func"])
    name = method["name"]
    if method["is_static"]:
        returns = _returns(record, namer)
        return ["    @staticmethod"] + _def_line(
            "    ", name, _params(record, namer), returns, " ..."
        )
    params = ["self"] + _params(record, namer, skip=1)
    return _def_line("    ", name, params, _returns(record, namer), " ...")


def _py_class_spec(type_key: str) -> Any:
    """The definition of ``type_key`` when a Python class defined it (``py_class``), else None."""
    py_class = sys.modules.get("packedfun._py_class")
    return None if py_class is None else py_class._defined.get(type_key)


def _declared_schema(declared: Any, nullable: bool) -> str:
    """The schema of a Python-defined field's declared type (a type index, or the class of an
    object type) and whether it accepts None."""
    if isinstance(declared, type):
        declared = declared.__dict__.get("__pf_type_index__", _OBJECT_INDEX)
    if isinstance(declared, int) and declared >= _DYNAMIC_INDEX:
        from ._backend import core

        schema = str(core.type_info(declared)["type_key"])
    else:
        schema = _INDEX_SCHEMA.get(declared, "Any")
    return f"Optional[{schema}]" if nullable and schema not in ("Any", "None") else schema


_NO_ANNOTATION = object()


def _py_annotation_schema(ann: Any) -> str:
    """The schema of a Python annotation of a ``@method`` (simple types, packedfun classes and
    Optional of them; anything else is Any)."""
    import typing

    simple = {int: "int", float: "float", bool: "bool", str: "str", bytes: "bytes"}
    if ann is _NO_ANNOTATION:
        return "Any"
    if ann is None or ann is type(None):
        return "None"
    if ann in simple:
        return simple[ann]
    args = typing.get_args(ann)
    if typing.get_origin(ann) is typing.Union or type(ann).__name__ == "UnionType":
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1 and len(args) == 2:
            return f"Optional[{_py_annotation_schema(rest[0])}]"
        return "Any"
    index = ann.__dict__.get("__pf_type_index__") if isinstance(ann, type) else None
    return _declared_schema(index, False) if isinstance(index, int) else "Any"


def _py_init_lines(spec: Any, namer: _Namer) -> list[str]:
    """``__init__`` of a Python-defined type: its fields, keyword-only ones and defaults as the
    generated ``__init__`` takes them."""
    from ._py_class import MISSING, _all_fields

    params: list[str] = []
    kw_params: list[str] = []
    for f in _all_fields(spec.cls, slots_only=True):
        if not f.init:
            continue
        text = f"{f.name}: {namer(_term(_declared_schema(*f._schema)), True)}"
        if f.default is not MISSING:
            text += f" = {_default_text(f.default)}"
        elif f.default_factory is not MISSING:
            text += " = ..."
        (kw_params if f.kw_only else params).append(text)
    params = ["self", *params] + (["*", *kw_params] if kw_params else [])
    return _def_line("    ", "__init__", params, "None", " ...")


def _py_method_lines(name: str, fn: Any, is_static: bool, cls: type, namer: _Namer) -> list[str]:
    """A ``@method`` of a Python-defined type, from the Python function's own signature."""
    try:
        sig = inspect.signature(fn)
        hints = _hints(fn, cls)
    except (TypeError, ValueError):
        namer.typing.add("Any")
        return _def_line("    ", name, ["self", "*args: Any"], "Any", " ...")
    params = [] if is_static else ["self"]
    for i, p in enumerate(sig.parameters.values()):
        if i == 0 and not is_static:
            continue
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.kind == p.KEYWORD_ONLY:
            namer.typing.add("Any")
            params = params[: 0 if is_static else 1] + ["*args: Any"]
            break
        ann = hints.get(p.name, _NO_ANNOTATION)
        text = f"{p.name}: {namer(_term(_py_annotation_schema(ann)), True)}"
        if p.default is not p.empty:
            text += f" = {_default_text(p.default)}"
        params.append(text)
    returns = namer(_term(_py_annotation_schema(hints.get("return", _NO_ANNOTATION))), False)
    decorator = ["    @staticmethod"] if is_static else []
    return decorator + _def_line("    ", name, params, returns, " ...")


def _hints(fn: Any, cls: type) -> dict:
    """The evaluated annotations of ``fn`` (a method of ``cls``, which its annotations may name);
    those that do not evaluate are left out (Any)."""
    import typing

    try:
        return typing.get_type_hints(fn, localns={cls.__name__: cls})
    except Exception:  # noqa: BLE001 - an annotation that does not evaluate: Any
        return {}


_ENUM_BASES = {
    "packedfun.Enum": "Enum",
    "packedfun.IntEnum": "IntEnum",
    "packedfun.StrEnum": "StrEnum",
}


def _enum_base(index: int, namer: _Namer) -> str | None:
    """``packedfun.dataclasses.Enum`` (or ``IntEnum``, ``StrEnum``) when ``index`` is that base
    of the enums defined in Python; else None."""
    from ._backend import core

    try:
        key = str(core.type_info(index)["type_key"])
    except Exception:  # noqa: BLE001 - not a type index
        return None
    if key not in _ENUM_BASES:
        return None
    namer.typing.add("packedfun.dataclasses")
    return "packedfun.dataclasses." + _ENUM_BASES[key]


def _enum_variant_lines(spec: Any, name: str) -> list[str]:
    """The variants of an enum defined in Python, as class attributes, in declaration order."""
    state = spec.cls.__dict__["__pf_enum__"]
    alias = {id(v): k for k, v in spec.cls.__dict__.items() if not k.startswith("_")}
    return [f"    {alias[id(v)]}: {name}" for v in state.entries if id(v) in alias]


def _class_lines(info: dict, name: str, base: str, namer: _Namer) -> list[str]:
    from ._rules.signature import metadata_of

    lines = [f"class {name}({base}):"]
    lines += _docstring(info.get("doc"), "    ")
    body: list[str] = []
    spec = _py_class_spec(str(info["type_key"]))
    is_enum = spec is not None and "__pf_enum__" in spec.cls.__dict__
    body += _enum_variant_lines(spec, name) if is_enum else []
    declared = {f.name: f._schema for f in spec.own} if spec is not None else {}
    for field in sorted(info["fields"], key=lambda f: f["name"]):
        schema = _INDEX_SCHEMA.get(field.get("static_type_index", -1), "Any")
        if field["name"] in declared:
            schema = _declared_schema(*declared[field["name"]])
        ann = namer(_term(schema), False)
        if field.get("readonly", True):
            body += ["    @property", f"    def {field['name']}(self) -> {ann}: ..."]
        else:
            body.append(f"    {field['name']}: {ann}")
    methods = sorted(info["methods"], key=lambda m: m["name"])
    for method in methods:
        if method["name"] == "__create__":
            if is_enum or str(info["type_key"]) in _ENUM_BASES:
                continue  # an enum's class looks variants up; it constructs none
            if spec is not None and spec.params["init"]:
                body += _py_init_lines(spec, namer)
                continue
            params = ["self"] + _params(metadata_of(method["func"]), namer)
            body += _def_line("    ", "__init__", params, "None", " ...")
    for method in methods:
        if not method["name"].startswith("__") and method["name"].isidentifier():
            value = spec.cls.__dict__.get(method["name"]) if spec is not None else None
            fn = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
            if getattr(fn, "__pf_method__", False):
                body += _py_method_lines(method["name"], fn, method["is_static"], spec.cls, namer)
            else:
                body += _method_lines(method, namer)
    return lines + (body or ["    ..."])


def _python_function_lines(name: str, fn: Any) -> list[str]:
    """A Python-level function of the target module: its own signature, simple types only."""
    simple = {"int", "float", "bool", "str", "bytes", "None"}
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return [f"def {name}(*args: Any, **kwargs: Any) -> Any: ..."]
    parts = []
    for p in sig.parameters.values():
        ann = p.annotation
        ann = ann if isinstance(ann, str) else getattr(ann, "__name__", "")
        text = f"{p.name}: {ann if ann in simple else 'Any'}"
        if p.default is not p.empty:
            text += f" = {_default_text(p.default)}"
        parts.append(text)
    ret = sig.return_annotation
    ret = ret if isinstance(ret, str) else getattr(ret, "__name__", "")
    return [f"def {name}({', '.join(parts)}) -> {ret if ret in simple else 'Any'}: ..."]


def _object_types(prefixes: list[str]) -> list[tuple[int, dict]]:
    """Every type in the type table whose key starts with one of ``prefixes`` + ".", by key."""
    from ._backend import core

    found = []
    misses = 0
    index = _DYNAMIC_INDEX
    while misses < 64:  # indices are dense; a long gap means the table ended
        try:
            info = core.type_info(index)
        except Exception:  # noqa: BLE001 - an unused index
            misses += 1
            index += 1
            continue
        misses = 0
        key = str(info["type_key"])
        if any(key.startswith(p + ".") for p in prefixes):
            found.append((index, info))
        index += 1
    return sorted(found, key=lambda item: str(item[1]["type_key"]))


def _registry_functions(prefixes: list[str]) -> list[tuple[str, dict | None]]:
    from .registry import get_global_func_metadata, list_global_func_names

    out = []
    for full in sorted(list_global_func_names()):
        for prefix in prefixes:
            rest = full[len(prefix) + 1 :]
            if full.startswith(prefix + ".") and rest.isidentifier() and "." not in rest:
                out.append((rest, get_global_func_metadata(full)))
    return out


def _library_functions(path: str) -> list[tuple[str, dict | None]]:
    from .module import load_module

    mod = load_module(path)
    from ._backend import core

    names = core.module_list_functions(mod._pf_handle, False) or []
    out = []
    for name in sorted(str(n) for n in names):
        if name.isidentifier() and not keyword.iskeyword(name):
            out.append((name, mod.get_function_metadata(name)))
    return out


def _python_members(module_name: str) -> tuple[dict[int, str], list[tuple[str, Any]]]:
    """The target module's registered classes (type index -> name) and plain functions."""
    mod = importlib.import_module(module_name)
    classes: dict[int, str] = {}
    functions = []
    for name in sorted(getattr(mod, "__all__", [])):
        value = getattr(mod, name, None)
        if isinstance(value, type):
            index = value.__dict__.get("__pf_type_index__")  # set by register_object
            if isinstance(index, int) and index >= _DYNAMIC_INDEX:
                classes[index] = name
        elif inspect.isfunction(value):
            functions.append((name, value))
    return classes, functions


def generate(
    prefixes: list[str] | None = None,
    libraries: list[str] | None = None,
    python_module: str | None = None,
) -> str:
    """The text of a stub for functions and object types.

    Parameters
    ----------
    prefixes : list of str
        Registry prefixes: ``"mylib"`` stubs every ``mylib.<name>`` Function as ``<name>`` and
        every object type ``mylib.<Type>``.
    libraries : list of str
        Paths of shared libraries whose exported functions are stubbed (loaded with
        :func:`packedfun.load_module`).
    python_module : str, optional
        A Python module the stub is for (e.g. ``"packedfun.testing"``): its public Python
        functions are stubbed too, and only the object types it registers classes for become
        classes (other types annotate as :class:`packedfun.Object`).

    Returns
    -------
    str
        The stub; the same inputs give the same text.
    """
    prefixes = list(prefixes or [])
    classes_here: dict[int, str] | None = None
    py_functions: list[tuple[str, Any]] = []
    if python_module is not None:
        classes_here, py_functions = _python_members(python_module)
    # Load the libraries first: loading runs their registrations, so the registry and the type
    # table listed below include what they add under the prefixes.
    library_functions = []
    for path in libraries or []:
        library_functions += _library_functions(path)
    functions = _registry_functions(prefixes) + library_functions
    types = _object_types(prefixes)
    if classes_here is not None:
        types = [(i, info) for i, info in types if i in classes_here]
    names = {
        i: (classes_here or {}).get(i) or str(info["type_key"]).rsplit(".", 1)[-1]
        for i, info in types
    }
    namer = _Namer({str(info["type_key"]): names[i] for i, info in types})
    for key in _foreign_type_keys(functions, types, namer.classes):
        namer.classes[key] = "packedfun.Object"
    body: list[str] = []
    for index, info in types:
        ancestors = list(info["ancestors"])
        parent = ancestors[-2] if len(ancestors) >= 2 else _OBJECT_INDEX
        base = names.get(parent) or _enum_base(parent, namer) or "packedfun.Object"
        body += [""] + _class_lines(info, names[index], base, namer) + [""]
    for name, record in sorted(functions, key=lambda item: item[0]):
        body += _function_lines(name, record, namer)
    for name, fn in py_functions:
        namer.typing.add("Any")
        body += _python_function_lines(name, fn)
    return _header(namer) + "\n".join(body).strip("\n") + "\n"


def _foreign_type_keys(functions: list, types: list, known: dict) -> set[str]:
    """Object type keys the records mention that the stub does not define."""
    keys: set[str] = set()

    def visit(term: Any) -> None:
        name, args = term
        if "." in name and name not in known:
            keys.add(name)
        for a in args:
            visit(a)

    for _, record in functions:
        for p in (record or {}).get("params") or []:
            visit(_term(str(p.get("type", "Any"))))
        visit(_term(str((record or {}).get("return", "Any"))))
    return keys


def _header(namer: _Namer) -> str:
    lines = ["# Generated by packedfun-stubgen from function metadata; do not edit by hand.", ""]
    abc = sorted(w for w in namer.typing if w in ("Callable", "Mapping", "Sequence"))
    if abc:
        lines.append(f"from collections.abc import {', '.join(abc)}")
    if "Any" in namer.typing:
        lines.append("from typing import Any")
    if len(lines) > 2:
        lines.append("")  # the standard library first, then packedfun (isort's order)
    lines.append("import packedfun")
    if "packedfun.dataclasses" in namer.typing:
        lines.append("import packedfun.dataclasses")
    return "\n".join(lines) + "\n\n"


def main(argv: list[str] | None = None) -> int:
    """The command line: ``packedfun-stubgen --prefix mylib -o mylib.pyi [--check]``."""
    parser = argparse.ArgumentParser(
        prog="packedfun-stubgen", description="Write .pyi stubs from packedfun function metadata."
    )
    parser.add_argument("--prefix", action="append", default=[], help="registry prefix")
    parser.add_argument("--library", action="append", default=[], help="shared library path")
    parser.add_argument(
        "--import",
        dest="imports",
        action="append",
        default=[],
        help="Python module to import first (it registers functions)",
    )
    parser.add_argument("--python-module", help="the Python module the stub is for")
    parser.add_argument("-o", "--output", help="stub file to write (default: stdout)")
    parser.add_argument(
        "--check",
        action="store_true",
        help="exit 1 when OUTPUT differs from what would be generated",
    )
    args = parser.parse_args(argv)
    if not args.prefix and not args.library:
        parser.error("give at least one --prefix or --library")
    for name in args.imports:
        importlib.import_module(name)
    text = generate(args.prefix, args.library, args.python_module)
    if args.check:
        if args.output is None:
            parser.error("--check needs --output")
        try:
            with open(args.output, encoding="utf-8") as f:
                current = f.read()
        except OSError:
            current = None
        if current != text:
            print(f"{args.output} is stale: rerun without --check to update it", file=sys.stderr)
            return 1
        return 0
    if args.output is None:
        sys.stdout.write(text)
        return 0
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
