# `tvm_ffi._dunder` under the switch, and the other private tvm-ffi names its test suite imports.
"""Private names of apache-tvm-ffi that code may import but packedfun does not implement.

apache-tvm-ffi's own tests import a few of its private class-building steps at module level
(``tvm_ffi._dunder._install_dataclass_dunders``, ``tvm_ffi.core._register_py_class``,
``tvm_ffi.core._to_py_class_value``, ``tvm_ffi.registry._add_class_attrs``), next to public tests
of ``py_class`` in the same file. Under :mod:`packedfun.tvm_ffi_compat` these names exist, so such
a file imports and its public tests run; calling one raises ``NotImplementedError`` naming it and
pointing to the migration page, never a silent wrong result. packedfun builds Python-defined types
with :func:`packedfun.dataclasses.py_class` only (``docs/python-defined-types.md``).

This module is ``tvm_ffi._dunder`` under the switch; :func:`_attach` puts the other names on the
switch's modules (and :func:`_detach` takes them off).
"""

from __future__ import annotations

import typing

__all__: list[str] = []

_PAGE = "docs/migration-from-tvm-ffi.md"


def _not_provided(qualname: str) -> typing.Callable[..., typing.NoReturn]:
    def missing(*args: typing.Any, **kwargs: typing.Any) -> typing.NoReturn:
        raise NotImplementedError(
            f"{qualname} is a private step of apache-tvm-ffi's class building that packedfun does "
            f"not provide; define the class with tvm_ffi.dataclasses.py_class ({_PAGE})"
        )

    missing.__name__ = qualname.rsplit(".", 1)[-1]
    missing.__qualname__ = missing.__name__
    missing.__doc__ = (
        f"Not provided under the switch: calling it raises NotImplementedError ({_PAGE})."
    )
    return missing


_install_dataclass_dunders = _not_provided("tvm_ffi._dunder._install_dataclass_dunders")

#: (module attribute on packedfun's side, name) -> the placeholder put there by _attach.
_ELSEWHERE = {
    ("core", "_register_py_class"): _not_provided("tvm_ffi.core._register_py_class"),
    ("core", "_to_py_class_value"): _not_provided("tvm_ffi.core._to_py_class_value"),
    ("registry", "_add_class_attrs"): _not_provided("tvm_ffi.registry._add_class_attrs"),
}


def _attach(packedfun: typing.Any) -> None:
    """Called by the switch's ``install()``: the private names on ``tvm_ffi.core`` (the switch's
    core module, ``packedfun.core`` while the switch is on) and ``tvm_ffi.registry``."""
    for (module, name), value in _ELSEWHERE.items():
        target = getattr(packedfun, module)
        if not hasattr(target, name) or getattr(target, name) is value:
            setattr(target, name, value)


def _detach(packedfun: typing.Any) -> None:
    """Called by the switch's ``uninstall()``: takes the names :func:`_attach` put back off."""
    for (module, name), value in _ELSEWHERE.items():
        target = getattr(packedfun, module, None)
        if target is not None and target.__dict__.get(name) is value:
            delattr(target, name)
