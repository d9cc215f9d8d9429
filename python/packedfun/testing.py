# packedfun.testing: the C++ test functions of libpackedfun_testing, exposed as module attributes.
"""Functions for tests and demonstrations, implemented in C++ (``src/testing/``).

Importing this module loads ``lib/libpackedfun_testing.so`` (its static initializers register
``testing.*`` globally) and exposes every ``testing.<name>`` Function as an attribute, e.g.
``echo``, ``apply``, ``nop``, ``test_raise_error``, ``add_int``, ``call_global``.
"""

from __future__ import annotations

import os
from typing import Any

from ._backend import core
from ._py_class import c_class
from .object import Object
from .registry import init_ffi_api

__all__ = ["TestIntPair", "library_path", "run_with_gpu_lock"]

_LIB_NAME = "libpackedfun_testing.so"


def library_path() -> str:
    """The path of the testing library inside the package."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib", _LIB_NAME)


def run_with_gpu_lock(func, /, *args: Any, **kwargs: Any) -> Any:
    """``func(*args, **kwargs)`` while holding this machine's GPU test lock (apache-tvm-ffi's name).

    Test processes running side by side take turns on the device: the lock is an exclusive
    ``flock`` on a file in the temporary directory, released when ``func`` returns or raises.

    Returns
    -------
    object
        What ``func`` returns.
    """
    import fcntl
    import tempfile

    path = os.path.join(tempfile.gettempdir(), f"packedfun_gpu_test_{os.getuid()}.lock")
    with open(path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return func(*args, **kwargs)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


#: The loaded testing library (kept so that it stays loaded).
_MODULE = core.module_load(library_path())

init_ffi_api("testing", __name__)


@c_class("testing.TestIntPair", repr=False)
class TestIntPair(Object):
    """The Python guide's example object: two integers ``a`` and ``b`` and a method ``sum()``.

    ``TestIntPair(a, b)`` calls the C++ ``__create__`` constructor; ``a`` and ``b`` are reflected,
    read-only fields, and the class's dataclass fields (``c_class``: ``fields``, ``replace``,
    ``asdict``, ``__match_args__``).
    """

    __test__ = False  # not a pytest test class


def __getattr__(name: str) -> Any:
    raise AttributeError(
        f"module {__name__!r} has no attribute {name!r} (no global function 'testing.{name}')"
    )
