# tvm-ffi's metadata under the switch: globals', fields', methods' and module functions' records.
"""Under the switch, ``tvm_ffi.get_global_func_metadata``, ``Module.get_function_metadata`` and
``TypeInfo``'s ``TypeField.metadata`` / ``TypeMethod.metadata`` give the records tvm-ffi keeps
(its ``type_schema`` JSON and any other keys), read through the bridge's builtin globals
``packedfun.tvm_ffi_global_metadata`` and ``packedfun.tvm_ffi_type_metadata``; ``uninstall()`` gives
packedfun's own forms back. Every switch case runs in a child process, on the backend under test
(the child inherits ``PACKEDFUN_BACKEND``)."""

from __future__ import annotations

import importlib.util

import packedfun
import packedfun._tvm_ffi_core as core
import pytest

if importlib.util.find_spec("tvm_ffi") is None:
    pytest.skip("apache-tvm-ffi is not installed", allow_module_level=True)

from test_tvm_ffi_kernels import SOURCE, build_library  # noqa: E402
from test_tvm_ffi_switch import run_child  # noqa: E402

_SETUP = """
        import packedfun.tvm_ffi_compat as compat
        compat.install()
        import packedfun
        import tvm_ffi, tvm_ffi.testing
        from tvm_ffi.core import TypeSchema
"""


def test_global_metadata_is_tvm_ffis_record_and_uninstall_gives_packedfuns_back():
    run_child(
        _SETUP
        + """
        meta = tvm_ffi.get_global_func_metadata("testing.schema_id_int")
        assert set(meta) == {"type_schema", "bool_attr", "int_attr", "str_attr"}, meta
        assert meta["bool_attr"] is True and meta["int_attr"] == 1 and meta["str_attr"] == "hello"
        meta = tvm_ffi.get_global_func_metadata("testing.schema_id_arr_int")
        schema = TypeSchema.from_json_str(meta["type_schema"])
        assert str(schema) == "Callable[[Array[int]], Array[int]]"
        assert tvm_ffi.registry.get_global_func_metadata is tvm_ffi.get_global_func_metadata
        # packedfun's own functions (a name both registries hold is packedfun's) and Python ones
        assert tvm_ffi.get_global_func_metadata("testing.echo") == {}
        @tvm_ffi.register_global_func("pf_test.meta_py")
        def f(x: int) -> int:
            return x
        assert tvm_ffi.get_global_func_metadata("pf_test.meta_py") == {}
        try:
            tvm_ffi.get_global_func_metadata("pf_test.no_such_function")
        except ValueError as e:
            assert "pf_test.no_such_function" in str(e)
        else:
            raise AssertionError("no ValueError")
        compat.uninstall()
        record = packedfun.get_global_func_metadata("pf_test.meta_py")
        assert record["params"] == [{"name": "x", "type": "int"}], record
        """
    )


def test_fields_and_methods_carry_tvm_ffis_records():
    run_child(
        _SETUP
        + """
        info = tvm_ffi.testing._SchemaAllTypes.__tvm_ffi_type_info__
        field = {f.name: f for f in info.fields}["v_map_str_arr_int"]
        assert str(TypeSchema.from_json_str(field.metadata["type_schema"])) == (
            "Map[str, Array[int]]"
        )
        v_bool = {f.name: f for f in info.fields}["v_bool"].metadata
        assert (v_bool["bool_attr"], v_bool["int_attr"], v_bool["str_attr"]) == (True, 1, "hello")
        method = {m.name: m for m in info.methods}["make_with"]
        assert method.is_static
        assert str(TypeSchema.from_json_str(method.metadata["type_schema"])) == (
            "Callable[[int, float, str], testing.SchemaAllTypes]"
        )
        holder = tvm_ffi.testing.TestObjectPtrHolder.__tvm_ffi_type_info__
        schemas = [str(TypeSchema.from_json_str(f.metadata["type_schema"])) for f in holder.fields]
        assert schemas == ["testing.TestObjectBase", "testing.TestObjectBase | None"], schemas
        # a type of packedfun's own (packedfun.testing's TestIntPair): no tvm-ffi records
        from packedfun.testing import TestIntPair as Ours
        own = Ours.__tvm_ffi_type_info__
        assert own.fields and all(f.metadata == {} for f in own.fields)
        # tvm-ffi's type of the same key (tvm_ffi.testing's): tvm-ffi's records
        theirs = tvm_ffi.testing.TestIntPair.__tvm_ffi_type_info__
        assert [f.metadata["type_schema"] for f in theirs.fields] == ['{"type":"int"}'] * 2
        """
    )


def test_bridge_builtins_check_their_arguments():
    global_meta = packedfun.get_global_func("packedfun.tvm_ffi_global_metadata")
    type_meta = packedfun.get_global_func("packedfun.tvm_ffi_type_metadata")
    with pytest.raises(TypeError, match="expected \\(name: str\\)"):
        global_meta(1)
    with pytest.raises(TypeError, match="expected \\(name: str\\)"):
        global_meta()
    with pytest.raises(TypeError, match="expected \\(type_index: int\\)"):
        type_meta("testing.TestIntPair")
    for index in (-1, 2**40, packedfun.testing.TestIntPair.__pf_type_index__):
        assert type_meta(index) is None  # no tvm-ffi type is mirrored there
    assert global_meta("testing.echo") is None  # packedfun's own
    assert core._member_metadata(-1) == {"fields": {}, "methods": {}}


def test_module_function_metadata_is_the_exported_record():
    lib = build_library(SOURCE, "pf_tvm_kernels")
    run_child(
        _SETUP
        + """
        import json, sys
        m = tvm_ffi.load_module(sys.argv[1])
        meta = m.get_function_metadata("add")
        assert set(meta) == {"type_schema"}, meta
        assert str(TypeSchema.from_json_str(meta["type_schema"])) == "Callable[[int, int], int]"
        compat.uninstall()
        record = packedfun.load_module(sys.argv[1]).get_function_metadata("add")
        assert [p["type"] for p in record["params"]] == ["int", "int"], record
        assert json.loads(record["tvm_ffi_metadata"]) == meta
        """,
        lib,
    )


def test_type_schema_named_args_and_kept_type_key():
    schema = core.TypeSchema.from_json_obj(
        {
            "type": "ffi.Function",
            "named_args": {"return": [{"type": "ffi.BigInt"}], "params": [{"type": "ffi.String"}]},
        }
    )
    assert str(schema) == "Callable[[str], int]"
    assert schema.named_args["return"][0].type_key == "ffi.BigInt"
    assert schema.named_args["params"][0].type_key is None  # ffi.String folds into str alone
    assert schema.named_args["params"] == (core.TypeSchema("str"),)
    no_params = core.TypeSchema.from_json_obj(
        {"type": "ffi.Function", "named_args": {"return": [{"type": "int"}], "params": []}}
    )
    assert str(no_params) == "Callable[[], int]"
    assert core.TypeSchema.from_json_obj({"type": "ffi.Function"}).named_args is None
    assert core.TypeSchema("int").named_args is None


def test_type_info_names_builtin_types_as_tvm_ffi_does():
    run_child(
        _SETUP
        + """
        from tvm_ffi import core
        for cls, key in [(tvm_ffi.Object, "ffi.Object"), (tvm_ffi.Array, "ffi.Array"),
                         (tvm_ffi.Function, "ffi.Function"), (core.String, "ffi.String"),
                         (core.Error, "ffi.Error"), (core.DataType, "DataType"),
                         (tvm_ffi.Device, "Device")]:
            info = core._type_cls_to_type_info(cls)
            assert info.type_key == key and info.type_cls is cls, (cls, info)
        assert core._type_cls_to_type_info(tvm_ffi.Tensor).parent_type_info.type_cls is (
            tvm_ffi.Object)
        assert core._type_cls_to_type_info(core.DataType).parent_type_info is None
        assert core._type_cls_to_type_info(int) is None
        info = core._lookup_or_register_type_info_from_type_key("ffi.Map")
        assert info.type_cls is tvm_ffi.Map and info.type_key == "ffi.Map"
        keys = tvm_ffi.registry.get_registered_type_keys()
        assert len(keys) == len(set(keys))
        assert {"ffi.Object", "ffi.Array", "int", "Device", "testing.SchemaAllTypes"} <= set(keys)
        assert not {"packedfun.Object", "packedfun.Array", "StrView", "uint64"} & set(keys), keys
        # packedfun's abstract enum bases are left out, a concrete enum's key is listed
        from packedfun.dataclasses import IntEnum
        class Level(IntEnum, type_key="test_md.Level"):
            LOW = 1
        keys = set(tvm_ffi.registry.get_registered_type_keys())
        assert "test_md.Level" in keys and not {"packedfun.Enum", "packedfun.IntEnum"} & keys
        compat.uninstall()
        assert not hasattr(packedfun.registry, "get_registered_type_keys")
        """
    )


def test_a_field_without_a_docstring_has_none():
    assert packedfun.testing.TestIntPair.a.__doc__ == "the first integer"
    index = packedfun.core.type_key_to_index("testing.CppApiPair")  # "a" has no docstring in C++
    cls = packedfun.object._class_for(index)
    assert cls.a.__doc__ is None and cls.tag.__doc__ == "an optional int"
