# packedfun.cpp: build and load C++/CUDA extensions on the fly, from inline strings or from files.
"""Compile C++ (and CUDA) into a packedfun module at run time.

>>> import packedfun.cpp
>>> mod = packedfun.cpp.load_inline(
...     "demo", cpp_sources="int64_t add(int64_t a, int64_t b) { return a + b; }",
...     functions="add")
>>> mod.add(1, 2)
3

Builds are cached (see :func:`build_inline`); a warm hit starts no process.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Union

from .. import tvm_ffi_compat as _tvm_compat
from . import _cache, _codegen, _package, _probe
from ._build import (
    BuildError,
    BuildPlan,
    CompilerNotFoundError,
    Tool,
    cuda_arch_flags,
    cuda_home,
    find_cxx,
    find_nvcc,
    run_plan,
)

if TYPE_CHECKING:
    from ..module import Module

__all__ = ["BuildError", "CompilerNotFoundError", "build_inline", "load_inline", "build", "load"]

_Functions = Union[str, Sequence[str], Mapping[str, Union[str, None]], None]
_Sources = Union[str, Sequence[str], None]
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*\Z")
_CPP_SUFFIXES = (".cc", ".cpp", ".cxx", ".c++", ".C")
_KEY_FORMAT = "packedfun.cpp/1"


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"module name {name!r} must be letters, digits, '_', '.', '-' only")
    return name


def _str_list(
    value: Sequence[str | os.PathLike] | str | os.PathLike | None, what: str
) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (str, os.PathLike)):
        return [os.fspath(value)]
    items = [os.fspath(v) for v in value]
    if not all(isinstance(v, str) for v in items):
        raise TypeError(f"{what} must be a list of str")
    return items


def _tvm_ffi_native(sources: list[str]) -> bool:
    """Whether to build the sources as apache-tvm-ffi code (its headers, its library, loaded
    through the bridge): they are written for tvm-ffi and apache-tvm-ffi is installed. Without
    apache-tvm-ffi, inline sources fall back to packedfun's compatibility header."""
    if not _codegen.written_for_tvm_ffi(sources):
        return False
    try:
        _tvm_compat.tvm_ffi_paths()
    except _tvm_compat.TvmFfiNotInstalledError:
        return False
    return True


class _Request:
    """One build: tools, flags and sources, turned into a cache key and a BuildPlan."""

    def __init__(
        self,
        name: str,
        has_cuda: bool,
        extra_cflags,
        extra_cuda_cflags,
        extra_ldflags,
        extra_include_paths,
        build_directory,
        tvm_ffi: bool = False,
        compat: bool = False,
    ) -> None:
        self.name = name
        self.root = _cache.cache_root(build_directory)
        _cache.prepare_root(self.root)  # PermissionError for a folder others could write to
        probe_dir = os.path.join(self.root, ".probes")
        self.cxx = find_cxx()
        self.nvcc: Tool | None = find_nvcc() if has_cuda else None
        self.identity = [
            _KEY_FORMAT,
            name,
            _package.identity(),
            _probe.tool_identity(self.cxx, probe_dir),
        ]
        includes = [
            os.path.abspath(p) for p in _str_list(extra_include_paths, "extra_include_paths")
        ]
        self.cflags = _str_list(extra_cflags, "extra_cflags")
        self.cuda_cflags: list[str] = []
        if tvm_ffi:
            # Sources written for apache-tvm-ffi: built against its own headers and library, as
            # its load_inline would, and loaded through packedfun's tvm-ffi bridge.
            paths = _tvm_compat.tvm_ffi_paths()
            lib = paths["lib"]
            includes.append(paths["include"])
            self.ldflags = [f"-L{lib}", "-ltvm_ffi", f"-Wl,-rpath,{lib}"]
            self.stable_roots = [paths["include"]]
            self.identity += ["tvm_ffi", paths["library"]]
        else:
            includes += _package.include_dirs()
            if compat:  # packedfun's <tvm/ffi/...> header tree, for sources that include them
                includes.append(os.path.join(_package.include_dirs()[0], "packedfun", "compat"))
            lib = _package.lib_dir()
            self.ldflags = [f"-L{lib}", "-lpackedfun", f"-Wl,-rpath,{lib}"]
            self.stable_roots = list(_package.include_dirs())
        if self.nvcc is not None:
            home = cuda_home(self.nvcc)
            includes.append(os.path.join(home, "include"))
            self.stable_roots.append(home)
            archs = _probe.gpu_archs(probe_dir)
            self.cuda_cflags = cuda_arch_flags(archs)
            self.cuda_cflags += _str_list(extra_cuda_cflags, "extra_cuda_cflags")
            cudalib = os.path.join(home, "lib64")
            self.ldflags += [f"-L{cudalib}", "-lcudart", f"-Wl,-rpath,{cudalib}"]
            self.identity.append(_probe.tool_identity(self.nvcc, probe_dir))
        self.ldflags += _str_list(extra_ldflags, "extra_ldflags")
        self.includes = includes

    def key(self, sources: list[tuple[str, str]]) -> str:
        parts = list(self.identity)
        for label, values in (
            ("includes", self.includes),
            ("cflags", self.cflags),
            ("cuda_cflags", self.cuda_cflags),
            ("ldflags", self.ldflags),
        ):
            parts += [label, str(len(values)), *values]
        for label, text in sources:
            parts += ["source", label, text]
        return _cache.hash_parts(parts)

    def plan(self, output: str, files: list[str]) -> BuildPlan:
        plan = BuildPlan(
            cxx=self.cxx,
            nvcc=self.nvcc,
            output=output,
            include_paths=self.includes,
            cflags=self.cflags,
            cuda_cflags=self.cuda_cflags,
            ldflags=self.ldflags,
        )
        for path in files:
            if path.endswith(".cu"):
                plan.cuda_files.append(path)
            elif path.endswith(".c"):
                plan.c_files.append(path)
            else:
                plan.cpp_files.append(path)
        return plan

    def run(self, key: str, builder) -> str:
        name_dir = os.path.join(self.root, self.name)
        found = _cache.lookup(name_dir, self.name, key)
        if found is not None:
            return found
        return _cache.build_locked(name_dir, self.name, key, builder, self.stable_roots)


def build_inline(
    name: str,
    cpp_sources: _Sources = None,
    cuda_sources: _Sources = None,
    functions: _Functions = None,
    extra_cflags: Sequence[str] | None = None,
    extra_cuda_cflags: Sequence[str] | None = None,
    extra_ldflags: Sequence[str] | None = None,
    extra_include_paths: Sequence[str] | None = None,
    build_directory: str | os.PathLike | None = None,
    *,
    tvm_ffi_compat: bool = False,
) -> str:
    """Compiles inline C++/CUDA sources into a shared library and returns its path.

    Parameters
    ----------
    name : str
        Name of the library (``<name>.so``); letters, digits, ``_``, ``.`` and ``-``.
    cpp_sources, cuda_sources : str or list of str, optional
        C++ and CUDA source text. Both get ``#include <packedfun/packedfun.h>`` in front.
    functions : str, list of str or dict of str to str, optional
        Plain C++ functions to export under their own names (a dict maps names to docstrings).
        The exports are generated in the C++ source when there is one, else in the CUDA source;
        a function defined in CUDA but exported alongside C++ sources must be declared there.
    extra_cflags, extra_cuda_cflags, extra_ldflags : list of str, optional
        Extra flags for the C++ compiler (``$CXX``, else ``c++``), nvcc and the link.
    extra_include_paths : list of str, optional
        Extra include directories.
    build_directory : str or path, optional
        Cache root to use instead of ``$PACKEDFUN_CACHE_DIR`` or ``~/.cache/packedfun``.
    tvm_ffi_compat : bool, optional
        Also include ``<packedfun/compat/tvm_ffi.h>`` and put packedfun's ``tvm/ffi`` header
        tree on the include path, so sources written for apache-tvm-ffi
        (``#include <tvm/ffi/tvm_ffi.h>``, ``tvm::ffi::TensorView``, ``TVM_FFI_ICHECK``, ...)
        compile unchanged as packedfun code.

    Returns
    -------
    str
        Path of the built library: ``<root>/<name>/<key>/<name>.so``. The key hashes the sources,
        functions, flags, include paths, compiler identity and version, nvcc and CUDA
        architectures when used, and packedfun's ABI version; a warm hit starts no process.

    Raises
    ------
    BuildError
        When compiling or linking fails; the message has the command, the first error lines and
        the path of the full log. :class:`CompilerNotFoundError` when a compiler is missing.
    PermissionError
        When the cache folder (or a parent up to the cache root) is not a private folder of the
        current user; see ``docs/security.md`` and ``PACKEDFUN_CACHE_SHARED``.
    """
    _check_name(name)
    cpp = _codegen.normalize_sources(cpp_sources, "cpp_sources")
    cuda = _codegen.normalize_sources(cuda_sources, "cuda_sources")
    if not cpp and not cuda:
        raise ValueError("build_inline needs cpp_sources or cuda_sources")
    funcs = _codegen.normalize_functions(functions)
    written = not tvm_ffi_compat and _codegen.written_for_tvm_ffi([cpp, cuda])
    native = written and _tvm_ffi_native([cpp, cuda])
    compat = tvm_ffi_compat or (written and not native)  # no apache-tvm-ffi: the compat header
    decorate = (
        _codegen.decorate_tvm_ffi if native else lambda text, f: _codegen.decorate(text, f, compat)
    )
    texts: list[tuple[str, str]] = []
    if cpp:
        texts.append(("main.cpp", decorate(cpp, funcs)))
    if cuda:
        texts.append(("cuda.cu", decorate(cuda, None if cpp else funcs)))
    request = _Request(
        name,
        bool(cuda),
        extra_cflags,
        extra_cuda_cflags,
        extra_ldflags,
        extra_include_paths,
        build_directory,
        tvm_ffi=native,
        compat=compat,
    )

    def builder(tmp: str) -> list[str]:
        files = []
        for file_name, text in texts:
            files.append(os.path.join(tmp, file_name))
            with open(files[-1], "w", encoding="utf-8") as f:
                f.write(text)
        return run_plan(request.plan(os.path.join(tmp, f"{name}.so"), files), tmp)

    try:
        return request.run(request.key(texts), builder)
    except BuildError as exc:
        if not (written and not native) or isinstance(exc, CompilerNotFoundError):
            raise
        # tvm-ffi sources on the compatibility header: a name it lacks fails here; say so.
        raise BuildError(
            f"{exc}\nThese sources are written for apache-tvm-ffi, which is not installed: they "
            "were built with packedfun's compatibility header, which lacks the tvm-ffi names the "
            "compiler reports above (its C names, TVMFFI*, are not provided at all). Install "
            "apache-tvm-ffi (pip install apache-tvm-ffi) to build them against its own headers; "
            "see docs/migration-from-tvm-ffi.md",
            exc.command,
            exc.log_path,
            exc.returncode,
        ) from exc


def load_inline(
    name: str,
    cpp_sources: _Sources = None,
    cuda_sources: _Sources = None,
    functions: _Functions = None,
    extra_cflags: Sequence[str] | None = None,
    extra_cuda_cflags: Sequence[str] | None = None,
    extra_ldflags: Sequence[str] | None = None,
    extra_include_paths: Sequence[str] | None = None,
    build_directory: str | os.PathLike | None = None,
    *,
    tvm_ffi_compat: bool = False,
) -> Module:
    """Like :func:`build_inline`, then loads the library with ``packedfun.load_module(path)``."""
    path = build_inline(
        name,
        cpp_sources,
        cuda_sources,
        functions,
        extra_cflags,
        extra_cuda_cflags,
        extra_ldflags,
        extra_include_paths,
        build_directory,
        tvm_ffi_compat=tvm_ffi_compat,
    )
    return _load_module(path)


def _load_module(path: str) -> Module:
    from .. import load_module

    return load_module(path)


def build(
    name: str,
    sources: Sequence[str | os.PathLike] | str | os.PathLike,
    extra_cflags: Sequence[str] | None = None,
    extra_cuda_cflags: Sequence[str] | None = None,
    extra_ldflags: Sequence[str] | None = None,
    extra_include_paths: Sequence[str] | None = None,
    build_directory: str | os.PathLike | None = None,
) -> str:
    """Compiles source files into a shared library and returns its path.

    Parameters
    ----------
    name : str
        Name of the library.
    sources : path or list of paths
        ``.cu`` files go to nvcc, ``.c`` files are compiled as C11, the rest as C++17. The files
        export their functions themselves (``PACKEDFUN_DLL_EXPORT_TYPED_FUNC``); nothing is
        prepended. Headers they include are tracked: editing one gives a fresh build.
    extra_cflags, extra_cuda_cflags, extra_ldflags, extra_include_paths, build_directory
        As for :func:`build_inline`.

    Returns
    -------
    str
        Path of the built library (cached as for :func:`build_inline`).
    """
    _check_name(name)
    files = [os.path.abspath(p) for p in _str_list(sources, "sources")]
    if not files:
        raise ValueError("build needs at least one source file")
    for path in files:
        if not path.endswith((*_CPP_SUFFIXES, ".c", ".cu")):
            raise ValueError(f"source {path!r} is not a .cc/.cpp/.cxx/.c/.cu file")
    texts = []
    for path in files:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            texts.append((path, f.read()))
    request = _Request(
        name,
        any(p.endswith(".cu") for p in files),
        extra_cflags,
        extra_cuda_cflags,
        extra_ldflags,
        extra_include_paths,
        build_directory,
        tvm_ffi=_tvm_ffi_native([text for _, text in texts]),
    )

    def builder(tmp: str) -> list[str]:
        return run_plan(request.plan(os.path.join(tmp, f"{name}.so"), files), tmp)

    return request.run(request.key(texts), builder)


def load(
    name: str,
    sources: Sequence[str | os.PathLike] | str | os.PathLike,
    extra_cflags: Sequence[str] | None = None,
    extra_cuda_cflags: Sequence[str] | None = None,
    extra_ldflags: Sequence[str] | None = None,
    extra_include_paths: Sequence[str] | None = None,
    build_directory: str | os.PathLike | None = None,
) -> Module:
    """Like :func:`build`, then loads the library: returns ``packedfun.load_module(path)``."""
    path = build(
        name,
        sources,
        extra_cflags,
        extra_cuda_cflags,
        extra_ldflags,
        extra_include_paths,
        build_directory,
    )
    return _load_module(path)
