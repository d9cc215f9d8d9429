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
import importlib.util
import os
import sys

from . import _backend
from .registry import get_global_func, init_ffi_api

__all__ = [
    "ALIAS",
    "ENV_VAR",
    "TvmFfiNotInstalledError",
    "config_main",
    "install",
    "installed",
    "tvm_ffi_paths",
    "uninstall",
]

#: The module name that the switch takes over.
ALIAS = "tvm_ffi"
#: The environment variable read at interpreter start (``1`` turns the switch on).
ENV_VAR = "PACKEDFUN_AS_TVM_FFI"


#: tvm-ffi modules whose packedfun counterpart has another name: the switch's own modules, which
#: give tvm-ffi's names on packedfun's classes.
_RENAMED = {
    ALIAS + ".core": "packedfun._tvm_ffi_core",
    ALIAS + "._ffi_api": "packedfun._tvm_ffi_ffi_api",
    ALIAS + ".dataclasses": "packedfun._tvm_ffi_dataclasses",
    ALIAS + ".dataclasses.c_class": "packedfun._tvm_ffi_dataclasses",
    ALIAS + ".dataclasses.common": "packedfun._tvm_ffi_dataclasses",
    ALIAS + ".testing": "packedfun._tvm_ffi_testing",
    ALIAS + ".testing.testing": "packedfun._tvm_ffi_testing",
    ALIAS + ".structural": "packedfun._tvm_ffi_structural",
    ALIAS + "._dunder": "packedfun._tvm_ffi_private",
}


def _target(fullname: str) -> str | None:
    """packedfun's module name for ``tvm_ffi`` or ``tvm_ffi.<rest>``; None for other names."""
    if fullname == ALIAS:
        return "packedfun"
    if fullname in _RENAMED:
        return _RENAMED[fullname]
    if fullname.startswith(ALIAS + "."):
        return "packedfun" + fullname[len(ALIAS) :]
    return None


class _Loader(importlib.abc.Loader):
    """Hands out packedfun's module object under the tvm_ffi name (no second execution)."""

    def __init__(self, module) -> None:
        self._module = module
        self._own_spec = getattr(module, "__spec__", None)

    def create_module(self, spec):  # the existing module: the import system keeps its attributes
        return self._module

    def exec_module(self, module) -> None:  # already executed, under its own name
        if self._own_spec is not None:  # the import system gave it the tvm_ffi spec: its own back
            module.__spec__ = self._own_spec

    def get_code(self, fullname):
        """What ``python -m tvm_ffi.<name>`` runs: apache-tvm-ffi's ``config`` command answered
        for the installed apache-tvm-ffi (its headers, library and CMake package, so builds of
        tvm-ffi sources go on to load through packedfun's bridge); packedfun's own module's
        code for any other name."""
        if fullname == ALIAS + ".config":
            source = "import sys\nfrom packedfun.tvm_ffi_compat import config_main\n"
            source += "sys.exit(config_main())\n"
            return compile(source, "<packedfun: python -m tvm_ffi.config>", "exec")
        spec = importlib.util.find_spec(self._module.__name__)
        get_code = getattr(spec.loader, "get_code", None) if spec is not None else None
        return get_code(spec.name) if get_code is not None else None

    def is_package(self, fullname) -> bool:
        return hasattr(self._module, "__path__")


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
    # `tvm_ffi.core` without importing it (as after apache-tvm-ffi's `import tvm_ffi`): the
    # switch's module, which answers every other name from packedfun's backend module.
    core = importlib.import_module(_RENAMED[ALIAS + ".core"])
    packedfun.core = core  # type: ignore[attr-defined]
    core._attach_type_info()  # cls.__tvm_ffi_type_info__ on every object class
    core._attach_metadata(packedfun)  # get_global_func_metadata in tvm-ffi's form
    importlib.import_module("packedfun._tvm_ffi_init")._attach()  # tvm-ffi's constructors
    importlib.import_module("packedfun._tvm_ffi_error")._attach()  # exc.__tvm_ffi_error__
    importlib.import_module("packedfun._tvm_ffi_container")._attach()  # tvm-ffi's Array forms
    importlib.import_module(_RENAMED[ALIAS + ".structural"])._attach(packedfun)  # walk/visit/map
    importlib.import_module(_RENAMED[ALIAS + "._dunder"])._attach(packedfun)  # private names
    # register_object/c_class of a key: tvm-ffi's type of it first (one object system)
    packedfun.object._foreign_type_index = get_global_func(
        "packedfun.tvm_ffi_type_index", allow_missing=True
    )
    _load_tvm_ffi_testing()


#: apache-tvm-ffi's C++ testing library, loaded under the switch as ``import tvm_ffi`` loads it.
_tvm_ffi_testing = None


def _load_tvm_ffi_testing() -> None:
    """Loads apache-tvm-ffi's ``libtvm_ffi_testing.so`` (beside its ``libtvm_ffi.so``), as
    apache-tvm-ffi's own ``import tvm_ffi`` does: its ``testing.*`` globals (tvm-ffi's) become
    visible through packedfun's registry, after packedfun's own ``testing.*`` names. Nothing
    happens when apache-tvm-ffi is not installed."""
    global _tvm_ffi_testing
    if _tvm_ffi_testing is not None:
        return
    from .module import _find_tvm_ffi_library, load_module

    library = _find_tvm_ffi_library()
    testing = library and os.path.join(os.path.dirname(library), "libtvm_ffi_testing.so")
    if not testing or not os.path.exists(testing):
        return
    # packedfun's own testing.* first, loaded now: its lazy namespace loads only on a lookup that
    # finds nothing, and tvm-ffi's testing.* names would be found first.
    importlib.import_module("packedfun.testing")
    try:
        _tvm_ffi_testing = load_module(testing)
    except OSError:  # a libtvm_ffi packedfun cannot read: `import tvm_ffi` itself still works
        return
    # tvm-ffi's testing.* names as attributes of tvm_ffi.testing too (tvm_ffi.testing.schema_*),
    # as packedfun.testing has its own; a name both hold stays packedfun's (the registry's rule).
    init_ffi_api("testing", "packedfun.testing")


def uninstall() -> None:
    """Undo :func:`install`: later ``import tvm_ffi`` finds apache-tvm-ffi again."""
    deferred = sys.modules.get("_packedfun_tvm_ffi")  # the .pth file's finder, not yet used
    if deferred is not None:
        deferred.deactivate()
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    for name in [n for n in sys.modules if n == ALIAS or n.startswith(ALIAS + ".")]:
        if getattr(sys.modules[name], "__name__", "").startswith("packedfun"):
            del sys.modules[name]
    packedfun = sys.modules.get("packedfun")
    switch_core = sys.modules.get(_RENAMED[ALIAS + ".core"])
    if switch_core is not None:
        switch_core._detach_type_info()
        switch_core._detach_metadata()
        sys.modules["packedfun._tvm_ffi_init"]._detach()
        sys.modules["packedfun._tvm_ffi_error"]._detach()
        sys.modules["packedfun._tvm_ffi_container"]._detach()
    switch_structural = sys.modules.get(_RENAMED[ALIAS + ".structural"])
    if switch_structural is not None and packedfun is not None:
        switch_structural._detach(packedfun)
    switch_private = sys.modules.get(_RENAMED[ALIAS + "._dunder"])
    if switch_private is not None and packedfun is not None:
        switch_private._detach(packedfun)
    if packedfun is not None:  # packedfun.core back to the backend module
        packedfun.core = _backend.core  # type: ignore[attr-defined]
        packedfun.object._foreign_type_index = None


def installed() -> bool:
    """Whether the switch is on in this process (installed, or armed by the environment variable
    and waiting for the first ``import tvm_ffi``)."""
    deferred = sys.modules.get("_packedfun_tvm_ffi")
    armed = deferred is not None and any(
        isinstance(f, deferred._DeferredSwitch) for f in sys.meta_path
    )
    return armed or _finder in sys.meta_path


#: apache-tvm-ffi's own build tools (``python -m`` modules and console scripts): CMake and
#: build scripts run them while the variable may be set, and they need apache-tvm-ffi's own
#: Python package, so a process running one of them is left without the switch.
_TVM_FFI_TOOL_MODULES = ("tvm_ffi.stub.cli", "tvm_ffi.utils.embed_cubin")
_TVM_FFI_TOOL_SCRIPTS = ("tvm-ffi-config", "tvm-ffi-stubgen")


def _runs_tvm_ffi_tool(argv: list[str]) -> bool:
    """Whether the interpreter command line ``argv`` (``sys.orig_argv``) runs one of
    apache-tvm-ffi's own build tools."""
    for i, arg in enumerate(argv[1:], 1):
        if arg == "-m":
            return i + 1 < len(argv) and argv[i + 1] in _TVM_FFI_TOOL_MODULES
        if arg.startswith("-m"):
            return arg[2:] in _TVM_FFI_TOOL_MODULES
        if arg == "-c" or not arg.startswith("-"):
            return os.path.basename(arg) in _TVM_FFI_TOOL_SCRIPTS
    return False


def _install_from_environment() -> None:
    """Called at interpreter start by the wheel's ``.pth`` file (only when the variable is set)."""
    if os.environ.get(ENV_VAR, "") in ("", "0"):
        return
    if _runs_tvm_ffi_tool(list(getattr(sys, "orig_argv", []))):
        return
    install()


class TvmFfiNotInstalledError(RuntimeError):
    """apache-tvm-ffi (the ``apache-tvm-ffi`` distribution) is not installed, so its headers,
    library and CMake package, which builds of sources written for tvm-ffi need, are missing."""


def tvm_ffi_paths() -> dict[str, str]:
    """Where the installed apache-tvm-ffi keeps what builds of tvm-ffi sources need.

    Found from the ``apache-tvm-ffi`` distribution's file list, without importing its ``tvm_ffi``
    package (under the switch that name is packedfun).

    Returns
    -------
    dict
        ``root`` (its ``tvm_ffi`` folder), ``include`` (``tvm/ffi/*.h`` and ``dlpack/dlpack.h``),
        ``lib`` (the folder of ``libtvm_ffi.so``), ``library`` (the file) and ``cmake`` (the folder
        of ``tvm_ffi-config.cmake``).

    Raises
    ------
    TvmFfiNotInstalledError
        When apache-tvm-ffi is not installed (``pip install apache-tvm-ffi``).
    """
    from .module import _find_tvm_ffi_library

    library = _find_tvm_ffi_library()
    if library is None:
        raise TvmFfiNotInstalledError(
            "apache-tvm-ffi is not installed: sources written for tvm-ffi build against its "
            "headers and library and run through packedfun (pip install apache-tvm-ffi); see "
            "docs/migration-from-tvm-ffi.md"
        )
    lib = os.path.dirname(library)
    root = os.path.dirname(lib)
    return {
        "root": root,
        "include": os.path.join(root, "include"),
        "lib": lib,
        "library": library,
        "cmake": os.path.join(root, "share", "cmake", "tvm_ffi"),
    }


#: ``python -m tvm_ffi.config`` options, in apache-tvm-ffi's order, with what each prints.
_CONFIG_OPTIONS = {
    "includedir": lambda p: p["include"],
    "dlpack-includedir": lambda p: p["include"],
    "cmakedir": lambda p: p["cmake"],
    "libdir": lambda p: p["lib"],
    "libfiles": lambda p: p["library"],
    "cxxflags": lambda p: f"-I{p['include']} -I{p['include']} -std=c++17",
    "cflags": lambda p: f"-I{p['include']} -I{p['include']}",
    "libs": lambda p: "-ltvm_ffi",
    "ldflags": lambda p: f"-L{p['lib']}",
    "sourcedir": lambda p: p["root"],
    "cython-lib-path": lambda p: _cython_lib(),
}


def _cython_lib() -> str:
    """The installed apache-tvm-ffi's compiled extension (``tvm_ffi/core.*.so``), found in its
    folder without importing it; RuntimeError when it is missing."""
    import importlib.machinery

    root = tvm_ffi_paths()["root"]
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = os.path.join(root, f"core{suffix}")
        if os.path.isfile(path):
            return os.path.realpath(path)
    raise RuntimeError(f"apache-tvm-ffi's compiled extension (core.*.so) is not in {root}")


def config_main(argv: list[str] | None = None) -> int:
    """``python -m tvm_ffi.config`` under the switch: apache-tvm-ffi's command, same options and
    output, answering for the installed apache-tvm-ffi (:func:`tvm_ffi_paths`).

    Libraries built with these flags (or with ``find_package(tvm_ffi)`` from ``--cmakedir``) are
    tvm-ffi libraries; ``tvm_ffi.load_module`` (packedfun's) loads them through its bridge.
    ``--sourcedir`` and ``--cython-lib-path`` name apache-tvm-ffi's own folder and compiled
    extension.
    """
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m tvm_ffi.config",
        description="Paths and flags of the installed apache-tvm-ffi, for building tvm-ffi "
        "sources that packedfun loads (packedfun's own: packedfun-config)",
    )
    for name in _CONFIG_OPTIONS:
        parser.add_argument(f"--{name}", action="store_true")
    args = parser.parse_args(argv)
    asked = [n for n in _CONFIG_OPTIONS if getattr(args, n.replace("-", "_"))]
    if not asked:
        parser.print_help()
        return 0
    try:
        paths = tvm_ffi_paths()
    except TvmFfiNotInstalledError as exc:
        print(f"python -m tvm_ffi.config: error: {exc}", file=sys.stderr)
        return 1
    for name in asked:
        print(_CONFIG_OPTIONS[name](paths))
    return 0
