# Chooses the one backend (compiled _core or ctypes) the rest of the package talks to.
"""Backend selection.

``PACKEDFUN_BACKEND=ctypes`` selects the pure-Python ctypes backend; ``PACKEDFUN_BACKEND=core``
insists on the compiled one; by default the compiled ``packedfun._core`` is used and, when it
cannot be imported, the ctypes backend with a warning. Everything else in the package does
``from ._backend import core``; see ``docs/internals/python-backends.md``.
"""

from __future__ import annotations

import os
import warnings

__all__ = ["core", "BACKEND"]

_choice = os.environ.get("PACKEDFUN_BACKEND", "").strip().lower()

if _choice == "ctypes":
    from ._ctypes import backend as core
elif _choice in ("", "core", "_core"):
    try:
        from . import _core as core  # type: ignore[no-redef]
    except ImportError as _err:
        if _choice:
            raise
        warnings.warn(
            f"packedfun: the compiled backend could not be imported ({_err}); "
            "using the slower ctypes backend",
            RuntimeWarning,
            stacklevel=2,
        )
        from ._ctypes import backend as core  # type: ignore[no-redef]
else:
    raise ImportError(f"PACKEDFUN_BACKEND={_choice!r}: expected 'core' or 'ctypes'")

from ._rules import backend as _rules_backend  # noqa: E402  (the bottom layer reads the choice)

_rules_backend.attach(core)

#: Name of the backend in use: "_core" or "ctypes".
BACKEND: str = "_core" if core.__name__ == "packedfun._core" else "ctypes"
