# Builds examples/cpp_host (a C++ program, no Python) against the installed packedfun and runs it.
"""``find_package(packedfun CONFIG REQUIRED)`` with ``-Dpackedfun_DIR=$(packedfun-config
--cmakedir)`` builds examples/add_one's library and the host; the host loads the library with
``packedfun::Module`` and calls ``add_one_cpu`` on tensors it allocates."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from cmake_project import REPO_ROOT, build_external, run

EXAMPLE = REPO_ROOT / "examples" / "cpp_host"

pytestmark = pytest.mark.deselect_if(
    os.environ.get("PACKEDFUN_BACKEND") == "ctypes",
    reason="no Python backend involved: run once, by the default-backend pass",
)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    return build_external(EXAMPLE, tmp_path_factory.mktemp("cpp_host_build"))


def test_host_loads_add_one_and_calls_it(built):
    library = built / "libadd_one.so"
    proc = run([built / "cpp_host", library], env={"PATH": os.environ.get("PATH", "")})
    assert proc.stdout.splitlines() == [
        f"loaded {library}",
        "doc: add_one_cpu(x, y): y = x + 1 for 1-d float32 CPU tensors",
        "x: float32 on cpu:0, shape (5)",
        "add_one_cpu([0, 1, 2, 3, 4]) -> [1, 2, 3, 4, 5]",
        "add_one_cpu(float64 tensor) raised RuntimeError",
    ]


def test_host_reports_a_missing_library(built, tmp_path):
    missing = tmp_path / "libnothing.so"
    proc = subprocess.run(
        [str(built / "cpp_host"), str(missing)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 1
    assert proc.stderr.startswith("FileNotFoundError: cannot load library")
    assert str(missing) in proc.stderr


def test_host_links_no_python(built):
    ldd = shutil.which("ldd")
    if ldd is None:
        pytest.skip("ldd not found")
    out = run([ldd, built / "cpp_host"]).stdout
    assert "libpackedfun.so" in out
    assert "libpython" not in out
