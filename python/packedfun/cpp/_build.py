# Compiler discovery and invocation for packedfun.cpp: finds c++/nvcc, forms and runs the commands.
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "BuildError",
    "CompilerNotFoundError",
    "Tool",
    "find_cxx",
    "find_nvcc",
    "cuda_home",
    "cuda_arch_flags",
    "BuildPlan",
    "run_plan",
]

_CXX_BASE_FLAGS = ["-O2", "-std=c++17", "-fPIC"]
_C_BASE_FLAGS = ["-x", "c", "-O2", "-std=c11", "-fPIC"]
_CUDA_BASE_FLAGS = ["-O2", "-std=c++17", "-Xcompiler", "-fPIC"]
_DEFAULT_CUDA_ARCH = "80"
_ERROR_LINES_SHOWN = 20


class BuildError(RuntimeError):
    """A compile or link step of :mod:`packedfun.cpp` failed.

    Attributes
    ----------
    command : str
        The shell-quoted command that failed (empty when no command ran).
    log_path : str or None
        The file holding the full output of the failed build.
    returncode : int or None
        The exit status of the failed command (127 when it could not be started; None when no
        command ran, e.g. :class:`CompilerNotFoundError`).
    """

    def __init__(
        self,
        message: str,
        command: str = "",
        log_path: str | None = None,
        returncode: int | None = None,
    ):
        super().__init__(message)
        self.command = command
        self.log_path = log_path
        self.returncode = returncode


class CompilerNotFoundError(BuildError):
    """The C++ compiler or nvcc could not be found; the message names the variable to set."""


@dataclass(frozen=True)
class Tool:
    """A compiler: the resolved executable plus the leading arguments of its command line."""

    path: str
    args: tuple[str, ...] = ()

    def argv(self) -> list[str]:
        return [self.path, *self.args]


def _resolve(program: str) -> str | None:
    found = shutil.which(program)
    return os.path.abspath(found) if found else None


def find_cxx() -> Tool:
    """The C++ compiler: ``$CXX`` (which may carry arguments, e.g. ``ccache g++``), else c++/g++."""
    env = os.environ.get("CXX", "").strip()
    if env:
        try:
            words = shlex.split(env)
        except ValueError as err:
            raise ValueError(f"environment variable CXX={env!r} cannot be split: {err}") from None
        path = _resolve(words[0])
        if path is None:
            raise CompilerNotFoundError(
                f"C++ compiler {words[0]!r} named by $CXX was not found; "
                "set the environment variable CXX to a working C++ compiler"
            )
        return Tool(path, tuple(words[1:]))
    for candidate in ("c++", "g++", "clang++"):
        path = _resolve(candidate)
        if path is not None:
            return Tool(path)
    raise CompilerNotFoundError(
        "no C++ compiler found (tried c++, g++, clang++ on PATH); "
        "install one or set the environment variable CXX to its path"
    )


def find_nvcc() -> Tool:
    """nvcc: ``$PACKEDFUN_NVCC``, else ``$CUDA_HOME/bin/nvcc``, else PATH, else /usr/local/cuda."""
    env = os.environ.get("PACKEDFUN_NVCC", "").strip()
    if env:
        path = _resolve(env)
        if path is None:
            raise CompilerNotFoundError(
                f"nvcc {env!r} named by $PACKEDFUN_NVCC was not found; "
                "set PACKEDFUN_NVCC to the nvcc executable or CUDA_HOME to the CUDA toolkit"
            )
        return Tool(path)
    candidates = []
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home:
        candidates.append(os.path.join(home, "bin", "nvcc"))
    candidates += ["nvcc", "/usr/local/cuda/bin/nvcc"]
    for candidate in candidates:
        path = _resolve(candidate)
        if path is not None:
            return Tool(path)
    raise CompilerNotFoundError(
        "nvcc (the CUDA compiler) was not found for cuda_sources; set the environment variable "
        "CUDA_HOME to the CUDA toolkit (or PACKEDFUN_NVCC to the nvcc executable)"
    )


def cuda_home(nvcc: Tool) -> str:
    """The CUDA toolkit root that holds include/ and lib64/ for `nvcc`."""
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home:
        return home
    # nvcc may be a wrapper script (as /usr/local/bin/nvcc often is): prefer a root with headers.
    for root in (Path(nvcc.path).resolve().parent.parent, Path("/usr/local/cuda")):
        if (root / "include" / "cuda_runtime.h").exists():
            return str(root)
    return str(Path(nvcc.path).resolve().parent.parent)


def _normalize_arch(word: str) -> str:
    text = word.strip().lower()
    for prefix in ("sm_", "compute_"):
        if text.startswith(prefix):
            text = text[len(prefix) :]
    text = text.replace(".", "")
    if not text or not text.rstrip("af").isdigit():
        raise ValueError(f"invalid CUDA architecture {word!r} (expected e.g. 'sm_90' or '9.0')")
    return text


def parse_arch_list(text: str) -> list[str]:
    """Parses "sm_80;sm_90", "8.0 9.0", "90,100a" into ["80", "90"] style numbers, sorted."""
    words = [w for w in text.replace(",", " ").replace(";", " ").split() if w]
    return sorted({_normalize_arch(w) for w in words}, key=lambda a: (int(a.rstrip("af")), a))


def cuda_arch_flags(archs: list[str]) -> list[str]:
    """-gencode flags: SASS for every arch plus PTX of the newest, so newer GPUs still run it."""
    archs = archs or [_DEFAULT_CUDA_ARCH]
    flags = [f"-gencode=arch=compute_{a},code=sm_{a}" for a in archs]
    flags.append(f"-gencode=arch=compute_{archs[-1]},code=compute_{archs[-1]}")
    return flags


@dataclass
class BuildPlan:
    """Everything needed to turn sources into one shared library inside a build directory."""

    cxx: Tool
    output: str
    cpp_files: list[str] = field(default_factory=list)
    c_files: list[str] = field(default_factory=list)
    cuda_files: list[str] = field(default_factory=list)
    #: Prebuilt object files (``.o``/``.obj`` sources): linked as they are.
    object_files: list[str] = field(default_factory=list)
    #: The output is a relocatable object file (``output`` ends in ``.o``/``.obj``): no link.
    object_output: bool = False
    nvcc: Tool | None = None
    include_paths: list[str] = field(default_factory=list)
    cflags: list[str] = field(default_factory=list)
    #: Code-generation flags the compiler was probed to accept (``-fno-semantic-interposition``),
    #: after the base flags of every C and C++ compile, before the user's.
    probed_cflags: list[str] = field(default_factory=list)
    cuda_cflags: list[str] = field(default_factory=list)
    ldflags: list[str] = field(default_factory=list)

    def _includes(self) -> list[str]:
        return [f"-I{p}" for p in self.include_paths]

    def compile_command(self, source: str, obj: str, dep: str) -> list[str]:
        """The command that compiles one source into `obj`, writing its make-style depfile."""
        if source in self.cuda_files:
            assert self.nvcc is not None
            tool = [*self.nvcc.argv(), *_CUDA_BASE_FLAGS]
            flags = self.cuda_cflags
        else:
            base = _C_BASE_FLAGS if source in self.c_files else _CXX_BASE_FLAGS
            tool = [*self.cxx.argv(), *base, *self.probed_cflags]
            flags = self.cflags
        return [*tool, *self._includes(), *flags, "-MMD", "-MF", dep, "-c", source, "-o", obj]

    def link_command(self, objects: list[str]) -> list[str]:
        if self.object_output:  # several objects merged into one relocatable object
            return [*self.cxx.argv(), "-r", "-nostdlib", *objects, "-o", self.output]
        return [*self.cxx.argv(), "-shared", *objects, "-o", self.output, *self.ldflags]

    def single_command(self, dep: str) -> list[str]:
        """Compile-and-link in one process: the common one-C++-file case saves a process start."""
        source = self.cpp_files[0]
        return [
            *self.cxx.argv(),
            *_CXX_BASE_FLAGS,
            *self.probed_cflags,
            "-shared",
            *self._includes(),
            *self.cflags,
            "-MMD",
            "-MF",
            dep,
            source,
            "-o",
            self.output,
            *self.ldflags,
        ]

    def sources(self) -> list[str]:
        return [*self.cpp_files, *self.c_files, *self.cuda_files]


def _run(command: list[str], log_path: str, cwd: str) -> tuple[int, str]:
    try:
        proc = subprocess.run(
            command,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    except OSError as err:  # the compiler vanished or is not executable
        return 127, f"{err}\n"
    output = proc.stdout.decode("utf-8", errors="replace")
    with open(log_path, "a", encoding="utf-8") as log:
        log.write(f"$ {shlex.join(command)}\n{output}\n[exit status {proc.returncode}]\n\n")
    return proc.returncode, output


def _first_errors(output: str) -> str:
    lines = output.splitlines()
    errors = [i for i, line in enumerate(lines) if "error" in line.lower()]
    start = max(0, errors[0] - 2) if errors else 0
    return "\n".join(lines[start : start + _ERROR_LINES_SHOWN])


def _fail(command: list[str], code: int, output: str, log_path: str) -> BuildError:
    cmd = shlex.join(command)
    message = (
        f"build failed: command\n  {cmd}\nfailed (exit status {code}) with:\n"
        f"{_first_errors(output)}\nfull log: {log_path}"
    )
    return BuildError(message, cmd, log_path, code)


def run_plan(plan: BuildPlan, build_dir: str) -> list[str]:
    """Runs `plan` in `build_dir`; returns the depfiles written. Raises BuildError on failure."""
    log_path = os.path.join(build_dir, "build.log")
    sources = plan.sources()
    single = (
        len(sources) == 1
        and bool(plan.cpp_files)
        and not plan.object_files
        and not plan.object_output
    )
    if single:
        dep = os.path.join(build_dir, "main.d")
        steps = [plan.single_command(dep)]
        deps = [dep]
    else:
        steps, deps, objects = [], [], []
        for i, src in enumerate(sources):
            obj = os.path.join(build_dir, f"obj{i}.o")
            deps.append(os.path.join(build_dir, f"obj{i}.d"))
            objects.append(obj)
            steps.append(plan.compile_command(src, obj, deps[-1]))
    workers = min(len(steps), os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        results = list(pool.map(lambda cmd: _run(cmd, log_path, build_dir), steps))
    for command, (code, output) in zip(steps, results):
        if code != 0:
            raise _fail(command, code, output, log_path)
    if not single and plan.object_output and len(objects) + len(plan.object_files) == 1:
        shutil.copyfile((objects or plan.object_files)[0], plan.output)  # nothing to merge
    elif not single:
        link = plan.link_command([*objects, *plan.object_files])
        code, output = _run(link, log_path, build_dir)
        if code != 0:
            raise _fail(link, code, output, log_path)
    return deps
