# Property tests of tensors: from_dlpack against NumPy, dtype/device parsing, hostile DLPack input.
"""from_dlpack of random NumPy views (dtypes, shapes, steps including negative ones, transposes,
offsets, read-only) must describe exactly what NumPy describes and share its memory; dtype and
device strings either parse into values that print back the same or raise ValueError; DLPack
structs with random fields either import or raise, never crash."""

from __future__ import annotations

import ctypes

import dlpack_structs as ds
import fuzzing
import numpy as np
import packedfun as pf
import pytest
from hypothesis import given
from hypothesis import strategies as st

DTYPES = [
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
]  # fmt: skip


@st.composite
def numpy_views(draw):
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=0, max_size=4)))
    base = (np.arange(int(np.prod(shape, dtype=np.int64))) % 7).astype(dtype).reshape(shape)
    view = base
    if view.ndim:
        index = tuple(
            slice(draw(st.integers(0, 2)), None, draw(st.sampled_from([1, 2, -1, -2])))
            for _ in range(view.ndim)
        )
        view = view[index]
        view = view.transpose(draw(st.permutations(range(view.ndim))))
    if draw(st.booleans()):
        view = view.view()
        view.flags.writeable = False
    return view


@given(view=numpy_views(), through_capsule=st.booleans())
def test_from_dlpack_matches_numpy(view, through_capsule):
    fuzzing.count("from_dlpack-vs-numpy")
    version = (1, 0) if not view.flags.writeable else None
    source = view.__dlpack__(max_version=version) if through_capsule else view
    t = pf.from_dlpack(source)
    item = view.dtype.itemsize
    assert t.shape == view.shape and str(t.dtype) == str(view.dtype)
    assert t.readonly == (not view.flags.writeable)
    if view.size:
        assert t.data_ptr + t.byte_offset == view.ctypes.data
        dims = [i for i, n in enumerate(view.shape) if n > 1]
        assert [t.strides[i] for i in dims] == [view.strides[i] // item for i in dims]
    back = np.from_dlpack(t)
    assert back.shape == view.shape and back.dtype == view.dtype
    assert np.array_equal(back, view) and (view.size == 0 or np.shares_memory(back, view))
    assert back.flags.writeable == view.flags.writeable


@given(
    text=st.one_of(
        st.text(max_size=12),
        st.from_regex(r"(u?int|float|bfloat|complex)\d{0,3}(x\d{1,3})?", fullmatch=True),
    )
)
def test_dtype_strings_parse_or_raise_value_error(text):
    fuzzing.count("dtype-parse")
    try:
        d = pf.dtype(text)
    except ValueError:
        return
    again = pf.dtype(str(d))
    assert again == d and str(again) == str(d) and d.bits > 0 and d.lanes > 0


@given(
    text=st.one_of(
        st.text(max_size=10),
        st.from_regex(
            r"(cpu|cuda|cuda_host|rocm|metal|vulkan|opencl|ext_dev)(:-?\d{0,12})?", fullmatch=True
        ),
    )
)
def test_device_strings_parse_or_raise_value_error(text):
    fuzzing.count("device-parse")
    try:
        dev = pf.device(text)
    except (ValueError, OverflowError):  # OverflowError: an id past int32
        return
    assert pf.device(str(dev)) == dev and 0 <= dev.device_id < 2**31


@given(
    kind=st.one_of(
        st.integers(-(2**40), 2**40), st.sampled_from(["cpu", "cuda"]), st.floats(), st.none()
    ),
    index=st.one_of(
        st.none(), st.integers(-(2**40), 2**40), st.floats(), st.text(max_size=3), st.booleans()
    ),
)
def test_device_arguments_raise_documented_errors(kind, index):
    fuzzing.count("device-args")
    try:
        dev = pf.device(kind, index)
    except (ValueError, TypeError, OverflowError):
        return
    assert isinstance(dev.device_type, int) and 0 <= dev.device_id < 2**31
    assert dev.device_id == (0 if index is None else index)


# ---- hostile DLPack structs ---------------------------------------------------------------------

_i64 = st.one_of(st.integers(-3, 8), st.integers(-(2**63), 2**63 - 1))


@given(
    ndim=st.one_of(st.integers(-3, 6), st.integers(7, 64), st.integers(-(2**31), -1)),
    shape=st.lists(_i64, min_size=6, max_size=6),
    strides=st.one_of(st.none(), st.lists(_i64, min_size=6, max_size=6)),
    code=st.integers(0, 255),
    bits=st.integers(0, 255),
    lanes=st.integers(0, 65535),
    device_type=st.one_of(st.integers(-2, 20), st.integers(-(2**31), 2**31 - 1)),
    device_id=st.integers(-(2**31), 2**31 - 1),
    offset=st.one_of(st.integers(0, 64), st.integers(0, 2**64 - 1)),
    null_data=st.booleans(),
)
def test_hostile_dlpack_structs_import_or_raise(
    ndim, shape, strides, code, bits, lanes, device_type, device_id, offset, null_data
):
    fuzzing.count("dlpack-hostile-struct")
    # The producer is trusted for memory (as every DLPack consumer trusts it): shape and strides
    # really have 64 entries, so ndim stays <= 64; every value in them is hostile.
    buffer = (ctypes.c_uint8 * 4096)()
    shape_arr = (ctypes.c_int64 * 64)(*shape)
    stride_arr = (ctypes.c_int64 * 64)(*strides) if strides is not None else None
    managed = ds.Managed()
    t = managed.dl_tensor
    t.data = None if null_data else ctypes.addressof(buffer)
    t.device_type, t.device_id, t.ndim = device_type, device_id, ndim
    t.code, t.bits, t.lanes = code, bits, lanes
    t.shape = ctypes.cast(shape_arr, ctypes.POINTER(ctypes.c_int64))
    t.strides = ctypes.cast(stride_arr, ctypes.POINTER(ctypes.c_int64)) if stride_arr else None
    t.byte_offset = offset
    managed.deleter = ds.on_delete
    capsule = ds.capsule(managed, b"dltensor")
    ds.deleted.clear()
    try:
        tensor = pf.from_dlpack(capsule)
    except (ValueError, TypeError, BufferError, OverflowError, MemoryError) as err:
        assert ds.deleted == [ds.address(managed)]  # a refused import still runs the deleter
        assert "PF" not in str(err), err  # user-facing words, no C-ABI names
        return
    assert 0 <= tensor.ndim <= 64 and len(tensor.shape) == tensor.ndim
    assert all(n >= 0 for n in tensor.shape)
    str(tensor.dtype)  # describing it must not crash either
    repr(tensor), tensor.device  # only DLPack's device types are imported: all have a name
    del tensor
    assert ds.deleted == [ds.address(managed)]


def _empty_struct_without_strides(shape: list[int]) -> tuple:
    buffer = (ctypes.c_uint8 * 16)()
    shape_arr = (ctypes.c_int64 * len(shape))(*shape)
    managed = ds.Managed()
    t = managed.dl_tensor
    t.data, t.device_type, t.device_id, t.ndim = ctypes.addressof(buffer), 1, 0, len(shape)
    t.code, t.bits, t.lanes = 2, 32, 1
    t.shape = ctypes.cast(shape_arr, ctypes.POINTER(ctypes.c_int64))
    t.strides = None
    managed.deleter = ds.on_delete
    ds.deleted.clear()
    return managed, ds.capsule(managed, b"dltensor"), (buffer, shape_arr)


def test_compact_strides_that_overflow_raise_value_error():
    # Found by the hostile-struct test under UBSan (8 * (2**63 - 1), signed overflow): a tensor
    # with no elements passes the size check whatever its other axes, and the compact strides made
    # for it when the producer gives none overflowed int64.
    managed, capsule, keep = _empty_struct_without_strides([0, 2**62, 4])
    # The message names what the user did (a DLPack import), not the C entry point behind it.
    with pytest.raises(ValueError, match="^DLPack tensor: the tensor's compact strides overflow"):
        pf.from_dlpack(capsule)
    assert ds.deleted == [ds.address(managed)]
    managed, capsule, keep = _empty_struct_without_strides([0, 2**60, 4])  # they fit
    tensor = pf.from_dlpack(capsule)
    assert tensor.shape == (0, 2**60, 4) and tensor.strides == (2**62, 4, 1)
    del tensor
    assert ds.deleted == [ds.address(managed)]
