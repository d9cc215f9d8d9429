# The C++ type vocabulary from Python: std containers, Tuple, Variant, Expected, callbacks, enums.
import os
import re

import pytest
import suite


def _head(signature: str, param: str) -> str:
    """The start of an argument error of a function with this signature, as a regex."""
    return re.escape(f"{signature}: argument '{param}'")


# Message heads of the typed functions below: load_inline functions carry their C++ signature.
REVERSE = _head("reverse(v: list[int]) -> list[int]", "v")
TOTAL = _head("total(m: dict[str, float]) -> float", "m")
CROSS = _head("cross(a: list[float; 3], b: list[float; 3]) -> list[float; 3]", "b")
TRIPLE = _head("triple(t: Tuple[int, str, float]) -> Tuple[int, str, float]", "t")
DESCRIBE = _head("describe(v: Variant[int, str, list[float]]) -> str", "v")
APPLY_TWICE = _head("apply_twice(f: Callable[[int], int], x: int) -> int", "f")
NESTED = _head("nested(v: list[dict[str, list[int]]]) -> list[dict[str, list[int]]]", "v")
FLIP = _head("flip(m: int) -> int", "m")
SWAP_PAIR = _head("swap_pair(p: Tuple[int, str]) -> Tuple[str, int]", "p")


pf = suite.require("packedfun")
cpp = suite.require("packedfun.cpp")

SOURCE = r"""
#include <packedfun/stl.h>

#include <array>
#include <map>
#include <unordered_map>

namespace pf = packedfun;

std::vector<int64_t> reverse(const std::vector<int64_t>& v) { return {v.rbegin(), v.rend()}; }
int64_t sum_by_value(std::vector<int64_t> v) { int64_t s = 0; for (auto x : v) s += x; return s; }
double total(const std::map<std::string, double>& m) {
  double s = 0;
  for (const auto& kv : m) s += kv.second;
  return s;
}
std::unordered_map<std::string, int64_t> lengths(std::vector<std::string> words) {
  std::unordered_map<std::string, int64_t> out;
  for (const auto& w : words) out[w] = static_cast<int64_t>(w.size());
  return out;
}
std::array<double, 3> cross(std::array<double, 3> a, const std::array<double, 3>& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
std::pair<std::string, int64_t> swap_pair(std::pair<int64_t, std::string> p) {
  return {p.second, p.first};
}
pf::Tuple<int64_t, std::string, double> triple(const std::tuple<int64_t, std::string, double>& t) {
  return t;
}
std::string describe(const std::variant<int64_t, std::string, std::vector<double>>& v) {
  if (v.index() == 0) return "int";
  if (v.index() == 1) return "str";
  return "floats";
}
pf::Variant<int64_t, std::string> int_or_str(bool as_str) {
  if (as_str) return std::string("s");
  return int64_t(7);
}
std::optional<std::vector<int64_t>> maybe(std::optional<int64_t> n) {
  if (!n) return std::nullopt;
  return std::vector<int64_t>(static_cast<size_t>(*n), 1);
}
int64_t view_len(std::string_view s) { return static_cast<int64_t>(s.size()); }
std::string apply_str(std::function<std::string(std::string_view)> f, std::string s) {
  return f(s);
}
int64_t apply_twice(pf::TypedFunction<int64_t(int64_t)> f, int64_t x) { return f(f(x)); }
pf::Expected<double> checked_sqrt(double x) {
  if (x < 0) return pf::Error("ValueError", "checked_sqrt: negative input");
  return x * 0.5;
}
std::vector<std::map<std::string, std::vector<int64_t>>> nested(
    std::vector<std::map<std::string, std::vector<int64_t>>> v) { return v; }

enum class Mode : int32_t { kFast = 1, kSafe = 2 };
Mode flip(Mode m) { return m == Mode::kFast ? Mode::kSafe : Mode::kFast; }
"""
FUNCTIONS = [
    "reverse",
    "sum_by_value",
    "total",
    "lengths",
    "cross",
    "swap_pair",
    "triple",
    "describe",
    "int_or_str",
    "maybe",
    "view_len",
    "apply_str",
    "apply_twice",
    "checked_sqrt",
    "nested",
    "flip",
]


@pytest.fixture(scope="module")
def m(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cpp-types-cache")
    return cpp.load_inline(
        "cpp_types", cpp_sources=SOURCE, functions=FUNCTIONS, build_directory=cache
    )


def test_vectors_from_lists_and_tuples(m):
    assert list(m.reverse([1, 2, 3])) == [3, 2, 1]
    assert list(m.reverse((4, 5))) == [5, 4]
    assert list(m.reverse([])) == []
    assert m.sum_by_value(list(range(100))) == 4950
    assert isinstance(m.reverse([1]), pf.Array)


def test_vector_errors_name_function_argument_and_element(m):
    with pytest.raises(TypeError, match=REVERSE + r"\[1\]: expected int, got str"):
        m.reverse([1, "x"])
    with pytest.raises(TypeError, match=REVERSE + r": expected list\[int\], got int"):
        m.reverse(3)
    with pytest.raises(TypeError, match=REVERSE + r": expected list\[int\], got Map"):
        m.reverse({1: 2})
    with pytest.raises(OverflowError):
        m.reverse([2**70])


def test_maps(m):
    assert m.total({"a": 1.5, "b": 2}) == 3.5
    assert m.total({}) == 0.0
    out = m.lengths(["ab", "cde"])
    assert dict(out.items()) == {"ab": 2, "cde": 3}
    with pytest.raises(
        TypeError,
        match=TOTAL + r"\['a'\]: expected float, got str",
    ):
        m.total({"a": "x"})
    with pytest.raises(TypeError, match=TOTAL + r"\[1\] key: expected str, got int"):
        m.total({1: 1.0})
    with pytest.raises(TypeError, match=r"expected dict\[str, float\], got Array"):
        m.total([1.0])


def test_std_array_length_is_checked(m):
    assert list(m.cross([1, 0, 0], [0, 1, 0])) == [0.0, 0.0, 1.0]
    with pytest.raises(
        TypeError, match=CROSS + r": list\[float; 3\]: expected 3 items, got 2 items"
    ):
        m.cross([1, 0, 0], [0, 1])


def test_pairs_and_tuples(m):
    assert list(m.swap_pair((1, "one"))) == ["one", 1]
    assert list(m.triple([1, "x", 2.5])) == [1, "x", 2.5]
    with pytest.raises(
        TypeError, match=TRIPLE + r": Tuple\[int, str, float\]: expected 3 items, got 2"
    ):
        m.triple((1, "x"))
    with pytest.raises(
        TypeError,
        match=SWAP_PAIR + r"\[1\]: expected str, got int",
    ):
        m.swap_pair((1, 2))


def test_variant_first_accepting_alternative(m):
    assert m.describe(3) == "int"
    assert m.describe("s") == "str"
    assert m.describe([1.0, 2]) == "floats"
    assert m.describe(True) == "int"  # int accepts a bool, and comes first
    with pytest.raises(
        TypeError,
        match=DESCRIBE + r": expected Variant\[int, str, list\[float\]\], got float",
    ):
        m.describe(2.5)
    assert m.int_or_str(False) == 7
    assert m.int_or_str(True) == "s"


def test_optional_string_view_and_callables(m):
    assert m.maybe(None) is None
    assert list(m.maybe(2)) == [1, 1]
    assert m.view_len("caf\u00e9") == 5
    assert m.apply_str(lambda s: s.upper(), "abc") == "ABC"
    assert m.apply_twice(lambda x: x * 3, 2) == 18
    with pytest.raises(TypeError, match=r"Callable\[\[int\], int\] result: expected int, got str"):
        m.apply_twice(lambda x: "no", 2)
    with pytest.raises(
        TypeError, match=APPLY_TWICE + r": expected Callable\[\[int\], int\], got int"
    ):
        m.apply_twice(1, 2)
    with pytest.raises(ZeroDivisionError):
        m.apply_twice(lambda x: 1 // 0, 2)


def test_expected_error_is_raised_with_its_kind(m):
    assert m.checked_sqrt(8.0) == 4.0
    with pytest.raises(ValueError, match="checked_sqrt: negative input"):
        m.checked_sqrt(-1.0)


def test_nested_containers_round_trip(m):
    value = [{"a": [1, 2]}, {"b": []}]
    out = m.nested(value)
    assert [{k: list(v) for k, v in d.items()} for d in out] == value
    with pytest.raises(
        TypeError,
        match=NESTED + r"\[1\]\['b'\]\[0\]: expected int, got str",
    ):
        m.nested([{"a": [1]}, {"b": ["x"]}])


def test_enum_travels_as_int(m):
    assert m.flip(1) == 2
    with pytest.raises(TypeError, match=FLIP + r": expected int, got bool"):
        m.flip(True)
    with pytest.raises(OverflowError, match="int32"):
        m.flip(2**40)


@pytest.mark.deselect_if(
    os.environ.get("PACKEDFUN_BACKEND") == "ctypes",
    reason="no Python backend involved: run once, by the default-backend pass",
)
def test_stl_header_is_opt_in():
    # packedfun.h alone does not pull <map>/<unordered_map>/<functional> through the bridge.
    include = cpp._package.include_dirs()[0]
    with open(os.path.join(include, "packedfun", "packedfun.h")) as f:
        assert "stl.h" not in f.read()
