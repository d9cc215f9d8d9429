# Runs examples/distributed on a local Dask cluster of worker processes (the suite's backend).
"""The client compiles a ``load_inline`` kernel, maps it over 32 NumPy arrays on two worker
processes and gets a C++ error back as a ``ValueError``. Each run is a child process in its own
session with a timeout; on a timeout the whole process group (client, nanny and workers) is
killed. The run uses the suite's backend (test_ctypes_backend.py reruns the suite on ctypes).
"""

import os
import signal
import subprocess
import sys
from pathlib import Path

import packedfun
import pytest
import suite

pytestmark = suite.full_only("the cluster tests: a local Dask cluster of worker processes")
suite.require("distributed")
cpp = suite.require("packedfun.cpp")
from packedfun.cpp._build import find_cxx  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "examples" / "distributed" / "distributed_map.py"
PKG = Path(packedfun.__file__).resolve().parent
# Hang guards only, generous so that a loaded machine (the sanitized run, six builds at once) does
# not turn a slow start of the worker processes into a failure: the example's own per-step limit
# and the whole run's.
STEP_TIMEOUT = 300
TIMEOUT = 1200


def _run(work: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PACKEDFUN_BACKEND=packedfun.BACKEND)
    env["DISTRIBUTED_MAP_TIMEOUT"] = str(STEP_TIMEOUT)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PKG.parent), env.get("PYTHONPATH")]))
    # Under the sanitized run: Dask's own daemon threads (the IO loop, the profiler, the executor)
    # are still running when the client and its workers exit, and what only their frames hold is
    # reported as leaked, as for test_threads.py's daemon-thread children: the same suppressions
    # (tests/sanitize/lsan_forced_unwind.supp, and lsan_distributed.supp for a bound-method call's
    # argument array). Everything else in these processes is checked.
    if env.get("PACKEDFUN_SANITIZE_DISTRIBUTED_LSAN_OPTIONS"):
        env["LSAN_OPTIONS"] = env["PACKEDFUN_SANITIZE_DISTRIBUTED_LSAN_OPTIONS"]
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT), str(work)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=str(work),
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"the distributed example ran past {TIMEOUT} s\n{out}\n{err[-4000:]}")
    finally:
        try:  # workers outliving their client (they should not) go with the group
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    work = tmp_path_factory.mktemp("distributed")
    try:
        find_cxx()
    except cpp.CompilerNotFoundError as err:
        pytest.skip(str(err))
    return work


def test_kernel_maps_over_dask_workers(work):
    backend = packedfun.BACKEND
    proc = _run(work)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    lines = proc.stdout.splitlines()
    # Both workers imported the packedfun under test (not another installed copy), same backend.
    assert f"2 workers import packedfun from ['{PKG} ({backend})']" in lines, lines
    assert "axpb on 32 arrays -> ['numpy.ndarray']: matches NumPy" in lines, lines
    # The C++ packedfun::Error("ValueError", ...) raised on a worker, rebuilt at the client.
    assert "error from a worker: ValueError: axpb: expected a 1-d float64 array" in lines, lines
    # A Function registered on the client only: the task fails with an error naming it (it used
    # to make the worker drop the connection and the client wait), and the workers stay usable.
    assert any(
        line.startswith(
            "client-only function on a worker: ValueError: global function "
            "'example.client_only' is not registered in this process"
        )
        for line in lines
    ), lines
    # Trees of Python-defined node types (examples/distributed/ir_nodes.py) with an enum field
    # travel both ways; the variant that comes back is the client's own.
    assert (
        "py_class trees on workers: values [6.0, 7.0, 8.0, 9.0]; bound tree back as BinOp, "
        "op is Op.ADD: True, equal: True"
    ) in lines, lines
    assert "workers still usable: True" in lines, lines
    assert lines[-1] == "cluster shut down"
