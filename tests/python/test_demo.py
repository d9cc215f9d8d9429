# Tests that `python -m packedfun.demo` runs and shows the four crossings in under a screen.
import os
import subprocess
import sys

import packedfun

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(packedfun.__file__)))


def test_demo_runs():
    env = dict(os.environ)
    env["PYTHONPATH"] = PYTHON_DIR + os.pathsep + env.get("PYTHONPATH", "")
    result = subprocess.run(
        [sys.executable, "-m", "packedfun.demo"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) <= 24
    out = result.stdout
    assert "add_int(40, 2) -> 42" in out
    assert "'hello, world'" in out
    assert "call_global('demo.square', 12) -> 144" in out
    assert "ValueError: bad value from C++" in out
