# Tests of packedfun.cpp's build cache: keys, warm hits, locking, atomic publication, build errors.
"""These build plain ``extern "C"`` files with :func:`packedfun.cpp.build` and load them with
ctypes, so they exercise the cache machinery independently of the packedfun C++ API."""

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import suite

cpp = suite.require("packedfun.cpp")
from packedfun.cpp import _build, _cache, _codegen  # noqa: E402

PYTHON_DIR = str(Path(cpp.__file__).resolve().parents[2])

if not os.path.exists(os.path.join(cpp._package.lib_dir(), "libpackedfun.so")):
    pytest.skip("libpackedfun.so is not built", allow_module_level=True)

PLAIN_SOURCE = 'extern "C" long long pf_test_triple(long long x) { return 3 * x; }\n'
WRAPPER = """#!/bin/sh
echo "$*" >> "$PF_TEST_CXX_LOG"
case "$*" in *-shared*) if [ -n "$PF_TEST_CXX_SLEEP" ]; then sleep "$PF_TEST_CXX_SLEEP"; fi;; esac
exec {cxx} "$@"
"""


@pytest.fixture
def wrapper(tmp_path, monkeypatch):
    """A $CXX that logs every invocation (one line each) before running the real compiler."""
    script = tmp_path / "logging-cxx"
    script.write_text(WRAPPER.format(cxx=_build.find_cxx().path))
    script.chmod(0o755)
    log = tmp_path / "cxx.log"
    monkeypatch.setenv("CXX", str(script))
    monkeypatch.setenv("PF_TEST_CXX_LOG", str(log))
    monkeypatch.delenv("PF_TEST_CXX_SLEEP", raising=False)
    return log


def _links(log: Path) -> int:
    """Number of link steps (one per real build) the logging compiler saw."""
    return sum("-shared" in line for line in log.read_text().splitlines()) if log.exists() else 0


def _source(tmp_path: Path, text: str = PLAIN_SOURCE, name: str = "triple.cc") -> Path:
    path = tmp_path / "src" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


def _call(lib_path: str, symbol: str = "pf_test_triple", arg: int = 5) -> int:
    fn = getattr(ctypes.CDLL(lib_path), symbol)
    fn.restype, fn.argtypes = ctypes.c_longlong, [ctypes.c_longlong]
    return fn(arg)


def _child(code: str, env: dict, **kwargs) -> subprocess.Popen:
    script = f"import sys; sys.path.insert(0, {PYTHON_DIR!r})\n" + textwrap.dedent(code)
    return subprocess.Popen(
        [sys.executable, "-c", script],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


def test_build_then_warm_hit_runs_nothing(tmp_path, wrapper, monkeypatch):
    src, cache = _source(tmp_path), tmp_path / "cache"
    path = cpp.build("triple", [src], build_directory=cache)
    assert _call(path) == 15
    assert Path(path).name == "triple.so" and Path(path).is_relative_to(cache / "triple")
    assert _links(wrapper) == 1

    def no_process(*args, **kwargs):
        raise AssertionError(f"a warm hit started a process: {args}")

    monkeypatch.setattr(subprocess, "run", no_process)
    monkeypatch.setattr(subprocess, "Popen", no_process)
    # No time bound here (tests assert no timings): the warm hit's cost is the benchmark's
    # "load_inline warm-cache hit" row; here it must start no process and find the same library.
    for _ in range(20):
        assert cpp.build("triple", [src], build_directory=cache) == path


def test_warm_hit_in_fresh_process_spawns_no_compiler(tmp_path, wrapper):
    src, cache = _source(tmp_path), tmp_path / "cache"
    path = cpp.build("triple", [src], build_directory=cache)
    lines_before = wrapper.read_text()
    child = _child(
        f"""
        import time, packedfun.cpp as cpp
        start = time.perf_counter()
        path = cpp.build("triple", [{str(src)!r}], build_directory={str(cache)!r})
        print(path, time.perf_counter() - start)
    """,
        env=dict(os.environ),
    )
    out, err = child.communicate(timeout=300)
    assert child.returncode == 0, err
    assert out.split()[0] == path
    assert wrapper.read_text() == lines_before  # not even a `--version` probe


def test_key_covers_sources_flags_and_compiler(tmp_path, wrapper, monkeypatch):
    cache = tmp_path / "cache"
    src = _source(tmp_path)
    first = cpp.build("triple", [src], build_directory=cache)
    flagged = cpp.build("triple", [src], extra_cflags=["-DUNUSED=1"], build_directory=cache)
    assert flagged != first
    src.write_text(PLAIN_SOURCE.replace("3 * x", "4 * x"))
    edited = cpp.build("triple", [src], build_directory=cache)
    assert edited not in (first, flagged) and _call(edited) == 20
    monkeypatch.setenv("CXX", shutil.which("g++") or "c++")
    other_compiler = cpp.build("triple", [src], build_directory=cache)
    assert other_compiler not in (first, flagged, edited)
    assert _links(wrapper) == 3


# An older compiler: refuses the flag, else runs the logging wrapper (`wrapper`'s $CXX).
REFUSING_WRAPPER = """#!/bin/sh
case "$*" in *-fno-semantic-interposition*) echo "unknown option" >&2; exit 1;; esac
exec {cxx} "$@"
"""


def test_local_binding_flag_when_the_compiler_accepts_it(tmp_path, wrapper):
    # -fno-semantic-interposition (calls inside the library bind to its own functions, no PLT) on
    # every compile, probed once per compiler (the probe's line has -fsyntax-only, no link)
    cache = tmp_path / "cache"
    path = cpp.build("triple", [_source(tmp_path)], build_directory=cache)
    assert _call(path) == 15
    lines = wrapper.read_text().splitlines()
    probes = [line for line in lines if "-fsyntax-only" in line]
    builds = [line for line in lines if "-shared" in line]
    assert len(probes) == 1 and "-fno-semantic-interposition" in probes[0]
    assert len(builds) == 1 and "-fno-semantic-interposition" in builds[0]
    cpp.build("other", [_source(tmp_path, name="other.cc")], build_directory=cache)
    assert sum("-fsyntax-only" in line for line in wrapper.read_text().splitlines()) == 1


def test_a_compiler_refusing_the_local_binding_flag_still_builds(tmp_path, wrapper, monkeypatch):
    script = tmp_path / "old-cxx"
    script.write_text(REFUSING_WRAPPER.format(cxx=_build.find_cxx().path))
    script.chmod(0o755)
    monkeypatch.setenv("CXX", str(script))
    cache = tmp_path / "cache"
    path = cpp.build("triple", [_source(tmp_path)], build_directory=cache)
    assert _call(path) == 15
    builds = [line for line in wrapper.read_text().splitlines() if "-shared" in line]
    assert len(builds) == 1 and "-fno-semantic-interposition" not in builds[0]
    assert cpp.build("triple", [_source(tmp_path)], build_directory=cache) == path  # warm


def test_included_header_edit_gives_new_library(tmp_path, wrapper):
    cache = tmp_path / "cache"
    header = tmp_path / "src" / "factor.h"
    src = _source(tmp_path, '#include "factor.h"\n' + PLAIN_SOURCE.replace("3 * x", "FACTOR * x"))
    header.write_text("#define FACTOR 6\n")
    first = cpp.build("hdr", [src], build_directory=cache)
    assert cpp.build("hdr", [src], build_directory=cache) == first
    header.write_text("#define FACTOR 7\n")
    second = cpp.build("hdr", [src], build_directory=cache)
    assert second != first and _call(second) == 35 and _call(first) == 30
    assert _links(wrapper) == 2


def test_cache_dir_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("PACKEDFUN_CACHE_DIR", str(tmp_path / "envcache"))
    assert _cache.cache_root() == str(tmp_path / "envcache")
    monkeypatch.delenv("PACKEDFUN_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert _cache.cache_root() == str(tmp_path / "xdg" / "packedfun")
    assert _cache.cache_root(tmp_path / "explicit") == str(tmp_path / "explicit")
    monkeypatch.setenv("PACKEDFUN_CACHE_DIR", str(tmp_path / "envcache"))
    path = cpp.build("triple", [_source(tmp_path)])
    assert path.startswith(str(tmp_path / "envcache" / "triple") + os.sep)


def test_compile_error_is_reported_and_never_cached(tmp_path, wrapper):
    cache = tmp_path / "cache"
    src = _source(tmp_path, 'extern "C" int broken() { return undeclared_name; }\n', "bad.cc")
    for attempt in (1, 2):
        with pytest.raises(cpp.BuildError) as info:
            cpp.build("bad", [src], build_directory=cache)
        err = info.value
        assert isinstance(err, RuntimeError)
        assert err.returncode == 1 and "exit status 1" in str(err)  # gcc's and clang's status
        assert "undeclared_name" in str(err) and "error" in str(err)
        assert str(src) in err.command and err.command in str(err)
        assert err.log_path in str(err) and "undeclared_name" in Path(err.log_path).read_text()
        assert _links(wrapper) == attempt  # the compiler ran again: nothing was cached
    assert not list((cache / "bad").rglob("bad.so"))


def test_missing_compiler_names_the_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("CXX", str(tmp_path / "no-such-compiler"))
    with pytest.raises(cpp.CompilerNotFoundError, match=r"\$CXX") as info:
        cpp.build("triple", [_source(tmp_path)], build_directory=tmp_path / "cache")
    assert isinstance(info.value, cpp.BuildError) and "no-such-compiler" in str(info.value)
    assert info.value.returncode is None


def test_concurrent_builds_of_one_key_compile_once(tmp_path, wrapper):
    src, cache = _source(tmp_path), tmp_path / "cache"
    env = dict(os.environ, PF_TEST_CXX_SLEEP="1")
    code = f"""
        import packedfun.cpp as cpp
        print(cpp.build("triple", [{str(src)!r}], build_directory={str(cache)!r}))
    """
    children = [_child(code, env) for _ in range(3)]
    outputs = [c.communicate(timeout=120) for c in children]
    assert all(c.returncode == 0 for c in children), [o[1] for o in outputs]
    paths = {out.strip() for out, _ in outputs}
    assert len(paths) == 1 and _call(paths.pop()) == 15
    assert _links(wrapper) == 1


def test_killed_build_leaves_nothing_loadable(tmp_path, wrapper):
    src, cache = _source(tmp_path), tmp_path / "cache"
    code = f"""
        import packedfun.cpp as cpp
        cpp.build("triple", [{str(src)!r}], build_directory={str(cache)!r})
    """
    child = _child(code, dict(os.environ, PF_TEST_CXX_SLEEP="60"), start_new_session=True)
    deadline = time.monotonic() + 300  # a hang guard: a loaded machine compiles slowly
    while _links(wrapper) == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _links(wrapper) == 1, "the build never reached the link step"
    os.killpg(child.pid, signal.SIGKILL)
    child.communicate(timeout=30)
    name_dir = cache / "triple"
    assert not [p for p in name_dir.rglob("triple.so") if not p.parent.name.startswith(".build-")]
    path = cpp.build("triple", [src], build_directory=cache)  # the lock died with its holder
    assert _call(path) == 15 and _links(wrapper) == 2
    assert not [p for p in name_dir.iterdir() if p.name.startswith(".build-")]


def test_depfile_parsing(tmp_path):
    dep = tmp_path / "x.d"
    dep.write_text("out.o: a.cc inc/my\\ header.h \\\n  /abs/b.h\n")
    assert _cache.parse_depfile(str(dep)) == ["a.cc", "inc/my header.h", "/abs/b.h"]
    assert _cache.parse_depfile(str(tmp_path / "missing.d")) == []


def test_function_list_normalization():
    assert _codegen.normalize_functions("f") == {"f": None}
    assert _codegen.normalize_functions(["f", "g"]) == {"f": None, "g": None}
    assert _codegen.normalize_functions({"f": "doc"}) == {"f": "doc"}
    with pytest.raises(ValueError, match="not a valid C\\+\\+ identifier"):
        _codegen.normalize_functions(["bad name"])
    with pytest.raises(TypeError):
        _codegen.normalize_functions(3)
    with pytest.raises(ValueError, match="module name"):
        cpp.build_inline("../escape", cpp_sources="int x;")
    with pytest.raises(ValueError, match="cpp_sources or cuda_sources"):
        cpp.build_inline("empty")
