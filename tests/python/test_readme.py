# Keeps README.md true: its Python tour runs, its C++ tour compiles, loads and behaves as described.
import os
import re
import shutil
import subprocess
from pathlib import Path

import packedfun
import pytest
import suite
from packedfun import config

README = Path(__file__).resolve().parents[2] / "README.md"


def _block(heading: str, language: str) -> str:
    if not README.is_file():
        pytest.skip("not running from a source checkout")
    text = README.read_text()
    section = text.split(f"## {heading}", 1)[1]
    match = re.search(rf"```{language}\n(.*?)```", section, re.S)
    assert match is not None, f"no {language} block under '{heading}'"
    return match.group(1)


def test_readme_opens_with_the_demo_and_the_test_commands():
    blocks = re.findall(r"```bash\n(.*?)```", README.read_text(), re.S)
    assert blocks[0].strip() == "pip install . && python -m packedfun.demo"
    assert blocks[1].strip() == 'pip install ".[test]" && python -m pytest'
    assert blocks[2].strip() == 'pip install ".[test]" && PACKEDFUN_TEST_FULL=1 python -m pytest'


def test_python_tour_runs(capsys):
    code = _block("Python in one screen", "python")
    namespace: dict = {}
    try:
        exec(compile(code, str(README), "exec"), namespace)
        assert namespace["square"](3) == 9
        assert "bad value" in capsys.readouterr().out
    finally:
        packedfun.remove_global_func("demo.square")


@pytest.fixture(scope="module")
def cpp_tour_library(tmp_path_factory) -> Path:
    cxx = shutil.which(os.environ.get("CXX", "g++")) or shutil.which("c++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    out = tmp_path_factory.mktemp("readme_cpp")
    src = out / "tour.cc"
    src.write_text(_block("C++ in one screen", "cpp"))
    lib = out / "libtour.so"
    cmd = [
        cxx, "-shared", "-fPIC", "-Wall", "-Wextra", "-Werror",
        *config.get_cxxflags().split(), str(src), "-o", str(lib),
        *config.get_ldflags().split(), *config.get_libs().split(),
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=600)
    assert proc.returncode == 0, proc.stderr[-6000:]
    packedfun.load_module(str(lib))
    return lib


def test_cpp_tour_registers_typed_functions(cpp_tour_library):
    assert packedfun.get_global_func("mylib.add")(2, 3) == 5
    assert packedfun.get_global_func("mylib.greet")("Ada") == "Hello, Ada!"
    with pytest.raises(ValueError, match="name must not be empty"):
        packedfun.get_global_func("mylib.greet")("")
    with pytest.raises(TypeError, match="mylib.add"):
        packedfun.get_global_func("mylib.add")(1, "2")


def test_cpp_tour_calls_python_by_name(cpp_tour_library):
    @packedfun.register_global_func("demo.square", override=True)
    def square(x):
        return x * x

    try:
        assert packedfun.get_global_func("mylib.call_square")(7) == 49
    finally:
        packedfun.remove_global_func("demo.square")


def test_calling_tour_runs(capsys):
    code = _block("Calling like Python", "python")
    exec(compile(code, str(README), "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "4 3",
        "(a: 'int', b: 'int' = 2) -> 'int'",
        "{'name': 'b', 'type': 'int', 'default': 2}",
        "testing.add_kw(a: int, b: int) -> int: argument 'b': expected int, got str",
        "def add_kw(a: int, b: int = 2) -> int: ...",
    ]


def test_objects_containers_tensors_tour_runs(capsys):
    suite.require("numpy")
    code = _block("Objects, containers and tensors", "python")
    exec(compile(code, str(README), "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "testing.TestIntPair(a=1, b=2) 1 3",
        "3 3 True",
        "6",
        "(4,) float32 cpu:0",
        "42.0",
    ]


def test_inline_cpp_tour_runs(capsys, tmp_path, monkeypatch):
    suite.require("numpy")
    if shutil.which(os.environ.get("CXX", "c++")) is None and shutil.which("g++") is None:
        pytest.skip("no C++ compiler")
    monkeypatch.setenv("PACKEDFUN_CACHE_DIR", str(tmp_path))
    code = _block("C++ compiled on the fly", "python")
    exec(compile(code, str(README), "exec"), {})
    assert capsys.readouterr().out.strip() == "[1. 2. 3. 4. 5.]"
