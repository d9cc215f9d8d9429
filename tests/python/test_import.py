# Tests that `import packedfun` is cheap (no numpy/torch/jax, no subprocess) and backend selection.
import os
import subprocess
import sys

import packedfun
import pytest

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(packedfun.__file__)))


def run_python(code, **env):
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = PYTHON_DIR + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.update(env)
    return subprocess.run(
        [sys.executable, "-c", code], env=full_env, capture_output=True, text=True, timeout=120
    )


def test_import_is_cheap():
    code = """
import subprocess, os, sys
def forbidden(*a, **k):
    raise AssertionError("subprocess at import time")
subprocess.Popen = forbidden
os.system = forbidden
import packedfun
heavy = [m for m in ("numpy", "torch", "jax", "tensorflow", "cupy") if m in sys.modules]
assert not heavy, heavy
print("ok", packedfun.BACKEND)
"""
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok")


def test_public_api():
    for name in packedfun.__all__:
        assert hasattr(packedfun, name), name
    assert isinstance(packedfun.__version__, str)


def test_ctypes_backend_selected_by_environment():
    result = run_python("import packedfun; print(packedfun.BACKEND)", PACKEDFUN_BACKEND="ctypes")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ctypes"


def test_unknown_backend_rejected():
    result = run_python("import packedfun", PACKEDFUN_BACKEND="nonsense")
    assert result.returncode != 0
    assert "PACKEDFUN_BACKEND" in result.stderr


@pytest.mark.skipif(packedfun.BACKEND != "_core", reason="needs the compiled backend")
def test_core_backend_is_default():
    result = run_python("import packedfun; print(packedfun.BACKEND)", PACKEDFUN_BACKEND="")
    assert result.stdout.strip() == "_core"
