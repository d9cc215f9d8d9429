# Modules: shared libraries loaded at run time and the Functions they export.
"""Loading shared libraries that export packed functions."""

from __future__ import annotations

import os

from ._backend import core

__all__ = ["Module", "load_module"]


class Module:
    """A loaded shared library.

    Functions are found by the symbols the library exports (``__packedfun_<name>``) and through
    its imports; attribute access caches what it finds.

    Parameters
    ----------
    handle : Object
        The backend's Module object.
    path : str
        The path the library was loaded from.
    """

    def __init__(self, handle, path: str = "") -> None:
        object.__setattr__(self, "_handle", handle)
        object.__setattr__(self, "_path", path)
        object.__setattr__(self, "_cache", {})

    @property
    def handle(self):
        """The backend's Module object."""
        return self._handle

    @property
    def path(self) -> str:
        """The path of the library."""
        return self._path

    def get_function(self, name: str, query_imports: bool = False):
        """The Function ``name`` of this module.

        Parameters
        ----------
        name : str
            The exported name.
        query_imports : bool
            Also search the modules this one imports.

        Raises
        ------
        AttributeError
            When the module has no such function.
        """
        func = core.module_get_function(self._handle, name, bool(query_imports))
        if func is None:
            raise AttributeError(f"Module {self._path!r} has no function {name!r}")
        return func

    def __getitem__(self, name: str):
        if not isinstance(name, str):
            raise TypeError(f"Module indices must be str, got {type(name).__name__}")
        return self.get_function(name)

    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        cache = self._cache
        func = cache.get(name)
        if func is None:
            func = cache[name] = self.get_function(name)
        return func

    def __contains__(self, name) -> bool:
        if not isinstance(name, str):
            return False
        return core.module_get_function(self._handle, name, False) is not None

    def __repr__(self) -> str:
        return f"<packedfun.Module {self._path!r}>"


def load_module(path) -> Module:
    """Loads a shared library, running its static initializers (and so its registrations).

    Parameters
    ----------
    path : str or os.PathLike
        The library file.

    Returns
    -------
    Module

    Raises
    ------
    OSError
        When the library cannot be loaded.
    """
    path = os.fspath(path)
    return Module(core.module_load(path), path)
