# Fast routes of tensors: NumPy read from its array header, cached __dlpack__ keywords, Tensor args.
import packedfun
import pytest
import suite

np = suite.require("numpy")


@pytest.mark.parametrize(
    "dt", ["bool", "int8", "uint16", "int32", "int64", "uint64", "float16", "float32", "complex64"]
)
def test_numpy_dtypes_shapes_strides_match(dt):
    a = np.arange(24).astype(dt).reshape(2, 3, 4)[:, ::-1, ::2]
    t = packedfun.from_dlpack(a)
    assert t.shape == a.shape
    assert t.strides == tuple(s // a.itemsize for s in a.strides)
    assert str(t.dtype) == dt
    assert t.data_ptr == a.ctypes.data
    back = np.from_dlpack(t)
    assert back.dtype == a.dtype and np.array_equal(back, a)


def test_numpy_zero_dim_and_readonly():
    a = np.full((), 3.5)
    t = packedfun.from_dlpack(a)
    assert t.ndim == 0 and t.shape == ()
    ro = np.arange(4, dtype="float32")
    ro.flags.writeable = False
    assert packedfun.from_dlpack(ro).readonly
    assert not packedfun.from_dlpack(np.arange(4)).readonly


def test_numpy_keeps_array_alive_and_shares_memory():
    a = np.zeros(4, dtype="int32")
    t = packedfun.from_dlpack(a)
    del a
    back = np.from_dlpack(t)
    back[1] = 7
    assert np.from_dlpack(t)[1] == 7


@pytest.mark.parametrize("dt", [">f4", "object"])
def test_numpy_undescribable_dtypes_raise_buffererror(dt):
    a = np.zeros(3, dtype=dt)
    with pytest.raises(BufferError, match="dtype"):
        packedfun.from_dlpack(a)


def test_dlpack_keywords_repeated_and_invalid():
    t = packedfun.from_dlpack(np.arange(3, dtype="float32"))
    for _ in range(3):  # the same keyword tuple each time (the cached route)
        cap = t.__dlpack__(max_version=(1, 0), dl_device=(1, 0), copy=None)
        assert type(cap).__name__ == "PyCapsule"
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        t.__dlpack__(max_version=(1, 0), bogus=1)
    cap = t.__dlpack__(max_version=(1, 0), dl_device=(1, 0), copy=None)  # cache still right
    assert packedfun.from_dlpack(cap).shape == (3,)
    with pytest.raises((TypeError, BufferError), match="dl_device|requested"):
        t.__dlpack__(dl_device=(1,))
    with pytest.raises(BufferError, match="requested"):
        t.__dlpack__(dl_device=(2, 0))
    with pytest.raises(TypeError, match="keyword arguments only|positional argument"):
        t.__dlpack__(None)


def test_from_dlpack_is_the_backend_function():
    assert packedfun.from_dlpack is packedfun.tensor.core.from_dlpack
    assert "DLPack" in (packedfun.from_dlpack.__doc__ or "")
