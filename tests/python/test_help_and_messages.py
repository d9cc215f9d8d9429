# What help(), __doc__, inspect.signature and error messages tell a user: true on both backends.
import os
import subprocess
import sys

import packedfun
import packedfun.cpp
import pytest

LIBRARY = r"""
using namespace packedfun::literals;

int32_t Narrow(int32_t x) { return x; }
int64_t Twice(int64_t x) { return 2 * x; }

PACKEDFUN_REGISTER_GLOBAL("docsx.twice").set_body_typed(Twice, {"x"}).describe("2 * x.");
PACKEDFUN_DLL_EXPORT_TYPED_FUNC(narrow, Narrow, "x");
"""


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    return packedfun.cpp.build_inline("docsx", cpp_sources=LIBRARY, build_directory=cache)


def test_int_beyond_64_bits_names_the_parameter_type(library):
    narrow = packedfun.load_module(library).narrow
    label = "narrow(x: int) -> int: argument 'x'"
    with pytest.raises(OverflowError) as err:
        narrow(2**40)
    assert str(err.value) == f"{label}: value 1099511627776 does not fit in int32"
    for value, word in ((2**64, "large"), (-(2**70), "small")):
        with pytest.raises(OverflowError) as err:
            narrow(value)
        assert str(err.value) == f"{label}: int too {word} for int32"
    assert narrow(x=-7) == -7


def test_stubgen_loads_the_library_before_listing_the_prefix(library, tmp_path):
    out = tmp_path / "docsx.pyi"
    proc = subprocess.run(
        [sys.executable, "-m", "packedfun.stubgen", "--prefix", "docsx", "--library", library,
         "-o", str(out)],
        capture_output=True, text=True, env=dict(os.environ), timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    assert 'def twice(x: int) -> int:\n    """2 * x."""' in text  # the library's global
    assert "def narrow(x: int) -> int: ..." in text  # its export


def test_load_errors_name_the_library_not_the_c_abi(tmp_path):
    missing = tmp_path / "libnothing.so"
    with pytest.raises(FileNotFoundError) as err:
        packedfun.load_module(str(missing))
    assert str(err.value).startswith(f"cannot load library '{missing}': ")
    (tmp_path / "bad.so").write_text("not a library")
    with pytest.raises(OSError) as err:
        packedfun.load_module(str(tmp_path / "bad.so"))
    assert "PFModule" not in str(err.value) and "cannot load library" in str(err.value)


def test_help_of_a_registered_function_shows_its_own_doc_and_signature():
    import inspect
    import pydoc

    echo = packedfun.get_global_func("testing.echo")
    assert echo.__doc__ == "Returns its argument."  # the registry docstring, not the class's
    add = packedfun.get_global_func("testing.add_kw")
    assert add.__doc__.startswith("testing.add_kw(a: int, b: int = 2) -> int")
    assert str(inspect.signature(add)) == "(a: 'int', b: 'int' = 2) -> 'int'"
    text = pydoc.render_doc(add, renderer=pydoc.plaintext)
    assert "testing.add_kw(a: int, b: int = 2) -> int" in text
    assert "A packed function" not in text  # the generic class text is gone
    assert packedfun.Function.__doc__.lstrip().startswith(("A packed function", "Function("))

    def wrapped(x):
        """Doubles."""
        return 2 * x

    assert packedfun.Function(wrapped).__doc__ == "Doubles."
    f = packedfun.Function(wrapped)
    f.__doc__ = "mine"
    assert f.__doc__ == "mine"


def test_reflected_class_signature_and_docs():
    import inspect

    from packedfun import testing

    pair = testing.TestIntPair
    assert str(inspect.signature(pair)) == "(a: 'int', b: 'int' = 0) -> None"
    assert str(inspect.signature(pair.__init__)).startswith("(self, /, a: 'int', b: 'int' = 0)")
    assert pair(a=1, b=2).sum() == 3
    assert str(inspect.signature(pair.sum)) == "(self, /, *args)"  # no names: positional only
    assert str(inspect.signature(pair(1, 2).sum)) == "(*args)"
    with pytest.raises(TypeError, match="takes no keyword arguments"):
        pair(1, 2).sum(x=1)
    assert pair.sum.__doc__ == "a + b"
    assert "TestIntPair.__create__(a: int, b: int = 0)" in pair.__init__.__doc__


def test_load_inline_functions_take_keywords_named_as_in_cpp(tmp_path):
    source = """
    int64_t scale(int64_t x, int64_t factor) { return x * factor; }
    int64_t twice(int64_t) { return 2; }  // unnamed: positions only
    """
    mod = packedfun.cpp.load_inline(
        "docs_kw", cpp_sources=source, functions=["scale", "twice"], build_directory=tmp_path
    )
    assert mod.scale(x=3, factor=4) == 12 and mod.scale(3, factor=5) == 15
    import inspect

    assert str(inspect.signature(mod.scale)) == "(x: 'int', factor: 'int') -> 'int'"
    assert str(inspect.signature(mod.twice)) == "(arg0: 'int') -> 'int'"
    with pytest.raises(TypeError, match="unexpected keyword argument 'y'"):
        mod.scale(3, y=1)
