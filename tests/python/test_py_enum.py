# Enums defined in Python (packedfun.dataclasses.Enum/IntEnum/StrEnum): variants, identity through
# native code, pickle, copy and JSON, attribute maps, and refused definitions; on both backends.
import copy
import pickle
from typing import ClassVar

import packedfun as pf
import pytest
from packedfun import testing
from packedfun.dataclasses import Enum, IntEnum, StrEnum, auto, entry, py_class
from packedfun.serialize import from_json, to_json
from packedfun.structural import structural_equal, structural_hash

core = pf._backend.core


class Color(Enum, type_key="test_pe.Color"):
    hex: str
    RED = entry("#f00")
    GREEN = entry(hex="#0f0")
    BLUE = entry("#00f")


class Dir(Enum, type_key="test_pe.Dir"):
    NORTH = auto()
    SOUTH: ClassVar["Dir"]  # a variant declared by annotation alone


class Level(IntEnum, type_key="test_pe.Level"):
    LOW = 1
    HIGH = 5


class Mode(StrEnum, type_key="test_pe.Mode"):
    FAST = "fast"
    SLOW = "slow"


@py_class("test_pe.Job")
class Job(pf.Object):
    mode: Mode
    level: Level
    color: Color


def test_variants_indices_and_lookup():
    assert list(Color) == [Color.RED, Color.GREEN, Color.BLUE] and len(Color) == 3
    assert [(c.value, c.name, c.hex) for c in Color] == [
        (0, "RED", "#f00"),
        (1, "GREEN", "#0f0"),
        (2, "BLUE", "#00f"),
    ]
    assert [d.name for d in Dir] == ["SOUTH", "NORTH"] and isinstance(Dir.SOUTH, Dir)
    assert Color(1) is Color.GREEN and Color("BLUE") is Color.BLUE and Color(Color.RED) is Color.RED
    assert Color.get("RED") is Color.RED and list(Color.all_entries()) == list(Color)
    assert repr(Color.RED) == "Color.RED" and Color.RED != Color.GREEN
    assert isinstance(Color.RED, Enum) and isinstance(Color.RED, pf.Object)
    assert type_key(Color.RED) == "test_pe.Color"


def type_key(obj):
    return core.type_info(obj.type_index)["type_key"]


def test_int_and_str_enums_compare_with_their_value():
    assert Level.HIGH.value == 5 and Level.HIGH.name == "HIGH" and Level(5) is Level.HIGH
    assert (
        Level.LOW == 1 and Level.LOW != 5 and hash(Level.LOW) == hash(1) and str(Level.LOW) == "1"
    )
    assert {Level.LOW: "a"}[1] == "a"
    assert Mode.FAST == "fast" and Mode.FAST.value == "fast" and Mode.FAST.name == "fast"
    assert Mode("slow") is Mode.SLOW and Mode(1) is Mode.SLOW and str(Mode.SLOW) == "slow"
    assert repr(Mode.FAST) == "Mode.fast"


def test_lookup_and_construction_errors():
    with pytest.raises(ValueError, match="7 is not a valid Color"):
        Color(7)
    with pytest.raises(KeyError):
        Color.get("PURPLE")
    with pytest.raises(TypeError, match="made by the class definition only"):
        Color(3, "PURPLE", "#808")
    with pytest.raises(AttributeError, match="read-only"):
        Color.RED.hex = "#000"


def test_identity_through_native_code_containers_pickle_copy_and_json():
    assert testing.echo(Color.RED) is Color.RED
    arr = pf.convert([Color.GREEN, Level.HIGH, Mode.SLOW])
    assert arr[0] is Color.GREEN and arr[1] is Level.HIGH and arr[2] is Mode.SLOW
    for v in (Color.BLUE, Level.LOW, Mode.FAST, Dir.SOUTH):
        assert pickle.loads(pickle.dumps(v)) is v
        assert copy.copy(v) is v and copy.deepcopy(v) is v
    job = Job(Mode.FAST, Level.HIGH, Color.BLUE)
    for back in (pickle.loads(pickle.dumps(job)), from_json(to_json(job)), copy.deepcopy(job)):
        assert back.mode is Mode.FAST and back.level is Level.HIGH and back.color is Color.BLUE
    again = from_json(to_json(arr))
    assert [again[0], again[1], again[2]] == [Color.GREEN, Level.HIGH, Mode.SLOW]
    assert again[0] is Color.GREEN
    assert structural_equal(job, Job(Mode.FAST, Level.HIGH, Color.BLUE))
    assert not structural_equal(job, Job(Mode.FAST, Level.HIGH, Color.RED))
    assert structural_hash(job) == structural_hash(Job(Mode.FAST, Level.HIGH, Color.BLUE))


def test_a_document_naming_no_variant_is_refused():
    text = to_json(Job(Mode.FAST, Level.HIGH, Color.BLUE))
    assert text.count('"BLUE"') == 1
    with pytest.raises(ValueError, match="enum 'test_pe.Color' has no variant 'PURPLE'"):
        from_json(text.replace('"BLUE"', '"PURPLE"'))
    data = pickle.dumps(Color.BLUE)
    with pytest.raises(ValueError, match="has no variant 'BLUX'"):
        pickle.loads(data.replace(b"BLUE", b"BLUX"))


def test_a_field_declared_with_an_enum_checks_its_values():
    job = Job(Mode.FAST, Level.LOW, Color.RED)
    job.color = Color.GREEN
    assert job.color is Color.GREEN
    with pytest.raises(TypeError, match=r"test_pe\.Job\.color"):
        job.color = Level.LOW


def test_a_payload_enum_field_takes_a_variants_payload_and_holds_the_variant():
    # an IntEnum/StrEnum field: a variant's integer or string stands for the variant, in the
    # constructor, in an assignment and in a frozen field's set()
    job = Job("slow", 5, Color.RED)
    assert job.mode is Mode.SLOW and job.level is Level.HIGH
    job.level, job.mode = 1, "fast"
    assert job.level is Level.LOW and job.mode is Mode.FAST
    assert type(Job.__dict__["level"]).__name__ == "PayloadEnumField"
    # a payload no variant has, a bool, the other kind of payload, a name: refused as before
    for field, value in (("level", 2), ("level", True), ("level", "LOW"), ("mode", "FAST"),
                         ("mode", 0), ("mode", "medium")):  # fmt: skip
        with pytest.raises(TypeError, match=rf"test_pe\.Job\.{field}: expected"):
            setattr(job, field, value)
        assert job.level is Level.LOW and job.mode is Mode.FAST  # unchanged
    with pytest.raises(TypeError, match=r"test_pe\.Job\.level"):
        Job("fast", 3, Color.RED)
    # a plain Enum has no payload: its field takes variants only
    with pytest.raises(TypeError, match=r"test_pe\.Job\.color"):
        job.color = "RED"

    @py_class("test_pe.FrozenJob", frozen=True)
    class FrozenJob(pf.Object):
        level: Level | None = None

    frozen = FrozenJob(5)
    assert frozen.level is Level.HIGH and FrozenJob().level is None  # Optional: None stays
    with pytest.raises(AttributeError):
        frozen.level = 1
    FrozenJob.level.set(frozen, 1)
    assert frozen.level is Level.LOW


def test_attribute_maps():
    code = Color.def_attr("code", default=None)
    code[Color.RED] = 31
    assert code[Color.RED] == 31 and code[Color.GREEN] is None
    assert Color.RED in code and Color.GREEN not in code and code.name == "code"
    strict = Color.def_attr("code")
    assert strict[Color.RED] == 31  # the same column
    with pytest.raises(KeyError, match="no attribute 'code'"):
        strict[Color.BLUE]
    assert strict.get(Color.BLUE, "none") == "none"
    with pytest.raises(TypeError, match="expected a Color variant"):
        code[Level.LOW] = 1


def test_refused_definitions():
    with pytest.raises(ValueError, match=r"Dup\.B: duplicate enum index"):

        class Dup(IntEnum, type_key="test_pe.Dup"):
            A = 1
            B = 1

    with pytest.raises(TypeError, match=r"Bad\.A: the value must be a int, got str"):

        class Bad(IntEnum, type_key="test_pe.Bad"):
            A = entry(value="x")

    with pytest.raises(OverflowError, match="does not fit in int64"):

        class Big(IntEnum, type_key="test_pe.Big"):
            A = 1 << 64

    with pytest.raises(TypeError, match="`value` is the variant's index"):

        class HasValue(IntEnum, type_key="test_pe.HasValue"):
            value: int
            A = 1

    with pytest.raises(TypeError, match=r"Typed\.A: invalid enum entry: .*test_pe\.Typed\.hex"):

        class Typed(Enum, type_key="test_pe.Typed"):
            hex: str
            A = entry(5)

    with pytest.raises(TypeError, match="not given by hand"):

        class Manual(Enum, type_key="test_pe.Manual"):
            A = entry(_int_index=3)

    for key in ("test_pe.Dup", "test_pe.Bad", "test_pe.Big", "test_pe.Typed", "test_pe.Manual"):
        with pytest.raises(KeyError):  # no type is left behind
            core.type_key_to_index(key)


def test_a_refused_enum_frees_its_key_for_a_corrected_definition():
    with pytest.raises(TypeError, match=r"Retry\.B: invalid enum entry"):

        class Retry(Enum, type_key="test_pe.Retry"):
            code: int
            A = entry(1)
            B = entry("two")  # registered the type and made A before failing

    with pytest.raises(KeyError):
        core.type_key_to_index("test_pe.Retry")

    class Retry2(Enum, type_key="test_pe.Retry"):  # the same key, another layout
        code: str
        A = entry("one")
        B = entry("two")

    assert [v.code for v in Retry2] == ["one", "two"]
    assert testing.echo(Retry2.B) is Retry2.B and pickle.loads(pickle.dumps(Retry2.A)) is Retry2.A


def test_tvm_ffi_names():
    from packedfun import dataclasses

    for name in ("Enum", "IntEnum", "StrEnum", "EnumAttrMap", "auto", "entry"):
        assert name in dataclasses.__all__ and hasattr(dataclasses, name)
