# Device and dtype fields never wrap: out of range raises, naming the field (both backends).
import packedfun
import pytest
from packedfun import testing


@pytest.mark.parametrize(
    "make",
    [
        lambda: packedfun.device("cuda:4294967297"),
        lambda: packedfun.device("cuda", 2**32 + 1),
        lambda: packedfun.device("cuda", 2**31),
        lambda: packedfun.device(2**40),
    ],
)
def test_device_construction_overflow_names_the_field(make):
    with pytest.raises(OverflowError, match=r"device_(id|type) \d+ does not fit"):
        make()


def test_device_construction_other_bad_values():
    with pytest.raises(ValueError, match="device_id -1 is out of range"):
        packedfun.device("cuda", -1)
    with pytest.raises(ValueError, match="device_type 99 is not a DLPack device type"):
        packedfun.device(99)
    with pytest.raises(TypeError, match="device_id must be an int, got str"):
        packedfun.device("cuda", "1")
    assert packedfun.device("cuda", 2**31 - 1).device_id == 2**31 - 1


@pytest.mark.parametrize(
    ("field", "value", "exc", "pattern"),
    [
        ("device_id", 2**32 + 1, OverflowError, r"device_id 4294967297 does not fit"),
        ("device_id", -5, ValueError, r"device_id -5 is out of range"),
        ("device_type", 2**33, OverflowError, r"device_type 8589934592 does not fit"),
    ],
)
def test_device_conversion_never_wraps(field, value, exc, pattern):
    d = packedfun.device("cuda:1")
    setattr(d, field, value)  # out of range after construction
    with pytest.raises(exc, match=pattern):
        testing.echo(d)


@pytest.mark.parametrize(
    ("field", "value", "exc", "pattern"),
    [
        ("bits", 256, OverflowError, r"dtype.bits 256 does not fit"),
        ("lanes", 65536, OverflowError, r"dtype.lanes 65536 does not fit"),
        ("type_code", 300, OverflowError, r"dtype.type_code 300 does not fit"),
        ("lanes", -1, ValueError, r"dtype.lanes -1 is out of range"),
        ("bits", 8.0, TypeError, r"dtype.bits must be an int, got float"),
    ],
)
def test_dtype_conversion_never_wraps(field, value, exc, pattern):
    t = packedfun.dtype("float32")
    setattr(t, field, value)
    with pytest.raises(exc, match=pattern):
        testing.echo(t)


def test_dtype_construction_rejects_out_of_range_text():
    with pytest.raises(ValueError):
        packedfun.dtype("int256")
    with pytest.raises(ValueError):
        packedfun.dtype("float32x65536")
    assert packedfun.dtype("float32x65535").lanes == 65535


def test_in_range_values_round_trip():
    d = packedfun.device("cuda", 2**31 - 1)
    assert testing.echo(d) == d
    t = packedfun.dtype("int8x4")
    assert testing.echo(t) == t
