# The ASan limitation that tests/sanitize/forced_unwind.c answers, shown without packedfun.
"""A thread ended by pthread_exit from uninstrumented code (CPython's daemon threads at exit) leaves
the redzones of the frames it discards poisoned, and ASan then reports a stack-buffer-overflow in
its own ``__asan_handle_no_return`` (``tests/sanitize/forced_unwind_repro.cc``, no packedfun in it).
The sanitized run preloads ``tests/sanitize/forced_unwind.c``, which unpoisons the stack before
pthread_exit unwinds, as ASan does itself before a C++ throw: these tests build both with gcc and
check that the reproducer gets that report without the preload and runs clean with it. Should a
newer ASan stop misreporting, the first test fails: the preload can then go. Skipped where gcc has
no ASan runtime; not run under the sanitized suite (it builds its own programs)."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SANITIZE = Path(__file__).resolve().parents[1] / "sanitize"


def _asan_runtime() -> str | None:
    gcc = shutil.which("gcc")
    if gcc is None or shutil.which("g++") is None:
        return None
    out = subprocess.run([gcc, "-print-file-name=libasan.so"], capture_output=True, text=True)
    path = out.stdout.strip()
    return path if os.path.isabs(path) and os.path.exists(path) else None


ASAN = _asan_runtime()
pytestmark = pytest.mark.skipif(ASAN is None, reason="gcc's ASan runtime is not installed")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("forced_unwind")
    repro, shim = out / "repro", out / "libforced_unwind.so"
    cxx = ["g++", "-O1", "-g", "-fsanitize=address", "-pthread"]
    subprocess.run([*cxx, SANITIZE / "forced_unwind_repro.cc", "-o", repro], check=True)
    cc = ["gcc", "-O1", "-shared", "-fPIC", SANITIZE / "forced_unwind.c", "-o", shim, "-ldl"]
    subprocess.run(cc, check=True)
    return repro, shim


def _run(program: Path, preload: str | None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    # the sanitized run's options: no fake stacks (with them, frames live on the heap and leave
    # no stale poison on the thread's stack)
    env["ASAN_OPTIONS"] = "detect_stack_use_after_return=0:detect_leaks=0"
    if preload:
        env["LD_PRELOAD"] = preload
    return subprocess.run([program], capture_output=True, text=True, env=env, timeout=60)


def test_asan_misreports_a_forced_unwind_from_uninstrumented_code(built):
    proc = _run(built[0], None)
    assert proc.returncode != 0, proc.stderr[-3000:]
    assert "ERROR: AddressSanitizer: stack-buffer-overflow" in proc.stderr, proc.stderr[-3000:]
    assert "__asan_handle_no_return" in proc.stderr
    assert "cleanup ran" in proc.stderr  # the report comes from the unwind's first cleanup


def test_the_preload_makes_the_forced_unwind_clean(built):
    repro, shim = built
    proc = _run(repro, f"{ASAN}:{shim}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "AddressSanitizer" not in proc.stderr
    assert "cleanup ran" in proc.stderr and proc.stdout == "joined\n"
