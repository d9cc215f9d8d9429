# The parameter-form matrix: every way a C++ author declares a parameter, against nanobind.
"""Run ``python benchmarks/param_forms.py [--quick] [--out FILE]``: prints a markdown table.

Each row is one parameter form (strings, callables, tensors, objects, containers) or error path,
written as its library's users write it (``benchmarks/forms/*.cc``):

- **packedfun (global)**: registered with ``PACKEDFUN_REGISTER_GLOBAL(...).set_body_typed(f)``,
  declared GIL-``hold`` as nanobind's functions are (``.gil(GILPolicy::kHold)``), called through
  ``packedfun.get_global_func(name)``;
- **packedfun (load_inline)**: the same body exported by ``packedfun.cpp.load_inline(...,
  functions=[...])``, made ``hold`` with ``mod.f.gil_policy = "hold"``, called as ``mod.f``;
- **nanobind**: nanobind's natural equivalent (``std::string_view``, ``const char*``,
  ``std::string``, ``nb::callable``, ``std::function``, ``nb::ndarray<>``, a bound class,
  ``std::vector``); the C++ error row twice, its body a named function (bound and registered by
  pointer: packedfun's global and nanobind alike) and a lambda (packedfun's global registers
  one, nanobind binds one; ``load_inline`` exports a named function either way);
- **tvm-ffi**: apache-tvm-ffi's equivalent where it has one, compiled by
  ``tvm_ffi.cpp.load_inline``.

All peers of a row are timed round-robin in one process (``harness.measure``: short samples,
the empty loop of the same round subtracted, medians). Peers that are not installed are left out.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402
from build_peers import build_target, installed  # noqa: E402
from harness import Case, call_loop, empty_loop, measure, raise_loop  # noqa: E402
from peers import _ensure_packedfun_importable  # noqa: E402

_ensure_packedfun_importable()  # the installed package, else the in-tree dev build

FORMS = HERE / "forms"
PEERS = ["nanobind", "packedfun (global)", "packedfun (load_inline)", "tvm-ffi"]
TEN_CHARS = "abcdefghij"
LIST10 = list(range(10))


def f0() -> int:
    return 1


def f1(x: int) -> int:
    return x + 1


def f3(x: int, y: int, z: int) -> int:
    return x


def raiser() -> int:
    raise ValueError("benchmark error")


# (row, function name, arguments; "PAIR" stands for the peer's own Pair instance). A peer without
# the function name has no equivalent form (the cell stays empty).
ROWS = [
    ("str: `String` by value, body reads `size()`", "str_size", (TEN_CHARS,)),
    ("str: `const String&`, `size()`", "str_cref_size", (TEN_CHARS,)),
    ("str: `String`, `strlen(s.c_str())`", "str_cstr", (TEN_CHARS,)),
    ("str: `const String&`, copied to `std::string`", "str_copy", (TEN_CHARS,)),
    ("str: `std::string` by value, `size()`", "std_str_size", (TEN_CHARS,)),
    ("str: `const std::string&`, `strlen(c_str())`", "std_str_cref_cstr", (TEN_CHARS,)),
    ("str: `std::string_view`, `size()`", "sv_size", (TEN_CHARS,)),
    ("callable: `Function`, called with 0 args", "fn0", (f0,)),
    ("callable: `Function`, 1 arg", "fn1", (f1, 1)),
    ("callable: `Function`, 3 args", "fn3", (f3, 1)),
    ("callable: `const Function&`, 1 arg", "fn1_cref", (f1, 1)),
    ("callable: `FunctionView`, 0 args", "view0", (f0,)),
    ("callable: `FunctionView`, 1 arg", "view1", (f1, 1)),
    ("callable: `FunctionView`, 3 args", "view3", (f3, 1)),
    ("callable: `TypedFunction<int64_t(int64_t)>`, 1 arg", "typed1", (f1, 1)),
    ("callable: `TypedFunction<...(3 args)>`, 3 args", "typed3", (f3, 1)),
    ("tensor: `TensorView` (NumPy float32[16])", "tview", ("ARRAY",)),
    ("tensor: `Tensor` by value", "tensor", ("ARRAY",)),
    ("tensor: `const Tensor&`", "tensor_cref", ("ARRAY",)),
    ("object: `ObjectRef` subclass by value", "obj", ("PAIR",)),
    ("object: `const ObjectRef&` subclass", "obj_cref", ("PAIR",)),
    ("list[int] of 10: `Array<int64_t>`", "arr_sum", (LIST10,)),
    ("list[int] of 10: `const std::vector<int64_t>&`", "vec_sum", (LIST10,)),
]
ERROR_ROWS = [
    ("error: C++ `ValueError` caught in Python (named function)", "raise_value_error", (1,)),
    ("error: C++ `ValueError` caught in Python (lambda)", "raise_value_error_lambda", (1,)),
    ("error: Python callback raises, caught by the outer caller", "call_raiser", (raiser,)),
]
# nanobind's natural form for a packedfun-only spelling (its by-value and const& forms are one).
NB_ALIASES = {"str_cref_size": "str_size", "tensor": "tview", "obj_cref": "obj",
              "arr_sum": "vec_sum", "view0": "fn0", "view1": "fn1", "view3": "fn3"}  # fmt: skip
TVM_ALIASES = {"sv_size": "str_size", "view0": "fn0", "view1": "fn1", "view3": "fn3",
               "vec_sum": "arr_sum", "raise_value_error_lambda": "raise_value_error"}  # fmt: skip
PF_EXPORTS = sorted({name for _, name, _ in ROWS + ERROR_ROWS} | {"make_pair"})


def load_packedfun(build_dir: Path) -> tuple[dict, dict]:
    import packedfun.cpp  # after _ensure_packedfun_importable

    source = (FORMS / "packedfun_forms.cc").read_text()
    mod = packedfun.cpp.load_inline(
        "bench_forms", cpp_sources=source, functions=PF_EXPORTS, build_directory=build_dir
    )
    inline, glob = {}, {}
    for name in PF_EXPORTS:
        f = getattr(mod, name)
        f.gil_policy = "hold"  # as the globals declare it in C++
        inline[name] = f
        glob[name] = packedfun.get_global_func(f"bench_forms.{name}")
    return glob, inline


def load_nanobind() -> tuple[dict | None, str]:
    if not installed("nanobind"):
        return None, "nanobind is not installed"
    out, log = build_target("pf_bench_nb_forms")
    if out is None:
        return None, "build of pf_bench_nb_forms failed:\n" + log
    sys.path.insert(0, str(out))
    import pf_bench_nb_forms as nb

    fns = {name: getattr(nb, NB_ALIASES.get(name, name), None) for name in PF_EXPORTS}
    return {k: v for k, v in fns.items() if v is not None}, ""


def load_tvm_ffi(build_dir: Path) -> tuple[dict | None, str]:
    if not installed("tvm_ffi"):
        return None, "apache-tvm-ffi is not installed"
    try:
        import tvm_ffi.cpp
    except Exception as err:  # packedfun standing in for it, or a broken install
        return None, f"tvm_ffi.cpp cannot be imported: {err}"
    source = (FORMS / "tvmffi_forms.cc").read_text()
    names = sorted({TVM_ALIASES.get(n, n) for n in PF_EXPORTS} - {"make_pair", "obj", "obj_cref"})
    names = [n for n in names if f" {n}(" in source]
    mod = tvm_ffi.cpp.load_inline(
        "bench_forms_tvmffi", cpp_sources=source, functions=names, build_directory=str(build_dir)
    )
    fns = {}
    for name in PF_EXPORTS:
        target = TVM_ALIASES.get(name, name)
        if target in names:
            fns[name] = getattr(mod, target)
    return fns, ""


def _args(args: tuple, peer: str, pairs: dict, array) -> tuple:
    return tuple(pairs[peer] if a == "PAIR" else array if a == "ARRAY" else a for a in args)


def make_cases(peers: dict, only: list | None = None) -> list:
    array = np.arange(16, dtype="float32")
    pairs = {}
    for peer, fns in peers.items():
        pairs[peer] = fns["make_pair"](3, 4) if "make_pair" in fns else None
    cases = []
    for label, name, args in ROWS + ERROR_ROWS:
        if only and not any(word in label for word in only):
            continue
        loops = {}
        for peer, fns in peers.items():
            if name not in fns or ("PAIR" in args and pairs[peer] is None):
                continue
            peer_args = _args(args, peer, pairs, array)
            if (label, name, args) in ERROR_ROWS:
                try:
                    fns[name](*peer_args)
                except ValueError:
                    pass
                else:
                    raise AssertionError(f"{peer}: {name} did not raise ValueError")
                loops[peer] = raise_loop(fns[name], ValueError, *peer_args)
            else:
                got = fns[name](*peer_args)
                want = peers["packedfun (global)"][name](
                    *_args(args, "packedfun (global)", pairs, array)
                )
                if got != want:
                    raise AssertionError(f"{peer}: {name} returned {got!r}, expected {want!r}")
                loops[peer] = call_loop(fns[name], *peer_args)
        catch = ValueError if (label, name, args) in ERROR_ROWS else None
        cases.append(Case(label, loops, empty_loop(len(args), catch=catch),
                          min_sample_ms=5.0 if catch else 0.0))  # fmt: skip
    return cases


def _cell(ns: float | None) -> str:
    return "—" if ns is None else f"{ns:,.1f}"


def table(results: list, columns: list) -> str:
    head = ["form", *columns, "packedfun / nanobind", "tvm-ffi / packedfun"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        ns = r.ns
        pf = ns.get("packedfun (global)")
        inline = ns.get("packedfun (load_inline)")
        worst = max(v for v in (pf, inline) if v is not None)
        nb, tvm = ns.get("nanobind"), ns.get("tvm-ffi")
        vs_nb = f"{worst / nb:.2f}" if nb and worst else "—"  # 0: below the empty loop's noise
        vs_tvm = f"{tvm / worst:.1f}×" if tvm and worst else "—"
        cells = [_cell(ns.get(c)) for c in columns]
        lines.append("| " + " | ".join([r.case.name, *cells, vs_nb, vs_tvm]) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few rounds (a smoke run)")
    parser.add_argument("--repeat", type=int, default=0, help="samples per peer and row")
    parser.add_argument("--sample-ms", type=float, default=0.5, help="shortest sample")
    parser.add_argument("--out", type=Path, help="also write the table to this file")
    parser.add_argument(
        "--rows", action="append", help="only the rows whose label contains this (repeatable)"
    )
    opts = parser.parse_args()
    repeat = opts.repeat or (5 if opts.quick else 31)
    work = HERE / "_build" / "forms"
    work.mkdir(parents=True, exist_ok=True)
    glob, inline = load_packedfun(work / "packedfun")
    peers = {"packedfun (global)": glob, "packedfun (load_inline)": inline}
    missing = []
    for name, (fns, why) in (
        ("nanobind", load_nanobind()),
        ("tvm-ffi", load_tvm_ffi(work / "tvmffi")),
    ):
        if fns is None:
            missing.append(f"{name}: {why}")
        else:
            peers[name] = fns
    results = [measure(case, repeat, opts.sample_ms * 1e6) for case in make_cases(peers, opts.rows)]
    columns = [p for p in PEERS if p in peers]
    text = "\n".join([
        f"Parameter forms, ns per call (median of {repeat} interleaved samples; "
        f"{platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}). The ratio columns use the slower "
        "of packedfun's two routes.",
        "",
        table(results, columns),
        *([""] + [f"Not measured: {m}" for m in missing] if missing else []),
    ])  # fmt: skip
    print(text)
    if opts.out:
        opts.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
