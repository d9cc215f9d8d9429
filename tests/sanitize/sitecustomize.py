# Sanitized test runs: keep the ASan runtime preloaded for Python child processes only.
"""tests/sanitize/run.py starts Python with ``LD_PRELOAD`` of the ASan runtime (CPython is not
built with ASan, so the runtime must be loaded first). Compilers, linkers and shells started by the
tests must not inherit it (they are not leak-clean and would fail their builds), while Python
children must (they load the sanitized packedfun). This module, found first on PYTHONPATH, moves
the preload out of the environment and gives it back to child processes that run this Python."""

import os
import subprocess
import sys

_PRELOAD = os.environ.pop("LD_PRELOAD", "") or os.environ.get("PACKEDFUN_SANITIZE_PRELOAD", "")
os.environ["PACKEDFUN_SANITIZE_PRELOAD"] = _PRELOAD
_PYTHONS = {os.path.realpath(sys.executable), sys.executable}
_original_init = subprocess.Popen.__init__


def _runs_python(args, executable) -> bool:
    program = executable
    if program is None:
        if isinstance(args, (str, bytes, os.PathLike)):
            program = os.fspath(args)
            program = program.split()[0] if isinstance(program, str) and program else program
        elif args:
            program = os.fspath(args[0])
    if not program:
        return False
    program = os.fsdecode(program)
    return program in _PYTHONS or os.path.realpath(program) in _PYTHONS


def _init(self, args, *rest, **kwargs):
    if _PRELOAD and _runs_python(args, kwargs.get("executable")):
        env = dict(os.environ if kwargs.get("env") is None else kwargs["env"])
        env["LD_PRELOAD"] = _PRELOAD
        kwargs["env"] = env
    _original_init(self, args, *rest, **kwargs)


subprocess.Popen.__init__ = _init  # type: ignore[method-assign]
