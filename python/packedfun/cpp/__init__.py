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
_OBJECT_SUFFIXES = (".o", ".obj")


def _check_output(output: object) -> str | None:
    """``output`` (a file name inside the build folder; ``.o``/``.obj``: an object file, no link)
    checked: None, or a plain file name."""
    if output is None:
        return None
    if not isinstance(output, str):
        raise TypeError(f"output must be a str (a file name), got {type(output).__name__}")
    if not output or os.path.basename(output) != output or output in (".", ".."):
        raise ValueError(f"output must be a file name without a folder, got {output!r}")
    return output


#: Symbol names (NUL-separated in an object's string table) of tvm-ffi code and of packedfun code.
_TVM_FFI_SYMBOL = re.compile(rb"\x00(?:TVMFFI\w*|__tvm_ffi_\w*|_Z\w*3tvm3ffi\w*)\x00")
_PACKEDFUN_SYMBOL = re.compile(rb"\x00(?:PF[A-Z]\w*|__packedfun_\w*|_Z\w*9packedfun\w*)\x00")


def _object_written_for_tvm_ffi(data: bytes) -> bool:
    """Whether a prebuilt object file is tvm-ffi code (so it links to libtvm_ffi.so): its symbols
    name a tvm-ffi export (``__tvm_ffi_*``), a ``TVMFFI*`` C function or the ``tvm::ffi``
    namespace, and nothing of packedfun's (``PF*``, ``__packedfun_*``, ``packedfun::``)."""
    return bool(_TVM_FFI_SYMBOL.search(data)) and not _PACKEDFUN_SYMBOL.search(data)


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
    return _codegen.written_for_tvm_ffi(sources) and _tvm_ffi_installed()


def _tvm_ffi_installed() -> bool:
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
        self.probed_cflags = _probe.local_binding_flags(self.cxx, probe_dir)
        self.identity += ["probed_cflags", *self.probed_cflags]
        self.cuda_cflags: list[str] = []
        if tvm_ffi:
            # Sources written for apache-tvm-ffi: built against its own headers and library, as
            # its load_inline would, and loaded through packedfun's tvm-ffi bridge.
            paths = _tvm_compat.tvm_ffi_paths()
            lib = paths["lib"]
            includes.append(paths["include"])
            # --no-as-needed: a library that calls nothing of libtvm_ffi (a C export alone)
            # still names it, so loading it finds libtvm_ffi and the bridge reads that.
            self.ldflags = [f"-L{lib}", "-Wl,--push-state,--no-as-needed", "-ltvm_ffi",
                            "-Wl,--pop-state", f"-Wl,-rpath,{lib}"]  # fmt: skip
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
            probed_cflags=self.probed_cflags,
            cuda_cflags=self.cuda_cflags,
            ldflags=self.ldflags,
            object_output=output.endswith(_OBJECT_SUFFIXES),
        )
        for path in files:
            if path.endswith(_OBJECT_SUFFIXES):
                plan.object_files.append(path)
            elif path.endswith(".cu"):
                plan.cuda_files.append(path)
            elif path.endswith(".c"):
                plan.c_files.append(path)
            else:
                plan.cpp_files.append(path)
        return plan

    def run(self, key: str, builder, filename: str | None = None) -> str:
        name_dir = os.path.join(self.root, self.name)
        found = _cache.lookup(name_dir, self.name, key, filename)
        if found is not None:
            return found
        return _cache.build_locked(name_dir, self.name, key, builder, self.stable_roots, filename)


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
    output: str | None = None,
) -> str:
    """Compiles inline C++/CUDA sources into a shared library and returns its path.

    Parameters
    ----------
    name : str
        Name of the library (``<name>.so``); letters, digits, ``_``, ``.`` and ``-``.
    cpp_sources, cuda_sources : str or list of str, optional
        C++ and CUDA source text. Both get ``#include <packedfun/packedfun.h>`` in front.
    functions : str, list of str or dict of str to str, optional
        Plain C++ functions to export under their own names (a dict maps names to docstrings;
        an empty one exports none).
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
    output : str, optional
        The built file's name (apache-tvm-ffi's keyword), in place of ``<name>.so``. A name
        ending in ``.o`` or ``.obj`` builds a relocatable object file instead of a library (no
        link), for a later :func:`build` to link with other sources.

    Returns
    -------
    str
        Path of the built library: ``<root>/<name>/<key>/<name>.so`` (or ``<output>``). The
        key hashes the sources, functions, flags, include paths, compiler identity and version,
        nvcc and CUDA architectures when used, and packedfun's ABI version; a warm hit starts no
        process.

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
    output = _check_output(output)
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
        return run_plan(request.plan(os.path.join(tmp, output or f"{name}.so"), files), tmp)

    key_parts = [*texts, ("output", output)] if output else texts
    try:
        return request.run(request.key(key_parts), builder, output)
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
    *,
    output: str | None = None,
) -> str:
    """Compiles source files into a shared library and returns its path.

    Parameters
    ----------
    name : str
        Name of the library.
    sources : path or list of paths
        ``.cu`` files go to nvcc, ``.c`` files are compiled as C11, the rest as C++17; ``.o``
        and ``.obj`` files (objects built before, e.g. by ``build_inline(..., output="x.o")``)
        are linked as they are. The files export their functions themselves
        (``PACKEDFUN_DLL_EXPORT_TYPED_FUNC``); nothing is prepended. Headers they include are
        tracked: editing one gives a fresh build.
    extra_cflags, extra_cuda_cflags, extra_ldflags, extra_include_paths, build_directory
        As for :func:`build_inline`.
    output : str, optional
        As for :func:`build_inline`: the built file's name; ``.o``/``.obj`` for an object file.

    Returns
    -------
    str
        Path of the built library, or object file (cached as for :func:`build_inline`).
    """
    _check_name(name)
    output = _check_output(output)
    files = [os.path.abspath(p) for p in _str_list(sources, "sources")]
    if not files:
        raise ValueError("build needs at least one source file")
    for path in files:
        if not path.endswith((*_CPP_SUFFIXES, ".c", ".cu", *_OBJECT_SUFFIXES)):
            raise ValueError(f"source {path!r} is not a .cc/.cpp/.cxx/.c/.cu/.o file")
    texts = []
    tvm_objects = []  # for each object file: whether it is tvm-ffi code (its symbols say)
    for path in files:
        if path.endswith(_OBJECT_SUFFIXES):
            with open(path, "rb") as fb:
                data = fb.read()
            tvm_objects.append(_object_written_for_tvm_ffi(data))
            texts.append((path, _cache.hash_parts([data])))  # the key covers its content
            continue
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            texts.append((path, f.read()))
    sources_text = [text for p, text in texts if not p.endswith(_OBJECT_SUFFIXES)]
    if sources_text:
        native = _tvm_ffi_native(sources_text)
    else:  # objects alone: tvm-ffi code when they all are (and apache-tvm-ffi is installed)
        native = all(tvm_objects) and _tvm_ffi_installed()
    request = _Request(
        name,
        any(p.endswith(".cu") for p in files),
        extra_cflags,
        extra_cuda_cflags,
        extra_ldflags,
        extra_include_paths,
        build_directory,
        tvm_ffi=native,
    )

    def builder(tmp: str) -> list[str]:
        return run_plan(request.plan(os.path.join(tmp, output or f"{name}.so"), files), tmp)

    key_parts = [*texts, ("output", output)] if output else texts
    return request.run(request.key(key_parts), builder, output)


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
