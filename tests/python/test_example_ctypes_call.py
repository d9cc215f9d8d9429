# Runs examples/ctypes_call: packed functions called through plain ctypes over the C ABI alone.
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import packedfun

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "ctypes_call" / "ctypes_call.py"
LIB_DIR = Path(packedfun.__file__).resolve().parent / "lib"


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), str(LIB_DIR)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONPATH": ""},
    )


def test_example_calls_packed_functions_through_plain_ctypes():
    proc = _run(
        f"""
        import runpy, sys
        sys.argv = [{str(SCRIPT)!r}, sys.argv[1]]
        runpy.run_path({str(SCRIPT)!r}, run_name="__main__")
        leaked = sorted(m for m in sys.modules if m.split(".")[0] == "packedfun")
        assert not leaked, leaked  # the C ABI alone: no packedfun Python code, no _core
        """
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("packedfun ABI 1.")
    assert "testing.echo(42) -> 42" in lines
    assert "testing.echo(2.5) -> 2.5" in lines
    assert "testing.echo(True) -> True" in lines
    assert "testing.echo(None) -> None" in lines
    assert "testing.echo('hello, packed world') -> 'hello, packed world'" in lines
    assert "testing.nop(1, 2, 3) -> None" in lines
    assert "testing.test_raise_error -> failed=True: ValueError: bad value from C++" in lines
    assert "testing.apply(py_square, 7) -> 49" in lines
    assert lines[-1].strip() == "(C++ released the Python callback)"


def test_example_runs_as_a_script():
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), str(LIB_DIR)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "testing.apply(py_square, 7) -> 49" in proc.stdout
