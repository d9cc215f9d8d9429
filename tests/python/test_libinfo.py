# packedfun.libinfo: an extension package finds the library that sits inside it.
import sys

import pytest
from packedfun import libinfo


@pytest.fixture
def fake_package(tmp_path, monkeypatch):
    pkg = tmp_path / "fake_ext_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield pkg
    sys.modules.pop("fake_ext_pkg", None)


def test_finds_lib_next_to_init_by_module_name(fake_package):
    (fake_package / "libmy_ext.so").write_bytes(b"")
    found = libinfo.find_package_library("fake_ext_pkg", "my_ext")
    assert found == str(fake_package.resolve() / "libmy_ext.so")


def test_finds_lib_in_lib_subdir_from_file_path(fake_package):
    (fake_package / "lib").mkdir()
    (fake_package / "lib" / "libmy_ext.so").write_bytes(b"")
    found = libinfo.find_package_library(str(fake_package / "__init__.py"), "my_ext")
    assert found == str(fake_package / "lib" / "libmy_ext.so")


def test_prefers_the_package_dir_over_lib(fake_package):
    (fake_package / "lib").mkdir()
    (fake_package / "lib" / "libmy_ext.so").write_bytes(b"")
    (fake_package / "my_ext.so").write_bytes(b"")
    assert libinfo.find_package_library(fake_package, "my_ext").endswith("fake_ext_pkg/my_ext.so")


def test_missing_library_lists_what_was_tried(fake_package):
    with pytest.raises(FileNotFoundError, match=r"'nothing'.*libnothing\.so.*lib/libnothing\.so"):
        libinfo.find_package_library("fake_ext_pkg", "nothing")


def test_bad_arguments_raise_type_error():
    with pytest.raises(TypeError, match="name"):
        libinfo.find_package_library("packedfun", "")
    with pytest.raises(TypeError, match="package"):
        libinfo.find_package_library(42, "x")  # type: ignore[arg-type]


def test_loading_a_non_library_raises(fake_package):
    (fake_package / "libbroken.so").write_bytes(b"not an ELF file")
    # OSError: "when the dynamic loader refuses the file" (load_package_library's docstring).
    with pytest.raises(OSError) as info:
        libinfo.load_package_library("fake_ext_pkg", "broken")
    assert "libbroken.so" in str(info.value)
