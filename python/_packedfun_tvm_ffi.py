# The interpreter-start half of packedfun's tvm_ffi switch, run by packedfun_tvm_ffi.pth.
"""Makes ``import tvm_ffi`` give packedfun when ``PACKEDFUN_AS_TVM_FFI=1`` is set, without loading
packedfun at interpreter start.

The wheel's ``packedfun_tvm_ffi.pth`` calls :func:`activate` when the variable is set. It puts a
small finder first on ``sys.meta_path`` and imports nothing else: the packedfun package and its
native runtime load only when the process first imports ``tvm_ffi`` (or a submodule of it). Then
the finder steps aside and installs the switch proper (``packedfun.tvm_ffi_compat``). Python
processes that never import ``tvm_ffi`` (pip, build tools, most child processes) pay one
environment lookup and this module's import."""

import os
import sys

_ALIAS = "tvm_ffi"


class _DeferredSwitch:
    """Waits for the first import of ``tvm_ffi``/``tvm_ffi.*``, then installs the real switch."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != _ALIAS and not fullname.startswith(_ALIAS + "."):
            return None
        deactivate()
        from packedfun import tvm_ffi_compat

        tvm_ffi_compat._install_from_environment()
        # The switch puts packedfun in sys.modules under the name being imported; the import
        # system would then load that module's own spec (packedfun's __init__) a second time.
        # The switch's finder below hands the same module out instead.
        if getattr(sys.modules.get(fullname), "__name__", "").startswith("packedfun"):
            del sys.modules[fullname]
        for finder in sys.meta_path:  # the switch's finder if it installed, else the usual ones
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find is not None else None
            if spec is not None:
                return spec
        return None


def activate() -> None:
    """Installs the deferred finder when ``PACKEDFUN_AS_TVM_FFI`` is set (and not ``0``)."""
    if os.environ.get("PACKEDFUN_AS_TVM_FFI", "") in ("", "0"):
        return
    if not any(isinstance(f, _DeferredSwitch) for f in sys.meta_path):
        sys.meta_path.insert(0, _DeferredSwitch())


def deactivate() -> None:
    """Removes the deferred finder (``packedfun.tvm_ffi_compat.uninstall`` calls it too)."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _DeferredSwitch)]
