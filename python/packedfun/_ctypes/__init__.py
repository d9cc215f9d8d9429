# The ctypes backend: the same public surface as the compiled _core, in pure Python over the C ABI.
"""packedfun's ctypes backend (``PACKEDFUN_BACKEND=ctypes``).

See ``docs/internals/python-backends.md``.

Private: the rest of the package reaches it only through ``packedfun._backend.core``.
"""
