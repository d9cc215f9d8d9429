# The binding in use as the bottom layer sees it: set by packedfun._backend, never imported here.
"""The slot through which the bottom layer reaches the chosen binding.

The rules in :mod:`packedfun._rules` sit below both bindings, so they cannot import
``packedfun._backend`` (that would close an import circle through ``_core``). The few that need the
running binding (a Function's metadata record, the Object class) read :data:`core`, which
``packedfun._backend`` sets with :func:`attach` right after choosing the binding, before any rule
can be reached.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

#: The binding module in use (``packedfun._core`` or ``packedfun._ctypes.backend``).
core: Any = None


def attach(binding) -> None:
    """Makes ``binding`` the one the rules read (called once, by ``packedfun._backend``)."""
    global core
    core = binding
