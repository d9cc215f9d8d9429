# Tests that `import packedfun` is cheap (no numpy/torch/jax, no subprocess) and backend selection.
import os
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

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


@pytest.mark.deselect_if(
    packedfun.BACKEND != "_core", reason="a _core property: the ctypes backend is built on ctypes"
)
def test_import_loads_no_costly_standard_modules():
    # Each of these costs more to import than all of packedfun's own modules together; they load
    # when a call first needs them (signatures, enums, JSON, pickling of tensor data, streams).
    code = """
import sys
before = set(sys.modules)  # loaded before packedfun (the sanitized run's sitecustomize, say)
import packedfun
costly = ("inspect", "json", "enum", "typing", "re", "ctypes", "pickle", "functools",
          "contextlib", "base64", "importlib.util")
print(",".join(m for m in costly if m in sys.modules and m not in before))
"""
    result = run_python(code, PACKEDFUN_BACKEND="")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""


def test_lazily_loaded_names_behave_as_before():
    code = """
import packedfun, pickle, sys
t = packedfun.DLDeviceType
assert t is packedfun.tensor.DLDeviceType is packedfun.DLDeviceType
assert t.cuda == 2 and t["cpu"] == 1 and t(13).name == "cuda_managed"
assert pickle.loads(pickle.dumps(t.cuda)) is t.cuda
assert packedfun.device(t.cuda, 3).type == "cuda"
assert packedfun.from_json(packedfun.to_json([1, "a"])) == [1, "a"]
from packedfun import to_json, from_json, DLDeviceType
assert DLDeviceType is t and to_json is packedfun.to_json
assert packedfun.serialize.to_json is to_json  # the submodule as an attribute, as before
try:
    packedfun.no_such_name
except AttributeError as e:
    assert "no_such_name" in str(e)
else:
    raise AssertionError("no AttributeError")
print("ok")
"""
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_submodules_load_on_first_attribute_access():
    # `import tvm_ffi` gives tvm_ffi.cpp: the same holds for packedfun, without loading anything
    # at import time.
    code = """
import sys, packedfun
assert not {"packedfun.cpp", "packedfun.testing", "packedfun.libinfo"} & set(sys.modules)
mod = packedfun.cpp.load_inline
assert "packedfun.cpp" in sys.modules and packedfun.cpp is sys.modules["packedfun.cpp"]
assert packedfun.testing.TestIntPair(1, 2).sum() == 3
assert packedfun.libinfo is sys.modules["packedfun.libinfo"]
from packedfun import cpp, testing
assert cpp is packedfun.cpp and testing is packedfun.testing
print("ok")
"""
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


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


_WARNINGS_OF_IMPORT = """
import sys, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import packedfun
print(packedfun.BACKEND)
for w in caught:
    print(f"{w.category.__name__}: {w.message}")
"""


def test_core_backend_is_default():
    # Runs in every configuration (the ctypes re-run and the sanitized passes too): every build of
    # packedfun ships _core, and by default it is the backend in use, with no warning. A _core
    # that is missing or fails to import (a broken build, a missing symbol) fails here rather than
    # passing on the ctypes fallback.
    package = Path(packedfun.__file__).resolve().parent
    built = [package / f"_core{suffix}" for suffix in EXTENSION_SUFFIXES]
    assert any(p.is_file() for p in built), f"no compiled backend: none of {built} exists"
    result = run_python(_WARNINGS_OF_IMPORT, PACKEDFUN_BACKEND="")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["_core"], result.stdout + result.stderr


def test_fallback_to_ctypes_warns_when_core_cannot_be_imported():
    unimportable = 'sys.modules["packedfun._core"] = None  # importing it raises ImportError\n'
    code = _WARNINGS_OF_IMPORT.replace(
        "import packedfun\n", unimportable + "    import packedfun\n"
    )
    result = run_python(code, PACKEDFUN_BACKEND="")
    assert result.returncode == 0, result.stderr
    backend, *caught = result.stdout.splitlines()
    assert backend == "ctypes"
    assert len(caught) == 1, caught
    assert caught[0].startswith(
        "RuntimeWarning: packedfun: the compiled backend could not be imported"
    ), caught
    assert caught[0].endswith("using the slower ctypes backend"), caught
    # Asked for by name, the compiled backend does not fall back: the ImportError propagates.
    result = run_python(code, PACKEDFUN_BACKEND="core")
    assert result.returncode == 1, result.stderr
    assert "ModuleNotFoundError: import of packedfun._core halted" in result.stderr, result.stderr
