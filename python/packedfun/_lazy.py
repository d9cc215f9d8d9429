# Lazy namespaces: global names whose library is loaded on first lookup.
"""A table from a namespace (the part of a global name before its first dot) to a loader.

A package whose native library registers Functions, object types or enums under one namespace
declares it once, and a first lookup of a name in that namespace that misses (a Function, an
object type key, an enum key) runs the loader and looks again::

    packedfun.register_lazy_namespace("mylib", lambda: importlib.import_module("mylib"))

``import packedfun`` declares ``testing`` this way (the loader imports :mod:`packedfun.testing`),
so a bare ``import packedfun`` opens no library, yet ``get_global_func("testing.echo")`` works.
This module imports nothing from the rest of the package.
"""

from __future__ import annotations

import _thread

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["register_lazy_namespace", "load_namespace_of"]

_LOADERS: dict[str, Callable[[], object]] = {}
#: A namespace's loader state: absent (not run), True (ran), False (its library is unavailable).
_STATE: dict[str, bool] = {}
_LOCK = _thread.RLock()  # reentrant: a loader may look names of its own namespace up


def register_lazy_namespace(namespace: str, loader: Callable[[], object]) -> None:
    """Declares that names ``"<namespace>.*"`` are registered by ``loader`` (run at most once).

    Parameters
    ----------
    namespace : str
        The namespace, without the dot (``"testing"`` for ``"testing.echo"``).
    loader : callable
        Called without arguments on the first lookup that misses in the namespace, e.g. one that
        imports the Python module loading the library. ``ImportError`` and ``OSError`` from it
        mean "not available" (the lookup then misses as usual); other errors propagate, and the
        next miss tries again.

    Raises
    ------
    TypeError
        When ``namespace`` is not a str or ``loader`` is not callable.
    ValueError
        When ``namespace`` is empty or contains a dot, or already has another loader.
    """
    if not isinstance(namespace, str):
        raise TypeError(f"register_lazy_namespace: namespace must be a str, got "
                        f"{type(namespace).__name__}")  # fmt: skip
    if not namespace or "." in namespace:
        raise ValueError(f"register_lazy_namespace: {namespace!r} is not a namespace (a non-empty "
                         "name without dots)")  # fmt: skip
    if not callable(loader):
        raise TypeError(f"register_lazy_namespace({namespace!r}): {loader!r} is not callable")
    with _LOCK:
        current = _LOADERS.get(namespace)
        if current is not None and current is not loader:
            raise ValueError(f"register_lazy_namespace: {namespace!r} already has a loader")
        _LOADERS[namespace] = loader


def load_namespace_of(name: object) -> bool:
    """Makes sure the loader of ``name``'s namespace has run (once per process; other threads
    asking meanwhile wait for it); whether it has succeeded, so that a lookup that missed is worth
    repeating."""
    if not isinstance(name, str):
        return False
    namespace = name.partition(".")[0]
    with _LOCK:
        loader = _LOADERS.get(namespace)
        if loader is None:
            return False
        state = _STATE.get(namespace)
        if state is not None:
            return state
        _STATE[namespace] = True  # a lookup from inside the loader finds it loaded
        try:
            loader()
        except (ImportError, OSError):  # e.g. a package built without that library
            _STATE[namespace] = False
            return False
        except BaseException:
            del _STATE[namespace]  # tried again on the next miss
            raise
        return True
