# Sanitized test runs: the ASan runtime stays preloaded for Python processes, never for others.
"""tests/sanitize/run.py starts Python with ``LD_PRELOAD`` of the ASan runtime (CPython is not
built with ASan, so the runtime must be loaded first). Every Python process the tests start must
inherit it, however it is started (``subprocess``, or ``multiprocessing``'s spawn and forkserver
methods, which exec ``sys.executable`` without going through ``subprocess``): a Python child without
it cannot load the sanitized packedfun and dies. That is what hung the first whole-suite run: a
``multiprocessing.Pool`` worker died while unpickling its task, the pool replaced it, and the parent
waited forever for the lost result. So the preload stays in ``os.environ``, and only the build
tools started through ``subprocess`` (compilers, linkers, CMake, Ninja, shell scripts such as the
tests' compiler wrappers) lose it: they are not leak-clean and would fail their builds (a Python
that such a shell runs gets it back). Programs the
tests build and run (a C++ host linking the sanitized runtime) keep it: the runtime needs ASan
loaded first, and their leaks are packedfun's to answer for."""

import ctypes
import gc
import importlib.machinery
import os
import re
import shutil
import subprocess
import sys

# A Python started without the preload (a Python script run as a build tool, such as pip's cmake
# wrapper) keeps running without it: the programs it starts are build tools too.
_PRELOAD = os.environ.get("LD_PRELOAD", "") or os.environ.get("PACKEDFUN_SANITIZE_PRELOAD", "")
os.environ["PACKEDFUN_SANITIZE_PRELOAD"] = _PRELOAD
_REPORTS = os.environ.get("PACKEDFUN_SANITIZE_REPORTS")
if _REPORTS:  # which process a report file (asan.<pid>) came from
    try:
        with open(os.path.join(_REPORTS, f"argv.{os.getpid()}"), "w") as _f:
            _f.write(" ".join(sys.orig_argv if hasattr(sys, "orig_argv") else sys.argv)[:500])
    except OSError:
        pass
_PYTHONS = {os.path.realpath(sys.executable), sys.executable}
_HERE = os.path.dirname(os.path.abspath(__file__))
_original_init = subprocess.Popen.__init__
_TOOLS = re.compile(
    r"^(.*-)?(gcc|g\+\+|cc|c\+\+|cpp|clang|clang\+\+|nvcc|ld|ld\.\w+|as|ar|nm|strip|objdump"
    r"|readelf|ldd|cmake|ctest|ninja|make|ccache|git|sh|bash|dash)(-[\d.]+)?$"
)


# Except a Python that a shell script or a build tool of the tests starts (a docs page's shell
# block running `packedfun-config` and `python -c "import packedfun ..."`; CMake running
# `python -m tvm_ffi.config` for find_package under the tvm-ffi switch, which imports packedfun):
# the tool lost the preload, but its Python commands load the sanitized packedfun and die without it
# ("ASan runtime does not come first in initial library list"). A tool started from a sanitized
# Python carries _SHELL_MARK; a Python started under it (a shell's last command is exec'd: its
# parent can be the sanitized Python) runs again with the preload, and without the mark, unless it
# is itself a build tool (a Python script named as one, such as pip's `cmake` wrapper, which execs
# the real CMake: that keeps running without the preload).
_SHELL_MARK = "PACKEDFUN_SANITIZE_SHELL"
_SHELLS = ("sh", "bash", "dash")


if (
    _PRELOAD
    and not os.environ.get("LD_PRELOAD")
    and os.environ.get(_SHELL_MARK) == "1"
    and hasattr(sys, "orig_argv")
    and not _TOOLS.match(os.path.basename(sys.argv[0] if sys.argv else ""))  # pip's cmake wrapper
):
    _env = dict(os.environ, LD_PRELOAD=_PRELOAD)
    _env.pop(_SHELL_MARK)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], _env)


def _program(args, executable) -> str:
    program = executable
    if program is None:
        if isinstance(args, (str, bytes, os.PathLike)):
            program = os.fspath(args)
            program = program.split()[0] if isinstance(program, str) and program else program
        elif args:
            program = os.fspath(args[0])
    return os.fsdecode(program) if program else ""


def _keeps_preload(program: str) -> bool:
    """True for this Python, Python scripts and the programs that are neither a build tool nor
    another script."""
    if program in _PYTHONS or os.path.realpath(program) in _PYTHONS:
        return True
    path = shutil.which(program) or program
    if _TOOLS.match(os.path.basename(path)) or _TOOLS.match(
        os.path.basename(os.path.realpath(path))
    ):
        return False
    try:
        with open(path, "rb") as f:
            first = f.readline(200)
    except OSError:
        return False
    return not first.startswith(b"#!") or b"python" in first


def _init(self, args, *rest, **kwargs):
    if _PRELOAD and os.environ.get("LD_PRELOAD"):
        env = dict(os.environ if kwargs.get("env") is None else kwargs["env"])
        program = _program(args, kwargs.get("executable"))
        if _keeps_preload(program):
            env["LD_PRELOAD"] = _PRELOAD
            if program in _PYTHONS or os.path.realpath(program) in _PYTHONS:
                # this module must run there too, also when the test sets its own PYTHONPATH
                # (else that Python hands the preload on to the compilers it starts)
                paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
                if _HERE not in paths:
                    env["PYTHONPATH"] = os.pathsep.join([*paths, _HERE])
        else:
            env.pop("LD_PRELOAD", None)
            env[_SHELL_MARK] = "1"  # its Python commands get the preload back (above)
        kwargs["env"] = env
    _original_init(self, args, *rest, **kwargs)


subprocess.Popen.__init__ = _init  # type: ignore[method-assign]


# Third-party packages whose own import leaves a few allocations LeakSanitizer reports at exit
# without packedfun in the process: `python -c "import torch"` alone reports one str (129 B),
# `import jax` ten str (896 B), `import numpy` two float (48 B; free-listed, see exec_module).
# Allocations made while their top-level import runs are not checked for leaks (LeakSanitizer's
# __lsan_disable, this thread only); packedfun's own allocations never happen inside these
# imports, and everything they allocate later, when packedfun is in use, is checked as usual.
_QUIET_IMPORTS = {"torch", "jax", "jaxlib", "numpy"}


class _QuietLoader:
    def __init__(self, loader, switches):
        self._loader, self._switches = loader, switches

    def __getattr__(self, name):
        return getattr(self._loader, name)

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        disable, enable = self._switches
        # A full collection first empties CPython's free lists (tuples, floats, ...): an object the
        # import took from one was malloc'd before it, by whatever code freed it, so the import's
        # one-time state kept in it would be reported at exit as leaked there (a test's tuples).
        gc.collect()
        disable()
        try:
            self._loader.exec_module(module)
        finally:
            enable()


class _QuietImportFinder:
    def __init__(self, switches):
        self._switches = switches

    def find_spec(self, name, path=None, target=None):
        if name not in _QUIET_IMPORTS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _QuietLoader(spec.loader, self._switches)
        return spec


def _install_quiet_imports() -> None:
    try:  # present only with the ASan runtime loaded
        process = ctypes.CDLL(None)
        switches = (process["__lsan_disable"], process["__lsan_enable"])
    except (OSError, AttributeError):
        return
    sys.meta_path.insert(0, _QuietImportFinder(switches))


if os.environ.get("LD_PRELOAD"):
    _install_quiet_imports()
