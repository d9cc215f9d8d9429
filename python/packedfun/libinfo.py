# Finding and loading the native library that an extension package ships inside itself.
"""Helpers for Python packages that ship a packedfun extension library.

A package built with ``packedfun_add_extension(my_ext SOURCES ... INSTALL_DIR my_pkg)`` has
``libmy_ext.so`` next to its ``__init__.py``; the package loads it with::

    # my_pkg/__init__.py
    from packedfun.libinfo import load_package_library

    _LIB = load_package_library(__name__, "my_ext")

which also runs the library's static registrations (global functions, object types).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from . import tvm_ffi_compat

if TYPE_CHECKING:
    from .module import Module

__all__ = [
    "find_cmake_path",
    "find_cython_lib",
    "find_dlpack_include_path",
    "find_include_path",
    "find_libtvm_ffi",
    "find_package_library",
    "find_python_helper_include_path",
    "find_source_path",
    "include_paths",
    "load_lib_module",
    "load_package_library",
]

_SUBDIRS = ("", "lib")


def _candidate_names(name: str) -> list[str]:
    if sys.platform == "darwin":
        return [f"lib{name}.dylib", f"{name}.dylib", f"lib{name}.so", f"{name}.so"]
    if sys.platform == "win32":
        return [f"{name}.dll", f"lib{name}.dll"]
    return [f"lib{name}.so", f"{name}.so"]


def _package_dir(package: str | os.PathLike) -> Path:
    if isinstance(package, os.PathLike) or (isinstance(package, str) and os.sep in package):
        path = Path(package)
        return path.parent if path.is_file() else path
    if not isinstance(package, str):
        raise TypeError(f"package must be a module name or a path, got {type(package).__name__}")
    module = sys.modules.get(package)
    if module is None:
        import importlib

        module = importlib.import_module(package)
    file = getattr(module, "__file__", None)
    if file is None:  # a namespace package: take its first search location
        locations = list(getattr(module, "__path__", []))
        if not locations:
            raise ValueError(f"package {package!r} has no location on disk")
        return Path(locations[0])
    return Path(file).resolve().parent


def find_package_library(package: str | os.PathLike, name: str) -> str:
    """Return the path of the shared library ``name`` that sits inside ``package``.

    Looks for ``lib<name>.so`` (then ``<name>.so``; ``.dylib``/``.dll`` on other systems) in the
    package's directory and in its ``lib/`` subdirectory.

    Parameters
    ----------
    package : str or os.PathLike
        A module name (typically ``__name__`` of the package's ``__init__``; imported if needed),
        or the package's directory or any file inside it (e.g. ``__file__``).
    name : str
        The library's target name, without ``lib`` prefix or suffix.

    Returns
    -------
    str
        The absolute path of the first match.

    Raises
    ------
    FileNotFoundError
        When no candidate exists; the message lists every path tried.
    TypeError
        When ``package`` or ``name`` has the wrong type.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty str, got {name!r}")
    base = _package_dir(package)
    tried = []
    for sub in _SUBDIRS:
        for candidate in _candidate_names(name):
            path = base / sub / candidate
            if path.is_file():
                return str(path)
            tried.append(str(path))
    raise FileNotFoundError(f"library {name!r} not found in package; tried: {', '.join(tried)}")


def load_package_library(package: str | os.PathLike, name: str) -> Module:
    """Find the library ``name`` inside ``package`` (:func:`find_package_library`) and load it.

    Parameters
    ----------
    package : str or os.PathLike
        As for :func:`find_package_library`.
    name : str
        The library's target name.

    Returns
    -------
    packedfun.Module
        The loaded module; loading also ran its static registrations.

    Raises
    ------
    FileNotFoundError
        When the library is not there.
    OSError
        When the dynamic loader refuses the file.
    """
    from .module import load_module

    return load_module(find_package_library(package, name))


# apache-tvm-ffi's libinfo names, for packages written for tvm-ffi (under the tvm_ffi switch,
# ``tvm_ffi.libinfo`` is this module). The paths are the installed apache-tvm-ffi's: sources
# written for tvm-ffi build against its headers and library, and load through packedfun's bridge.


def _tvm_ffi_path(key: str) -> str:
    return tvm_ffi_compat.tvm_ffi_paths()[key]


def find_libtvm_ffi() -> str:
    """The installed apache-tvm-ffi's ``libtvm_ffi.so`` (apache-tvm-ffi's name).

    Raises
    ------
    packedfun.tvm_ffi_compat.TvmFfiNotInstalledError
        A ``RuntimeError``, when apache-tvm-ffi is not installed.
    """
    return _tvm_ffi_path("library")


def find_include_path() -> str:
    """The installed apache-tvm-ffi's include folder (``tvm/ffi/*.h``; apache-tvm-ffi's name)."""
    return _tvm_ffi_path("include")


def find_dlpack_include_path() -> str:
    """The folder holding the installed apache-tvm-ffi's ``dlpack/dlpack.h``."""
    return _tvm_ffi_path("include")


def find_cmake_path() -> str:
    """The installed apache-tvm-ffi's CMake package folder (``find_package(tvm_ffi)``)."""
    return _tvm_ffi_path("cmake")


def find_source_path() -> str:
    """The installed apache-tvm-ffi's folder that holds its C++ sources (``src/``; its name)."""
    return _tvm_ffi_path("root")


def find_python_helper_include_path() -> str:
    """The folder of the installed apache-tvm-ffi's ``tvm_ffi_python_helpers.h`` (its name)."""
    return _tvm_ffi_path("include")


def find_cython_lib() -> str:
    """The installed apache-tvm-ffi's compiled Python extension (``tvm_ffi/core.*.so``; its
    name). Found in its folder without importing it (under the switch ``tvm_ffi`` is packedfun).

    Raises
    ------
    RuntimeError
        When apache-tvm-ffi, or its extension, is not installed.
    """
    return tvm_ffi_compat._cython_lib()


def _distribution_files(package: str, names: list[str]) -> list[Path]:
    """The files of the installed distribution ``package`` whose names are in ``names`` (none
    when it is not installed or lists no files)."""
    import importlib.metadata  # only the library lookups need it (import cost of packedfun)

    try:
        files = importlib.metadata.distribution(package).files or []
    except (importlib.metadata.PackageNotFoundError, ValueError, OSError):
        return []
    return [Path(file.locate()) for file in files if file.name in names]


def _find_library_by_basename(
    package: str,
    target_name: str,
    extra_lib_paths: list[Path] | None = None,
    *,
    use_fallback_build_path: bool = True,
    use_env_path: bool = True,
) -> Path:
    """The shared library ``target_name`` (``lib<target_name>.so``) that the distribution
    ``package`` ships, else the first found in ``extra_lib_paths`` (``pathlib.Path`` folders),
    then ``LD_LIBRARY_PATH`` and ``PATH`` (apache-tvm-ffi's helper, same arguments;
    ``use_fallback_build_path`` is accepted: packedfun has no build tree of apache-tvm-ffi's to
    look in).

    Raises
    ------
    TypeError
        When an element of ``extra_lib_paths`` is not a ``pathlib.Path`` (the message names it).
    RuntimeError
        When the library is not found; the message lists the folders searched.
    """
    del use_fallback_build_path
    for i, folder in enumerate(extra_lib_paths or []):
        if not isinstance(folder, Path):
            raise TypeError(
                f"extra_lib_paths[{i}] must be a pathlib.Path, got {type(folder).__name__}: "
                f"{folder!r}"
            )
    names = _candidate_names(target_name)
    for path in _distribution_files(package, names):
        if path.resolve().is_file():
            return path.resolve()
    folders = list(extra_lib_paths or [])
    if use_env_path:
        for var in ("LD_LIBRARY_PATH", "PATH"):
            folders += [Path(p) for p in os.environ.get(var, "").split(os.pathsep) if p]
    for folder in folders:
        for name in names:
            path = (folder / name).resolve()
            if path.is_file():
                return path
    searched = ", ".join(str(f) for f in folders) or "no folders"
    raise RuntimeError(f"cannot find {' or '.join(names)} of {package!r}; searched: {searched}")


def include_paths() -> list[str]:
    """Every include folder that a build of tvm-ffi sources needs (apache-tvm-ffi's name)."""
    return [find_include_path()]


def load_lib_module(
    package: str,
    target_name: str,
    keep_module_alive: bool = True,
    extra_lib_paths: list | None = None,
) -> Module:
    """Load the library ``target_name`` that the installed distribution ``package`` ships
    (apache-tvm-ffi's name; its libraries load through packedfun's tvm-ffi bridge).

    Looks in ``extra_lib_paths`` first, then in the distribution's file list (``package`` is its
    name, e.g. ``"my-ffi-extension"`` or ``"my_ffi_extension"``), then in the import package of
    that name (as :func:`find_package_library` does).

    Raises
    ------
    FileNotFoundError
        When the library is not found; the message lists where it looked.
    """
    from .module import load_module

    names = _candidate_names(target_name)
    tried = []
    for folder in extra_lib_paths or []:
        for candidate in names:
            path = Path(folder) / candidate
            if path.is_file():
                return load_module(str(path), keep_module_alive=keep_module_alive)
            tried.append(str(path))
    for path in _distribution_files(package, names):
        if path.is_file():
            return load_module(str(path), keep_module_alive=keep_module_alive)
        tried.append(str(path))
    try:
        found = find_package_library(package.replace("-", "_"), target_name)
    except (ImportError, FileNotFoundError, ValueError) as exc:
        where = f"; tried: {', '.join(tried)}" if tried else ""
        raise FileNotFoundError(
            f"library {target_name!r} of package {package!r} not found ({exc}){where}"
        ) from None
    return load_module(found, keep_module_alive=keep_module_alive)
