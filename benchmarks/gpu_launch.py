# GPU speed rows: host-side cost of launching a trivial CUDA kernel through each FFI, and
# load_inline cold/warm build times. Needs a CUDA GPU, CUDA torch and nvcc (tools/gpu_check/run.py).
"""Host-side launch cost: one Python call with two torch CUDA tensors that launches an empty kernel
on the caller's stream and returns, through

* packedfun (``packedfun.cpp.load_inline``; the stream is torch's current one, which the compiled
  backend passes in the calling environment),
* apache-tvm-ffi (``tvm_ffi.cpp.load_inline``; ``TVMFFIEnvGetStream``),
* nanobind (``nb::ndarray`` parameters; nanobind has no stream of its own, so the stream handle is
  a third argument, looked up once before the loop: an advantage, the table says so),
* pybind11 through ``torch.utils.cpp_extension.load_inline`` (``at::Tensor`` parameters,
  ``c10::cuda::getCurrentCUDAStream()``: the way torch documents pybind11 extensions),
* a ``torch.library`` custom op (``TORCH_LIBRARY`` + a CUDA impl, called as ``torch.ops.ns.op``),

against the floor: ``cudaLaunchKernel`` of the same kernel on the same stream in a C++ loop (the
per-launch time of that loop). Each sample times K calls (K below the launch queue's depth, so the
host never waits for the GPU) after a synchronize; samples go round-robin over the peers, the
median per call is reported, with the empty Python loop subtracted.

Build times: each peer's module is built cold in a child process with a fresh build directory
(imports done before the clock starts), then built again warm (a cache hit or a no-op rebuild).
Every module holds the same two kernels (add one, empty); each computes ``x + 1`` right before it
is timed.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if not os.environ.get("PACKEDFUN_BENCH_INSTALLED"):
    try:
        import packedfun  # noqa: F401
    except ImportError:
        sys.path.insert(0, os.path.join(ROOT, "python"))

KERNELS = r"""
__global__ void pf_add_one_kernel(const float* x, float* y, int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + 1.0f;
}
__global__ void pf_empty_kernel() {}
"""

PACKEDFUN_SRC = (
    "#include <cuda_runtime.h>\n#include <chrono>\n"
    + KERNELS
    + r"""
void add_one(packedfun::TensorView x, packedfun::TensorView y) {
  int64_t n = x->shape[0];
  auto s = static_cast<cudaStream_t>(packedfun::EnvGetStream(x->device));
  pf_add_one_kernel<<<(n + 255) / 256, 256, 0, s>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
}
void launch_empty(packedfun::TensorView x, packedfun::TensorView y) {
  pf_empty_kernel<<<1, 1, 0, static_cast<cudaStream_t>(packedfun::EnvGetStream(x->device))>>>();
}
// The floor: `count` cudaLaunchKernel calls on the caller's stream from C++; the loop's ns.
int64_t floor_launch_ns(packedfun::TensorView x, int64_t count) {
  auto s = static_cast<cudaStream_t>(packedfun::EnvGetStream(x->device));
  auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < count; ++i) {
    cudaLaunchKernel(reinterpret_cast<const void*>(pf_empty_kernel), dim3(1), dim3(1), nullptr, 0,
                     s);
  }
  auto t1 = std::chrono::steady_clock::now();
  PACKEDFUN_CHECK(cudaGetLastError() == cudaSuccess) << "floor: a launch failed";
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
}
"""
)

TVM_FFI_SRC = (
    "#include <cuda_runtime.h>\n#include <tvm/ffi/container/tensor.h>\n"
    "#include <tvm/ffi/extra/c_env_api.h>\n#include <tvm/ffi/function.h>\n"
    + KERNELS
    + r"""
static cudaStream_t StreamOf(DLDevice d) {
  return static_cast<cudaStream_t>(TVMFFIEnvGetStream(d.device_type, d.device_id));
}
void AddOne(tvm::ffi::TensorView x, tvm::ffi::TensorView y) {
  int64_t n = x.shape()[0];
  pf_add_one_kernel<<<(n + 255) / 256, 256, 0, StreamOf(x.device())>>>(
      static_cast<const float*>(x.data_ptr()), static_cast<float*>(y.data_ptr()), n);
}
void LaunchEmpty(tvm::ffi::TensorView x, tvm::ffi::TensorView y) {
  pf_empty_kernel<<<1, 1, 0, StreamOf(x.device())>>>();
}
TVM_FFI_DLL_EXPORT_TYPED_FUNC(add_one, AddOne);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(launch_empty, LaunchEmpty);
"""
)

TORCH_CUDA_SRC = (
    "#include <torch/types.h>\n#include <c10/cuda/CUDAStream.h>\n"
    + KERNELS
    + r"""
void add_one(torch::Tensor x, torch::Tensor y) {
  int64_t n = x.numel();
  pf_add_one_kernel<<<(n + 255) / 256, 256, 0, c10::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), n);
}
void launch_empty(torch::Tensor x, torch::Tensor y) {
  pf_empty_kernel<<<1, 1, 0, c10::cuda::getCurrentCUDAStream()>>>();
}
"""
)
TORCH_CPP_SRC = r"""
#include <torch/library.h>
void add_one(torch::Tensor x, torch::Tensor y);
void launch_empty(torch::Tensor x, torch::Tensor y);
TORCH_LIBRARY(pf_gpu_bench, m) { m.def("launch_empty(Tensor x, Tensor y) -> ()"); }
TORCH_LIBRARY_IMPL(pf_gpu_bench, CUDA, m) { m.impl("launch_empty", &launch_empty); }
"""

NB_CUDA_SRC = (
    "#include <cuda_runtime.h>\n#include <cstdint>\n"
    + KERNELS
    + r"""
void pf_nb_add_one(const float* x, float* y, int64_t n, void* s) {
  pf_add_one_kernel<<<(n + 255) / 256, 256, 0, static_cast<cudaStream_t>(s)>>>(x, y, n);
}
void pf_nb_launch_empty(void* s) { pf_empty_kernel<<<1, 1, 0, static_cast<cudaStream_t>(s)>>>(); }
"""
)
NB_BINDING_SRC = r"""
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <cstdint>
namespace nb = nanobind;
using CudaVec = nb::ndarray<float, nb::ndim<1>, nb::device::cuda>;
void pf_nb_add_one(const float* x, float* y, int64_t n, void* s);
void pf_nb_launch_empty(void* s);
NB_MODULE(pf_nb_gpu_bench, m) {
  m.def("add_one", [](CudaVec x, CudaVec y, uintptr_t s) {
    pf_nb_add_one(x.data(), y.data(), static_cast<int64_t>(x.shape(0)), reinterpret_cast<void*>(s));
  });
  m.def("launch_empty", [](CudaVec x, CudaVec y, uintptr_t s) {
    pf_nb_launch_empty(reinterpret_cast<void*>(s));
  });
}
"""


def _arch() -> str:
    return os.environ.get("PACKEDFUN_CUDA_ARCH", "90").replace("sm_", "").replace(".", "")


def _cuda_home() -> str:
    from packedfun.cpp import _build

    return os.environ.get("CUDA_HOME") or _build.cuda_home(_build.find_nvcc())


# ---- builds (each peer's cold build runs in a child: _BUILD_CHILD) ----------------------------


def build_packedfun(build_dir: str):
    import packedfun.cpp

    return packedfun.cpp.load_inline(
        "pf_gpu_bench",
        cuda_sources=PACKEDFUN_SRC,
        functions=["add_one", "launch_empty", "floor_launch_ns"],
        build_directory=build_dir,
    )


def build_tvm_ffi(build_dir: str):
    import tvm_ffi.cpp

    return tvm_ffi.cpp.load_inline("pf_gpu_bench_tvm", cuda_sources=TVM_FFI_SRC,
                                   build_directory=build_dir)  # fmt: skip


def build_torch(build_dir: str):
    from torch.utils import cpp_extension

    return cpp_extension.load_inline(
        "pf_gpu_bench_torch",
        cpp_sources=TORCH_CPP_SRC,
        cuda_sources=TORCH_CUDA_SRC,
        functions=["add_one", "launch_empty"],
        build_directory=build_dir,
        verbose=False,
    )


def build_nanobind(build_dir: str):
    import importlib.util

    import nanobind

    ext = sysconfig.get_config_var("EXT_SUFFIX")
    out = os.path.join(build_dir, "pf_nb_gpu_bench" + ext)
    if not os.path.exists(out):
        cu, cpp = os.path.join(build_dir, "launch.cu"), os.path.join(build_dir, "binding.cpp")
        with open(cu, "w") as f:
            f.write(NB_CUDA_SRC)
        with open(cpp, "w") as f:
            f.write(NB_BINDING_SRC)
        home = _cuda_home()
        nvcc = os.path.join(home, "bin", "nvcc")
        obj = os.path.join(build_dir, "launch.o")
        arch = _arch()
        subprocess.run([nvcc, "-O3", "-std=c++17", "-Xcompiler", "-fPIC", "-c", cu, "-o", obj,
                        f"-gencode=arch=compute_{arch},code=sm_{arch}"], check=True)  # fmt: skip
        nb_root = os.path.dirname(nanobind.include_dir())
        subprocess.run([os.environ.get("CXX", "c++"), "-O3", "-DNDEBUG", "-std=c++17", "-shared",
                        "-fPIC", "-fvisibility=hidden", "-DNB_COMPACT_ASSERTIONS",
                        f"-I{nanobind.include_dir()}",
                        f"-I{os.path.join(nb_root, 'ext', 'robin_map', 'include')}",
                        f"-I{sysconfig.get_paths()['include']}",
                        os.path.join(nanobind.source_dir(), "nb_combined.cpp"), cpp, obj,
                        f"-L{os.path.join(home, 'lib64')}", "-lcudart",
                        f"-Wl,-rpath,{os.path.join(home, 'lib64')}", "-o", out],
                       check=True)  # fmt: skip
    spec = importlib.util.spec_from_file_location("pf_nb_gpu_bench", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BUILDERS = {
    "packedfun": build_packedfun,
    "tvm-ffi": build_tvm_ffi,
    "torch cpp_extension": build_torch,
    "nanobind": build_nanobind,
}

_BUILD_CHILD = """
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
import gpu_launch
peer, build_dir = sys.argv[2], sys.argv[3]
gpu_launch.warm_imports(peer)
t0 = time.perf_counter(); gpu_launch.BUILDERS[peer](build_dir); cold = time.perf_counter() - t0
t0 = time.perf_counter(); gpu_launch.BUILDERS[peer](build_dir); warm = time.perf_counter() - t0
print(json.dumps({"cold_s": cold, "warm_s": warm}))
"""


def warm_imports(peer: str) -> None:
    """The imports a build needs, outside its clock."""
    import torch  # noqa: F401

    if peer == "packedfun":
        import packedfun.cpp  # noqa: F401
    elif peer == "tvm-ffi":
        import tvm_ffi.cpp  # noqa: F401
    elif peer == "torch cpp_extension":
        from torch.utils import cpp_extension  # noqa: F401
    elif peer == "nanobind":
        import nanobind  # noqa: F401


def build_times(root: str, timeout: float) -> dict:
    times = {}
    for peer in BUILDERS:
        build_dir = os.path.join(root, peer.replace(" ", "_"))
        os.makedirs(build_dir, exist_ok=True)
        try:
            proc = subprocess.run([sys.executable, "-c", _BUILD_CHILD, HERE, peer, build_dir],
                                  capture_output=True, text=True, timeout=timeout)  # fmt: skip
        except subprocess.TimeoutExpired:
            times[peer] = {"error": f"build timed out after {timeout:.0f} s"}
            continue
        if proc.returncode != 0:
            times[peer] = {"error": (proc.stderr or proc.stdout)[-1500:]}
            continue
        times[peer] = json.loads(proc.stdout.strip().splitlines()[-1])
    return times


# ---- launch cost -------------------------------------------------------------------------------


def _loop(f, x, y, *extra):
    if extra:
        (s,) = extra

        def loop(n):
            for _ in range(n):
                f(x, y, s)
    else:

        def loop(n):
            for _ in range(n):
                f(x, y)

    return loop


def launch_costs(modules: dict, calls: int, rounds: int) -> dict:
    import torch

    x = torch.arange(1024, dtype=torch.float32, device="cuda")
    y = torch.empty_like(x)
    stream = torch.cuda.current_stream().cuda_stream
    loops = {}
    checks = {}
    for peer, mod in modules.items():
        y.zero_()
        if peer == "nanobind":
            mod.add_one(x, y, stream)
            loops[peer] = _loop(mod.launch_empty, x, y, stream)
        elif peer == "torch.library op":
            torch.ops.pf_gpu_bench.launch_empty(x, y)
            modules["torch cpp_extension"].add_one(x, y)
            loops[peer] = _loop(torch.ops.pf_gpu_bench.launch_empty, x, y)
        else:
            mod.add_one(x, y)
            loops[peer] = _loop(mod.launch_empty, x, y)
        torch.cuda.synchronize()
        checks[peer] = bool(torch.equal(y, x + 1))

    def empty(n):
        for _ in range(n):
            pass

    pf_mod = modules["packedfun"]
    samples: dict = {peer: [] for peer in [*loops, "floor (cudaLaunchKernel)"]}
    for loop in loops.values():  # warm-up
        loop(calls)
    torch.cuda.synchronize()
    gc.disable()
    try:
        peers = list(loops)
        for r in range(rounds):
            order = peers[r % len(peers) :] + peers[: r % len(peers)]
            for peer in order:
                torch.cuda.synchronize()
                t0 = time.perf_counter_ns()
                empty(calls)
                t1 = time.perf_counter_ns()
                loops[peer](calls)
                t2 = time.perf_counter_ns()
                samples[peer].append(((t2 - t1) - (t1 - t0)) / calls)
            torch.cuda.synchronize()
            samples["floor (cudaLaunchKernel)"].append(pf_mod.floor_launch_ns(x, calls) / calls)
    finally:
        gc.enable()
    torch.cuda.synchronize()
    return {
        peer: {"median_ns": statistics.median(v), "min_ns": min(v), "correct": checks.get(peer)}
        for peer, v in samples.items()
    }


NOTES = {
    "nanobind": "stream handle passed as an argument, looked up once before the loop (advantage)",
    "torch cpp_extension": "pybind11 with at::Tensor, as torch documents extensions",
    "floor (cudaLaunchKernel)": "C++ loop of cudaLaunchKernel on the same stream",
}


def report(costs: dict, builds: dict, device: str) -> str:
    lines = [f"GPU launch cost and build times ({device}; packedfun backend: {_backend()})", ""]
    if costs:
        floor = costs.get("floor (cudaLaunchKernel)", {}).get("median_ns")
        lines += ["| launch an empty kernel (2 torch CUDA tensors) | median ns | min ns | "
                  "x floor | x+1 right | note |", "|---|---:|---:|---:|---|---|"]  # fmt: skip
        for peer, c in sorted(costs.items(), key=lambda kv: kv[1]["median_ns"]):
            ratio = f"{c['median_ns'] / floor:.2f}" if floor else "-"
            ok = {True: "yes", False: "NO", None: "-"}[c["correct"]]
            lines.append(f"| {peer} | {c['median_ns']:.0f} | {c['min_ns']:.0f} | {ratio} | {ok} "
                         f"| {NOTES.get(peer, '')} |")  # fmt: skip
        lines.append("")
    lines += ["| build (same two kernels) | cold s | warm s |", "|---|---:|---:|"]
    for peer, t in builds.items():
        if "error" in t:
            first = t["error"].strip().splitlines()[-1] if t["error"].strip() else "failed"
            lines.append(f"| {peer} | FAILED: {first[:120]} | |")
        else:
            lines.append(f"| {peer} | {t['cold_s']:.2f} | {t['warm_s']:.3f} |")
    return "\n".join(lines) + "\n"


def _backend() -> str:
    import packedfun

    return packedfun.BACKEND


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="also write the table (markdown) and the figures (.json) here")
    ap.add_argument("--calls", type=int, default=200, help="calls per sample (< queue depth)")
    ap.add_argument("--rounds", type=int, default=101, help="samples per peer")
    ap.add_argument("--build-timeout", type=float, default=150, help="seconds per cold build")
    ap.add_argument("--dry-run", action="store_true", help="no GPU: list the rows and exit 0")
    args = ap.parse_args(argv)
    rows = [*BUILDERS, "torch.library op", "floor (cudaLaunchKernel)"]
    try:
        import torch

        has_gpu = torch.cuda.is_available()
    except ImportError:
        has_gpu = False
    if args.dry_run or not has_gpu:
        text = "".join(f"| launch cost: {r} | skip | no CUDA device |\n" for r in rows)
        text += "".join(f"| load_inline cold: {r} | skip | no CUDA device |\n" for r in BUILDERS)
        print(text, end="")
        if args.out:
            with open(args.out, "w") as f:
                f.write(text)
        return 0
    root = tempfile.mkdtemp(prefix="pf_gpu_bench_")
    builds = build_times(root, args.build_timeout)
    modules = {}
    for peer, build in BUILDERS.items():
        if "error" in builds[peer]:
            continue
        modules[peer] = build(os.path.join(root, peer.replace(" ", "_")))  # warm: loads
    if "torch cpp_extension" in modules:
        modules["torch.library op"] = modules["torch cpp_extension"]
    costs = launch_costs(modules, args.calls, args.rounds) if "packedfun" in modules else {}
    text = report(costs, builds, torch.cuda.get_device_name(0))
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
        with open(os.path.splitext(args.out)[0] + ".json", "w") as f:
            json.dump({"launch": costs, "build": builds}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
