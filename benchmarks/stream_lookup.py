# Measures the stream lookup of a call with a CUDA tensor (issue 11), on a CPU-only machine.
"""``python benchmarks/stream_lookup.py`` builds ``stream/fake_device.c``, a fake array framework
whose tensors claim any device and whose DLPack C exchange API answers a fake current stream per
device (as torch's does for CUDA tensors), and a packedfun function ``tensor_ndim(TensorView)``.

It then times, interleaved in this one process (``harness.measure``), ``f(x)`` with ``x`` a fake
``cuda:0`` tensor against the same call with the same framework's ``cpu`` tensor: the only
difference is packedfun's stream step (ask the framework for its current stream of the device, set
the thread's stream slot, restore it after the call). Target: ≤ 50 ns. It runs in a process of
its own because packedfun's fast path follows one exchange-API framework per process (torch would
take the fake framework's place in ``benchmarks/run.py``)."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

HERE = Path(__file__).resolve().parent
BUILD = HERE / "_build" / "stream"
PF_SOURCE = r"""
int64_t tensor_ndim(packedfun::TensorView x) { return x->ndim; }
int64_t tensor_stream(packedfun::TensorView x) {
  return static_cast<int64_t>(reinterpret_cast<intptr_t>(packedfun::EnvGetStream(x->device)));
}
"""


def _fake_device(include: Path):
    out = BUILD / ("pf_bench_fake_device" + sysconfig.get_config_var("EXT_SUFFIX"))
    if not out.exists():
        cc = os.environ.get("CC") or shutil.which("cc") or "gcc"
        source = HERE / "stream" / "fake_device.c"
        cmd = [cc, "-O2", "-shared", "-fPIC", "-I", sysconfig.get_paths()["include"],
               "-I", str(include), str(source), "-o", str(out)]  # fmt: skip
        subprocess.run(cmd, check=True)
    sys.path.insert(0, str(BUILD))
    import pf_bench_fake_device

    return pf_bench_fake_device


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=201)
    parser.add_argument("--sample-ms", type=float, default=0.5)
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    if "packedfun" not in sys.modules:
        try:
            import packedfun  # noqa: F401
        except ImportError:
            sys.path.insert(0, str(HERE.parent / "python"))
    import packedfun
    import packedfun.cpp
    from harness import Case, Target, call_loop, measure

    BUILD.mkdir(parents=True, exist_ok=True)
    fake = _fake_device(Path(packedfun.__file__).parent / "include")
    mod = packedfun.cpp.load_inline("bench_stream", cpp_sources=PF_SOURCE,
                                    functions=["tensor_ndim", "tensor_stream"],
                                    build_directory=str(BUILD))  # fmt: skip
    cuda, cpu = fake.FakeTensor(2, 0), fake.FakeTensor(1, 0)
    # The callee sees the framework's stream for the CUDA tensor, none for the CPU one.
    assert mod.tensor_stream(cuda) == 0xC0DE00, hex(mod.tensor_stream(cuda))
    assert mod.tensor_stream(cpu) == 0 and mod.tensor_ndim(cuda) == 1
    assert packedfun.current_stream("cuda:0") == 0  # restored after the call
    f = mod.tensor_ndim
    target = Target("≤ 50 ns", max_us=0.05)
    case = Case("stream lookup: f(cuda tensor) − f(cpu tensor)", {"packedfun": call_loop(f, cuda)},
                call_loop(f, cpu), target)  # fmt: skip
    base = Case("f(cpu tensor of the same framework)", {"packedfun": call_loop(f, cpu)},
                call_loop(lambda x: None, cpu))  # fmt: skip
    load = os.getloadavg()[0]
    rows = [measure(c, args.repeat, args.sample_ms * 1e6) for c in (base, case)]
    print(f"load average at start: {load:.2f} on {os.cpu_count()} cores; {args.repeat} "
          f"interleaved samples of ~{args.sample_ms} ms, medians (q1-q3)\n")  # fmt: skip
    print("| case | packedfun | target | met |\n|---|---:|---|---|")
    for r in rows:
        ns = r.ns["packedfun"]
        q1, q3 = r.spread["packedfun"]
        ok = r.case.target.check(r.ns) if r.case.target else None
        met = "" if ok is None else ("yes" if ok else "**no**")
        text = r.case.target.text if r.case.target else ""
        print(f"| {r.case.name} | {ns:.1f} ns ({q1:.1f}-{q3:.1f}) | {text} | {met} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
