# Tests for packedfun.config and `packedfun-config`: real paths, and flags that build a program.
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import suite
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
    assert config.get_cflags().split() == [f"-I{config.get_include_dir()}"]
    assert config.get_rpath() == config.get_lib_dir()
    ldflags = config.get_ldflags().split()
    assert f"-L{config.get_lib_dir()}" in ldflags
    # The rpath in the one spelling gcc, clang and nvcc all accept; never -Wl, (nvcc rejects it).
    assert "-Xlinker -rpath -Xlinker " + config.get_lib_dir() in config.get_ldflags()
    assert not any(flag.startswith("-Wl,") for flag in ldflags)


def test_cli_prints_cflags_and_rpath():
    proc = _run_config("--cflags", "--rpath", "--ldflags")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        config.get_cflags(),
        config.get_rpath(),
        config.get_ldflags(),
    ]


def test_no_query_is_a_usage_error():
    proc = _run_config()
    assert proc.returncode == 2
    assert "--cmakedir" in proc.stderr
    assert proc.stdout == ""


def test_unknown_option_is_rejected():
    proc = _run_config("--nonsense")
    assert proc.returncode == 2
    assert "unrecognized arguments: --nonsense" in proc.stderr


@pytest.mark.deselect_if(not suite.packedfun_in_site_dir(), reason=suite.NOT_IN_SITE_DIR)
def test_console_script_matches_module():
    # pip puts console scripts beside the interpreter (a venv's bin/, also when not activated)
    scripts = os.pathsep.join([sysconfig.get_path("scripts"), os.environ.get("PATH", "")])
    script = shutil.which("packedfun-config", path=scripts)
    assert script is not None, f"packedfun is installed, but no packedfun-config in {scripts}"
    proc = subprocess.run(
        [script, "--cmakedir"], capture_output=True, text=True, check=True, timeout=60
    )
    # The script on PATH may belong to another install; it must at least name a real config dir.
    assert (Path(proc.stdout.strip()) / "packedfunConfig.cmake").is_file()


_C_PROGRAM = (
    "#include <packedfun/c_api.h>\n"
    "#include <stdio.h>\n"
    'int main(void) { printf("%u\\n", PFGetABIVersion()); return 0; }\n'
)


def _build_and_run(tmp_path, compiler: str, flags: list, suffix: str) -> None:
    """Compiles and links the C ABI program with `flags` plus the linker line, then runs it
    without LD_LIBRARY_PATH: the embedded rpath alone must find libpackedfun.so."""
    src = tmp_path / f"abi_version{suffix}"
    src.write_text(_C_PROGRAM)
    exe = tmp_path / "abi_version"
    cmd = [compiler, *flags, str(src), "-o", str(exe)]
    cmd += [*config.get_ldflags().split(), *config.get_libs().split()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"$ {' '.join(cmd)}\n{proc.stdout}{proc.stderr}"
    # A sanitized runtime (tests/sanitize/run.py) pulls in libasan: the linker warns of its tmpnam.
    stderr = "\n".join(line for line in proc.stderr.splitlines() if "libasan.so" not in line)
    assert "warning" not in stderr, proc.stderr
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    out = subprocess.run(
        [str(exe)], check=True, capture_output=True, text=True, timeout=60, env=env
    )
    assert int(out.stdout) > 0


def test_cxxflags_compile_and_link_a_program(tmp_path):
    cxx = shutil.which(os.environ.get("CXX", "g++")) or shutil.which("c++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    _build_and_run(tmp_path, cxx, ["-Werror", *config.get_cxxflags().split()], ".cc")


def test_cflags_compile_a_c_program_without_warnings(tmp_path):
    cc = shutil.which(os.environ.get("CC", "gcc")) or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    _build_and_run(
        tmp_path, cc, ["-std=c11", "-Wall", "-Werror", *config.get_cflags().split()], ".c"
    )


def test_flags_work_with_clang(tmp_path):
    clang = shutil.which("clang")
    if clang is None:
        pytest.skip("optional compiler: clang is not installed")
    _build_and_run(tmp_path, clang, ["-Werror", *config.get_cflags().split()], ".c")


def test_flags_work_with_nvcc(tmp_path):
    """nvcc compiles and links (no GPU needed) with the same flags; it rejects -Wl,-rpath."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not installed")
    _build_and_run(tmp_path, nvcc, config.get_cxxflags().split(), ".cu")
