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

if TYPE_CHECKING:
    from .module import Module

__all__ = ["find_package_library", "load_package_library"]

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
