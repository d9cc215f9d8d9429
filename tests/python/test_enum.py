# C++ enums exposed as IntEnum (reflection::EnumDef): the class, arguments, results and pickling.
import enum
import inspect
import pickle

import packedfun
import pytest
from packedfun import testing


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
