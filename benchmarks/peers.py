# Loads every benchmark peer and presents the core benchmark functions under the same names.
"""Peers of the side-by-side benchmark.

Each loaded peer is a :class:`Peer`: ``fn`` maps the core function names (``CORE_FUNCTIONS``) to
callables, ``register_global(name, f)`` makes a Python function callable by name from native code,
``error`` is the exception type ``raise_error`` raises, and ``raw`` is the underlying module or
package, for case files that need more than the core functions (containers, tensors, modules).
"""

from __future__ import annotations

import ctypes
import importlib
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

CORE_FUNCTIONS = (
    "nop",
    "add_int",
    "add3_int",
    "echo_float",
    "str_len",
    "apply",
    "call_global",
    "raise_error",
)


@dataclass
class Peer:
    """One peer's view of the core benchmark functions."""

    name: str
    fn: dict
    register_global: Callable[[str, Callable], None]
    error: type = ValueError
    raw: Any = None


@dataclass
class Peers:
    """The peers that loaded, and why each other one is missing."""

    loaded: dict = field(default_factory=dict)  # name -> Peer
    missing: dict = field(default_factory=dict)  # name -> reason

    def __iter__(self):
        return iter(self.loaded.values())


def _module_peer(name: str, module: Any) -> Peer:
    fn = {f: getattr(module, f) for f in CORE_FUNCTIONS}
    return Peer(name, fn, module.register_global, ValueError, module)


def _load_floor(out_dir: Path) -> Peer:
    return _module_peer("floor", importlib.import_module("pf_bench_floor"))


def _load_nanobind(out_dir: Path) -> Peer:
    return _module_peer("nanobind", importlib.import_module("pf_bench_nb"))


def _load_ctypes(out_dir: Path) -> Peer:
    lib = ctypes.CDLL(str(out_dir / "libpf_bench_ctypes.so"))
    callback = ctypes.CFUNCTYPE(None)
    i64, f64, cstr = ctypes.c_int64, ctypes.c_double, ctypes.c_char_p
    signatures = {
        "bench_nop_c": ([], None),
        "bench_add_int_c": ([i64, i64], i64),
        "bench_add3_int_c": ([i64, i64, i64], i64),
        "bench_echo_float_c": ([f64], f64),
        "bench_str_len_c": ([cstr, ctypes.c_size_t], i64),
        "bench_apply_c": ([callback], None),
        "bench_register_global_c": ([cstr, callback], ctypes.c_int),
        "bench_call_global_c": ([cstr], ctypes.c_int),
        "bench_raise_error_c": ([cstr, cstr], ctypes.c_int),
        "bench_last_error_c": ([], cstr),
    }
    for symbol, (argtypes, restype) in signatures.items():
        getattr(lib, symbol).argtypes = argtypes
        getattr(lib, symbol).restype = restype
    keep_alive: dict = {}

    def check(status: int, func: Any, args: tuple) -> int:
        if status != 0:
            raise ValueError(lib.bench_last_error_c().decode())
        return status

    lib.bench_raise_error_c.errcheck = check
    lib.bench_call_global_c.errcheck = check

    def str_len(s: str) -> int:
        data = s.encode()
        return lib.bench_str_len_c(data, len(data))

    def register_global(name: str, f: Callable) -> None:
        keep_alive[name] = callback(f)
        if lib.bench_register_global_c(name.encode(), keep_alive[name]) != 0:
            raise RuntimeError("ctypes peer: global table full")

    fn = {
        "nop": lib.bench_nop_c,
        "add_int": lib.bench_add_int_c,
        "add3_int": lib.bench_add3_int_c,
        "echo_float": lib.bench_echo_float_c,
        "str_len": str_len,
        "apply": lambda f: lib.bench_apply_c(callback(f)),
        "call_global": lambda name: lib.bench_call_global_c(name.encode()),
        "raise_error": lambda kind, msg: lib.bench_raise_error_c(kind.encode(), msg.encode()),
    }
    return Peer("ctypes", fn, register_global, ValueError, lib)


def _load_tvm_ffi(out_dir: Path) -> Peer:
    import tvm_ffi

    module = tvm_ffi.load_module(str(out_dir / "libpf_bench_tvmffi.so"))
    fn = {f: module.get_function(f) for f in CORE_FUNCTIONS}

    def register_global(name: str, f: Callable) -> None:
        tvm_ffi.register_global_func(name, f, override=True)

    return Peer("tvm-ffi", fn, register_global, ValueError, tvm_ffi)


_PACKEDFUN_NAMES = {
    "nop": "testing.nop",
    "add_int": "testing.add_int",
    "add3_int": "testing.add3_int",
    "echo_float": "testing.echo_float",
    "str_len": "testing.str_len",
    # A typed body taking one FunctionView, as the README teaches and as nanobind's apply is
    # written; the packed testing.apply(f, *args) has a row of its own (cases_core.py).
    "apply": "testing.apply_typed",
    "call_global": "testing.call_global",
    "raise_error": "testing.test_raise_error",
}


def _load_packedfun(out_dir: Path) -> Peer:
    import packedfun
    import packedfun.testing  # noqa: F401 - registers the testing.* functions

    get = packedfun.get_global_func
    fn = {key: get(name) for key, name in _PACKEDFUN_NAMES.items()}

    def register_global(name: str, f: Callable) -> None:
        packedfun.register_global_func(name, f, override=True)

    return Peer("packedfun", fn, register_global, ValueError, packedfun)


def _load_packedfun_ctypes(out_dir: Path) -> Peer:
    """packedfun's ctypes backend beside the compiled one (skipped when it is the one in use)."""
    import packedfun
    import packedfun.testing  # noqa: F401 - registers the testing.* functions

    if packedfun.BACKEND == "ctypes":
        raise RuntimeError("it is the backend in use (see the packedfun column)")
    backend = importlib.import_module("packedfun._ctypes.backend")
    fn = {key: backend.get_global_func(name) for key, name in _PACKEDFUN_NAMES.items()}

    def register_global(name: str, f: Callable) -> None:
        backend.set_global_func(name, backend.to_function(f), True, None)

    # Its error factory is installed only when it is the selected backend: catch any exception.
    return Peer("packedfun[ctypes]", fn, register_global, Exception, backend)


LOADERS = {
    "floor": _load_floor,
    "packedfun": _load_packedfun,
    "packedfun[ctypes]": _load_packedfun_ctypes,
    "tvm-ffi": _load_tvm_ffi,
    "nanobind": _load_nanobind,
    "ctypes": _load_ctypes,
}


def _ensure_packedfun_importable() -> None:
    """Fall back to the in-tree package (dev build) when packedfun is not installed."""
    if importlib.util.find_spec("packedfun") is None:
        in_tree = Path(__file__).resolve().parents[1] / "python"
        if (in_tree / "packedfun").is_dir():
            sys.path.insert(0, str(in_tree))


def load(out_dir: Path, build_missing: dict, only: set | None = None) -> Peers:
    """Load each peer that was built (or needs no build) and record why the others are missing."""
    peers = Peers(missing=dict(build_missing))
    if str(out_dir) not in sys.path:
        sys.path.insert(0, str(out_dir))
    os.environ.setdefault("TVM_FFI_DISABLE_TORCH_C_DLPACK", "1")
    _ensure_packedfun_importable()
    for name, loader in LOADERS.items():
        if (only and name not in only) or name in peers.missing:
            continue
        try:
            peers.loaded[name] = loader(out_dir)
        except Exception as exc:  # a peer that fails to load is reported, not fatal
            peers.missing[name] = f"{type(exc).__name__}: {exc}"
    return peers
