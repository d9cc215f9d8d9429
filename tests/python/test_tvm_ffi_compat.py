# apache-tvm-ffi users at home: its names and behaviours under `import packedfun as tvm_ffi`.
"""Each test is written the way apache-tvm-ffi's guide and API reference use the name; the
deliberate differences are listed in docs/migration-from-tvm-ffi.md."""

import importlib.util

import packedfun as tvm_ffi
import pytest
import suite

np = suite.require("numpy")


def test_device_index_type_and_class():
    dev = tvm_ffi.device("cuda", 1)
    assert isinstance(dev, tvm_ffi.Device)
    assert dev.index == 1 and dev.dlpack_device_type() == 2 and dev.type == "cuda"
    cpu = tvm_ffi.Device("cpu")
    assert cpu.index == 0 and cpu.dlpack_device_type() == 1
    assert str(cpu) == "cpu:0"


@pytest.mark.parametrize(
    "alias, name",
    [
        ("i32", "int32"),
        ("u8", "uint8"),
        ("f16", "float16"),
        ("f64", "float64"),
        ("bf16", "bfloat16"),
        ("f32x4", "float32x4"),
        ("i8x4", "int8x4"),
        ("f8_e4m3", "float8_e4m3"),
        ("f8_e5m2", "float8_e5m2"),
        ("f4_e2m1fn", "float4_e2m1fn"),
        ("float4_e2m1fn_x2", "float4_e2m1fnx2"),
    ],
)
def test_dtype_aliases(alias, name):
    d = tvm_ffi.dtype(alias)
    assert d == tvm_ffi.dtype(name) and str(d) == alias and repr(d) == f"dtype('{alias}')"
    assert d == alias and d == name  # comparing with the other spelling parses it
    assert isinstance(d, str) and hash(d) == hash(name)  # a str, hashed by its canonical name


@pytest.mark.parametrize("bad", ["i", "f8_e9m9", "q32", "float32_xq", "i32_x0x"])
def test_bad_dtype_aliases_raise_naming_the_text(bad):
    with pytest.raises(ValueError, match=bad):
        tvm_ffi.dtype(bad)
    assert not tvm_ffi.dtype.is_dtype(bad)
    assert tvm_ffi.dtype.is_dtype("f32") and tvm_ffi.dtype.is_dtype(tvm_ffi.dtype("int8"))


def test_dtype_with_lanes_and_kind_predicates():
    f32 = tvm_ffi.dtype("float32")
    v4 = f32.with_lanes(4)
    assert str(v4) == "float32x4" and v4.lanes == 4 and v4.bits == 32 and v4.itemsize == 16
    assert f32.lanes == 1  # unchanged
    for bad, exc in ((0, ValueError), (70000, OverflowError), ("4", TypeError), (True, TypeError)):
        with pytest.raises(exc, match="lanes"):
            f32.with_lanes(bad)
    kinds = {
        "bool": (True, False, False),
        "int8": (False, True, False),
        "uint64": (False, True, False),
        "float16": (False, False, True),
        "bfloat16": (False, False, True),
        "float8_e4m3fn": (False, False, True),
        "float4_e2m1fn": (False, False, True),
        "complex64": (False, False, False),
    }
    for name, expected in kinds.items():
        d = tvm_ffi.dtype(name)
        assert (d.is_bool, d.is_integer, d.is_float) == expected, name
    assert tvm_ffi.dtype.from_dlpack_data_type((2, 16, 1)) == "float16"
    with pytest.raises(OverflowError, match="bits"):
        tvm_ffi.dtype.from_dlpack_data_type((2, 300, 1))


def test_array_concatenation():
    arr = tvm_ffi.convert([1, 2])
    for result, expected in ((arr + [3], [1, 2, 3]), ([0] + arr, [0, 1, 2]),
                             (arr + arr, [1, 2, 1, 2]), (arr + (9,), [1, 2, 9])):  # fmt: skip
        assert isinstance(result, tvm_ffi.Array) and list(result) == expected
    assert list(arr) == [1, 2]  # unchanged
    with pytest.raises(TypeError):
        arr + 1  # noqa: B018
    with pytest.raises(TypeError):
        arr + "ab"  # noqa: B018


def test_list_concatenation():
    lst, arr = tvm_ffi.List([1, 2]), tvm_ffi.convert([5])
    for result, expected in ((lst + [3], [1, 2, 3]), ([0] + lst, [0, 1, 2]),
                             (lst + lst, [1, 2, 1, 2]), (lst + arr, [1, 2, 5]),
                             (lst + (9,), [1, 2, 9])):  # fmt: skip
        assert type(result) is tvm_ffi.List and list(result) == expected
        assert not result.same_as(lst)  # a new List
    assert type(arr + lst) is tvm_ffi.Array and list(arr + lst) == [5, 1, 2]
    assert list(lst) == [1, 2]  # unchanged
    lst += [7]  # in place, as for list
    assert list(lst) == [1, 2, 7]
    with pytest.raises(TypeError):
        lst + 1  # noqa: B018
    with pytest.raises(OverflowError):
        lst + [2**70]  # noqa: B018 - not convertible, as for List([2**70])


def test_shape_concatenates_and_repeats_like_a_tuple():
    shape = tvm_ffi.Shape((2, 3))
    assert shape + (4,) == (2, 3, 4) and type(shape + (4,)) is tuple
    assert (1,) + shape == (1, 2, 3) and type((1,) + shape) is tuple
    assert shape + shape == (2, 3, 2, 3)
    assert shape * 2 == 2 * shape == (2, 3, 2, 3) and type(shape * 2) is tuple
    assert shape == (2, 3) and hash(shape) == hash((2, 3))  # unchanged
    with pytest.raises(TypeError):
        shape + [4]  # noqa: B018 - as for a tuple
    with pytest.raises(TypeError):
        shape * 1.5  # noqa: B018


def test_list_slice_assignment_and_deletion():
    lst = tvm_ffi.List([1, 2, 3, 4])
    lst[1:3] = [9, 8, 7]
    assert list(lst) == [1, 9, 8, 7, 4]
    lst[::2] = [0, 0, 0]
    assert list(lst) == [0, 9, 0, 7, 0]
    del lst[1::2]
    assert list(lst) == [0, 0, 0]
    lst[0] = 5  # integer indices still go straight to the native list
    assert list(lst) == [5, 0, 0]
    with pytest.raises(ValueError):
        lst[::2] = [1, 2, 3]  # extended slice of the wrong size, as for list
    with pytest.raises(OverflowError):
        lst[0:1] = [7, 2**70]  # not convertible: the list is left unchanged
    assert list(lst) == [5, 0, 0]
    with pytest.raises(IndexError):
        lst[7] = 1


def test_tensor_is_contiguous():
    base = np.zeros((2, 3, 4), "float32")
    views = [base, base[1:2], base[:, 1:2], base[:, :, ::2], base.transpose(1, 0, 2), base[::-1],
             base[:0], np.zeros(()), np.zeros((4, 1), "float32").T]  # fmt: skip
    # base[:, 1:2] leaves gaps between its rows; a dimension of extent 1 may have any stride
    # (the last view: shape (1, 4), strides (1, 1)). apache-tvm-ffi answers the same for each.
    expected = [True, True, False, False, False, False, True, True, True]
    got = [tvm_ffi.from_dlpack(v).is_contiguous() for v in views]
    assert got == expected
    # the same verdict as from_dlpack(..., require_contiguous=True)
    for view, flag in zip(views, expected):
        if flag:
            tvm_ffi.from_dlpack(view, require_contiguous=True)
        else:
            with pytest.raises(ValueError, match="not contiguous"):
                tvm_ffi.from_dlpack(view, require_contiguous=True)


def test_tensor_numel_is_a_method():
    t = tvm_ffi.from_dlpack(np.zeros((2, 3), "float32"))
    assert t.numel() == 6 and t.size == 6
    assert tvm_ffi.from_dlpack(np.zeros((0, 3), "float32")).numel() == 0


def test_from_dlpack_layout_requirements():
    base = np.zeros(64, "float32")
    assert tvm_ffi.from_dlpack(base, require_alignment=4, require_contiguous=True).shape == (64,)
    misaligned = base[1:]
    address = misaligned.__array_interface__["data"][0]
    if address % 8:
        with pytest.raises(ValueError, match="aligned to 8"):
            tvm_ffi.from_dlpack(misaligned, require_alignment=8)
    strided = base[::2]
    assert tvm_ffi.from_dlpack(strided).shape == (32,)
    with pytest.raises(ValueError, match="not contiguous"):
        tvm_ffi.from_dlpack(strided, require_contiguous=True)
    assert tvm_ffi.from_dlpack(np.zeros((3, 1, 4))[:, :, :], require_contiguous=True).numel() == 12
    with pytest.raises(TypeError, match="require_alignment"):
        tvm_ffi.from_dlpack(base, require_alignment="8")
    with pytest.raises(ValueError, match="require_alignment"):
        tvm_ffi.from_dlpack(base, require_alignment=-1)
    with pytest.raises(TypeError):
        tvm_ffi.from_dlpack(base, no_such_option=1)
    with pytest.raises(TypeError):
        tvm_ffi.from_dlpack()


def test_testing_test_int_pair():
    import packedfun.testing

    pair = packedfun.testing.TestIntPair(1, 2)
    assert (pair.a, pair.b, pair.sum()) == (1, 2, 3)
    assert isinstance(pair, packedfun.testing.TestIntPair)
    with pytest.raises(TypeError):
        packedfun.testing.TestIntPair("x", 2)


@pytest.mark.parametrize(
    ("alias", "name"),
    [("fp8_e5m2", "float8_e5m2"), ("fp6_e2m3fn", "float6_e2m3fn"),
     ("fp4_e2m1fn_x2", "float4_e2m1fnx2"), ("fp8_e4m3x4", "float8_e4m3x4")],
)  # fmt: skip
def test_fp_dtype_aliases(alias, name):
    d = tvm_ffi.dtype(alias)
    assert str(d) == alias and d == name and d == tvm_ffi.dtype(name)


def test_module_level_dtype_constants():
    assert tvm_ffi.float32 == "float32" and isinstance(tvm_ffi.float32, tvm_ffi.dtype)
    assert str(tvm_ffi.bool) == "bool" and tvm_ffi.uint16.bits == 16
    assert tvm_ffi.float8_e4m3fn == tvm_ffi.dtype("f8_e4m3fn")
    with pytest.raises(AttributeError):
        tvm_ffi.float31  # noqa: B018


def test_object_id_and_is():
    a = tvm_ffi.Array([1, 2])
    b = tvm_ffi.get_global_func("testing.echo")(a)  # the same native object back
    assert a.id_ == a.handle != 0 and isinstance(a.id_, int)
    assert a.is_(b) and not a.is_(tvm_ffi.Array([1, 2])) and not a.is_(3)


def test_load_module_keep_module_alive():
    import packedfun.testing
    from packedfun import module as module_py

    path = packedfun.testing.library_path()
    before = len(module_py._KEPT_ALIVE)
    m = tvm_ffi.load_module(path, keep_module_alive=True)
    assert module_py._KEPT_ALIVE[-1] is m and len(module_py._KEPT_ALIVE) == before + 1
    tvm_ffi.load_module(path)  # the default keeps nothing
    tvm_ffi.load_module(path, keep_module_alive=False)
    assert len(module_py._KEPT_ALIVE) == before + 1


def test_testing_run_with_gpu_lock():
    from packedfun.testing import run_with_gpu_lock

    assert run_with_gpu_lock(lambda a, b=0: a + b, 1, b=2) == 3
    with pytest.raises(KeyError):
        run_with_gpu_lock({}.__getitem__, "x")
    assert run_with_gpu_lock(lambda: "again") == "again"  # released after the error


def test_stream_names():
    # tvm-ffi's get_raw_stream example, as written; the handle may be an int or a c_void_p.
    import ctypes

    dev = tvm_ffi.device("cpu:0")
    with tvm_ffi.use_raw_stream(dev, 0):
        assert tvm_ffi.get_raw_stream(dev) == 0
    with tvm_ffi.use_raw_stream(dev, 0x1234) as ctx:
        assert isinstance(ctx, tvm_ffi.StreamContext)
        assert tvm_ffi.get_raw_stream(dev) == 0x1234
        with tvm_ffi.StreamContext(dev, ctypes.c_void_p(0x5678)):
            assert tvm_ffi.get_raw_stream(dev) == 0x5678
        assert tvm_ffi.get_raw_stream(dev) == 0x1234
    assert tvm_ffi.get_raw_stream(dev) == 0
    with tvm_ffi.use_raw_stream(dev, ctypes.c_void_p()):  # NULL: the default stream
        assert tvm_ffi.get_raw_stream(dev) == 0
    with pytest.raises(TypeError, match="stream must be"):
        tvm_ffi.use_raw_stream(dev, "0x1234")


def test_dl_device_type_has_dlpack_names():
    kinds = tvm_ffi.DLDeviceType
    assert kinds.kDLCUDA is kinds.cuda and kinds["kDLCPU"] is kinds.cpu
    assert kinds(2).name == "cuda"  # the canonical name stays the short one
    assert tvm_ffi.device(kinds.kDLCUDA, 1) == tvm_ffi.device("cuda:1")
    assert len(list(kinds)) == 16  # aliases add names, not members
    if importlib.util.find_spec("tvm_ffi") is not None:  # apache-tvm-ffi's own enum, by name
        import tvm_ffi as apache

        for name, member in apache.DLDeviceType.__members__.items():
            assert kinds[name] == int(member), name


class _Holds:
    def __init__(self, value):
        self.value = value


class _AsObject(_Holds):
    def __tvm_ffi_object__(self):
        return self.value


class _AsPtr(_Holds):
    def __tvm_ffi_opaque_ptr__(self):
        return self.value


class _AsDataType(_Holds):
    def __dlpack_data_type__(self):
        return self.value


class _AsDevice(_Holds):
    def __dlpack_device__(self):
        return self.value


class _AsInt(_Holds):
    def __tvm_ffi_int__(self):
        return self.value


class _AsFloat(_Holds):
    def __tvm_ffi_float__(self):
        return self.value


class _AsValue(_Holds):
    def __tvm_ffi_value__(self):
        return self.value


class _CallableInt(_AsInt):
    def __call__(self):  # the protocol wins over the callable rule
        raise AssertionError("called")


def test_conversion_protocols():
    import ctypes

    echo = tvm_ffi.get_global_func("testing.echo")
    arr = tvm_ffi.Array([1, 2])
    assert echo(_AsObject(arr)).same_as(arr)
    ptr = echo(_AsPtr(10))
    assert isinstance(ptr, ctypes.c_void_p) and ptr.value == 10
    f32 = tvm_ffi.dtype("float32")
    assert echo(_AsDataType((f32.type_code, f32.bits, f32.lanes))) == f32
    assert tvm_ffi.convert(_AsDataType((0, 8, 1))) == tvm_ffi.dtype("int8")
    assert echo(_AsDevice((2, 1))) == tvm_ffi.device("cuda", 1)
    assert echo(_AsInt(10)) == 10 and type(echo(_AsInt(10))) is int
    assert echo(_AsFloat(10)) == 10.0 and type(echo(_AsFloat(10))) is float
    assert echo(_CallableInt(3)) == 3
    assert echo(_AsValue(10)) == 10
    assert tuple(echo(_AsValue([1, 2, _AsValue(3)]))) == (1, 2, 3)
    assert echo(_AsValue(_AsValue(_AsValue(10)))) == 10
    long_text = "héllo, a string longer than seven bytes"  # a view of a temporary str
    assert echo(_AsValue(long_text)) == long_text
    assert echo(_AsValue(b"some bytes, more than 7")) == b"some bytes, more than 7"
    assert echo([_AsInt(1), _AsValue("x")]) == [1, "x"]  # elements too


def test_conversion_protocols_on_every_call_after_the_first():
    # The rule is fetched once and kept: later values of other protocol classes, as arguments, as
    # elements and as a callback's result, still convert through it, each as its own method says.
    echo = tvm_ffi.get_global_func("testing.echo")
    apply = tvm_ffi.get_global_func("testing.apply")
    for i in range(3):
        text = f"text number {i}, longer than seven bytes"
        assert echo(_AsInt(i)) == i and type(echo(_AsInt(i))) is int
        assert echo(_AsFloat(i)) == float(i) and type(echo(_AsFloat(i))) is float
        assert echo(_AsValue(text)) == text
        assert tuple(echo([_AsFloat(i), _AsValue(i), _AsInt(i + 1)])) == (float(i), i, i + 1)
        assert apply(lambda i=i: _AsInt(i + 10)) == i + 10
        assert apply(lambda text=text: _AsValue(text)) == text
    with pytest.raises(ZeroDivisionError):  # the kept rule still raises what the method raises
        echo(_Raises())
    assert echo(_AsInt(7)) == 7


def test_conversion_protocol_errors():
    echo = tvm_ffi.get_global_func("testing.echo")

    class Loop:
        def __tvm_ffi_value__(self):
            return self

    with pytest.raises(TypeError, match="nest more than"):
        echo(Loop())
    with pytest.raises(TypeError):
        echo(_AsInt("not an int"))
    with pytest.raises(ZeroDivisionError):
        echo(_Raises())


class _Raises:
    def __tvm_ffi_int__(self):
        raise ZeroDivisionError("from the protocol method")


def test_module_passed_as_argument_is_its_native_module():
    mod = tvm_ffi.system_lib()
    echoed = tvm_ffi.get_global_func("testing.echo")(mod)
    assert echoed.same_as(mod.handle)  # not a Function wrapping Module.__call__


def test_device_index_of_another_integer_type():
    assert tvm_ffi.device("cpu", np.int32(1)) == tvm_ffi.device("cpu", 1)
    assert tvm_ffi.device("cuda", np.int64(2)).index == 2
    for bad in (np.True_, np.float32(2), 1.5):
        with pytest.raises(TypeError, match="device_id must be an int"):
            tvm_ffi.device("cpu", bad)
