"""Container views: std parameters read a list/tuple/dict in place.

A Function whose parameters read views (std::vector<int64_t/double>, std::map/unordered_map with
str keys) and that keeps the GIL gets a kPFTypeContainerView from _core instead of an Array/Map;
the ctypes backend, a released call and an older library get the Array/Map as before. Every
result and error must be the same either way: each case is run under both GIL policies (the
released call never receives a view) and compared.
"""

import pytest
import suite

pf = suite.require("packedfun")
cpp = suite.require("packedfun.cpp")
from cmake_project import build_c_library  # noqa: E402
from packedfun._backend import BACKEND, core  # noqa: E402

VIEW_SHIFT = 8
ARRAY, MAP, VIEW = 72, 73, 14

SOURCE = r"""
#include <packedfun/array.h>
#include <packedfun/registry.h>
#include <packedfun/stl.h>

#include <map>
#include <string>
#include <unordered_map>

int64_t vsum(const std::vector<int64_t>& v) {
  int64_t s = 0;
  for (int64_t x : v) s += x;
  return s;
}
double fsum(std::vector<double> v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}
std::vector<int64_t> vecho(std::vector<int64_t> v) { return v; }
int64_t i32sum(const std::vector<int32_t>& v) {
  int64_t s = 0;
  for (int32_t x : v) s += x;
  return s;
}
int64_t u8sum(std::vector<uint8_t> v) {
  int64_t s = 0;
  for (uint8_t x : v) s += x;
  return s;
}
double f32sum(std::vector<float> v) {
  double s = 0;
  for (float x : v) s += x;
  return s;
}
double msum(const std::map<std::string, double>& d) {
  double s = 0;
  for (const auto& kv : d) s += kv.second;
  return s;
}
int64_t usum(std::unordered_map<std::string, int64_t> d) {
  int64_t s = 0;
  for (const auto& kv : d) s += kv.second + static_cast<int64_t>(kv.first.size());
  return s;
}
std::string mjoin(const std::map<std::string, std::string>& d) {
  std::string out;
  for (const auto& kv : d) out += kv.first + "=" + kv.second + ";";
  return out;
}
int64_t mixed(std::vector<int64_t> a, packedfun::Array<int64_t> b, std::vector<double> c) {
  int64_t s = 0;
  for (int64_t x : a) s += x;
  for (int64_t x : b) s += 10 * x;
  for (double x : c) s += static_cast<int64_t>(100 * x);
  return s;
}
int64_t asum(packedfun::Array<int64_t> a) {
  int64_t s = 0;
  for (int64_t x : a) s += x;
  return s;
}
double adsum(const packedfun::Array<double>& a) {
  double s = 0;
  for (double x : a) s += x;
  return s;
}
int64_t ai32sum(packedfun::Array<int32_t> a) {
  int64_t s = 0;
  for (int32_t x : a) s += x;
  return s;
}
packedfun::Array<int64_t> aecho(packedfun::Array<int64_t> a) { return a; }
packedfun::Array<double> adecho(packedfun::Array<double> a) { return a; }
int64_t alen(const packedfun::Array<packedfun::String>& a) {
  int64_t s = 0;
  for (const packedfun::String& x : a) s += static_cast<int64_t>(x.size());
  return s;
}
int64_t cbsum(packedfun::Function f, const std::vector<int64_t>& v, int64_t k) {
  return f(vsum(v) * k).cast<int64_t>();
}
PACKEDFUN_REGISTER_GLOBAL("test_container_views.named")
    .set_body_typed([](const std::vector<int64_t>& values, int64_t k) { return vsum(values) * k; },
                    {"values", "k"});
"""
FUNCTIONS = ["vsum", "fsum", "vecho", "i32sum", "u8sum", "f32sum", "msum", "usum", "mjoin", "mixed",
             "asum", "adsum", "ai32sum", "aecho", "adecho", "alen", "cbsum"]  # fmt: skip

# A C library reading argument 0 through the ABI: what it arrived as, what read_int64 gave, and
# what PFAnyViewToOwned made of it. `probe` declares a view argument; `old_probe` is a library
# built before ABI 1.4 (no __packedfun_view_args__ symbol): it must keep receiving an Array.
PROBE = r"""
#include <packedfun/c_api.h>

static int report(const PFAny* arg, PFAny* result) {
  PFAny cells[5];
  int64_t got = -1, sum = 0, buf[16];
  if (arg->type_index == kPFTypeContainerView) {
    const PFContainerView* view = (const PFContainerView*)arg->v_ptr;
    int64_t n = view->size < 16 ? view->size : 16;
    got = view->vtable->read_int64(view, 0, buf, n);
    for (int64_t i = 0; i < got; ++i) sum += buf[i];
  }
  PFAny owned;
  if (PFAnyViewToOwned(arg, &owned) != 0) return -1;
  int64_t values[5] = {arg->type_index, got, sum, owned.type_index, -1};
  if (owned.type_index == kPFTypeArray) values[4] = ((const PFSeqObject*)owned.v_obj)->size;
  if (owned.type_index == kPFTypeMap && PFMapSize(owned.v_obj, &values[4]) != 0) return -1;
  PFAnyRelease(&owned);
  for (int i = 0; i < 5; ++i) {
    cells[i].type_index = kPFTypeInt;
    cells[i].zero_padding = 0;
    cells[i].v_int64 = values[i];
  }
  return PFArrayCreate(cells, 5, result);
}

int __packedfun_probe(void* self, const PFAny* args, int32_t n, PFAny* result) {
  (void)self;
  (void)n;
  return report(&args[0], result);
}
int __packedfun_old_probe(void* self, const PFAny* args, int32_t n, PFAny* result) {
  (void)self;
  (void)n;
  return report(&args[0], result);
}
const int32_t __packedfun_gil__probe = kPFGILHold;
const uint32_t __packedfun_view_args__probe = 1;
const int32_t __packedfun_gil__old_probe = kPFGILHold;
"""


@pytest.fixture(scope="module")
def m(tmp_path_factory):
    cache = tmp_path_factory.mktemp("container-views")
    mod = cpp.load_inline(
        "container_views", cpp_sources=SOURCE, functions=FUNCTIONS, build_directory=cache
    )
    for name in FUNCTIONS:
        getattr(mod, name).gil_policy = "hold"
    return mod


@pytest.fixture(scope="module")
def probes(tmp_path_factory):
    out = build_c_library(PROBE, tmp_path_factory.mktemp("container-view-probe") / "libprobe.so")
    return pf.load_module(str(out))


def outcome(f, arg):
    try:
        return ("ok", f(arg))
    except Exception as exc:  # noqa: BLE001 - the very type and message are compared
        return (type(exc).__name__, str(exc))


def both_policies(f, arg):
    """The outcome with the GIL held (a view on _core) and released (an Array/Map)."""
    f.gil_policy = "hold"
    held = outcome(f, arg)
    f.gil_policy = "release"
    try:
        released = outcome(f, arg)
    finally:
        f.gil_policy = "hold"
    return held, released


class Index:
    def __index__(self):
        return 3


SEQUENCES = [
    list(range(100)),
    (1, 2, 3),
    [],
    [2**40, -(2**62), 2**63 - 1],
    [True, 2],
    [1, Index()],
    [1.5, 2],
    [1, "x"],
    [1, None],
    [1, 2**63],
    [1, 2**70],
    [-(2**63) - 1],
    list(range(200)),
    [255, 256],
    [-1, 5],
    [2**31 - 1, -(2**31)],
    [2**31],
    [2**53 + 1, 0.5],
    [[1]],
    {"a": 1},
    "abc",
    3,
]
MAPPINGS = [
    {f"key{i}": float(i) for i in range(100)},
    {},
    {"a": 1, "b": 2.5},
    {"a long key, past seven bytes": 1.0},
    {"é": 1.0},
    {"a": True},
    {"a": "x"},
    {"a": [1]},
    {"a": 2**70},
    {1: 2.0},
    [1.0],
    None,
]


@pytest.mark.parametrize(
    "name",
    ["vsum", "fsum", "vecho", "i32sum", "u8sum", "f32sum", "asum", "adsum", "ai32sum", "aecho",
     "adecho"],
)  # fmt: skip
def test_sequences_convert_as_before(m, name):
    f = getattr(m, name)
    for arg in SEQUENCES:
        held, released = both_policies(f, arg)
        if name in ("vecho", "aecho", "adecho") and held[0] == "ok":
            held = ("ok", [(type(x), x) for x in held[1]])
            released = ("ok", [(type(x), x) for x in released[1]])
        assert held == released, arg


def test_array_parameters_of_numbers_read_the_list_in_place(m):
    # An Array<int64_t>/Array<double> parameter is built from the list it reads (no Array made by
    # the caller): the same values, an Array of its own per call, ints read as floats for double.
    assert m.asum(list(range(100))) == 4950 and m.asum([]) == 0
    assert m.adsum([1, 2.5, 3]) == 6.5
    assert m.ai32sum([2**31 - 1, 1]) == 2**31
    echoed = m.aecho([3, 1, 2])
    assert isinstance(echoed, pf.Array) and list(echoed) == [3, 1, 2]
    assert m.aecho([3, 1, 2]) is not echoed
    floats = m.adecho([1, 2.5])
    assert list(floats) == [1.0, 2.5] and all(type(x) is float for x in floats)
    assert list(m.aecho(list(range(130)))) == list(range(130))  # past one read chunk (64)
    with pytest.raises(
        TypeError,
        match=r"^asum\(a: Array\[int\]\) -> int: argument 'a'\[1\]: expected int, got str",
    ):
        m.asum([1, "x"])
    with pytest.raises(OverflowError, match=r"argument 'a'\[1\]: value 2147483648 does not fit"):
        m.ai32sum([1, 2**31])


def test_array_parameters_filled_in_place_at_every_size(m):
    # The numbers are read into the upper half of the new Array's cells and widened in place, so
    # every size (odd, even, one, past a read chunk) must give back exactly the list, as the Array
    # the released call converts does; a bad item late in a long list is named by its index.
    for n in [0, 1, 2, 3, 7, 8, 63, 64, 65, 140]:
        ints = [(-1) ** i * (i * 2**33 + i) for i in range(n)]
        assert both_policies(m.aecho, ints) == (("ok", pf.Array(ints)),) * 2, n
        assert list(m.aecho(ints)) == ints
        assert m.asum(ints) == sum(ints)
        floats = [i / 4 for i in range(n)] + ([3] if n else [])
        echoed = list(m.adecho(floats))
        assert echoed == floats and all(type(x) is float for x in echoed), n
        small = [i - 70 for i in range(n)]
        assert m.ai32sum(small) == sum(small)
    with pytest.raises(OverflowError, match=r"argument 'a'\[100\]: value 2147483648 does not fit"):
        m.ai32sum([0] * 100 + [2**31] + [0] * 39)
    with pytest.raises(TypeError, match=r"argument 'a'\[139\]: expected int, got str"):
        m.asum([1] * 139 + ["x"])


def test_array_iteration_reads_every_element_kind(m):
    # An Array's iterator walks its cells in place; elements that are not numbers (String) take
    # the checked read, and every element is seen once, in order.
    words = ["a", "bb", "a string of more than seven bytes", ""]
    assert m.alen(words) == sum(len(w) for w in words)
    assert m.alen([]) == 0
    assert m.asum(pf.Array(list(range(50)))) == sum(range(50))  # an Array argument, not a view
    with pytest.raises(TypeError, match=r"argument 'a'\[1\]: expected str, got int"):
        m.alen(["a", 1])


@pytest.mark.parametrize("name", ["msum", "usum", "mjoin"])
def test_mappings_convert_as_before(m, name):
    f = getattr(m, name)
    for arg in MAPPINGS + [{"a": "b", "c": "a string past seven bytes"}]:
        assert both_policies(f, arg)[0] == both_policies(f, arg)[1], arg


def test_results_and_messages(m):
    assert m.vsum(list(range(100))) == 4950
    assert m.vsum((2**40, -3)) == 2**40 - 3
    assert m.fsum([1, 2.5, True]) == 4.5
    assert list(m.vecho([3, 1, 2])) == [3, 1, 2]
    assert m.i32sum(list(range(200))) == 19900 and m.u8sum([255, 1]) == 256
    with pytest.raises(
        OverflowError,
        match=r"^u8sum\(v: list\[int\]\) -> int: argument 'v'\[1\]: value 256 does not fit in "
        r"uint8",
    ):
        m.u8sum([255, 256])
    assert m.msum({f"key{i}": float(i) for i in range(100)}) == 4950.0
    assert m.usum({"ab": 1, "c": 2}) == 6
    assert m.mjoin({"b": "long value string", "a": "x"}) == "a=x;b=long value string;"
    with pytest.raises(
        TypeError, match=r"^vsum\(v: list\[int\]\) -> int: argument 'v'\[1\]: expected int, got str"
    ):
        m.vsum([1, "x"])
    with pytest.raises(
        OverflowError,
        match=r"^vsum\(v: list\[int\]\) -> int: argument 'v'\[1\]: int too large for int64",
    ):
        m.vsum([1, 2**70])
    # Beyond 64 bits the converters refuse an element before C++ sees it; the message names the
    # element's C type (the metadata record's range), not the 64-bit transport.
    with pytest.raises(OverflowError, match=r"argument 'v'\[2\]: int too large for int32$"):
        m.i32sum([1, 2, 2**70])
    with pytest.raises(OverflowError, match=r"argument 'v'\[0\]: int too small for uint8$"):
        m.u8sum([-(2**70)])
    with pytest.raises(OverflowError, match=r"argument 'd'\['k'\]: int too large for int64$"):
        m.usum({"k": 2**64})
    with pytest.raises(
        TypeError,
        match=r"^msum\(d: dict\[str, float\]\) -> float: argument 'd'\['a'\]: expected float, "
        r"got str",
    ):
        m.msum({"a": "x"})
    with pytest.raises(
        TypeError,
        match=r"^usum\(d: dict\[str, int\]\) -> int: argument 'd'\[1\] key: expected str, got int",
    ):
        m.usum({1: 2})
    with pytest.raises(
        TypeError,
        match=r"^mjoin\(d: dict\[str, str\]\) -> str: argument 'd': expected dict\[str, str\]",
    ):
        m.mjoin([1])


def test_runtime_sets_the_view_argument_bits(m):
    bits = {name: core.function_flags(getattr(m, name)) >> VIEW_SHIFT for name in FUNCTIONS}
    assert bits == {"vsum": 1, "fsum": 1, "vecho": 1, "i32sum": 1, "u8sum": 1, "f32sum": 0,
                    "msum": 1, "usum": 1, "mjoin": 1, "mixed": 0b111, "asum": 1, "adsum": 1,
                    "ai32sum": 1, "aecho": 1, "adecho": 1, "alen": 0, "cbsum": 0b10}  # fmt: skip
    assert m.mixed([1, 2], [3], [0.5]) == 3 + 30 + 50  # the Array<int64_t> in the middle
    assert core.function_flags(pf.get_global_func("testing.echo")) >> VIEW_SHIFT == 0


def test_a_declared_view_argument_reads_the_list_in_place(probes):
    view = BACKEND == "_core"  # ctypes passes the Array as before
    first = VIEW if view else ARRAY
    assert list(probes.probe([1, 2, 3])) == [first, 3 if view else -1, 6 if view else 0, ARRAY, 3]
    # read_int64 stops before the str; PFAnyViewToOwned still makes the whole Array
    assert list(probes.probe([1, "x", 2])) == [first, 1 if view else -1, 1 if view else 0,
                                                ARRAY, 3]  # fmt: skip
    assert list(probes.probe({"a": 1})) == [first if view else MAP, 0 if view else -1, 0, MAP, 1]
    assert list(probes.probe(5)) == [1, -1, 0, 1, -1]  # not a container: an int as always
    with pytest.raises(OverflowError, match=r"^probe: argument 0\[1\]: int too large"):
        probes.probe([1, 2**70])  # the materialized conversion's own error
    probes.probe.gil_policy = "release"  # views are read under the GIL only
    try:
        assert list(probes.probe([1, 2])) == [ARRAY, -1, 0, ARRAY, 2]
    finally:
        probes.probe.gil_policy = "hold"


def test_a_library_older_than_abi_1_4_receives_arrays(probes):
    assert core.function_flags(probes.old_probe) >> VIEW_SHIFT == 0
    assert list(probes.old_probe([1, 2, 3])) == [ARRAY, -1, 0, ARRAY, 3]
    assert list(probes.old_probe({"a": 1, "b": 2})) == [MAP, -1, 0, MAP, 2]
    with pytest.raises(OverflowError, match=r"^old_probe: argument 0\[1\]: int too large"):
        probes.old_probe([1, 2**70])


def test_views_are_not_kept(m, probes):
    # the view's record is recycled after each call: calls in a row see their own containers
    for n in range(1, 40):
        assert m.vsum(list(range(n))) == n * (n - 1) // 2
        assert list(probes.probe(list(range(n)))[3:]) == [ARRAY, n]


def test_a_policy_released_while_converting_gets_arrays(probes):
    # Argument 1's __index__ runs Python code after argument 0 became a view: the call then
    # releases the GIL, so the view is replaced by its Array before the call.
    probe = probes.probe

    class Release:
        def __index__(self):
            probe.gil_policy = "release"
            return 1

    try:
        assert list(probe([1, 2, 3], 5))[0] == (VIEW if BACKEND == "_core" else ARRAY)
        assert list(probe([1, 2, 3], Release())) == [ARRAY, -1, 0, ARRAY, 3]
        assert probe.gil_policy == "release"
    finally:
        probe.gil_policy = "hold"


def test_named_parameters_word_errors_the_same(m):
    # A materialized view's error is reworded by the metadata as an argument error is.
    named = pf.get_global_func("test_container_views.named")
    assert core.function_flags(named) >> VIEW_SHIFT == 1
    call = lambda values: named(values, k=2)  # noqa: E731
    for values in ([1, 2, 3], [1, "x"], [1, 2**70], [[1]], {"a": 1}):
        held, released = both_policies(call_as(named, call), values)
        assert held == released, values
    with pytest.raises(OverflowError, match=r"argument 'values'\[1\]: int too large for int64"):
        named([1, 2**70], k=2)
    assert named([1, 2, 3], k=2) == 12


def test_a_view_beside_a_callback_and_other_arguments(m):
    # A list beside a Python function and an int (the positional path's lent callback and a view
    # in the caller's frame in one call): the same results and errors under both policies, the
    # error naming the parameter and the element, and nothing of either kept after the call.
    seen = []

    def double(x):
        seen.append(x)
        return 2 * x

    for values in ([1, 2, 3], [], list(range(100)), (1, 2), [1, "x"], [1, 2**70], [[1]], 7):
        held, released = both_policies(call_as(m.cbsum, lambda v: m.cbsum(double, v, 3)), values)
        assert held == released, values
    with pytest.raises(TypeError, match=r"^cbsum\(.*argument 'v'\[1\]: expected int, got str"):
        m.cbsum(double, [1, "x"], 1)
    with pytest.raises(TypeError, match=r"argument 'k'"):
        m.cbsum(double, [1], "k")  # not a view's error: the int parameter's
    seen.clear()
    for n in range(1, 30):
        assert m.cbsum(double, list(range(n)), 1) == n * (n - 1)
    assert seen == [n * (n - 1) // 2 for n in range(1, 30)]
    with pytest.raises(ZeroDivisionError):
        m.cbsum(lambda x: 1 // 0, [1, 2], 1)  # the callback's error, through the same path
    assert m.cbsum(double, [4, 5], 2) == 36  # the wrapper and the view work after a failure


class call_as:  # noqa: N801 - a callable carrying the Function's gil_policy, for both_policies
    def __init__(self, func, call):
        self.func, self.call = func, call

    def __call__(self, arg):
        return self.call(arg)

    @property
    def gil_policy(self):
        return self.func.gil_policy

    @gil_policy.setter
    def gil_policy(self, policy):
        self.func.gil_policy = policy


class Mutates:
    """An int-like argument whose conversion changes the list passed before it."""

    def __init__(self, target: list, how: str):
        self.target, self.how = target, how

    def __index__(self):
        if self.how == "grow":
            self.target.extend(range(10))
        elif self.how == "str":
            self.target[0] = "x"
        else:
            self.target[:] = [5000, 5000, 5000]
        return 2


@pytest.mark.parametrize("how", ["grow", "str", "replace"])
def test_a_later_argument_cannot_change_a_view_it_follows(m, how):
    # The callee saw the list as a later argument's __index__ left it (60007 under "hold", 6007
    # under "release"), or failed on a str the list did not hold when it was passed: every
    # argument is read as it was when its turn came, left to right, under both policies.
    named = pf.get_global_func("test_container_views.named")
    results = []
    for policy in ("hold", "release"):
        named.gil_policy = policy
        values = [1000, 2000, 3000]
        results.append(outcome(lambda v: named(v, Mutates(v, how)), values))
    named.gil_policy = "hold"
    assert results == [("ok", 12000), ("ok", 12000)]
    mixed = m.mixed
    for policy in ("hold", "release"):
        mixed.gil_policy = policy
        a = [1, 2, 3]
        assert mixed(a, [Mutates(a, how)], [0.5]) == 6 + 20 + 50, policy
    mixed.gil_policy = "hold"
