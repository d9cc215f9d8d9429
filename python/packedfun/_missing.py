# MISSING: the "no value given" sentinel of packedfun.dataclasses, importable from containers too.
"""One sentinel object, ``MISSING``: a dataclass field without a default has ``default is
MISSING``. It lives apart from the dataclass machinery so that :mod:`packedfun.container` can name
it (``tvm_ffi.container.MISSING`` under the tvm-ffi switch) without importing that machinery."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (packedfun's import cost)
if TYPE_CHECKING:
    import typing

__all__ = ["MISSING"]


class _MissingType:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"

    def __reduce__(self) -> str:
        return "MISSING"  # pickles as a reference to this module's MISSING: the same object back


#: Marks a field without a default.
MISSING: typing.Any = _MissingType()
