# Where the installed packedfun keeps its headers, runtime library and CMake package config.
"""Paths and compiler flags for building C/C++ code against the installed packedfun.

Used as a library (``packedfun.config.get_include_dir()``) or as a command::

    packedfun-config --includedir --cmakedir
    python -m packedfun.config --cxxflags --ldflags --libs

Each requested value is printed on its own line, in the order asked.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = [
    "get_cmake_dir",
    "get_cxxflags",
    "get_include_dir",
    "get_ldflags",
    "get_lib_dir",
    "get_libs",
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


def get_cxxflags() -> str:
    """Return the compiler flags for a C++ source that includes ``packedfun/packedfun.h``.

    Returns
    -------
    str
        Space-separated flags: the language standard and the include directory.
    """
    return f"-std=c++17 -I{get_include_dir()}"


def get_ldflags() -> str:
    """Return the linker flags that find ``libpackedfun.so`` at link time and at run time.

    Returns
    -------
    str
        Space-separated ``-L`` and ``-Wl,-rpath`` flags.
    """
    lib_dir = get_lib_dir()
    return f"-L{lib_dir} -Wl,-rpath,{lib_dir}"


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
    "cxxflags": (get_cxxflags, "C++ compiler flags"),
    "ldflags": (get_ldflags, "linker flags (-L and rpath)"),
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
