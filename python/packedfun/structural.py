# Structural equality, hashing and first difference of packedfun values (computed in the runtime).
"""Compare values by content instead of identity.

>>> import packedfun
>>> a, b = packedfun.convert([1, {"k": "v"}]), packedfun.convert([1, {"k": "v"}])
>>> packedfun.structural_equal(a, b), packedfun.structural_hash(a) == packedfun.structural_hash(b)
(True, True)
>>> packedfun.structural_first_difference(a, packedfun.convert([1, {"k": "w"}]))
'root[1]["k"]'

The walk runs in the runtime (``PFStructuralEqual``/``PFStructuralHash`` in ``c_api.h``), without
recursion, so any nesting depth works and cycles terminate. Containers compare by content (their
type must match), reflected objects field by field (fields registered with
``PACKEDFUN_FIELD_NO_COMPARE`` are skipped), Functions, Tensors and Modules by identity.
"""

from __future__ import annotations

from ._backend import core

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see __init__'s import cost)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["structural_equal", "structural_hash", "structural_first_difference"]

_funcs: dict[str, Any] = {}


def _func(name: str) -> Any:
    func = _funcs.get(name)
    if func is None:
        func = core.get_global_func("packedfun." + name)
        if func is None:
            raise RuntimeError(
                f"the loaded packedfun runtime has no 'packedfun.{name}' (it predates ABI 1.3)"
            )
        _funcs[name] = func
    return func


def structural_equal(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` are equal by content.

    Parameters
    ----------
    a, b : object
        packedfun values or anything :func:`packedfun.convert` accepts.

    Returns
    -------
    bool
    """
    return bool(_func("structural_equal")(a, b))


def structural_hash(value: Any) -> int:
    """A hash of ``value``'s content, equal for structurally equal values (non-negative int).

    Parameters
    ----------
    value : object
        A packedfun value or anything :func:`packedfun.convert` accepts.

    Returns
    -------
    int
    """
    return int(_func("structural_hash")(value))


def structural_first_difference(a: Any, b: Any) -> str | None:
    """The path of the first difference between ``a`` and ``b`` (depth first), or None if equal.

    Paths start at ``root`` and use ``[i]`` for sequence items, ``["key"]`` for map entries and
    ``.name`` for object fields, e.g. ``root.body[3].name``.

    Parameters
    ----------
    a, b : object
        packedfun values or anything :func:`packedfun.convert` accepts.

    Returns
    -------
    str or None
    """
    return _func("structural_first_difference")(a, b)
