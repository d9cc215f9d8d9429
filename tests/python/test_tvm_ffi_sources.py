# Sources and build tools written for apache-tvm-ffi, served by packedfun on the bridge route.
"""``python -m tvm_ffi.config`` answered for the installed apache-tvm-ffi, tvm-ffi's libinfo
helpers, apache-tvm-ffi's own build tools left without the switch, and ``cpp.load_inline``
recognising tvm-ffi sources without being told (built against apache-tvm-ffi's headers, loaded
through the bridge). The examples themselves: ``test_tvm_ffi_examples.py`` (full run)."""

from __future__ import annotations

import io
import os
from contextlib import redirect_stdout

import numpy as np
import packedfun
import pytest
import suite
from packedfun import libinfo, tvm_ffi_compat
from packedfun.cpp import _codegen

suite.require("tvm_ffi")


def test_paths_are_apache_tvm_ffis():
    paths = tvm_ffi_compat.tvm_ffi_paths()
    assert os.path.isfile(paths["library"]) and paths["library"].endswith("libtvm_ffi.so")
    assert os.path.isfile(os.path.join(paths["include"], "tvm", "ffi", "c_api.h"))
    assert os.path.isfile(os.path.join(paths["cmake"], "tvm_ffi-config.cmake"))
    assert libinfo.find_libtvm_ffi() == paths["library"]
    assert libinfo.find_include_path() == libinfo.find_dlpack_include_path() == paths["include"]
    assert libinfo.find_cmake_path() == paths["cmake"]
    assert libinfo.include_paths() == [paths["include"]]


def test_config_main_prints_in_apache_tvm_ffis_order():
    out = io.StringIO()
    with redirect_stdout(out):
        assert tvm_ffi_compat.config_main(["--libs", "--cmakedir", "--cxxflags"]) == 0
    paths = tvm_ffi_compat.tvm_ffi_paths()
    inc = paths["include"]
    assert out.getvalue().splitlines() == [
        paths["cmake"],
        f"-I{inc} -I{inc} -std=c++17",
        "-ltvm_ffi",
    ]


@pytest.mark.parametrize(
    "argv, tool",
    [
        (["python", "-m", "tvm_ffi.stub.cli", "out", "--dlls", "x.so"], True),
        (["python", "-mtvm_ffi.utils.embed_cubin", "--output-obj"], True),
        (["python", "/venv/bin/tvm-ffi-config", "--libs"], True),
        (["python", "-I", "/venv/bin/tvm-ffi-stubgen"], True),
        (["python", "-m", "tvm_ffi.config", "--cmakedir"], False),
        (["python", "main.py"], False),
        (["python", "-c", "import tvm_ffi"], False),
        (["python"], False),
    ],
)
def test_apache_tvm_ffis_own_tools_run_without_the_switch(argv, tool):
    assert tvm_ffi_compat._runs_tvm_ffi_tool(argv) is tool


def test_recognises_sources_written_for_tvm_ffi():
    assert _codegen.written_for_tvm_ffi(["void f(tvm::ffi::TensorView x) {}"])
    assert _codegen.written_for_tvm_ffi(["", "void* s = TVMFFIEnvGetStream(2, 0);"])
    assert _codegen.written_for_tvm_ffi(["#include <tvm/ffi/function.h>\n"])
    assert not _codegen.written_for_tvm_ffi(["int64_t add(int64_t a, int64_t b);"])
    # packedfun code that uses the compatibility names stays packedfun code
    assert not _codegen.written_for_tvm_ffi(["#include <packedfun/compat/tvm_ffi.h>\nTVM_FFI_X"])


_TVM_FFI_SOURCE = r"""
void add_one_cpu(tvm::ffi::TensorView x, tvm::ffi::TensorView y) {
  TVM_FFI_ICHECK(x.ndim() == 1) << "x must be a 1D tensor";
  DLDataType f32_dtype{kDLFloat, 32, 1};
  TVM_FFI_ICHECK(x.dtype() == f32_dtype) << "x must be a float tensor";
  for (int i = 0; i < x.size(0); ++i) {
    static_cast<float*>(y.data_ptr())[i] = static_cast<float*>(x.data_ptr())[i] + 1;
  }
}
"""


def test_load_inline_builds_tvm_ffi_sources_against_its_headers(tmp_path):
    mod = packedfun.cpp.load_inline(
        "tvmsrc_add_one", cpp_sources=_TVM_FFI_SOURCE, functions=["add_one_cpu"],
        build_directory=str(tmp_path),
    )  # fmt: skip
    x = np.arange(5, dtype="float32")
    y = np.empty_like(x)
    mod.add_one_cpu(x, y)
    np.testing.assert_array_equal(y, x + 1)
    with pytest.raises(packedfun.error.InternalError, match="x must be a float tensor"):
        mod.add_one_cpu(np.arange(5, dtype="int32"), y)  # TVM_FFI_ICHECK: tvm-ffi's InternalError
    (built,) = [p for p in tmp_path.rglob("tvmsrc_add_one.so")]
    needed = open(built, "rb").read()
    assert b"libtvm_ffi.so" in needed and b"libpackedfun.so" not in needed


def test_tvm_ffi_source_without_apache_tvm_ffi_names_what_is_missing(tmp_path, monkeypatch):
    """Without apache-tvm-ffi, tvm-ffi sources build on the compatibility header; a tvm-ffi C
    name it lacks fails the build with the compiler's message naming it and a pointer to the
    migration page (never a library that reads the wrong bytes)."""

    def missing():
        raise tvm_ffi_compat.TvmFfiNotInstalledError("apache-tvm-ffi is not installed")

    monkeypatch.setattr(tvm_ffi_compat, "tvm_ffi_paths", missing)
    source = "int64_t stream_of(int64_t dev) {\n"
    source += "  return reinterpret_cast<int64_t>(TVMFFIEnvGetStream(kDLCUDA, dev));\n}\n"
    with pytest.raises(packedfun.cpp.BuildError) as info:
        packedfun.cpp.build_inline(
            "tvmsrc_no_tvm_ffi", cpp_sources=source, functions=["stream_of"],
            build_directory=str(tmp_path),
        )  # fmt: skip
    message = str(info.value)
    assert "TVMFFIEnvGetStream" in message
    assert "docs/migration-from-tvm-ffi.md" in message and "pip install apache-tvm-ffi" in message
