# The bottom layer of the Python package: the rules and wording both bindings apply.
"""Plain functions and message wording shared by both bindings (``_core`` and ``_ctypes``).

Everything here sits below both bindings: it imports nothing from the rest of the package (a test,
``tests/python/test_layering.py``, holds it to that), so the compiled binding may import it from C
and the ctypes binding at its top. What a rule needs from the running binding (a Function's
metadata record, the Object class) it reads through :mod:`packedfun._rules.backend`, which
``packedfun._backend`` fills once it has chosen the binding.

- :mod:`.signature`: function metadata records, keyword binding, signatures and argument errors.
- :mod:`.map_keys`: which Map/Dict keys are refused, and why.
- :mod:`.tensor_layout`: ``from_dlpack``'s layout checks and ``Tensor.is_contiguous``.
"""
