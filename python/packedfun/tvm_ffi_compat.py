# The switch that makes `import tvm_ffi` (anywhere in the process) give packedfun.
"""Run packages written for apache-tvm-ffi on packedfun, unchanged.

After :func:`install`, every ``import tvm_ffi`` in the process, including the ones inside
third-party packages, gives the ``packedfun`` module itself, and ``tvm_ffi.<name>`` gives
``packedfun.<name>`` (``tvm_ffi.cpp`` is ``packedfun.cpp``, the same module object, imported once).
apache-tvm-ffi may stay installed beside packedfun: its ``libtvm_ffi.so`` is still found for
libraries built against it, from the ``apache-tvm-ffi`` distribution's file list.

Two ways to turn it on:

- the environment variable ``PACKEDFUN_AS_TVM_FFI=1``, read at interpreter start (the packedfun
  wheel installs a one-line ``.pth`` file that checks it), which also reaches child processes;
- ``packedfun.tvm_ffi_compat.install()`` from Python, before the first ``import tvm_ffi``.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import os
import sys

__all__ = ["ALIAS", "ENV_VAR", "install", "installed", "uninstall"]

#: The module name that the switch takes over.
ALIAS = "tvm_ffi"
#: The environment variable read at interpreter start (``1`` turns the switch on).
ENV_VAR = "PACKEDFUN_AS_TVM_FFI"


def _target(fullname: str) -> str | None:
    """packedfun's module name for ``tvm_ffi`` or ``tvm_ffi.<rest>``; None for other names."""
    if fullname == ALIAS:
        return "packedfun"
    if fullname.startswith(ALIAS + "."):
        return "packedfun" + fullname[len(ALIAS) :]
    return None


class _Loader(importlib.abc.Loader):
    """Hands out packedfun's module object under the tvm_ffi name (no second execution)."""

    def __init__(self, module) -> None:
        self._module = module

    def create_module(self, spec):  # the existing module: the import system keeps its attributes
        return self._module

    def exec_module(self, module) -> None:  # already executed, under its own name
        pass


class _Finder(importlib.abc.MetaPathFinder):
    """Finds ``tvm_ffi`` and ``tvm_ffi.<name>`` as the packedfun modules of the same name."""

    def find_spec(self, fullname, path=None, target=None):
        name = _target(fullname)
        if name is None:
            return None
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:  # a missing dependency of an existing module: its own error
                raise
            return None  # packedfun has no such module: `import tvm_ffi.<name>` fails as usual
        spec = importlib.machinery.ModuleSpec(fullname, _Loader(module), origin=name)
        if hasattr(module, "__path__"):
            spec.submodule_search_locations = []  # a package, so `tvm_ffi.X.Y` is asked of us
        return spec


_finder = _Finder()


def install() -> None:
    """Make every later ``import tvm_ffi`` in this process give packedfun.

    Calling it again does nothing.

    Raises
    ------
    RuntimeError
        When apache-tvm-ffi's own ``tvm_ffi`` was imported already in this process (the two
        would mix): turn the switch on before that import.
    """
    current = sys.modules.get(ALIAS)
    if current is not None and not getattr(current, "__name__", "").startswith("packedfun"):
        raise RuntimeError(
            f"{ALIAS} (apache-tvm-ffi) was imported before packedfun.tvm_ffi_compat.install(): "
            f"turn the switch on first (or set {ENV_VAR}=1 before Python starts)"
        )
    import packedfun

    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
    sys.modules[ALIAS] = packedfun


def uninstall() -> None:
    """Undo :func:`install`: later ``import tvm_ffi`` finds apache-tvm-ffi again."""
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    for name in [n for n in sys.modules if n == ALIAS or n.startswith(ALIAS + ".")]:
        if getattr(sys.modules[name], "__name__", "").startswith("packedfun"):
            del sys.modules[name]


def installed() -> bool:
    """Whether the switch is on in this process."""
    return _finder in sys.meta_path


def _install_from_environment() -> None:
    """Called at interpreter start by the wheel's ``.pth`` file (only when the variable is set)."""
    if os.environ.get(ENV_VAR, "") not in ("", "0"):
        install()
