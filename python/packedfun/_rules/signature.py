# Function metadata on the Python side: parse the ABI's JSON record, bind keywords, signatures.
"""Function metadata for both backends.

A native Function may carry a JSON record (``PFFunctionSetMetadata``) naming its parameters,
their type schemas and defaults, its return type and docstring. This module turns that record
into what Python needs: the parameter table the call path binds keywords with, an
:class:`inspect.Signature`, and the plain ``dict`` :func:`packedfun.get_global_func_metadata`
returns. Records for Python callables are made here too, from :func:`inspect.signature`.
"""

from __future__ import annotations

from . import backend as _backend
from . import messages as _msg

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see __init__'s import cost)
if TYPE_CHECKING:
    import inspect
    from typing import Any

__all__ = [
    "MISSING",
    "DEFAULT_GIL_POLICY",
    "param_table",
    "bind",
    "metadata_of",
    "metadata_from_callable",
    "signature_of",
    "signature_or_none",
    "function_signature",
    "text_signature",
    "text_signature_of",
    "python_name",
    "describe",
    "error_label",
    "name_argument_error",
    "name_argument_types",
]


class _Missing:
    """The marker of a parameter without a default."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<no default>"


#: Marks a parameter without a default in a parameter table.
MISSING = _Missing()

#: The GIL policy a Function has when it declares none (see docs/threads.md).
DEFAULT_GIL_POLICY = "release"


def _gil_policy(func: Any) -> str:
    """The GIL policy of ``func``: the one place the metadata record reads it from."""
    return str(getattr(func, "gil_policy", DEFAULT_GIL_POLICY))


_RECORDS: dict[str, dict] = {}


def _parse(text: str) -> dict:
    """The parsed record of ``text``, parsed once (the last 1,024 records are kept)."""
    record = _RECORDS.get(text)
    if record is not None:
        return record
    import json

    record = json.loads(text)
    if not isinstance(record, dict):
        raise ValueError("function metadata must be a JSON object")
    if len(_RECORDS) >= 1024:
        _RECORDS.clear()
    _RECORDS[text] = record
    return record


def param_table(text: str) -> tuple[tuple[str, ...], tuple[Any, ...], int]:
    """The parameter names and defaults (``MISSING`` where none) of a JSON metadata record, and
    how many leading parameters are positional-only.

    Parameters
    ----------
    text : str
        The record as stored with the Function.

    Returns
    -------
    tuple
        ``(names, defaults, positional_only)``: two tuples of the same length and the number of
        leading parameters that a keyword may not name (``"positional_only": true`` in the record,
        from a Python function's ``/``).
    """
    params = _parse(text).get("params") or []
    names = tuple(str(p["name"]) for p in params)
    defaults = tuple(p.get("default", MISSING) if isinstance(p, dict) else MISSING for p in params)
    positional_only = 0
    while positional_only < len(params) and _positional_only(params[positional_only]):
        positional_only += 1
    return names, defaults, positional_only


def _positional_only(param: Any) -> bool:
    return isinstance(param, dict) and param.get("positional_only") is True


def bind(fname: str, table: tuple, args: tuple, kwargs: dict) -> tuple:
    """Binds ``args`` and ``kwargs`` to the parameters of ``table`` as Python would.

    Parameters
    ----------
    fname : str
        The function's name for messages.
    table : tuple
        ``(names, defaults, positional_only)`` from :func:`param_table`.
    args, kwargs
        The call's arguments.

    Returns
    -------
    tuple
        One value per parameter, in order.

    Raises
    ------
    TypeError
        Too many positional arguments, an unknown keyword, a keyword naming a positional-only
        parameter, a parameter given twice, or a required parameter missing; the message names
        the function and the parameter.
    """
    names, defaults, positional_only = table
    n = len(names)
    if len(args) > n:
        given = len(args)
        raise TypeError(
            _msg.text(
                "ARGS_TOO_MANY_POSITIONAL",
                fname,
                n,
                "" if n == 1 else "s",
                given,
                "was" if given == 1 else "were",
            )
        )
    values = list(args) + [MISSING] * (n - len(args))
    for key, value in kwargs.items():
        try:
            i = names.index(key)
        except ValueError:
            raise TypeError(_msg.text("ARGS_UNEXPECTED_KEYWORD", fname, key)) from None
        if i < positional_only:
            raise TypeError(_msg.text("ARGS_POSITIONAL_ONLY", fname, key))
        if values[i] is not MISSING:
            raise TypeError(_msg.text("ARGS_MULTIPLE_VALUES", fname, key))
        values[i] = value
    missing = []
    for i, value in enumerate(values):
        if value is MISSING:
            values[i] = defaults[i]
            if values[i] is MISSING:
                missing.append(names[i])
    if missing:
        raise TypeError(_missing_message(fname, missing))
    return tuple(values)


def _missing_message(fname: str, missing: list) -> str:
    quoted = [f"'{m}'" for m in missing]
    listed = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]
    word = "argument" if len(missing) == 1 else "arguments"
    return f"{fname}() missing {len(missing)} required positional {word}: {listed}"


def missing_message(fname: str, missing: tuple) -> str:
    """The TypeError message for required parameters ``missing`` (used by the compiled path)."""
    return _missing_message(fname, list(missing))


def metadata_of(func: Any) -> dict | None:
    """The metadata record of ``func`` as plain Python data, or None when it carries none.

    The record's keys: ``name``, ``params`` (a list of ``{"name", "type"[, "default"]}``),
    ``return``, ``doc`` (when known) and ``gil`` (the GIL policy).
    """
    func = getattr(func, "__wrapped__", func)  # an enum-result wrapper (see _enum)
    text = _backend.core.function_get_metadata(func)
    if text is None:
        return None
    import json

    record = json.loads(text)
    record.setdefault("gil", _gil_policy(func))
    return record


def _annotation_text(annotation: Any) -> str:
    import inspect

    if annotation is inspect.Parameter.empty:
        return "Any"
    if isinstance(annotation, str):
        return annotation
    if annotation is type(None) or annotation is None:
        return "None"
    if isinstance(annotation, type) and annotation.__module__ == "builtins":
        return annotation.__qualname__
    return inspect.formatannotation(annotation)


def _json_default(value: Any) -> tuple[bool, Any]:
    """Whether ``value`` can travel as a JSON default, and the value to store."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return True, value
    return False, None


def metadata_from_callable(name: str, fn: Any) -> str | None:
    """The JSON record of a Python callable registered as ``name``, from its signature.

    Returns None when the callable has no signature Python can read, or takes ``*args`` or
    keyword-only parameters (a packed call is positional: such functions keep no table).
    Defaults that are not JSON values (None, bool, int, float, str) are left to the callable.
    """
    import inspect
    import json

    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = []
    for p in sig.parameters.values():
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            return None
        entry: dict[str, Any] = {"name": p.name, "type": _annotation_text(p.annotation)}
        if p.kind == p.POSITIONAL_ONLY:
            entry["positional_only"] = True
        if p.default is not p.empty:
            ok, value = _json_default(p.default)
            if not ok:
                return None
            entry["default"] = value
        params.append(entry)
    record: dict[str, Any] = {
        "name": name,
        "params": params,
        "return": _annotation_text(sig.return_annotation),
    }
    doc = inspect.getdoc(fn)
    if doc:
        record["doc"] = doc
    return json.dumps(record)


def python_name(name: str) -> str:
    """How a signature shows parameter ``name``: itself, or with ``_`` appended when it is a Python
    keyword (``from`` becomes ``from_``; a call still passes it positionally or as
    ``**{"from": 1}``), or made an identifier when it is none."""
    import keyword

    if name.isidentifier():
        return name + "_" if keyword.iskeyword(name) else name
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in name) or "_"
    return "_" + cleaned if not cleaned.isidentifier() else cleaned


def _signature(record: dict) -> inspect.Signature:
    import inspect

    params = []
    for p in record.get("params") or []:
        default = p["default"] if "default" in p else inspect.Parameter.empty
        kind = (
            inspect.Parameter.POSITIONAL_ONLY
            if _positional_only(p)
            else inspect.Parameter.POSITIONAL_OR_KEYWORD
        )
        name = python_name(str(p["name"]))
        params.append(
            inspect.Parameter(name, kind, default=default, annotation=p.get("type", "Any"))
        )
    try:
        return inspect.Signature(params, return_annotation=record.get("return", "Any"))
    except ValueError as exc:  # names twice, a required one after a default: a bad record
        raise ValueError(f"{record.get('name', 'function')}: unusable metadata: {exc}") from None


def signature_of(func: Any) -> inspect.Signature:
    """The :class:`inspect.Signature` of ``func`` from its metadata record.

    Raises
    ------
    ValueError
        When ``func`` carries no metadata (as :func:`inspect.signature` does for callables
        without one).
    """
    record = metadata_of(func)
    if record is None:
        raise ValueError(f"no signature found for {func!r}: it carries no metadata")
    return _signature(record)


def text_signature(name: str, record: dict) -> str:
    """``name(a: int, b: int = 2) -> int``: the one-line signature of a metadata record."""
    sig = _signature(record)
    parts = []
    for p in sig.parameters.values():
        text = f"{p.name}: {p.annotation}"
        if p.default is not p.empty:
            text += f" = {p.default!r}"
        parts.append(text)
    _mark_positional_only(parts, record)
    return f"{name}({', '.join(parts)}) -> {sig.return_annotation}"


def _mark_positional_only(parts: list, record: dict) -> None:
    """Inserts ``/`` into ``parts`` (one per parameter) after the positional-only ones."""
    count = sum(1 for p in record.get("params") or [] if _positional_only(p))
    if count:
        parts.insert(count, "/")


def signature_or_none(func: Any) -> inspect.Signature | None:
    """As :func:`signature_of`, None when ``func`` carries no metadata (``__signature__``)."""
    record = metadata_of(func)
    return None if record is None else _signature(record)


def function_signature(func: Any) -> inspect.Signature:
    """``Function.__signature__`` on both backends: the signature of the metadata record, or
    ``(*args)`` without one (such a Function takes any positional arguments and no keywords; its
    callee checks them). It is an attribute, not what inspect works out, so that
    :func:`inspect.signature` says the same on every Python (3.13 would read the type's
    ``__call__`` instead, 3.11 and 3.12 raise ``ValueError`` for ``_core``)."""
    record = metadata_of(func)
    return _signature(record) if record is not None else _positional_signature()


def _positional_signature() -> inspect.Signature:
    import inspect

    return inspect.Signature([inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL)])


def text_signature_of(func: Any) -> str:
    """``(a, b=2)``: the ``__text_signature__`` of ``func``; ``(*args)`` without metadata."""
    record = metadata_of(func)
    if record is None:
        return "(*args)"
    parts = []
    for p in record.get("params") or []:
        name = python_name(str(p["name"]))
        parts.append(f"{name}={p['default']!r}" if "default" in p else name)
    _mark_positional_only(parts, record)
    return f"({', '.join(parts)})"


def describe(func: Any, name: str, doc: str | None, full_name: str | None = None) -> str:
    """The ``__doc__`` of a named Function: its signature line, then its docstring (or, for a
    registry function without one, ``packedfun Function <full_name>.``)."""
    record = metadata_of(func)
    fallback = f"packedfun Function {full_name}." if full_name else ""
    if record is None:
        return doc or fallback or f"packedfun Function {name}."
    body = doc or record.get("doc") or fallback
    return text_signature(name, record) + ("\n\n" + body if body else "")


def function_doc(func: Any) -> str | None:
    """The ``__doc__`` of a Function that was given none: for a registry function its signature
    line and registry docstring, else its metadata record's, else the docstring of the Python
    callable it wraps; None (the class docstring applies) when nothing describes it."""
    name = func.registry_name
    record = metadata_of(func)
    if name is not None and (record is not None or _backend.core.get_global_func_doc(name)):
        return describe(func, name, _backend.core.get_global_func_doc(name), name)
    if record is not None:
        return describe(func, record.get("name") or func.__name__, None)
    callable_ = func.py_callable
    doc = getattr(callable_, "__doc__", None) if callable_ is not None else None
    return doc if isinstance(doc, str) else None


def method_signature(func: Any, constructor: bool = False) -> inspect.Signature:
    """The ``__signature__`` of a reflected method or constructor (``__init__``) calling ``func``:
    ``self`` first, then the parameters of its metadata record (a method's record names the
    object as its first parameter, a constructor's does not); ``(self, /, *args)`` without a
    record (positional arguments only, as :func:`function_signature` says of a Function)."""
    import inspect

    self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
    sig = signature_or_none(func)
    if sig is None:
        rest = inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL)
        return inspect.Signature([self_param, rest])
    params = list(sig.parameters.values())
    if constructor:
        return sig.replace(parameters=[self_param, *params], return_annotation=None)
    if params:
        params[0] = params[0].replace(name="self", kind=inspect.Parameter.POSITIONAL_ONLY)
    return sig.replace(parameters=params)


def error_label(fname: str, record: dict) -> str:
    """``mylib.add(a: int, b: int) -> int``: how errors about arguments name a function with a
    metadata record (the C++ typed wrappers word it the same way)."""
    params = ", ".join(f"{p['name']}: {p.get('type', 'Any')}" for p in record.get("params") or [])
    return f"{fname}({params}) -> {record.get('return', 'Any')}"


def _replace_where(text: str, old: str, new: str) -> str | None:
    """``text`` with its leading ``old`` (followed by ``:`` or a path ``[``) replaced by ``new``."""
    if text.startswith(old) and text[len(old) : len(old) + 1] in (":", "["):
        return new + text[len(old) :]
    return None


# The converters' words for an int beyond the 64-bit transport: both backends refuse it before
# the callee sees it, so only the metadata record's "range" can name the parameter's real type.
_BEYOND_64_BITS = ("int too large for uint64", "int too small for int64")


def _name_int_range(exc: OverflowError, int_range: str) -> None:
    """Names the parameter's integer type (``int32``) in a converter's 64-bit overflow message."""
    if len(exc.args) != 1 or not isinstance(exc.args[0], str):
        return
    text = exc.args[0]
    for tail in _BEYOND_64_BITS:
        if text.endswith(tail):
            word = tail.split()[2]  # "large" or "small"
            exc.args = (f"{text[: -len(tail)]}int too {word} for {int_range}",)
            return


def name_argument_error(exc: BaseException, fname: str | None, text: str | None, pos: int) -> None:
    """Rewords ``exc``, raised while converting argument ``pos`` of a call, to name the parameter.

    The converters of both backends word their errors ``"<fname>: argument <pos>..."``; with a
    metadata record (``text``) that becomes ``"<fname>(a: int, ...) -> int: argument 'a'..."``
    (a container element's path, ``[3]['k']``, stays). A ``UnicodeEncodeError`` (a lone
    surrogate in a str) keeps its type and gets the same words in front of its ``reason``.
    """
    old = f"{fname}: argument {pos}" if fname is not None else f"packedfun.Function argument {pos}"
    new = old
    int_range = None
    if text is not None and fname is not None:
        try:
            record = _parse(text)
            params = record.get("params") or []
            generated = all(p.get("name") == f"arg{i}" for i, p in enumerate(params))
            if pos < len(params) and not generated:  # arg0, arg1...: no names were given
                new = f"{error_label(fname, record)}: argument '{params[pos]['name']}'"
            ranges = record.get("ranges") or []
            if pos < len(ranges):
                int_range = ranges[pos]
        except (ValueError, KeyError, TypeError):
            pass
    if isinstance(exc, OverflowError) and isinstance(int_range, str):
        _name_int_range(exc, int_range)
    if isinstance(exc, UnicodeEncodeError):
        reason = str(exc.reason)
        replaced = _replace_where(reason, old, new)
        if replaced is None and _replace_where(reason, new, new) is None:
            replaced = f"{new}: {reason}"
        if replaced is not None:
            exc.reason = replaced
        return
    if new == old or len(exc.args) != 1 or not isinstance(exc.args[0], str):
        return
    replaced = _replace_where(exc.args[0], old, new)
    if replaced is not None:
        exc.args = (replaced,)


# A callee's refusal of an argument: "<label>: argument <0 or 'a'><path>: expected T, got U" (a
# TypeError) or "...: value V does not fit in int32" (an OverflowError), worded by the C++ typed
# wrapper about the value it received, after conversion.
_REFUSAL = None


def _refusal_pattern() -> Any:
    global _REFUSAL
    if _REFUSAL is None:
        import re

        _REFUSAL = re.compile(
            r"^(?P<head>.*?: argument (?P<pos>\d+|'[^']*'))"
            r"(?P<path>(?:\[(?:-?\d+|'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")\])*)"
            r"(?P<sep>: )(?:(?P<expected>expected .*?, got )(?P<got>[^,\s]+)"
            r"|(?P<value>value -?\d+)(?P<fit> does not fit in \w+))$",
            re.S,
        )
    return _REFUSAL


def _numpy_scalar_name(value: Any) -> str | None:
    """``numpy.float16`` for a NumPy scalar (never imports NumPy), else None."""
    import sys

    np = sys.modules.get("numpy")
    if np is None or not isinstance(value, np.generic):
        return None
    return f"numpy.{type(value).__name__}"


def _element_at(value: Any, path: str) -> Any:
    """The element of ``value`` at a refusal's path (``[3]['k']``); raises when it is not there."""
    import ast
    import re

    for step in re.findall(r"\[(-?\d+|'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")\]", path):
        key = ast.literal_eval(step)
        if isinstance(key, int) and not isinstance(value, (list, tuple)):
            raise LookupError(step)
        value = value[key]
    return value


def name_argument_types(exc: BaseException, func: Any, args: tuple) -> None:
    """Rewords ``exc``, raised by the callee about one of ``args`` (the call's full positional
    arguments), to name a NumPy scalar argument by its own type.

    The callee words its refusal about the value it received, after conversion: a
    ``numpy.float16`` arrived as a float and is called ``float``. The binding knows the original
    argument, so this puts its type back: ``... argument 'a': expected int, got numpy.float16``
    (a container element's path is followed: ``argument 0[1]['k']``), and
    ``value V (numpy.uint64) does not fit in int64``. Anything else is left as it is.
    """
    if not isinstance(exc, (TypeError, OverflowError)) or len(exc.args) != 1:
        return
    text = exc.args[0]
    if not isinstance(text, str):
        return
    match = _refusal_pattern().match(text)
    if match is None:
        return
    pos = match["pos"]
    try:
        if pos.startswith("'"):
            record = metadata_of(func) or {}
            names = [str(p.get("name")) for p in record.get("params") or []]
            index = names.index(pos[1:-1])
        else:
            index = int(pos)
        name = _numpy_scalar_name(_element_at(args[index], match["path"]))
    except Exception:  # noqa: BLE001 - rewording is best effort: the callee's words stand
        return
    if name is None:
        return
    head = match["head"] + match["path"] + match["sep"]
    if match["expected"] is not None:
        exc.args = (f"{head}{match['expected']}{name}",)
    else:
        exc.args = (f"{head}{match['value']} ({name}){match['fit']}",)
