# examples/distributed: a load_inline kernel mapped over NumPy arrays on Dask worker processes.
"""Build a C++ kernel with ``packedfun.cpp.load_inline`` and run it on a Dask cluster.

Usage::

    python examples/distributed/distributed_map.py [WORK_DIRECTORY]

Needs ``pip install "packedfun[distributed]"`` (Dask distributed) and a C++ compiler on the
client only: the workers receive the compiled library's bytes inside the pickled function and load
it without compiling. The script starts a local cluster of two worker processes (loopback only, no
dashboard), maps the kernel over 32 arrays, checks the results against NumPy, shows that a C++
error raised on a worker arrives as the same Python exception and that a global function the
workers do not have fails the task with a clear error (not the worker), evaluates and rewrites a
tree of IR nodes whose types are defined in Python (``ir_nodes.py``) on the workers, and shuts the
cluster down.
"""

from __future__ import annotations

import os
import sys
import tempfile

import ir_nodes  # IR node types defined in Python, beside this script
import numpy as np
import packedfun
import packedfun.cpp
from packedfun.structural import structural_equal

SOURCE = r"""
packedfun::Tensor axpb(packedfun::TensorView x, double a, double b) {
  if (x->ndim != 1 || x->dtype.code != kDLFloat || x->dtype.bits != 64) {
    throw packedfun::Error("ValueError", "axpb: expected a 1-d float64 array");
  }
  packedfun::Tensor y = packedfun::Tensor::FromEnvAlloc({x->shape[0]}, x->dtype, x->device);
  const double* src = static_cast<const double*>(x->data);
  double* dst = static_cast<double*>(y->data);
  for (int64_t i = 0; i < x->shape[0]; ++i) dst[i] = a * src[i] + b;
  return y;
}
"""

# Seconds for any one step on the cluster; the test suite sets more (a loaded or sanitized machine
# can take longer to start worker processes).
TIMEOUT = float(os.environ.get("DISTRIBUTED_MAP_TIMEOUT", "60"))


def call(func, x):
    """Runs on a worker: calls a Function it received."""
    return func(x)


def where() -> str:
    """Runs on a worker: the packedfun package it imported and the backend in use."""
    return f"{os.path.dirname(packedfun.__file__)} ({packedfun.BACKEND})"


def main(work: str) -> None:
    from dask.distributed import Client, LocalCluster

    mod = packedfun.cpp.load_inline(
        "distributed_axpb",
        cpp_sources=SOURCE,
        functions="axpb",
        build_directory=os.path.join(work, "build"),
    )
    arrays = [np.linspace(0.0, 1.0, 100 + i) for i in range(32)]
    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        local_directory=os.path.join(work, "dask"),
        timeout=TIMEOUT,
    )
    with cluster, Client(cluster, timeout=TIMEOUT) as client:
        client.wait_for_workers(2, timeout=TIMEOUT)
        homes = client.run(where)
        print(f"{len(homes)} workers import packedfun from {sorted(set(homes.values()))}")
        # mod.axpb pickles as (module, name): the module travels as its library's bytes.
        futures = client.map(mod.axpb, arrays, [2.0] * 32, [1.0] * 32)
        results = client.gather(futures, errors="raise")
        ok = all(np.array_equal(y, 2.0 * x + 1.0) for x, y in zip(arrays, results))
        kinds = sorted({type(y).__module__ + "." + type(y).__name__ for y in results})
        print(f"axpb on {len(results)} arrays -> {kinds}: {'matches NumPy' if ok else 'MISMATCH'}")
        try:
            client.submit(mod.axpb, np.zeros((2, 2)), 2.0, 1.0).result(timeout=TIMEOUT)
        except ValueError as err:
            print(f"error from a worker: {type(err).__name__}: {err}")
        # A global function registered on the client only: it travels by name, the worker has
        # none of that name, and calling it there raises a ValueError that reaches the client.
        packedfun.register_global_func("example.client_only", lambda x: x + 1)
        client_only = packedfun.get_global_func("example.client_only")
        try:
            client.submit(call, client_only, 1).result(timeout=TIMEOUT)
        except ValueError as err:
            print(f"client-only function on a worker: {type(err).__name__}: {err}")
        # Objects of types defined in Python travel as any packedfun object: the workers import
        # ir_nodes to rebuild them, and an enum variant is the worker's (then the client's) own.
        tree = ir_nodes.BinOp(
            ir_nodes.Op.ADD,
            ir_nodes.Var("x"),
            ir_nodes.BinOp(ir_nodes.Op.MUL, ir_nodes.Const(2.0), ir_nodes.Var("y")),
        )
        envs = [{"x": float(i), "y": 3.0} for i in range(4)]
        values = client.gather(client.map(ir_nodes.evaluate, [tree] * 4, envs), errors="raise")
        bound = client.submit(ir_nodes.bind, tree, envs[1]).result(timeout=TIMEOUT)
        same = structural_equal(bound, ir_nodes.bind(tree, envs[1]))
        print(
            f"py_class trees on workers: values {values}; bound tree back as "
            f"{type(bound).__name__}, op is Op.ADD: {bound.op is ir_nodes.Op.ADD}, equal: {same}"
        )
        # The workers stay usable.
        again = client.submit(mod.axpb, arrays[0], 2.0, 1.0).result(timeout=TIMEOUT)
        print(f"workers still usable: {np.array_equal(again, 2.0 * arrays[0] + 1.0)}")
    print("cluster shut down")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(sys.argv[1])
    else:
        with tempfile.TemporaryDirectory() as tmp:
            main(tmp)
