# C++ enums exposed as IntEnum (reflection::EnumDef): the class, arguments, results and pickling.
import enum
import inspect
import pickle

import packedfun
import pytest
from packedfun import testing
from packedfun._backend import core

NAMED_RESULT = 4  # PACKEDFUN_FUNCTION_FLAG_NAMED_RESULT

MODULE_SOURCE = r"""
#include <packedfun/packedfun.h>
#include <cstdint>
enum class Shade : int32_t { kRed = 0, kGreen = 1, kBlue = 7 };
PACKEDFUN_ENUM_NAME(Shade, "testing.Color");
Shade shade(int64_t v) { return static_cast<Shade>(v); }
int64_t plain(int64_t v) { return v; }
"""


def test_enum_class_has_the_cpp_names_and_is_cached():
    color = packedfun.enum_class("testing.Color")
    assert issubclass(color, enum.IntEnum)
    assert [(m.name, m.value) for m in color] == [("red", 0), ("green", 1), ("blue", 7)]
    assert color.__name__ == "Color"
    assert packedfun.enum_class("testing.Color") is color


def test_unknown_key_and_bad_key_raise():
    with pytest.raises(ValueError, match="no enum registered under 'testing.NoSuchEnum'"):
        packedfun.enum_class("testing.NoSuchEnum")
    with pytest.raises(TypeError, match="key must be a str"):
        packedfun.enum_class(3)


def test_members_and_ints_are_accepted_and_results_are_members():
    color = packedfun.enum_class("testing.Color")
    out = testing.color_next(color.red)
    assert out is color.green
    assert testing.color_echo(7) is color.blue
    assert testing.color_value(color.blue) == 7
    assert type(testing.color_value(color.blue)) is int  # an int result stays an int
    assert packedfun.get_global_func("testing.color_echo")(1) is color.green


def test_unnamed_value_comes_back_as_int():
    out = testing.color_raw(5)
    assert out == 5 and type(out) is int


def test_bad_arguments_raise_type_error():
    with pytest.raises(TypeError, match="testing.Color"):
        testing.color_echo("red")
    with pytest.raises(TypeError):
        testing.color_echo(True)


def test_members_and_enum_functions_pickle():
    color = packedfun.enum_class("testing.Color")
    for proto in range(2, pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(color.blue, protocol=proto)) is color.blue
    f = pickle.loads(pickle.dumps(testing.color_echo))
    assert f(0) is color.red


def test_enum_function_keeps_its_metadata_and_signature():
    record = packedfun.get_global_func_metadata("testing.color_echo")
    assert record["return"] == "testing.Color"
    assert record["params"][0]["type"] == "testing.Color"
    assert list(inspect.signature(testing.color_echo).parameters) == ["arg0"]
    assert testing.color_echo.__name__ == "color_echo"


def test_other_functions_are_not_wrapped():
    assert isinstance(testing.echo, packedfun.Function)
    assert isinstance(packedfun.get_global_func("testing.color_value"), packedfun.Function)


def test_enum_function_registers_again_with_its_result_mapping():
    color = packedfun.enum_class("testing.Color")
    packedfun.register_global_func("test_enum.alias", testing.color_echo, override=True)
    try:
        assert packedfun.get_global_func("test_enum.alias")(7) is color.blue
    finally:
        packedfun.remove_global_func("test_enum.alias")


def test_only_functions_returning_a_type_key_carry_the_named_result_flag():
    color_echo = testing.color_echo.__wrapped__
    assert core.function_flags(color_echo) & NAMED_RESULT
    assert not core.function_flags(packedfun.get_global_func("testing.color_value")) & NAMED_RESULT
    assert not core.function_flags(testing.echo) & NAMED_RESULT
    f = packedfun.Function(lambda x: x)
    core.function_set_metadata(f, '{"name": "f", "return": "testing.Color"}')
    assert core.function_flags(f) & NAMED_RESULT
    core.function_set_metadata(f, '{"name": "f", "return":"list[testing.Color]"}')
    assert not core.function_flags(f) & NAMED_RESULT  # a generic is no type key
    core.function_set_metadata(f, '{"name": "f", "return": "int"}')
    assert not core.function_flags(f) & NAMED_RESULT


def test_lookup_passes_only_named_result_functions_through_the_hook():
    seen = []

    def hook(func):
        seen.append(func)
        return "wrapped"

    assert core.get_global_func("testing.color_echo", hook) == "wrapped"
    assert isinstance(core.get_global_func("testing.color_value", hook), packedfun.Function)
    assert core.get_global_func("testing.no_such_function", hook) is None
    assert len(seen) == 1 and isinstance(seen[0], packedfun.Function)


def test_object_results_are_not_wrapped():
    f = packedfun.Function(lambda: 3)
    core.function_set_metadata(f, '{"name": "f", "return": "testing.TestIntPair"}')
    packedfun.register_global_func("test_enum.object_result", f, override=True)
    try:
        assert core.function_flags(f) & NAMED_RESULT
        assert isinstance(packedfun.get_global_func("test_enum.object_result"), packedfun.Function)
    finally:
        packedfun.remove_global_func("test_enum.object_result")


def test_module_functions_return_members(tmp_path):
    from packedfun import cpp

    mod = cpp.load_inline(
        "enum_module", cpp_sources=MODULE_SOURCE, functions=["shade", "plain"],
        build_directory=tmp_path,
    )  # fmt: skip
    color = packedfun.enum_class("testing.Color")
    assert mod.shade(7) is color.blue
    assert mod["shade"](1) is color.green
    assert mod.get_function("shade")(0) is color.red
    out = mod.shade(5)  # no name in the enum: the plain int
    assert out == 5 and type(out) is int
    assert isinstance(mod.plain, packedfun.Function)
    assert mod.get_function_metadata("shade")["return"] == "testing.Color"
    assert pickle.loads(pickle.dumps(mod.shade))(7) is color.blue
