# tvm-ffi's container forms under the switch: printed Arrays, slices, == against plain dicts.
"""What packedfun's containers do differently while :mod:`packedfun.tvm_ffi_compat` is on.

The switch gives tvm-ffi's names on packedfun's own container classes (``tvm_ffi.Array`` is
``packedfun.Array``). Where apache-tvm-ffi's containers behave otherwise and code written for it
depends on that, :func:`_attach` puts tvm-ffi's behaviour on those same classes, and
:func:`_detach` takes it off again:

- an ``Array`` prints as a tuple, ``(1, 2, 3)`` (``(1,)``, ``()``), and strings inside any
  container print in double quotes (``{"a": (1,)}``), as tvm-ffi's printer writes them;
- slicing an ``Array`` or a ``List`` gives a ``list``;
- ``Map``/``Dict`` ``==`` anything but a map of a related class returns ``NotImplemented`` (so
  ``Map({"a": 1}) == {"a": 1}`` is False, and a ``Map`` never equals a ``Dict``);
- ``Map(x)``/``Dict(x)`` of a value without ``items()`` that packedfun refuses raises
  ``AttributeError`` (tvm-ffi's error type; packedfun's own is ``TypeError``).

- ``List``, ``Dict`` and ``Map`` hash by content (tvm-ffi's ``RecursiveHash``), where packedfun's
  own leave them unhashable: for the mutable ``List`` and ``Dict`` that is a defect of tvm-ffi's
  (their hash changes as they change), kept under the switch as code written for it relies on it.
"""

from __future__ import annotations

import json
import typing

from ._tvm_ffi_recursive import recursive_hash
from .container import Array, Dict, List, Map

__all__: list[str] = []

_saved: dict[tuple[type, str], typing.Any] = {}


def _form(value: typing.Any) -> str:
    """tvm-ffi's printed form of a container (and of the values inside one)."""
    if isinstance(value, str):
        return json.dumps(value)  # double quotes, non-ASCII escaped, as tvm-ffi prints strings
    if isinstance(value, Array):
        items = [_form(x) for x in value]
        return f"({items[0]},)" if len(items) == 1 else "(" + ", ".join(items) + ")"
    if isinstance(value, List):
        return "[" + ", ".join(_form(x) for x in value) + "]"
    if isinstance(value, (Map, Dict)):
        return "{" + ", ".join(f"{_form(k)}: {_form(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _getitem_of(cls: typing.Any) -> typing.Callable:
    own = cls.__getitem__

    def __getitem__(self, index):
        result = own(self, index)
        return list(result) if isinstance(index, slice) else result

    return __getitem__


def _eq_of(cls: type) -> typing.Callable:
    own = cls.__eq__

    def __eq__(self, other):
        if not (isinstance(other, type(self)) or isinstance(self, type(other))):
            return NotImplemented
        return own(self, other)

    return __eq__


def _ne(self, other):
    result = self.__eq__(other)
    return result if result is NotImplemented else not result


def _refused_as_attribute_error(own: typing.Callable) -> typing.Callable:
    """``own`` (a map class's ``__new__`` or ``__init__``), raising tvm-ffi's ``AttributeError``
    where packedfun refuses a single argument without ``items()`` with ``TypeError``."""

    def construct(first, *args, **kwargs):
        try:
            return own(first, *args, **kwargs)
        except TypeError:
            if len(args) == 1 and not kwargs and not hasattr(args[0], "items"):
                raise AttributeError(
                    f"'{type(args[0]).__name__}' object has no attribute 'items'"
                ) from None
            raise

    return construct


def _set(cls: type, name: str, value: typing.Any) -> None:
    if (cls, name) not in _saved:
        _saved[(cls, name)] = cls.__dict__.get(name, _ABSENT)
        setattr(cls, name, value)


_ABSENT = object()


def _attach() -> None:
    """Called by the switch's ``install()``: tvm-ffi's container forms on packedfun's classes."""
    for cls in (Array, List, Map, Dict):
        _set(cls, "__repr__", _form)
        _set(cls, "__str__", _form)
    for cls in (Array, List):
        _set(cls, "__getitem__", _getitem_of(cls))
    for cls in (Map, Dict):
        _set(cls, "__eq__", _eq_of(cls))
        _set(cls, "__ne__", _ne)
    for cls in (List, Map, Dict):
        _set(cls, "__hash__", recursive_hash)
    # Map fills itself in __new__ (immutable), Dict in __init__
    _set(Map, "__new__", staticmethod(_refused_as_attribute_error(Map.__new__)))
    _set(Dict, "__init__", _refused_as_attribute_error(Dict.__init__))


def _detach() -> None:
    """Called by the switch's ``uninstall()``: packedfun's own container forms back."""
    for (cls, name), old in reversed(list(_saved.items())):
        if old is _ABSENT:
            delattr(cls, name)
        else:
            setattr(cls, name, old)
    _saved.clear()
