# Tests for packedfun.config and `packedfun-config`: real paths, and flags that build a program.
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packedfun import config


def _run_config(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "packedfun.config", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_paths_point_at_the_shipped_files():
    include = Path(config.get_include_dir())
    assert (include / "packedfun" / "c_api.h").is_file()
    assert (include / "dlpack" / "dlpack.h").is_file()
    assert (Path(config.get_lib_dir()) / "libpackedfun.so").is_file()
    assert (Path(config.get_cmake_dir()) / "packedfunConfig.cmake").is_file()


def test_module_cli_prints_each_query_in_order():
    proc = _run_config("--libs", "--includedir", "--cmakedir", "--libdir")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "-lpackedfun",
        config.get_include_dir(),
        config.get_cmake_dir(),
        config.get_lib_dir(),
    ]


def test_flags_name_the_include_and_lib_dirs():
    assert f"-I{config.get_include_dir()}" in config.get_cxxflags().split()
    assert "-std=c++17" in config.get_cxxflags().split()
    ldflags = config.get_ldflags().split()
    assert f"-L{config.get_lib_dir()}" in ldflags
    assert f"-Wl,-rpath,{config.get_lib_dir()}" in ldflags


def test_no_query_is_a_usage_error():
    proc = _run_config()
    assert proc.returncode == 2
    assert "--cmakedir" in proc.stderr
    assert proc.stdout == ""


def test_unknown_option_is_rejected():
    proc = _run_config("--nonsense")
    assert proc.returncode == 2
    assert "unrecognized arguments: --nonsense" in proc.stderr


def test_console_script_matches_module():
    script = shutil.which("packedfun-config")
    if script is None:
        pytest.skip("packedfun-config is only on PATH once the package is pip-installed")
    proc = subprocess.run(
        [script, "--cmakedir"], capture_output=True, text=True, check=True, timeout=60
    )
    # The script on PATH may belong to another install; it must at least name a real config dir.
    assert (Path(proc.stdout.strip()) / "packedfunConfig.cmake").is_file()


def test_flags_compile_and_link_a_program(tmp_path):
    cxx = shutil.which(os.environ.get("CXX", "g++")) or shutil.which("c++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    src = tmp_path / "abi_version.cc"
    src.write_text(
        "#include <packedfun/c_api.h>\n"
        "#include <cstdio>\n"
        'int main() { std::printf("%u\\n", PFGetABIVersion()); return 0; }\n'
    )
    exe = tmp_path / "abi_version"
    cmd = [
        cxx,
        *config.get_cxxflags().split(),
        str(src),
        "-o",
        str(exe),
        *config.get_ldflags().split(),
        *config.get_libs().split(),
    ]
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True, timeout=60)
    assert int(out.stdout) > 0
