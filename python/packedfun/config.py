# Where the installed packedfun keeps its headers, runtime library and CMake package config.
"""Paths and compiler flags for building C/C++ code against the installed packedfun.

Used as a library (``packedfun.config.get_include_dir()``) or as a command::

    packedfun-config --includedir --cmakedir
    python -m packedfun.config --cxxflags --ldflags --libs

Each requested value is printed on its own line, in the order asked. The linker line of
``--ldflags`` spells the run-time search path as ``-Xlinker -rpath -Xlinker DIR``, a form that
gcc, clang and nvcc all accept (nvcc rejects ``-Wl,...``); ``--rpath`` prints the bare directory
for those who write their own flag.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = [
    "get_cflags",
    "get_cmake_dir",
    "get_cxxflags",
    "get_include_dir",
    "get_ldflags",
    "get_lib_dir",
    "get_libs",
    "get_rpath",
    "main",
]

_PACKAGE_DIR = Path(__file__).resolve().parent


def get_include_dir() -> str:
    """Return the directory holding ``packedfun/*.h`` and ``dlpack/dlpack.h``.

    Returns
    -------
    str
        Absolute path, to be passed as ``-I``.
    """
    return str(_PACKAGE_DIR / "include")


def get_lib_dir() -> str:
    """Return the directory holding ``libpackedfun.so``.

    Returns
    -------
    str
        Absolute path, to be passed as ``-L`` (and as an rpath).
    """
    return str(_PACKAGE_DIR / "lib")


def get_cmake_dir() -> str:
    """Return the directory holding ``packedfunConfig.cmake``.

    Returns
    -------
    str
        Absolute path, for ``-Dpackedfun_DIR=...`` so ``find_package(packedfun CONFIG)`` finds it.
    """
    return str(_PACKAGE_DIR / "share" / "cmake" / "packedfun")


def get_cflags() -> str:
    """Return the compiler flags for a C source that includes ``packedfun/c_api.h``.

    Returns
    -------
    str
        The include directory as ``-I``; no language standard (the C ABI header is C11-clean and
        a C++ standard flag would make a C compiler warn).
    """
    return f"-I{get_include_dir()}"


def get_cxxflags() -> str:
    """Return the compiler flags for a C++ source that includes ``packedfun/packedfun.h``.

    Returns
    -------
    str
        Space-separated flags: the language standard and the include directory.
    """
    return f"-std=c++17 -I{get_include_dir()}"


def get_rpath() -> str:
    """Return the run-time search path that finds ``libpackedfun.so``: the library directory.

    Returns
    -------
    str
        Absolute path, to embed as an rpath in a program or library linked against packedfun.
    """
    return get_lib_dir()


def get_ldflags() -> str:
    """Return the linker flags that find ``libpackedfun.so`` at link time and at run time.

    The rpath is passed as ``-Xlinker -rpath -Xlinker DIR``: gcc, clang and nvcc all forward
    ``-Xlinker`` arguments to the linker, while nvcc rejects the ``-Wl,`` spelling.

    Returns
    -------
    str
        Space-separated ``-L`` and rpath flags.
    """
    lib_dir = get_lib_dir()
    return f"-L{lib_dir} -Xlinker -rpath -Xlinker {get_rpath()}"


def get_libs() -> str:
    """Return the libraries to link: the packedfun runtime.

    Returns
    -------
    str
        ``-lpackedfun``.
    """
    return "-lpackedfun"


_QUERIES = {
    "includedir": (get_include_dir, "directory of the C/C++ headers"),
    "libdir": (get_lib_dir, "directory of libpackedfun.so"),
    "cmakedir": (get_cmake_dir, "directory of packedfunConfig.cmake (use as packedfun_DIR)"),
    "cflags": (get_cflags, "C compiler flags"),
    "cxxflags": (get_cxxflags, "C++ compiler flags"),
    "ldflags": (get_ldflags, "linker flags (-L and an rpath gcc, clang and nvcc accept)"),
    "rpath": (get_rpath, "run-time search path of libpackedfun.so (a directory)"),
    "libs": (get_libs, "libraries to link"),
}


class _Ordered(argparse.Action):
    """Record each query in the order it appears on the command line."""

    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[no-untyped-def]
        namespace.queries.append(self.dest)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="packedfun-config",
        description="Print paths and flags for building against the installed packedfun.",
    )
    parser.set_defaults(queries=[])
    for name, (_, help_text) in _QUERIES.items():
        parser.add_argument(f"--{name}", dest=name, nargs=0, action=_Ordered, help=help_text)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the ``packedfun-config`` command.

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name; ``sys.argv[1:]`` when omitted.

    Returns
    -------
    int
        Exit status: 0 on success, 2 when no query was given.
    """
    parser = _parser()
    args = parser.parse_args(argv)
    if not args.queries:
        parser.print_usage(sys.stderr)
        print("packedfun-config: error: give at least one option, e.g. --cmakedir", file=sys.stderr)
        return 2
    for name in args.queries:
        print(_QUERIES[name][0]())
    return 0


if __name__ == "__main__":
    sys.exit(main())
