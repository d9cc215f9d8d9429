# Native frames in Python tracebacks: the user's C++ function with file and line, nothing else.
import os
import re
import subprocess
import sys
import textwrap
import traceback

import packedfun
import packedfun.cpp
import pytest
import suite
from packedfun.cpp import _codegen

suite.require("elftools")  # pyelftools reads the DWARF line tables

SOURCE = textwrap.dedent(
    """\
    #include <string>

    namespace mylib {
    __attribute__((noinline)) void CheckPositive(int64_t x, const std::string& what) {
      if (x < 0) PACKEDFUN_THROW(ValueError) << what << " must be >= 0, got " << x;  // THROW
    }
    }  // namespace mylib

    __attribute__((noinline)) int64_t RaiseError(int64_t x) {
      mylib::CheckPositive(x, "x");  // CALL
      return x + 1;
    }
    """
)


def _line_of(marker: str) -> int:
    """The line of `marker` in the generated main.cpp: the prelude comes first."""
    prelude = _codegen._PRELUDE.count("\n")
    lines = SOURCE.splitlines()
    return prelude + next(i for i, text in enumerate(lines, 1) if marker in text)


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> str:
    try:
        return packedfun.cpp.build_inline(
            "native_frames",
            cpp_sources=SOURCE,
            functions="RaiseError",
            extra_cflags=["-g"],
            build_directory=str(tmp_path_factory.mktemp("native_frames")),
        )
    except packedfun.cpp.CompilerNotFoundError:
        pytest.skip("no C++ compiler")


def _printed(exc: BaseException) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


def test_user_frames_with_file_and_line(library):
    mod = packedfun.load_module(library)
    assert mod.RaiseError(1) == 2
    with pytest.raises(ValueError, match="x must be >= 0, got -1") as info:
        mod.RaiseError(-1)
    text = _printed(info.value)
    native = text[text.index("Native backtrace (most recent call last):") :]
    frames = re.findall(r'File "([^"]+)", line (\d+), in (\S+)', native)
    # Most recent call last, like Python's own frames: the caller, then the thrower.
    assert [(os.path.basename(f), int(n), name) for f, n, name in frames] == [
        ("main.cpp", _line_of("// CALL"), "RaiseError"),
        ("main.cpp", _line_of("// THROW"), "mylib::CheckPositive"),
    ], native
    # No machinery: packedfun's frames, CPython's, libc's; no long std names.
    for unwanted in ("packedfun::", "libpackedfun", "_core", "Py", "libc", "basic_string", "#0"):
        assert unwanted not in native, (unwanted, native)


def test_alternating_throw_sites_keep_their_own_frames(library):
    # The capture reuses the thread's previous walk where the stack matches it; errors from
    # different depths in turn must still each list exactly their own frames.
    mod = packedfun.load_module(library)
    make_array = packedfun.get_global_func("testing.make_array")
    for _ in range(3):
        for fn, names in [(mod.RaiseError, ["RaiseError", "mylib::CheckPositive"]),
                          (make_array, ["packedfun::testing::MakeArray"])]:  # fmt: skip
            with pytest.raises(ValueError) as info:
                fn(-1)
            native = str(info.value.__notes__[0])
            assert re.findall(r"(?:line \d+|offset 0x[0-9a-f]+), in (\S+)", native) == names, native


def test_wrong_argument_type_prints_no_native_backtrace(library):
    mod = packedfun.load_module(library)
    with pytest.raises(TypeError, match="RaiseError") as info:
        mod.RaiseError("x")
    text = _printed(info.value)
    assert "Native backtrace" not in text and 'File "' + library not in text, text
    assert "offset 0x" not in text


_CHILD = """
import sys, traceback
import packedfun
mod = packedfun.load_module(sys.argv[1])
try:
    mod.RaiseError(-1)
except ValueError as exc:
    err = exc
note = err.__notes__[0]
# Lazy: nothing is symbolized (and pyelftools is not even imported) until the traceback prints.
assert str.__str__(note) == "Native backtrace: (symbolized when printed)", str.__str__(note)
assert "packedfun._native_frames" not in sys.modules
assert "elftools" not in sys.modules
print("".join(traceback.format_exception(type(err), err, err.__traceback__)))
"""


@pytest.mark.parametrize("backend", ["_core", "ctypes"])
@pytest.mark.parametrize("enabled", [True, False])
def test_both_backends_lazily_and_the_switch(library, backend, enabled):
    env = dict(os.environ)
    env.pop("PACKEDFUN_BACKEND", None)
    if backend == "ctypes":
        env["PACKEDFUN_BACKEND"] = "ctypes"
    if not enabled:
        env["PACKEDFUN_BACKTRACE"] = "0"
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, library],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "ValueError: x must be >= 0, got -1" in out
    if enabled:
        assert re.search(r'File "[^"]*main\.cpp", line \d+, in mylib::CheckPositive', out), out
        assert re.search(r'File "[^"]*main\.cpp", line \d+, in RaiseError', out), out
    else:
        assert "main.cpp" not in out and "Native backtrace" not in out, out
