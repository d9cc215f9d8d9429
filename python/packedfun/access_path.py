# apache-tvm-ffi's name for packedfun's access paths: the switch's `tvm_ffi.access_path`.
"""Access paths under apache-tvm-ffi's names (``tvm_ffi.access_path`` under the switch).

:class:`AccessPath` is :class:`packedfun.structural.AccessPath` itself (the same class, returned by
:func:`packedfun.get_first_structural_mismatch`); ``path.to_steps()`` gives tvm-ffi's step
records, :class:`AccessStep` (a ``kind`` and a ``key``) with kinds from :class:`AccessKind`.

>>> from packedfun.access_path import AccessKind, AccessPath
>>> step = AccessPath.root().attr("body").array_item(2).to_steps()[-1]
>>> step.kind == AccessKind.ARRAY_ITEM, step.key
(True, 2)
"""

from __future__ import annotations

from .structural import AccessKind, AccessPath, AccessStep

__all__ = ["AccessKind", "AccessPath", "AccessStep"]
