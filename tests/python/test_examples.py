# Runs every script example under examples/ in a subprocess and checks what it prints.
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import packedfun
import packedfun.config
import pytest
import suite

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
PKG = Path(packedfun.__file__).resolve().parent
CC = os.environ.get("CC", "cc")


def run_script(script: Path, *args: str) -> subprocess.CompletedProcess:
    """Runs `script` with this interpreter, finding this packedfun and this backend."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PKG.parent), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
        cwd=str(script.parent),
    )


def test_every_example_is_run_by_a_test():
    # An example counts as run when some test module names its directory (this file runs the
    # scripts below; CMake examples are built by their own tests, e.g. test_packaging.py).
    tests = {p: p.read_text() for p in (REPO / "tests" / "python").glob("test_*.py")}
    mine = {"c_library", "inline_module", "ctypes_call"}
    for directory in sorted(p for p in EXAMPLES.iterdir() if p.is_dir()):
        name = directory.name
        if name in mine:
            continue
        refs = [f'"examples" / "{name}"', f"examples/{name}"]
        users = [t.name for t, text in tests.items() if any(r in text for r in refs)]
        assert users, f"examples/{name} is run by no test under tests/python"


@pytest.fixture(scope="module")
def c_library(tmp_path_factory):
    """examples/c_library/c_library.c built as C11 with the C compiler."""
    if shutil.which(shlex.split(CC)[0]) is None:
        pytest.skip(f"no C compiler ({CC})")
    out = tmp_path_factory.mktemp("c_library") / "c_library.so"
    lib_dir = packedfun.config.get_lib_dir()
    cmd = [*shlex.split(CC), "-std=c11", "-pedantic", "-Wall", "-Wextra", "-Werror", "-shared"]
    cmd += ["-fPIC", f"-I{packedfun.config.get_include_dir()}"]
    cmd += [str(EXAMPLES / "c_library" / "c_library.c"), "-o", str(out)]
    cmd += [f"-L{lib_dir}", f"-Wl,-rpath,{lib_dir}", "-lpackedfun"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return str(out)


C_LIBRARY_LINES = [
    "add(2, 3) -> 5",
    "add.__doc__ -> 'add(a, b) -> int: the sum of two integers.'",
    "greet('C') -> 'Hello, C!'",
    "mod(40, 2) -> 42  (the entry function, 'add')",
    "global c_library.mul(6, 7) -> 42",
    "'sub' in mod -> False",
]


def test_c_library_prebuilt(c_library):
    proc = run_script(EXAMPLES / "c_library" / "c_library.py", c_library)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    for line in C_LIBRARY_LINES:
        assert line in lines
    assert any(
        line.startswith("add(1, 'two') -> TypeError: add: argument 1: expected int")
        for line in lines
    )


def test_c_library_builds_itself(c_library):
    # c_library (the fixture) only makes sure a compiler is present.
    proc = run_script(EXAMPLES / "c_library" / "c_library.py")
    assert proc.returncode == 0, proc.stderr
    assert "add(2, 3) -> 5" in proc.stdout.splitlines()


def test_c_library_source_is_plain_c():
    source = (EXAMPLES / "c_library" / "c_library.c").read_text()
    includes = [line for line in source.splitlines() if line.startswith("#include")]
    assert includes[0] == "#include <packedfun/c_api.h>"
    assert not any("packedfun/" in line and "c_api.h" not in line for line in includes)


def test_inline_module(tmp_path):
    suite.require("packedfun.cpp")
    proc = run_script(EXAMPLES / "inline_module" / "inline_module.py", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "add_int(40, 2) -> 42" in lines
    # The docstring follows the signature line the function's metadata gives it.
    doc_lines = [line for line in lines if line.startswith("add_int.__doc__ -> ")]
    assert len(doc_lines) == 1, lines
    assert doc_lines[0].endswith("add_int(a, b) -> int: the sum of two integers.'"), doc_lines
    assert "build_inline + load_module: add_int(1, 2) -> 3" in lines
    tensors = (PKG / "include" / "packedfun" / "tensor.h").exists() and hasattr(
        packedfun, "from_dlpack"
    )
    if tensors:
        assert "add_one_cpu([1.0, 2.0, 3.0, 4.0, 5.0]) -> [2.0, 3.0, 4.0, 5.0, 6.0]" in lines
    else:
        assert "(this packedfun has no tensors: add_one_cpu skipped)" in lines
    # A second run hits the build cache and prints the same.
    again = run_script(EXAMPLES / "inline_module" / "inline_module.py", str(tmp_path))
    assert again.returncode == 0, again.stderr
    assert again.stdout == proc.stdout


def test_ctypes_call_runs_as_a_script():
    script = EXAMPLES / "ctypes_call" / "ctypes_call.py"
    if not script.exists():
        pytest.skip("examples/ctypes_call is not in this checkout")
    proc = run_script(script, str(PKG / "lib"))
    assert proc.returncode == 0, proc.stderr
    assert "testing.echo(42) -> 42" in proc.stdout.splitlines()
