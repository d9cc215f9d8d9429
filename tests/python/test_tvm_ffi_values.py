# apache-tvm-ffi's value forms that its own suite relies on: dtype objects, stream objects,
# devices, tensors and its libinfo helpers, on packedfun (both backends).
"""What tvm-ffi code passes and reads: NumPy/torch/ml_dtypes dtypes and ``__cuda_stream__``
objects as arguments, empty tensors' ``is_contiguous``, the ``Unknown device`` wording under the
switch, and ``libinfo``'s path helpers (docs/migration-from-tvm-ffi.md)."""

from __future__ import annotations

import ctypes
import pathlib
import sys

import packedfun
import pytest
import suite
from test_tvm_ffi_switch import run_child

np = suite.require("numpy")
echo = packedfun.get_global_func("testing.echo")


@pytest.mark.parametrize(
    "name, code, bits",
    [("int8", 0, 8), ("uint16", 1, 16), ("float32", 2, 32), ("float64", 2, 64), ("bool", 6, 8)],
)
def test_numpy_dtype_argument_arrives_as_a_dtype(name, code, bits):
    for value in (np.dtype(name), [np.dtype(name)]):
        back = echo(value)
        back = back[0] if isinstance(value, list) else back
        assert isinstance(back, packedfun.dtype), type(back)
        assert (back.type_code, back.bits, back.lanes) == (code, bits, 1)
    converted = packedfun.convert(np.dtype(name))
    assert isinstance(converted, packedfun.dtype) and converted == name


def test_torch_and_ml_dtypes_arguments_arrive_as_dtypes():
    torch = suite.require("torch")
    ml_dtypes = suite.require("ml_dtypes")
    cases = [
        (torch.bfloat16, (4, 16, 1)),
        (torch.float8_e4m3fn, (10, 8, 1)),
        (torch.uint8, (1, 8, 1)),
        (np.dtype(ml_dtypes.int4), (0, 4, 1)),
        (np.dtype(ml_dtypes.float4_e2m1fn), (17, 4, 1)),
    ]
    for value, fields in cases:
        back = echo(value)
        assert isinstance(back, packedfun.dtype), (value, type(back))
        assert (back.type_code, back.bits, back.lanes) == fields


def test_a_numpy_scalar_type_is_not_a_dtype_argument():
    # only dtype *instances* convert; the scalar class np.int8 is a callable, so a Function
    assert not isinstance(echo(np.int8), packedfun.dtype)


class _Stream:
    def __init__(self, handle: int) -> None:
        self.handle = handle

    def __cuda_stream__(self) -> tuple:
        return (0, self.handle)


def test_cuda_stream_object_argument_is_an_opaque_pointer():
    back = echo(_Stream(0x1234))
    assert isinstance(back, ctypes.c_void_p) and back.value == 0x1234
    assert echo([_Stream(7)])[0].value == 7


def test_cuda_stream_object_with_a_bad_handle_raises_type_error():
    with pytest.raises(TypeError):
        echo(_Stream("not a handle"))  # type: ignore[arg-type]


def test_empty_tensor_is_contiguous_whatever_its_strides():
    for shape in [(4, 0, 4), (0,), (0, 3)]:
        data = np.zeros(shape, dtype="int16")
        assert packedfun.from_dlpack(data).is_contiguous(), shape
    assert not packedfun.from_dlpack(np.zeros((4, 4), "int16")[:, ::2]).is_contiguous()


def test_unknown_device_wording_packedfun_and_under_the_switch():
    with pytest.raises(ValueError, match=r"unknown device type 'llvm' in 'llvm'"):
        packedfun.device("llvm")
    out = run_child("""
        import packedfun.tvm_ffi_compat
        packedfun.tvm_ffi_compat.install()
        import tvm_ffi
        for alias in ("llvm", "c", "nvptx"):
            try:
                tvm_ffi.device(alias)
            except ValueError as exc:
                print(exc)
    """)
    assert out.splitlines() == [f"Unknown device: {a}" for a in ("llvm", "c", "nvptx")]


def test_libinfo_path_helpers_answer_for_apache_tvm_ffi():
    suite.require("tvm_ffi")  # apache-tvm-ffi installed (not imported)
    from packedfun import libinfo

    root = pathlib.Path(libinfo.find_source_path())
    assert (root / "src").is_dir()
    helpers = pathlib.Path(libinfo.find_python_helper_include_path())
    assert (helpers / "tvm_ffi_python_helpers.h").is_file()
    cython = pathlib.Path(libinfo.find_cython_lib())
    assert cython.is_file() and cython.name.startswith("core.")
    lib = libinfo._find_library_by_basename("apache-tvm-ffi", "tvm_ffi")
    assert lib == pathlib.Path(libinfo.find_libtvm_ffi()).resolve()


def test_find_library_by_basename_extra_paths_and_errors(tmp_path):
    from packedfun import libinfo

    (tmp_path / "libmine.so").write_bytes(b"")
    found = libinfo._find_library_by_basename("no-such-dist", "mine", extra_lib_paths=[tmp_path])
    assert found == (tmp_path / "libmine.so").resolve()
    with pytest.raises(TypeError, match=r"extra_lib_paths\[1\] must be a pathlib\.Path"):
        libinfo._find_library_by_basename("x", "mine", [tmp_path, str(tmp_path)])
    with pytest.raises(RuntimeError, match="libnothing_here.so"):
        libinfo._find_library_by_basename("no-such-dist", "nothing_here", [tmp_path],
                                          use_env_path=False)  # fmt: skip


def test_config_answers_sourcedir_and_cython_lib_path():
    suite.require("tvm_ffi")
    from packedfun import libinfo

    out = run_child("""
        import sys
        from packedfun.tvm_ffi_compat import config_main
        config_main(["--sourcedir"]); config_main(["--cython-lib-path"])
    """)
    assert out.splitlines() == [libinfo.find_source_path(), libinfo.find_cython_lib()]
    assert sys.executable  # the child ran with this interpreter


def test_convert_func_is_convert_and_hands_framework_tensors():
    f = packedfun.convert_func(lambda a, b: a + b)
    assert isinstance(f, packedfun.Function) and f(1, 2) == 3
    torch = suite.require("torch")
    if not hasattr(torch.Tensor, "__dlpack_c_exchange_api__"):
        pytest.skip("torch.Tensor.__dlpack_c_exchange_api__ not available")
    seen = []

    def body(t, n):
        seen.append(type(t))
        return n

    g = packedfun.convert_func(body, tensor_cls=torch.Tensor)
    tensor = packedfun.from_dlpack(np.arange(3, dtype="float32"))
    assert g(tensor, 5) == 5 and seen == [torch.Tensor]
    apply = packedfun.get_global_func("testing.apply")
    assert apply(g, tensor, 6) == 6 and seen[-1] is torch.Tensor  # called from C++ too


def test_convert_func_refuses_bad_arguments():
    class NoExchange:
        pass

    for cls in (NoExchange, object, 3):
        with pytest.raises(TypeError, match="__dlpack_c_exchange_api__"):
            packedfun.convert_func(lambda x: x, tensor_cls=cls)
    with pytest.raises(TypeError, match="callable"):
        packedfun.convert_func(42)

    def raises(x):
        raise ValueError(f"boom {x}")

    with pytest.raises(ValueError, match="boom 7"):
        packedfun.convert_func(raises)(7)


def test_packedfun_testing_names_come_first_under_the_switch():
    suite.require("tvm_ffi")
    out = run_child("""
        import packedfun.tvm_ffi_compat
        packedfun.tvm_ffi_compat.install()
        import tvm_ffi

        class Mine:
            pass

        x = Mine()
        print(tvm_ffi.get_global_func("testing.echo")(x) is x)  # packedfun's echo: any object
        print(tvm_ffi.get_global_func("testing.get_add_one_c_symbol", allow_missing=True)
              is not None)  # tvm-ffi's own testing names are there too
    """)
    assert out.split() == ["True", "True"]


_PF_ADD = r"""
int64_t add_three(int64_t x) { return x + 3; }
"""


def test_build_inline_output_object_then_build_links_it(tmp_path):
    from packedfun import cpp

    obj = cpp.build_inline("pf_obj", cpp_sources=_PF_ADD, functions=["add_three"],
                           output="pf_obj.o", build_directory=str(tmp_path))  # fmt: skip
    assert obj.endswith("/pf_obj.o") and pathlib.Path(obj).is_file()
    assert obj == cpp.build_inline(
        "pf_obj",
        cpp_sources=_PF_ADD,
        functions=["add_three"],
        output="pf_obj.o",
        build_directory=str(tmp_path),
    )  # cached
    lib = cpp.build("pf_from_obj", [obj], build_directory=str(tmp_path))
    assert lib.endswith("/pf_from_obj.so")
    assert packedfun.load_module(lib).add_three(4) == 7
    named = cpp.build_inline("pf_named", cpp_sources=_PF_ADD, functions=["add_three"],
                             output="other.so", build_directory=str(tmp_path))  # fmt: skip
    assert named.endswith("/other.so") and packedfun.load_module(named).add_three(1) == 4


def test_build_output_of_tvm_ffi_c_source_links_against_libtvm_ffi(tmp_path):
    suite.require("tvm_ffi")  # apache-tvm-ffi's headers and library
    from packedfun import cpp

    source = tmp_path / "c_add.c"
    source.write_text(
        "#include <tvm/ffi/c_api.h>\n"
        "TVM_FFI_DLL_EXPORT int __tvm_ffi_c_add(void* self, const TVMFFIAny* args,\n"
        "                                       int32_t num_args, TVMFFIAny* result) {\n"
        "  result->type_index = kTVMFFIInt;\n  result->zero_padding = 0;\n"
        "  result->v_int64 = args[0].v_int64 + args[1].v_int64;\n  return 0;\n}\n"
    )
    obj = cpp.build("c_add", [str(source)], output="c_add.o", build_directory=str(tmp_path))
    assert obj.endswith("/c_add.o")
    lib = cpp.build("c_add_lib", [obj], build_directory=str(tmp_path))
    assert packedfun.load_module(lib).c_add(10, 20) == 30


@pytest.mark.parametrize(
    "output, exc",
    [("sub/x.o", ValueError), ("", ValueError), ("..", ValueError), (3, TypeError)],
)
def test_build_output_must_be_a_file_name(tmp_path, output, exc):
    from packedfun import cpp

    with pytest.raises(exc, match="output"):
        cpp.build_inline("bad_out", cpp_sources=_PF_ADD, functions=["add_three"],
                         output=output, build_directory=str(tmp_path))  # fmt: skip


def test_tensor_size_and_data_ptr_are_ints_and_callable():
    data = np.zeros((10, 8, 4, 2), dtype="int16")
    x = packedfun.from_dlpack(data)
    assert x.size == 640 and isinstance(x.size, int) and x.size + 1 == 641
    assert x.size() == 640 and x.size(0) == 10 and x.size(-1) == 2
    with pytest.raises(IndexError, match="dimension 4"):
        x.size(4)
    with pytest.raises(TypeError):
        x.size("0")
    assert x.data_ptr == data.ctypes.data and isinstance(x.data_ptr, int)
    assert x.data_ptr() == data.ctypes.data
    view = data[2:]
    assert packedfun.from_dlpack(view).data_ptr() == view.ctypes.data


def test_chandle_is_the_native_address():
    x = packedfun.from_dlpack(np.zeros(3, "float32"))
    assert x.__chandle__() == x.handle != 0
    arr = packedfun.convert([1, 2])
    assert arr.__chandle__() == arr.handle and echo(arr).__chandle__() == arr.handle

    class Holder:
        def __tvm_ffi_object__(self):
            return x

    assert echo(Holder()).__chandle__() == x.__chandle__()


def test_registered_function_is_same_as_its_python_function():
    def double(x):
        return 2 * x

    packedfun.register_global_func("conf_values.double", double, override=True)
    try:
        f = packedfun.get_global_func("conf_values.double")
        assert f.same_as(double) and f.is_(double) and f(4) == 8
        assert not f.same_as(lambda x: 2 * x) and not f.same_as(None)
        assert f.same_as(f) and f.same_as(packedfun.get_global_func("conf_values.double"))
        assert not echo.same_as(double)  # a native Function wraps no Python callable
        g = packedfun.convert(double)
        assert g.same_as(double)
    finally:
        packedfun.remove_global_func("conf_values.double")
