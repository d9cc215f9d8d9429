# Function metadata: keyword calls, defaults, signatures and docs, on both backends.
import ctypes
import inspect
import json

import packedfun
import pytest
import suite
from cmake_project import build_c_library
from packedfun import testing
from packedfun._backend import core


@pytest.fixture(scope="module")
def add_kw():
    return packedfun.get_global_func("testing.add_kw")


def test_metadata_of_typed_function_is_plain_data():
    record = packedfun.get_global_func_metadata("testing.add_kw")
    assert record == {
        "name": "testing.add_kw",
        "params": [{"name": "a", "type": "int"}, {"name": "b", "type": "int", "default": 2}],
        "return": "int",
        "ranges": ["int64", "int64"],
        "gil": "hold",
    }
    greet = packedfun.get_global_func_metadata("testing.greet")
    assert [p.get("default") for p in greet["params"]] == [None, "hello", 1, 0.5, False]
    assert greet["doc"].startswith("greet(name, greeting='hello'")
    head = packedfun.get_global_func_metadata("testing.head")
    assert head["params"] == [
        {"name": "xs", "type": "Array[int]"},
        {"name": "n", "type": "Optional[int]", "default": None},
    ]
    assert head["return"] == "Array[int]"


def test_functions_without_names_still_have_types_or_nothing():
    assert packedfun.get_global_func_metadata("testing.echo") is None  # packed, undescribed
    with pytest.raises(ValueError, match="testing.no_such"):
        packedfun.get_global_func_metadata("testing.no_such")


def test_keywords_and_defaults(add_kw):
    assert add_kw(1) == 3
    assert add_kw(1, 5) == 6
    assert add_kw(1, b=5) == 6
    assert add_kw(a=3) == 5
    assert add_kw(b=1, a=2) == 3
    assert add_kw(*[4], **{"b": 6}) == 10
    greet = packedfun.get_global_func("testing.greet")
    assert greet("bob") == "hello bob!"
    assert greet("bob", times=2, greeting="hi") == "hi bob!hi bob!"
    assert greet("x", loud=True).endswith("(0.500000)")
    head = packedfun.get_global_func("testing.head")
    assert list(head([1, 2, 3])) == [1, 2, 3]
    assert list(head([1, 2, 3], n=2)) == [1, 2]


def test_keyword_names_built_at_run_time_match(add_kw):
    key = "".join(["b"])  # not interned: matched by equality
    assert add_kw(1, **{key: 10}) == 11


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda f: f(), r"^testing.add_kw\(\) missing 1 required positional argument: 'a'$"),
        (lambda f: f(1, c=2), r"^testing.add_kw\(\) got an unexpected keyword argument 'c'$"),
        (lambda f: f(1, a=2), r"^testing.add_kw\(\) got multiple values for argument 'a'$"),
        (
            lambda f: f(1, 2, 3),
            r"^testing.add_kw\(\) takes 2 positional arguments but 3 were given$",
        ),
        (lambda f: f(b=1), r"missing 1 required positional argument: 'a'$"),
    ],
)
def test_binding_errors_are_pythons(add_kw, call, message):
    with pytest.raises(TypeError, match=message):
        call(add_kw)


def test_missing_several_arguments():
    greet = packedfun.get_global_func("testing.greet")
    with pytest.raises(TypeError, match=r"missing 1 required positional argument: 'name'"):
        greet(times=3)


def test_packed_function_with_names():
    f = packedfun.get_global_func("testing.packed_kw")
    assert f(1) == 1
    assert f(y=3, x=9) == 9
    assert str(inspect.signature(f)) == "(x: 'Any', y: 'Any' = 7) -> 'Any'"


def test_function_without_metadata_refuses_keywords():
    echo = packedfun.get_global_func("testing.echo")
    assert echo(1) == 1
    with pytest.raises(TypeError, match="testing.echo.*keyword"):
        echo(x=1)


def test_signature_text_signature_and_doc(add_kw):
    sig = inspect.signature(add_kw)
    assert str(sig) == "(a: 'int', b: 'int' = 2) -> 'int'"
    assert sig.bind(1, b=2).arguments == {"a": 1, "b": 2}
    assert add_kw.__text_signature__ == "(a, b=2)"
    assert testing.add_kw.__doc__.splitlines()[0] == "add_kw(a: int, b: int = 2) -> int"
    assert testing.greet.__doc__.splitlines()[2].startswith("greet(name, greeting=")


def test_signature_of_a_function_without_metadata_is_positional_on_every_python():
    # One rule on both backends and every supported CPython: (*args), from __signature__ itself,
    # so that inspect never works it out from the type (3.13 read _core's __call__ and gave
    # (*args, **kwargs), 3.11 and 3.12 raised ValueError there; ctypes gave (*args, **kwargs)).
    no_record = [
        packedfun.get_global_func("testing.echo"),  # registered without names
        packedfun.Function(lambda a, b=1: a),  # a Python callable wrapped, not registered
        packedfun.convert(len),
    ]
    for f in no_record:
        assert core.function_get_metadata(f) is None
        sig = inspect.signature(f)
        assert str(sig) == "(*args)" and str(f.__signature__) == "(*args)"
        assert f.__text_signature__ == "(*args)"
        assert sig.bind(1, 2, 3).args == (1, 2, 3)
        with pytest.raises(TypeError):
            sig.bind(x=1)  # as the call itself: keywords need a metadata record
        with pytest.raises(TypeError, match="keyword"):
            f(x=1)


def test_python_function_registered_gets_its_signature():
    def scale(x: float, factor: float = 2.0, label: str = "x") -> float:
        """Scales x."""
        return x * factor

    packedfun.register_func("test_signature.scale", scale, override=True)
    try:
        f = packedfun.get_global_func("test_signature.scale")
        assert f(3) == 6.0
        assert f(3, factor=4) == 12
        assert f(label="y", x=1) == 2.0
        record = packedfun.get_global_func_metadata("test_signature.scale")
        assert record["params"][1] == {"name": "factor", "type": "float", "default": 2.0}
        assert record["return"] == "float" and record["doc"] == "Scales x."
        with pytest.raises(TypeError, match=r"test_signature.scale\(\) got an unexpected"):
            f(1, scale=2)
    finally:
        packedfun.remove_global_func("test_signature.scale")


def test_python_positional_only_parameters_stay_positional_only():
    def f(a, /, b=2):
        return a * 10 + b

    packedfun.register_func("test_signature.posonly", f, override=True)
    try:
        g = packedfun.get_global_func("test_signature.posonly")
        assert (g(1), g(1, 3), g(1, b=4)) == (12, 13, 14)
        with pytest.raises(TypeError) as info:
            g(a=1)
        assert str(info.value) == (
            "test_signature.posonly() got some positional-only arguments passed as keyword "
            "arguments: 'a'"
        )
        with pytest.raises(TypeError, match="positional-only"):
            g(5, a=1)  # the positional-only rule comes before "multiple values", as in CPython
        assert str(inspect.signature(g)) == "(a: 'Any', /, b: 'Any' = 2) -> 'Any'"
        assert g.__text_signature__ == "(a, /, b=2)"
        assert g.__doc__.splitlines()[0] == "test_signature.posonly(a: Any, /, b: Any = 2) -> Any"
        record = packedfun.get_global_func_metadata("test_signature.posonly")
        assert record["params"][0] == {"name": "a", "type": "Any", "positional_only": True}
        assert "positional_only" not in record["params"][1]
    finally:
        packedfun.remove_global_func("test_signature.posonly")


def test_python_function_without_usable_signature_registers_plainly():
    packedfun.register_func("test_signature.star", lambda *a: len(a), override=True)
    sentinel = object()
    packedfun.register_func("test_signature.obj", lambda x=sentinel: x, override=True)
    try:
        assert packedfun.get_global_func("test_signature.star")(1, 2) == 2
        assert packedfun.get_global_func_metadata("test_signature.star") is None
        assert packedfun.get_global_func_metadata("test_signature.obj") is None
    finally:
        packedfun.remove_global_func("test_signature.star")
        packedfun.remove_global_func("test_signature.obj")


def test_metadata_set_from_python_replaces_the_table():
    f = packedfun.Function(lambda a, b: a - b)
    assert core.function_get_metadata(f) is None
    core.function_set_metadata(f, json.dumps({"params": [{"name": "a"}, {"name": "b"}]}))
    assert f(b=1, a=5) == 4
    core.function_set_metadata(f, json.dumps({"params": [{"name": "x"}, {"name": "y"}]}))
    assert f(y=1, x=7) == 6
    with pytest.raises(TypeError, match="unexpected keyword argument 'a'"):
        f(a=1, b=2)
    with pytest.raises(ValueError):
        core.function_set_metadata(f, "[1, 2]")
        f(1)


def test_reflected_constructor_takes_keywords_and_defaults():
    from packedfun import object as pf_object

    index = core.type_key_to_index("testing.TestIntPair")
    Pair = pf_object._registered.get(index)
    if Pair is None:  # not registered by another test module: register it here

        @packedfun.register_object("testing.TestIntPair")
        class Pair(packedfun.Object):  # type: ignore[no-redef]
            pass

    # The reflected constructor, as the default __init__ of a registered class calls it.
    init = core.ConstructorDescriptor(Pair.__create__)

    def make(*args, **kwargs):
        obj = Pair.__new__(Pair)
        init(obj, *args, **kwargs)
        return obj

    p = make(a=1, b=2)
    assert (p.a, p.b) == (1, 2)
    assert make(5).b == 0
    assert make(b=3, a=4).a == 4
    with pytest.raises(TypeError, match=r"got an unexpected keyword argument 'c'"):
        make(1, c=2)
    with pytest.raises(TypeError, match=r"missing 1 required positional argument: 'a'"):
        make(b=1)
    if isinstance(Pair.__dict__.get("__init__"), core.ConstructorDescriptor):
        assert Pair(a=7, b=8).b == 8 and Pair(7).b == 0


@pytest.fixture
def fresh_pair():
    """A class registered for testing.TestIntPair with the default __init__ (test_object's has its
    own), the previous registration restored afterwards."""
    from packedfun import object as pf_object

    index = core.type_key_to_index("testing.TestIntPair")
    previous = pf_object._registered.get(index)

    @packedfun.register_object("testing.TestIntPair")
    class Pair(packedfun.Object):
        pass

    yield Pair
    if previous is not None:
        pf_object._registered[index] = previous
    else:
        del pf_object._registered[index]
    pf_object._automatic.clear()
    core.set_object_factory(pf_object._class_for)


def test_calling_a_reflected_class_binds_keywords(fresh_pair):
    # _core calls the constructor straight from the class call (its tp_vectorcall); ctypes
    # through __init__: the same results and errors.
    Pair = fresh_pair
    assert (Pair(a=1, b=2).a, Pair(a=1, b=2).b) == (1, 2)
    assert (Pair(3, b=4).a, Pair(b=5, a=6).a, Pair(7).b) == (3, 6, 0)
    assert type(Pair(1, 2)) is Pair
    with pytest.raises(TypeError, match=r"got an unexpected keyword argument 'c'"):
        Pair(1, c=2)
    with pytest.raises(TypeError, match=r"missing 1 required positional argument: 'a'"):
        Pair(b=1)
    with pytest.raises(TypeError, match=r"got multiple values for argument 'a'"):
        Pair(1, a=2)
    with pytest.raises(TypeError, match=r"argument 'b': expected int, got str"):
        Pair(1, b="x")

    class Shifted(Pair):  # a Python subclass with its own __init__ and __new__
        def __new__(cls, *args, **kwargs):
            obj = super().__new__(cls)
            obj.note = "new"
            return obj

        def __init__(self, a, b=0):
            super().__init__(a=a + 10, b=b)

    s = Shifted(1, b=2)
    assert type(s) is Shifted and (s.a, s.b, s.note) == (11, 2, "new")


def test_an_init_set_later_on_a_reflected_class_is_called(fresh_pair):
    Pair = fresh_pair
    original = Pair.__dict__["__init__"]
    seen = []

    def init(self, *args, **kwargs):
        seen.append((args, kwargs))
        original(self, *args, **kwargs)

    Pair.__init__ = init
    try:
        assert Pair(1, b=2).b == 2 and seen == [((1,), {"b": 2})]
    finally:
        Pair.__init__ = original
    assert Pair(a=4).a == 4 and len(seen) == 1


EXPORTS = r"""
#include <packedfun/packedfun.h>
#include <limits>
using namespace packedfun::literals;

int64_t Add(int64_t a, int64_t b) { return a + b; }
double Mix(double x, packedfun::String tag) { return x + static_cast<double>(tag.size()); }
PACKEDFUN_DLL_EXPORT_TYPED_FUNC(add, Add, "a", "b"_a = 10);
PACKEDFUN_DLL_EXPORT_TYPED_FUNC(mix, Mix);
PACKEDFUN_DLL_EXPORT_DOC(add, "Adds.");

// Parameter declarations that a record cannot carry, or Python cannot spell.
int64_t KwNames(int64_t from, int64_t lam) { return from * 10 + lam; }
double Same(double x) { return x; }
using Limits = std::numeric_limits<double>;
PACKEDFUN_DLL_EXPORT_TYPED_FUNC(kw_names, KwNames, "from", "lambda"_a = 3);
PACKEDFUN_DLL_EXPORT_TYPED_FUNC(dup_names, Add, "a", "a");
PACKEDFUN_DLL_EXPORT_TYPED_FUNC(nan_default, Same, "x"_a = Limits::quiet_NaN());
PACKEDFUN_DLL_EXPORT_TYPED_FUNC(inf_default, Same, "x"_a = -Limits::infinity());
"""

OLD_STYLE = r"""
#include <packedfun/c_api.h>
int __packedfun_twice(void* self, const PFAny* args, int32_t n, PFAny* result) {
  (void)self;
  (void)n;
  result->type_index = kPFTypeInt;
  result->zero_padding = 0;
  result->v_int64 = 2 * args[0].v_int64;
  return 0;
}
"""


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    from packedfun import cpp

    d = tmp_path_factory.mktemp("sigexports")
    return cpp.load_inline("sig_exports", cpp_sources=EXPORTS, build_directory=str(d))


def test_exported_functions_carry_metadata(exported):
    assert exported.add(1) == 11
    assert exported.add(1, b=2) == 3
    assert exported.add(b=1, a=1) == 2
    record = exported.get_function_metadata("add")
    assert record["params"][1] == {"name": "b", "type": "int", "default": 10}
    assert record["doc"] == "Adds."
    assert exported.add.__doc__ == "add(a: int, b: int = 10) -> int\n\nAdds."
    # Without names the types still travel; the parameters are named arg0, arg1, ...
    mix = exported.get_function_metadata("mix")
    assert [p["type"] for p in mix["params"]] == ["float", "str"] and mix["return"] == "float"
    assert exported.mix(arg1="ab", arg0=1.0) == 3.0
    with pytest.raises(TypeError, match=r"add\(\) got an unexpected keyword argument 'c'"):
        exported.add(1, c=2)


def test_parameters_named_with_python_keywords_work(exported):
    f = exported.kw_names
    assert (f(1), f(1, 2), f(**{"from": 1, "lambda": 2}), f(1, **{"lambda": 4})) == (13, 12, 12, 14)
    assert str(inspect.signature(f)) == "(from_: 'int', lambda_: 'int' = 3) -> 'int'"
    assert f.__text_signature__ == "(from_, lambda_=3)"
    assert [p["name"] for p in exported.get_function_metadata("kw_names")["params"]] == [
        "from", "lambda"]  # fmt: skip
    with pytest.raises(TypeError, match="unexpected keyword argument 'from_'"):
        f(from_=1)  # the signature's spelling; the parameter's name is "from"


def test_bad_parameter_declarations_are_refused_without_poisoning_the_module(exported):
    # Refused where declared: the library reports each, naming the function, and exports the
    # function without a record (it works positionally); the module's other functions are
    # untouched, and so is every lookup.
    assert exported.dup_names(1, 2) == 3 and exported.get_function_metadata("dup_names") is None
    assert (
        exported.nan_default(1.5) == 1.5 and exported.get_function_metadata("nan_default") is None
    )
    assert exported.get_function_metadata("inf_default") is None
    assert exported.add(1) == 11 and exported.kw_names(1) == 13
    import os
    import subprocess
    import sys

    code = (
        "import packedfun, sys; m = packedfun.load_module(sys.argv[1]); "
        "print(m.add(1), m.dup_names(2, 3), m.inf_default(0.5))"
    )
    parent = os.path.dirname(os.path.dirname(packedfun.__file__))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([parent, os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", code, exported.path], capture_output=True,
                          text=True, timeout=120, env=env)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["11", "5", "0.5"]
    assert "'dup_names': ValueError: dup_names: parameter 'a' is named twice" in proc.stderr
    assert "nan_default: the default of parameter 'x' is nan: a default must be a finite" in (
        proc.stderr
    )
    assert "inf_default: the default of parameter 'x' is -inf" in proc.stderr


def test_old_style_exports_still_load(tmp_path):
    out = build_c_library(OLD_STYLE, tmp_path / "libold.so")
    mod = packedfun.load_module(str(out))
    assert mod.twice(21) == 42
    assert mod.get_function_metadata("twice") is None
    assert str(inspect.signature(mod.twice)) == "(*args)"
    with pytest.raises(TypeError, match="keyword"):
        mod.twice(x=1)


def test_numbers_as_python_means_them():
    np = suite.require("numpy")
    add = packedfun.get_global_func("testing.add_kw")
    assert add(np.int64(2), b=np.int8(1)) == 3
    assert packedfun.get_global_func("testing.echo_float")(np.float32(1.5)) == 1.5
    assert packedfun.get_global_func("testing.echo_bool")(np.bool_(True)) is True
    # Through Any the rule is the same: NumPy scalars arrive as int / float / bool.
    assert testing.echo(np.int32(5)) == 5 and type(testing.echo(np.int32(5))) is int
    assert type(testing.echo(np.float32(0.5))) is float
    assert testing.echo(np.bool_(False)) is False

    class Index:
        def __index__(self):
            return 7

    assert add(Index()) == 9
    with pytest.raises(OverflowError, match=r"testing.add_kw\(a: int, b: int\) -> int: argument"):
        add(np.uint64(2**64 - 1))


def test_numpy_scalars_that_are_not_real_numbers_travel_as_themselves():
    # Their __float__ drops the imaginary part (a ComplexWarning, then 1.0 arrived) or the unit, or
    # fails without naming the argument; a Python complex already travelled as itself.
    np = suite.require("numpy")
    echo_float = packedfun.get_global_func("testing.echo_float")
    values = [np.complex128(1 + 2j), np.complex64(3j), np.clongdouble(1j)]
    values += [np.datetime64("2020-01-01"), np.timedelta64(5, "s"), np.void(b"ab")]
    for value in values:
        name = f"numpy.{type(value).__name__}"
        assert testing.echo(value) is value
        assert testing.echo([value])[0] is value
        assert packedfun.convert({"k": value})["k"] is value
        with pytest.raises(TypeError, match=rf"argument 0: expected float, got {name}\b"):
            echo_float(value)
    assert testing.echo(1 + 2j) == 1 + 2j


def test_stubgen_for_a_library(exported):
    from packedfun import stubgen

    text = stubgen.generate(libraries=[exported.path])
    assert 'def add(a: int, b: int = 10) -> int:\n    """Adds."""\n    ...\n' in text
    assert "def mix(arg0: float, arg1: str) -> float: ..." in text


def test_signature_of_the_function_class_itself():
    # On the class, __signature__ is None (not the descriptor object), so inspect, help() and
    # Sphinx autodoc can describe the Function type; instances still carry their own.
    assert packedfun.Function.__signature__ is None
    inspect.signature(packedfun.Function)  # raised TypeError on the descriptor before
    echo = packedfun.get_global_func("testing.echo")
    with pytest.raises(AttributeError, match="read-only"):
        echo.__signature__ = None


def test_errors_name_the_parameter(add_kw):
    label = r"testing\.add_kw\(a: int, b: int\) -> int"
    with pytest.raises(TypeError, match=rf"^{label}: argument 'b': expected int, got str"):
        add_kw(1, "x")
    with pytest.raises(TypeError, match=rf"^{label}: argument 'b': expected int, got str"):
        add_kw(1, b="x")  # bound by keyword: still the parameter's name
    with pytest.raises(OverflowError, match=rf"^{label}: argument 'a': int too large for int64"):
        add_kw(2**70)  # refused by the Python-side converter: the same words
    # Without names, positions (the typed wrapper has nothing better to say).
    with pytest.raises(TypeError, match=r"^testing\.add_int: argument 1: expected int, got str"):
        testing.add_int(1, "x")


def test_container_element_errors_name_the_parameter_and_path():
    head = packedfun.get_global_func("testing.head")
    label = r"testing\.head\(xs: Array\[int\], n: Optional\[int\]\) -> Array\[int\]"
    expected = rf"^{label}: argument 'xs'\[999\]: expected int, got object"
    with pytest.raises(TypeError, match=expected):
        head([*range(999), object()])  # the Python type of an Opaque value, deep inside
    with pytest.raises(TypeError, match=rf"^{label}: argument 'xs'\[1\]: expected int, got str"):
        head(xs=[1, "s"])
    with pytest.raises(OverflowError, match=rf"^{label}: argument 'xs'\[1\]: int too large"):
        head([1, 2**70])


def test_numpy_scalars_refused_by_the_callee_are_named_by_their_type(add_kw):
    # The callee sees a converted value (a float16 arrives as a float); the binding puts the
    # argument's own type back into the callee's words, also along a container element's path.
    np = pytest.importorskip("numpy")
    label = r"testing\.add_kw\(a: int, b: int\) -> int"
    with pytest.raises(
        TypeError, match=rf"^{label}: argument 'a': expected int, got numpy\.float16\b"
    ):
        add_kw(np.float16(1.5), 2)
    with pytest.raises(
        TypeError, match=rf"^{label}: argument 'b': expected int, got numpy\.float64\b"
    ):
        add_kw(1, b=np.float64(2.0))  # a float subclass, bound by keyword
    with pytest.raises(
        OverflowError,
        match=rf"^{label}: argument 'a': value 18446744073709551615 "
        r"\(numpy\.uint64\) does not fit in int64\b",
    ):
        add_kw(np.uint64(2**64 - 1), 2)
    with pytest.raises(
        TypeError, match=r"^testing\.add_int: argument 1: expected int, got numpy\.str_\b"
    ):
        testing.add_int(1, np.str_("x"))
    nested = packedfun.get_global_func("testing.echo_map_str_array_int")
    with pytest.raises(
        TypeError, match=r"argument 0\['k'\]\[1\]: expected int, got numpy\.float32\b"
    ):
        nested({"k": [1, np.float32(2)]})
    with pytest.raises(TypeError, match=rf"^{label}: argument 'b': expected int, got float\b"):
        add_kw(np.int64(1), 2.5)  # a plain float stays a float


def test_lone_surrogate_names_function_and_parameter():
    greet = packedfun.get_global_func("testing.greet")
    with pytest.raises(UnicodeEncodeError) as info:
        greet("a", greeting="\ud800")
    assert info.value.encoding == "utf-8" and info.value.object == "\ud800"
    assert (
        "testing.greet(name: str, greeting: str, times: int, scale: float, loud: bool) -> str: "
        "argument 'greeting': surrogates not allowed"
    ) in str(info.value)
    with pytest.raises(UnicodeEncodeError, match=r"testing\.echo: argument 0\[1\]: surrogates"):
        testing.echo(["ok", "\udc80"])


def test_metadata_ranges_entry_point_checks_its_arrays():
    """PFFunctionBuildMetadataRanges (what the headers call): a record for good arrays, an error
    (not a crash) for int_ranges NULL with num_ranges > 0 or a negative count."""
    lib = ctypes.CDLL(core.LIB_PATH)
    build = lib.PFFunctionBuildMetadataRanges
    strs = ctypes.POINTER(ctypes.c_char_p)
    build.argtypes = [ctypes.c_char_p, strs, ctypes.c_int32, strs, strs, ctypes.c_int32,
                      ctypes.c_char_p, strs, ctypes.c_int32, ctypes.c_void_p]  # fmt: skip
    lib.PFAnyRelease.argtypes = [ctypes.c_void_p]
    lib.PFErrorMoveFromRaised.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    lib.PFObjectDecRef.argtypes = [ctypes.c_void_p]
    types = (ctypes.c_char_p * 3)(b"int", b"int", b"str")
    names = (ctypes.c_char_p * 2)(b"a", b"b")
    ranges = (ctypes.c_char_p * 2)(b"int32", None)
    out = (ctypes.c_uint64 * 2)()
    assert build(b"m.f", types, 3, names, None, 2, None, ranges, 2, out) == 0
    lib.PFAnyRelease(out)
    for bad_ranges, count in ((None, 2), (ranges, -1)):
        assert build(b"m.f", types, 3, names, None, 2, None, bad_ranges, count, out) == -1
        err = ctypes.c_void_p()
        lib.PFErrorMoveFromRaised(ctypes.byref(err))
        assert err.value is not None
        lib.PFObjectDecRef(err)
