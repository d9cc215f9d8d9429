# Tests of tensors: dtype/device, from_dlpack and __dlpack__ with NumPy/PyTorch/JAX, edge cases.
import ctypes
import gc
import os
import re
import sys
import weakref

import pytest
import suite

np = suite.require("numpy")
pf = suite.require("packedfun")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tensor_build  # noqa: E402


def _head(signature: str, param: str) -> str:
    """The start of an argument error of a function with this signature, as a regex."""
    return re.escape(f"{signature}: argument '{param}'")


# Message heads of the typed functions below: load_inline functions carry their C++ signature.
TENSOR_NDIM = _head("tensor_ndim(x: Tensor) -> int", "x")


FUNCS = ["tensor_ndim", "tensor_shape_at", "tensor_stride_at", "tensor_data", "tensor_dtype",
         "tensor_device", "tensor_keep", "tensor_empty", "tensor_empty_2d", "tensor_sum_f32",
         "tensor_readonly"]  # fmt: skip


@pytest.fixture(scope="module")
def m():
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "tensor_funcs.cc")
    return tensor_build.load("pf_test_tensor_funcs", src, FUNCS)


def addr(x) -> int:
    ptr = x.value if isinstance(x, ctypes.c_void_p) else x
    return ptr or 0


# ---- dtype and device ----------------------------------------------------------------------------
DTYPE_NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2",
               "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn",
               "complex64", "complex128", "float32x4", "int8x16"]  # fmt: skip


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_dtype_parse_print_roundtrip(name):
    d = pf.dtype(name)
    assert str(d) == name
    assert repr(d) == f"dtype('{name}')"
    assert d == name and d == pf.dtype(name) and hash(d) == hash(pf.dtype(name))


def test_dtype_fields_and_errors():
    d = pf.dtype("float32x4")
    assert (d.type_code, d.bits, d.lanes, d.itemsize) == (2, 32, 4, 16)
    assert pf.dtype("bfloat16").type_code == 4
    assert pf.dtype("int8") != pf.dtype("uint8")
    assert pf.dtype("int8") != "not a type"
    with pytest.raises(ValueError, match="floaty"):
        pf.dtype("floaty")
    with pytest.raises(TypeError):
        pf.dtype(3)


def test_device_parse_print_compare():
    cpu = pf.device("cpu")
    assert str(cpu) == "cpu:0" and repr(cpu) == "device(type='cpu', index=0)"
    cuda1 = pf.device("cuda:1")
    assert cuda1.device_type == pf.DLDeviceType.cuda == 2 and cuda1.device_id == 1
    assert cuda1.dl_device == (2, 1) and cuda1.type == "cuda"
    assert cuda1 == pf.device("cuda", 1) == "cuda:1" and cuda1 != cpu
    assert pf.device(pf.DLDeviceType.rocm, 3) == pf.device("rocm:3")
    assert hash(cuda1) == hash(pf.device("cuda:1"))
    for bad in ("gpu", "cuda:x", "cuda:"):
        with pytest.raises(ValueError):
            pf.device(bad)


def test_dtype_and_device_pass_through_functions(m):
    echo = pf.get_global_func("testing.echo") if "testing.echo" in pf.list_global_func_names() \
        else None  # fmt: skip
    if echo is not None:
        assert echo(pf.dtype("bfloat16")) == pf.dtype("bfloat16")
        assert echo(pf.device("cuda:2")) == pf.device("cuda:2")
    t = m.tensor_empty(3, pf.dtype("int16"))
    assert t.dtype == "int16"
    assert m.tensor_empty(2, "uint8").dtype == pf.dtype("uint8")  # a str parses as a dtype
    d = m.tensor_dtype(np.zeros(2, "float64"))
    assert isinstance(d, pf.dtype) and d == "float64"
    dev = m.tensor_device(np.zeros(2))
    assert isinstance(dev, pf.device) and dev == "cpu:0"


# ---- NumPy ---------------------------------------------------------------------------------------
def test_numpy_argument_is_zero_copy(m):
    a = np.arange(4, dtype="float32")
    assert m.tensor_ndim(a) == 1
    assert m.tensor_shape_at(a, 0) == 4
    assert addr(m.tensor_data(a)) == a.ctypes.data
    assert m.tensor_sum_f32(a) == 6.0


def test_from_dlpack_numpy_shares_memory_both_ways():
    a = np.arange(4, dtype="float32")
    t = pf.from_dlpack(a)
    assert isinstance(t, pf.Tensor) and isinstance(t, pf.Object)
    assert t.shape == (4,) and t.strides == (1,) and t.ndim == 1
    assert t.numel() == t.size == 4 and t.dtype == "float32" and t.device == "cpu"
    assert t.data_ptr == a.ctypes.data and not t.readonly
    assert "shape=(4,)" in repr(t) and "float32" in repr(t)
    b = np.from_dlpack(t)
    b[0] = 42
    assert a[0] == 42
    a[1] = -1
    assert b[1] == -1
    assert pf.from_dlpack(t) is t


def test_from_dlpack_accepts_capsules_once():
    a = np.arange(3, dtype="int32")
    cap = a.__dlpack__()
    t = pf.from_dlpack(cap)
    assert t.data_ptr == a.ctypes.data and t.dtype == "int32"
    with pytest.raises(ValueError, match="consumed"):
        pf.from_dlpack(cap)
    vcap = a.__dlpack__(max_version=(1, 0))
    assert pf.from_dlpack(vcap).data_ptr == a.ctypes.data


def test_from_dlpack_falls_back_to_legacy_producers():
    a = np.arange(3, dtype="float64")

    class Legacy:
        def __dlpack__(self, stream=None):  # no max_version: pre-1.0 producer
            return a.__dlpack__()

        def __dlpack_device__(self):
            return (1, 0)

    assert pf.from_dlpack(Legacy()).data_ptr == a.ctypes.data
    with pytest.raises(TypeError, match="__dlpack__"):
        pf.from_dlpack(object())


class _Producer:
    """A DLPack producer on `device` that records what the consumer asked for; its data is a
    NumPy array's (the stream protocol is about the call, not where the bytes are)."""

    def __init__(self, device, legacy=False):
        self.device, self.legacy, self.calls = device, legacy, []
        self.data = np.arange(3, dtype="float64")

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, **kwargs):
        self.calls.append(kwargs)
        if self.legacy and "max_version" in kwargs:
            raise TypeError("unexpected keyword argument 'max_version'")
        return self.data.__dlpack__()


def test_producers_of_device_data_are_given_the_callers_stream():
    # DLPack's stream protocol: for CUDA/ROCm data the consumer names the stream it will use, so
    # that the producer orders its pending work on the data before it. packedfun's is the calling
    # thread's stream for the device (use_stream / use_raw_stream), else the default stream, which
    # for CUDA DLPack spells 1 (the legacy default; 0 is not allowed there).
    p = _Producer((2, 0))
    pf.from_dlpack(p)
    assert p.calls == [{"max_version": (1, 3), "stream": 1}]
    with pf.use_raw_stream(pf.device("cuda", 1), 0x1234):
        p = _Producer((2, 1))
        pf.from_dlpack(p)
        assert p.calls == [{"max_version": (1, 3), "stream": 0x1234}]
        q = _Producer((2, 0))  # another device: its own (default) stream
        pf.testing.echo(q)  # as an argument, too
        assert q.calls == [{"max_version": (1, 3), "stream": 1}]
    r = _Producer((10, 0))  # ROCm: 0 is its default stream
    pf.from_dlpack(r)
    assert r.calls == [{"max_version": (1, 3), "stream": 0}]
    c = _Producer((1, 0))  # CPU data: no stream
    pf.from_dlpack(c)
    assert c.calls == [{"max_version": (1, 3)}]
    old = _Producer((2, 0), legacy=True)  # asked again without max_version, with the stream
    pf.from_dlpack(old)
    assert old.calls == [{"max_version": (1, 3), "stream": 1}, {"stream": 1}]


def test_zero_dim_and_zero_size(m):
    s = np.array(3.5, dtype="float32")
    assert m.tensor_ndim(s) == 0 and m.tensor_sum_f32(s) == 3.5
    ts = pf.from_dlpack(s)
    assert ts.shape == () and ts.numel() == 1 and float(np.from_dlpack(ts)) == 3.5
    z = np.zeros((0, 3), dtype="float32")
    assert m.tensor_ndim(z) == 2 and m.tensor_shape_at(z, 0) == 0 and m.tensor_sum_f32(z) == 0
    tz = pf.from_dlpack(z)
    assert tz.shape == (0, 3) and tz.numel() == 0
    assert np.from_dlpack(tz).shape == (0, 3)
    empty = m.tensor_empty(0, "float32")
    assert empty.numel() == 0 and np.from_dlpack(empty).shape == (0,)


def test_non_contiguous_negative_and_broadcast_strides(m):
    a = np.arange(12, dtype="float32").reshape(3, 4)
    v = a[::-1, ::2]
    assert (m.tensor_stride_at(v, 0), m.tensor_stride_at(v, 1)) == (-4, 2)
    assert m.tensor_sum_f32(v) == float(v.sum())
    assert addr(m.tensor_data(v)) == v.__array_interface__["data"][0]
    tv = pf.from_dlpack(v)
    assert tv.strides == (-4, 2)
    np.testing.assert_array_equal(np.from_dlpack(tv), v)
    b = np.broadcast_to(np.arange(3, dtype="float32"), (4, 3))
    assert m.tensor_stride_at(b, 0) == 0 and m.tensor_sum_f32(b) == 12.0
    assert pf.from_dlpack(b).strides == (0, 1)
    t = m.tensor_empty_2d(2, 3)
    assert t.strides == (3, 1)
    np.testing.assert_array_equal(np.from_dlpack(t), np.arange(6, dtype="float32").reshape(2, 3))


@pytest.mark.parametrize("name", ["bool", "float16", "int8", "uint64", "complex64"])
def test_numpy_dtypes(m, name):
    a = np.zeros(3, dtype=name)
    assert m.tensor_dtype(a) == name
    assert pf.from_dlpack(a).dtype == name


# datetime64/timedelta64: NumPy exports no buffer for them (_core raised AttributeError from a
# message lookup, ctypes a ValueError from parsing "<M8[D]").
@pytest.mark.parametrize("dt", [">f4", ">i8", "O", "U2", "datetime64[D]", "timedelta64[s]"])
def test_byteswapped_and_object_arrays_are_rejected(m, dt):
    a = np.zeros(3, dtype=dt)
    with pytest.raises(BufferError, match=TENSOR_NDIM + r": .*" + re.escape(str(a.dtype))):
        m.tensor_ndim(a)
    with pytest.raises(BufferError, match=re.escape(str(a.dtype))):
        pf.from_dlpack(a)


def test_typed_parameter_rejects_non_tensor(m):
    with pytest.raises(TypeError, match=TENSOR_NDIM + r": expected Tensor, got int"):
        m.tensor_ndim(1)
    with pytest.raises(TypeError, match="expected Tensor"):
        m.tensor_ndim("x")


def test_read_only_is_honoured(m):
    a = np.arange(3, dtype="float32")
    a.flags.writeable = False
    t = pf.from_dlpack(a)
    assert t.readonly and m.tensor_readonly(t) == 1
    with pytest.raises(BufferError, match="read-only"):
        t.__dlpack__()
    b = np.from_dlpack(t)
    assert not b.flags.writeable
    assert not pf.from_dlpack(np.zeros(2)).readonly


def test_tensor_objects_pass_directly(m):
    t = m.tensor_empty(5, "float32")
    assert isinstance(t, pf.Tensor)
    assert m.tensor_keep(t).same_as(t)
    assert m.tensor_ndim(t) == 1 and m.tensor_shape_at(t, 0) == 5


def test_dlpack_export_arguments():
    t = pf.from_dlpack(np.zeros(2, "float32"))
    assert t.__dlpack_device__() == (1, 0)
    assert t.__dlpack__(dl_device=(1, 0)) is not None
    with pytest.raises(BufferError):
        t.__dlpack__(dl_device=(2, 0))
    with pytest.raises(BufferError):
        t.__dlpack__(copy=True)
    with pytest.raises(BufferError):
        t.__dlpack__(stream=1)


# ---- hand-made DLPack producers: lifetimes, deleters, foreign devices -------------------------
class _Version(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32),
                ("device_id", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]  # fmt: skip


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _Managed(ctypes.Structure):
    _fields_ = [("version", _Version), ("manager_ctx", ctypes.c_void_p),
                ("deleter", _DELETER), ("flags", ctypes.c_uint64),
                ("dl_tensor", _DLTensor)]  # fmt: skip


class Producer:
    """A versioned DLPack capsule over a ctypes buffer whose deleter counts its calls."""

    def __init__(self, major=1, device_type=1, data=None):
        self.deletes = 0
        self.buf = (ctypes.c_float * 4)(1, 2, 3, 4)
        self.shape = (ctypes.c_int64 * 1)(4)
        self.deleter = _DELETER(self._delete)
        self.managed = _Managed()
        self.managed.version = _Version(major, 0)
        self.managed.deleter = self.deleter
        t = self.managed.dl_tensor
        t.data = data if data is not None else ctypes.addressof(self.buf)
        t.device_type, t.ndim, t.code, t.bits, t.lanes = device_type, 1, 2, 32, 1
        t.shape = self.shape

    def _delete(self, _ptr):
        self.deletes += 1

    def capsule(self):
        new = ctypes.pythonapi.PyCapsule_New
        new.restype = ctypes.py_object
        new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self.managed), b"dltensor_versioned", None)


def test_deleter_runs_once_when_the_last_tensor_dies():
    p = Producer()
    cap = p.capsule()
    t = pf.from_dlpack(cap)
    assert t.strides == (1,)  # computed: the producer gave none
    b = np.from_dlpack(t)
    del t, cap
    gc.collect()
    assert p.deletes == 0 and b[3] == 4  # numpy's view keeps the tensor alive
    del b
    gc.collect()
    assert p.deletes == 1


def test_deleter_runs_once_on_failed_import():
    p = Producer(major=2)
    cap = p.capsule()
    with pytest.raises(BufferError, match="version"):
        pf.from_dlpack(cap)
    assert p.deletes == 1
    del cap
    gc.collect()
    assert p.deletes == 1


def test_deleter_runs_once_with_an_exception_in_flight(m):
    p = Producer()
    with pytest.raises(TypeError):
        m.tensor_shape_at(pf.from_dlpack(p.capsule()), "not an int")
    gc.collect()
    assert p.deletes == 1


def test_cuda_tensor_where_cpu_expected(m):
    p = Producer(device_type=2, data=0x1000)  # never dereferenced
    t = pf.from_dlpack(p.capsule())
    assert t.device == pf.device("cuda:0") and t.__dlpack_device__() == (2, 0)
    with pytest.raises(RuntimeError, match="expected a CPU tensor, got cuda:0"):
        m.tensor_sum_f32(t)
    if pf.BACKEND == "_core":
        # (ctypes backend: a capsule refused by its consumer is destroyed by a Python callback
        # while the consumer's exception is set, which CPython reports as a SystemError.)
        with pytest.raises((BufferError, RuntimeError, ValueError)):
            np.from_dlpack(t)
    del t
    gc.collect()
    assert p.deletes == 1


def test_numpy_memory_lives_as_long_as_the_tensor():
    a = np.arange(4, dtype="float32")
    ref = weakref.ref(a)
    t = pf.from_dlpack(a)
    del a
    gc.collect()
    assert ref() is not None
    assert np.from_dlpack(t)[3] == 3
    del t
    gc.collect()
    assert ref() is None


# ---- PyTorch and JAX -----------------------------------------------------------------------------
def test_torch_arguments_and_dlpack(m):
    torch = suite.require("torch")
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    assert m.tensor_ndim(x) == 2 and m.tensor_sum_f32(x) == 15.0
    assert addr(m.tensor_data(x)) == x.data_ptr()
    xt = x.t()
    assert (m.tensor_stride_at(xt, 0), m.tensor_stride_at(xt, 1)) == (1, 3)
    assert m.tensor_sum_f32(xt) == 15.0
    t = pf.from_dlpack(x)
    assert t.shape == (2, 3) and t.data_ptr == x.data_ptr()
    y = torch.from_dlpack(t)
    y[0, 0] = 100
    assert x[0, 0] == 100
    ref = weakref.ref(x)
    del x, y, xt
    gc.collect()
    assert ref() is not None  # the packedfun Tensor keeps torch's storage
    del t
    gc.collect()
    assert ref() is None


@pytest.mark.parametrize("name", ["bfloat16", "float16", "bool"])
def test_torch_dtypes(m, name):
    torch = suite.require("torch")
    x = torch.zeros(3, dtype=getattr(torch, name))
    assert m.tensor_dtype(x) == name
    assert pf.from_dlpack(x).dtype == name


def test_torch_from_packedfun_tensor(m):
    torch = suite.require("torch")
    t = m.tensor_empty_2d(2, 2)
    x = torch.from_dlpack(t)
    assert x.tolist() == [[0, 1], [2, 3]]
    x[1, 1] = 9
    assert np.from_dlpack(t)[1, 1] == 9


def test_jax_both_ways(m):
    jax = suite.require("jax")
    jnp = suite.require("jax.numpy")
    j = jnp.arange(4, dtype=jnp.float32)
    assert m.tensor_sum_f32(j) == 6.0
    t = pf.from_dlpack(j)
    assert t.shape == (4,) and t.dtype == "float32"
    np.testing.assert_array_equal(np.from_dlpack(t), np.arange(4, dtype="float32"))
    back = jax.dlpack.from_dlpack(m.tensor_empty_2d(1, 3))
    assert back.tolist() == [[0.0, 1.0, 2.0]]
    assert pf.from_dlpack(jnp.zeros(2, dtype=jnp.bfloat16)).dtype == "bfloat16"


def test_layout_rules_on_every_use_after_the_first():
    # Each shared layout rule (size, data_ptr, is_contiguous(), from_dlpack's keyword checks) is
    # fetched on first use and kept: later uses, interleaved, must each still give their own answer.
    base = np.arange(12, dtype="float32").reshape(3, 4)
    dense, strided = pf.from_dlpack(base), pf.from_dlpack(base[:, ::2])
    for _ in range(3):
        assert dense.size == 12 and dense.size(1) == 4 and strided.size == 6
        assert dense.data_ptr == base.ctypes.data and dense.data_ptr() == base.ctypes.data
        assert dense.is_contiguous() is True and strided.is_contiguous() is False
        assert pf.from_dlpack(base, require_contiguous=True).shape == (3, 4)
        with pytest.raises(ValueError, match="is not contiguous"):
            pf.from_dlpack(base[:, ::2], require_contiguous=True)
        with pytest.raises(TypeError, match="require_alignment must be an int"):
            pf.from_dlpack(base, require_alignment="4")
        assert strided.size(0) == 3 and strided.data_ptr == base.ctypes.data
