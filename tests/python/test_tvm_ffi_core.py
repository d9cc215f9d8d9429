# `tvm_ffi.core` under the switch: tvm-ffi's core-module names on packedfun's own classes.
"""``packedfun._tvm_ffi_core`` is what ``import tvm_ffi.core`` gives under the switch. Its names are
checked here in this process (importing the module changes nothing global); the switch's wiring
(``tvm_ffi.core`` as an import and as an attribute, and its undoing) in a child process. Both
backends: the suite runs once per backend, and the child inherits ``PACKEDFUN_BACKEND``."""

from __future__ import annotations

import json
import pickle

import packedfun
import packedfun._tvm_ffi_core as core
import packedfun.dataclasses
import packedfun.testing
import pytest
from test_tvm_ffi_switch import run_child


def test_names_are_packedfuns_own():
    assert core.Object is packedfun.Object
    assert core.Function is packedfun.Function
    assert core.Array is packedfun.Array and core.Map is packedfun.Map
    assert core.MISSING is packedfun.dataclasses.MISSING
    assert packedfun.container.MISSING is core.MISSING  # `from tvm_ffi.container import MISSING`
    assert isinstance(packedfun.testing.TestIntPair.__dict__["a"], core.FFIProperty)
    assert core.DataType("int32") == packedfun.dtype("int32")
    assert core.type_info is packedfun.core.type_info  # any other name: the backend's
    with pytest.raises(AttributeError):
        core.no_such_name  # noqa: B018


def test_string_and_bytes_are_plain_values_that_pickle_as_such():
    echo = packedfun.get_global_func("testing.echo")
    s = core.String("hello world")
    assert isinstance(s, str) and s == "hello world" and s.find("world") == 6
    assert s._tvm_ffi_cached_object is None
    assert echo(s) == "hello world" and type(echo(s)) is str
    restored = pickle.loads(pickle.dumps(s))
    assert restored == s and type(restored) is str
    b = core.Bytes(b"\x00ab")
    assert isinstance(b, bytes) and echo(b) == b"\x00ab"
    assert type(pickle.loads(pickle.dumps(b))) is bytes


@pytest.mark.parametrize(
    "schema, text",
    [
        ({"type": "int"}, "int"),
        ({"type": "ffi.String"}, "str"),
        ({"type": "ffi.Array"}, "Array[Any]"),
        ({"type": "ffi.Map", "args": [{"type": "ffi.String"}, {"type": "int"}]}, "Map[str, int]"),
        ({"type": "Optional", "args": [{"type": "ffi.Object"}]}, "Object | None"),
        ({"type": "Variant", "args": [{"type": "int"}, {"type": "ffi.String"}]}, "int | str"),
        ({"type": "ffi.Function"}, "Callable[..., Any]"),
        ({"type": "ffi.Function", "args": [{"type": "None"}]}, "Callable[[], None]"),
        (
            {
                "type": "ffi.Function",
                "args": [{"type": "float"}, {"type": "int"}, {"type": "DataType"}],
            },
            "Callable[[int, dtype], float]",
        ),
        ({"type": "testing.TestIntPair"}, "testing.TestIntPair"),
    ],
)
def test_type_schema_renders_tvm_ffi_json(schema, text):
    parsed = core.TypeSchema.from_json_str(json.dumps(schema))
    assert str(parsed) == text
    assert parsed == core.TypeSchema.from_json_obj(schema)
    renamed = {"Array": "Sequence", "Map": "Mapping"}
    assert parsed.repr(lambda t: renamed.get(t, t)) == text.replace("Array", "Sequence").replace(
        "Map", "Mapping"
    )


def test_type_schema_rejects_bad_input():
    with pytest.raises(TypeError, match="'type'"):
        core.TypeSchema.from_json_obj({"args": []})
    with pytest.raises(ValueError):
        core.TypeSchema.from_json_str("not json")
    with pytest.raises(ValueError, match="non-empty"):
        core.TypeSchema("")
    with pytest.raises(TypeError, match="TypeSchema"):
        core.TypeSchema("Array", ["int"])


def test_type_info_reads_packedfuns_reflection():
    pair = packedfun.testing.TestIntPair
    info = core._type_cls_to_type_info(pair)
    assert info.type_key == "testing.TestIntPair" and info.type_cls is pair
    assert [f.name for f in info.fields] == ["a", "b"]
    assert "sum" in [m.name for m in info.methods]
    assert info.parent_type_info.type_cls is packedfun.Object
    assert info.parent_type_info.parent_type_info is None
    assert core._type_cls_to_type_info(int) is None
    by_key = core._lookup_or_register_type_info_from_type_key("testing.TestIntPair")
    assert by_key.type_index == info.type_index
    # the class registered for the key now (another test may have registered its own for it)
    assert by_key.type_cls.__dict__["__pf_type_index__"] == info.type_index
    with pytest.raises(KeyError):
        core._lookup_or_register_type_info_from_type_key("no.such.Type")
    assert core._lookup_type_attr(info.type_index, "__metadata__") is None


def test_switch_gives_tvm_ffi_core_and_gives_it_back():
    run_child(
        """
        import packedfun
        from packedfun._backend import core as backend
        import packedfun.tvm_ffi_compat as compat
        compat.install()
        import tvm_ffi
        assert tvm_ffi.core.__name__ == "packedfun._tvm_ffi_core"  # without importing it
        import tvm_ffi.core
        from tvm_ffi.core import MISSING, Object, TypeSchema
        from tvm_ffi.container import MISSING as CONTAINER_MISSING
        assert Object is packedfun.Object and MISSING is CONTAINER_MISSING
        assert tvm_ffi.core is packedfun.core is packedfun._tvm_ffi_core
        assert packedfun.convert(3) == 3 and packedfun.Object is backend.Object
        if compat._tvm_ffi_testing is not None:  # apache-tvm-ffi installed: its testing.* names
            import tvm_ffi.testing
            assert tvm_ffi.testing.schema_id_arr_int([1, 2]) == [1, 2]
            opaque = compat  # a module: no callable, no FFI kind, so it travels as opaque
            assert tvm_ffi.testing.echo(opaque) is opaque  # packedfun's echo, first
        check_once()
        compat.uninstall()
        assert packedfun.core is backend
        """
    )


def test_parse_backtrace_reads_python_style_frames():
    text = (
        'Traceback:\n  File "a.py", line 1, in <module>\n  junk\n  File "b c.py", line 30, in f\n'
    )
    assert packedfun.error._parse_backtrace(text) == [("a.py", 1, "<module>"), ("b c.py", 30, "f")]
    assert packedfun.error._parse_backtrace("") == []


def test_switch_gives_object_classes_tvm_ffi_type_info():
    run_child(
        """
        import packedfun, packedfun.testing
        from packedfun.dataclasses import method, py_class
        import packedfun.tvm_ffi_compat as compat
        compat.install()
        import tvm_ffi

        info = tvm_ffi.testing.TestIntPair.__tvm_ffi_type_info__  # a class made before install
        assert info.type_key == "testing.TestIntPair"
        assert info.type_cls is packedfun.testing.TestIntPair

        @py_class("testing.conf1_switch.Node")  # a class made after install
        class Node(packedfun.Object):
            x: int

            @method
            def label(self) -> str:
                return f"N({self.x})"

        class Sub(Node):  # a Python subclass: its native type's info
            pass

        found = [m for m in Node.__tvm_ffi_type_info__.methods if m.name == "label"]
        assert len(found) == 1 and not found[0].is_static
        assert found[0].func(Node(x=7)) == "N(7)"
        assert Sub.__tvm_ffi_type_info__.type_cls is Node
        compat.uninstall()
        assert not hasattr(Node, "__tvm_ffi_type_info__")
        assert not hasattr(packedfun.testing.TestIntPair, "__tvm_ffi_type_info__")
        """
    )
