# The seeds' spelling of the registry API: `from packedfun._ffi import get_global_func, ...`.
"""Aliases kept for the seeds' code (seed 000's ``test_function_call.py``).

``get_global_func`` and ``register_func`` are :mod:`packedfun.registry`'s; ``list_global_func`` is
:func:`packedfun.list_global_func_names`. New code should use the names of :mod:`packedfun`.
"""

from __future__ import annotations

from .registry import get_global_func, register_func
from .registry import list_global_func_names as list_global_func

__all__ = ["get_global_func", "list_global_func", "register_func"]
