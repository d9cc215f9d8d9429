// C++ tests of the type vocabulary: Tuple, Variant, Expected, TypedFunction, enums, the std bridge.
#include <gtest/gtest.h>
#include <packedfun/packedfun.h>
#include <packedfun/stl.h>

#include <array>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "catch_error.h"

namespace pf = packedfun;

namespace {

std::string ErrorOf(const std::function<void()>& f) { return Catch(f).what(); }

enum class Color : int32_t { kRed = 1, kGreen = 2 };
enum class Small : uint8_t { kA = 0 };

pf::Any Ints(std::initializer_list<int64_t> xs) { return pf::Array<int64_t>(xs); }

}  // namespace

PACKEDFUN_ENUM_NAME(Color, "test.Color");

TEST(Stl, VectorArgumentsAndResults) {
  pf::Function sum = pf::Function::FromTyped(
      [](const std::vector<int64_t>& v) {
        int64_t s = 0;
        for (int64_t x : v) s += x;
        return s;
      },
      "sum");
  EXPECT_EQ(sum(Ints({1, 2, 3})).cast<int64_t>(), 6);
  EXPECT_EQ(sum(pf::List<int64_t>{4, 5}).cast<int64_t>(), 9);
  EXPECT_EQ(sum(Ints({})).cast<int64_t>(), 0);
  pf::Array<pf::Any> mixed{pf::Any(1), pf::Any(pf::String("x"))};
  EXPECT_EQ(ErrorOf([&] { sum(mixed); }), "TypeError: sum: argument 0[1]: expected int, got str");
  EXPECT_EQ(ErrorOf([&] { sum(int64_t(3)); }),
            "TypeError: sum: argument 0: expected list[int], got int");
  pf::Function twice = pf::Function::FromTyped([](std::vector<std::string> v) {
    std::vector<std::string> out = v;
    out.insert(out.end(), v.begin(), v.end());
    return out;
  });
  pf::Any r = twice(pf::Array<pf::String>{"a", "b"});
  EXPECT_EQ(r.type_index(), kPFTypeArray);
  EXPECT_EQ(r.cast<std::vector<std::string>>(), (std::vector<std::string>{"a", "b", "a", "b"}));
}

TEST(Stl, NestedPathsNameEveryLevel) {
  pf::Array<pf::Any> inner_bad{pf::Any(1), pf::Any(2.5)};
  pf::Array<pf::Any> outer{pf::Any(pf::Array<int64_t>{1}), pf::Any(inner_bad)};
  pf::Any any = outer;
  EXPECT_EQ(ErrorOf([&] { any.cast<std::vector<std::vector<int64_t>>>(); }),
            "TypeError: list[list[int]] element [1][1]: expected int, got float");
  // A std::vector inside a packedfun Array and the other way round.
  EXPECT_EQ(ErrorOf([&] { any.cast<pf::Array<std::vector<int64_t>>>(); }),
            "TypeError: Array[list[int]] element [1][1]: expected int, got float");
  EXPECT_EQ(ErrorOf([&] { any.cast<std::vector<pf::Array<int64_t>>>(); }),
            "TypeError: list[Array[int]] element [1][1]: expected int, got float");
  pf::Array<pf::Any> good{pf::Any(pf::Array<int64_t>{1}), pf::Any(pf::Array<int64_t>{2, 3})};
  EXPECT_EQ(pf::Any(good).cast<std::vector<std::vector<int64_t>>>()[1][1], 3);
}

TEST(Stl, StdArrayChecksLength) {
  pf::Function norm = pf::Function::FromTyped(
      [](std::array<double, 2> v) { return v[0] * v[0] + v[1] * v[1]; }, "norm");
  EXPECT_EQ(norm(Ints({3, 4})).cast<double>(), 25.0);
  EXPECT_EQ(ErrorOf([&] { norm(Ints({1, 2, 3})); }),
            "TypeError: norm: argument 0: list[float; 2]: expected 2 items, got 3 items");
  pf::Any back = pf::Any(std::array<int64_t, 3>{1, 2, 3});
  EXPECT_EQ((back.cast<std::array<int64_t, 3>>()), (std::array<int64_t, 3>{1, 2, 3}));
}

TEST(Stl, MapsBothWays) {
  pf::Function total = pf::Function::FromTyped(
      [](const std::map<std::string, double>& m) {
        double s = 0;
        for (const auto& kv : m) s += kv.second;
        return s;
      },
      "total");
  pf::Map<pf::String, double> m{{"a", 1.5}, {"b", 2.0}};
  EXPECT_EQ(total(m).cast<double>(), 3.5);
  EXPECT_EQ(total(pf::Dict<pf::String, double>{{"c", 1.0}}).cast<double>(), 1.0);
  pf::Map<pf::Any, pf::Any> bad_value{{pf::Any(pf::String("k")), pf::Any(pf::String("v"))}};
  EXPECT_EQ(ErrorOf([&] { total(bad_value); }),
            "TypeError: total: argument 0['k']: expected float, got str");
  pf::Map<pf::Any, pf::Any> bad_key{{pf::Any(7), pf::Any(1.0)}};
  EXPECT_EQ(ErrorOf([&] { total(bad_key); }),
            "TypeError: total: argument 0[7] key: expected str, got int");
  std::unordered_map<std::string, int64_t> um{{"x", 1}, {"y", 2}};
  pf::Any out = pf::Any(um);
  EXPECT_EQ(out.type_index(), kPFTypeMap);
  auto round = out.cast<std::unordered_map<std::string, int64_t>>();
  EXPECT_EQ(round, um);
  auto ordered = out.cast<std::map<std::string, int64_t>>();
  EXPECT_EQ(ordered.at("y"), 2);
}

TEST(Stl, TuplesAndPairs) {
  pf::Function swap = pf::Function::FromTyped(
      [](pf::Tuple<int64_t, std::string> t) {
        return std::make_tuple(std::get<1>(t), std::get<0>(t));
      },
      "swap");
  pf::Array<pf::Any> in{pf::Any(1), pf::Any(pf::String("one"))};
  auto out = swap(in).cast<std::tuple<std::string, int64_t>>();
  EXPECT_EQ(out, std::make_tuple(std::string("one"), int64_t(1)));
  EXPECT_EQ(ErrorOf([&] { swap(Ints({1, 2})); }),
            "TypeError: swap: argument 0[1]: expected str, got int");
  EXPECT_EQ(ErrorOf([&] { swap(Ints({1})); }),
            "TypeError: swap: argument 0: Tuple[int, str]: expected 2 items, got 1 items");
  auto p = pf::Any(std::make_pair(std::string("k"), 2.5)).cast<std::pair<std::string, double>>();
  EXPECT_EQ(p.first, "k");
  EXPECT_EQ(p.second, 2.5);
  auto [a, b] = pf::Any(pf::Tuple<int64_t, bool>(3, true)).cast<pf::Tuple<int64_t, bool>>();
  EXPECT_EQ(a, 3);
  EXPECT_TRUE(b);
  EXPECT_EQ((pf::TypeTraits<std::pair<int64_t, std::string>>::TypeName()), "Tuple[int, str]");
}

TEST(Stl, VariantTakesTheFirstAlternativeThatAccepts) {
  pf::Function kind = pf::Function::FromTyped(
      [](const pf::Variant<int64_t, std::string, std::vector<int64_t>>& v) {
        return static_cast<int64_t>(v.index());
      },
      "kind");
  EXPECT_EQ(kind(int64_t(3)).cast<int64_t>(), 0);
  EXPECT_EQ(kind(pf::String("s")).cast<int64_t>(), 1);
  EXPECT_EQ(kind(Ints({1})).cast<int64_t>(), 2);
  EXPECT_EQ(ErrorOf([&] { kind(2.5); }),
            "TypeError: kind: argument 0: expected Variant[int, str, list[int]], got float");
  pf::Array<pf::Any> strs{pf::Any(pf::String("x"))};  // a list, but not of ints
  EXPECT_EQ(ErrorOf([&] { kind(strs); }),
            "TypeError: kind: argument 0: expected Variant[int, str, list[int]], got Array");
  // Order decides: float first turns an int into a float.
  auto f = pf::Any(int64_t(3)).cast<std::variant<double, int64_t>>();
  EXPECT_EQ(f.index(), 0u);
  auto i = pf::Any(int64_t(3)).cast<std::variant<int64_t, double>>();
  EXPECT_EQ(i.index(), 0u);
  EXPECT_EQ(std::get<int64_t>(i), 3);
  pf::Any back = pf::Any(std::variant<int64_t, std::string>(std::string("hi")));
  EXPECT_EQ(back.cast<std::string>(), "hi");
  pf::Variant<int64_t, std::string> v = std::string("z");
  EXPECT_TRUE(v.is<std::string>());
  EXPECT_EQ(v.as<std::string>(), "z");
  // The wrong alternative is a TypeError (not std::bad_variant_access, a RuntimeError in Python).
  EXPECT_EQ(ErrorOf([&] { v.as<int64_t>(); }),
            "TypeError: Variant::as: the variant holds alternative 1, not the type asked for");
}

TEST(Stl, ExpectedReturnsErrorsWithoutThrowing) {
  pf::Function safe_div = pf::Function::FromTyped(
      [](int64_t a, int64_t b) -> pf::Expected<int64_t> {
        if (b == 0) return pf::Error("ZeroDivisionError", "safe_div: division by zero");
        return a / b;
      },
      "safe_div");
  EXPECT_EQ(safe_div(int64_t(6), int64_t(3)).cast<int64_t>(), 2);
  pf::Error e = Catch([&] { safe_div(int64_t(1), int64_t(0)); });
  EXPECT_EQ(e.kind(), "ZeroDivisionError");
  EXPECT_EQ(e.message(), "safe_div: division by zero");
  // Through a TypedFunction whose result is Expected: the error is a value.
  pf::TypedFunction<pf::Expected<int64_t>(int64_t, int64_t)> typed = safe_div;
  pf::Expected<int64_t> ok = typed(8, 2);
  ASSERT_TRUE(ok.has_value());
  EXPECT_TRUE(ok.is_ok());
  EXPECT_FALSE(ok.is_err());
  EXPECT_EQ(ok.value(), 4);
  pf::Expected<int64_t> bad = typed(1, 0);
  ASSERT_FALSE(bad.has_value());
  EXPECT_FALSE(bad.is_ok());
  EXPECT_TRUE(bad.is_err());
  EXPECT_EQ(bad.error().kind(), "ZeroDivisionError");
  EXPECT_EQ(bad.value_or(-1), -1);
  EXPECT_EQ(ErrorOf([&] { bad.value(); }), "ZeroDivisionError: safe_div: division by zero");
  EXPECT_EQ(pf::TypeTraits<pf::Expected<double>>::TypeName(), "Expected[float]");
}

TEST(Stl, TypedFunctionChecksOnCall) {
  pf::Function apply = pf::Function::FromTyped(
      [](pf::TypedFunction<int64_t(int64_t)> f, int64_t x) { return f(f(x)); }, "apply");
  pf::Function inc = pf::Function::FromTyped([](int64_t x) { return x + 1; });
  EXPECT_EQ(apply(inc, int64_t(1)).cast<int64_t>(), 3);
  pf::Function wrong = pf::Function::FromTyped([](int64_t) { return std::string("no"); });
  EXPECT_EQ(ErrorOf([&] { apply(wrong, int64_t(1)); }),
            "TypeError: Callable[[int], int] result: expected int, got str");
  EXPECT_EQ(ErrorOf([&] { apply(int64_t(1), int64_t(1)); }),
            "TypeError: apply: argument 0: expected Callable[[int], int], got int");
  // From a C++ lambda, with container arguments packed as owned values.
  pf::TypedFunction<int64_t(const std::vector<int64_t>&)> size_of =
      [](const std::vector<int64_t>& v) { return static_cast<int64_t>(v.size()); };
  EXPECT_EQ(size_of({1, 2, 3}), 3);
  pf::TypedFunction<void(std::string)> sink = [](std::string) {};
  sink("x");
}

TEST(Stl, StdFunctionAndStringView) {
  pf::Function call = pf::Function::FromTyped(
      [](std::function<std::string(std::string_view)> f, std::string_view s) { return f(s); },
      "call");
  pf::Function upper = pf::Function::FromTyped([](std::string s) {
    for (char& c : s) c = static_cast<char>(std::toupper(c));
    return s;
  });
  EXPECT_EQ(call(upper, std::string("abc")).cast<std::string>(), "ABC");
  std::function<int64_t(int64_t)> neg = [](int64_t x) { return -x; };
  pf::Any f = pf::Any(neg);
  EXPECT_EQ(f.type_index(), kPFTypeFunction);
  EXPECT_EQ(f.cast<std::function<int64_t(int64_t)>>()(5), -5);
  EXPECT_EQ(pf::Any(std::string_view("view")).cast<std::string>(), "view");
}

TEST(Stl, OptionalOfContainers) {
  pf::Function n = pf::Function::FromTyped(
      [](std::optional<std::vector<int64_t>> v) { return v ? int64_t(v->size()) : int64_t(-1); },
      "n");
  EXPECT_EQ(n(nullptr).cast<int64_t>(), -1);
  EXPECT_EQ(n(Ints({1, 2})).cast<int64_t>(), 2);
}

TEST(Enum, TravelsAsItsInteger) {
  pf::Function next = pf::Function::FromTyped(
      [](Color c) { return c == Color::kRed ? Color::kGreen : Color::kRed; }, "next");
  pf::Any r = next(int64_t(1));
  EXPECT_EQ(r.type_index(), kPFTypeInt);
  EXPECT_EQ(r.cast<int64_t>(), 2);
  EXPECT_EQ(r.cast<Color>(), Color::kGreen);
  EXPECT_EQ(ErrorOf([&] { next(pf::String("red")); }),
            "TypeError: next: argument 0: expected test.Color, got str");
  EXPECT_EQ(ErrorOf([&] { next(true); }),
            "TypeError: next: argument 0: expected test.Color, got bool");
  pf::Function small =
      pf::Function::FromTyped([](Small s) { return static_cast<int>(s); }, "small");
  EXPECT_EQ(ErrorOf([&] { small(int64_t(300)); }),
            "OverflowError: small: argument 0: value 300 does not fit in uint8");
  EXPECT_EQ(pf::TypeTraits<Small>::TypeName(), "int");
}

namespace {

class ConfigObj : public pf::Object {
 public:
  std::vector<int64_t> sizes;
  std::map<std::string, double> weights;
  pf::Tuple<int64_t, std::string> tag{0, ""};
  Color color = Color::kRed;
  PACKEDFUN_DECLARE_OBJECT_INFO_FINAL("test_stl.Config", ConfigObj, pf::Object);
};

PACKEDFUN_STATIC_INIT_BLOCK() {
  pf::reflection::ObjectDef<ConfigObj>()
      .def_rw("sizes", &ConfigObj::sizes)
      .def_rw("weights", &ConfigObj::weights)
      .def_rw("tag", &ConfigObj::tag)
      .def_rw("color", &ConfigObj::color);
}

const PFFieldInfo* ConfigField(const std::string& name) {
  const PFTypeInfo* info = nullptr;
  EXPECT_EQ(PFTypeGetInfo(ConfigObj::RuntimeTypeIndex(), &info), 0);
  for (int32_t i = 0; i < info->num_fields; ++i) {
    if (std::string(info->fields[i].name.data, info->fields[i].name.size) == name) {
      return &info->fields[i];
    }
  }
  return nullptr;
}

/*! Sets field `name` of `obj` from `value`: the error text, or "" on success. */
std::string SetField(ConfigObj* obj, const std::string& name, const pf::Any& value) {
  const PFFieldInfo* f = ConfigField(name);
  char* base = reinterpret_cast<char*>(static_cast<PFObject*>(obj));
  if (f->setter(base + f->offset, &value.raw()) == 0) return "";
  return Catch([] { pf::detail::ThrowRaised(); }).what();
}

pf::Any GetField(ConfigObj* obj, const std::string& name) {
  const PFFieldInfo* f = ConfigField(name);
  char* base = reinterpret_cast<char*>(static_cast<PFObject*>(obj));
  PFAny out;
  EXPECT_EQ(f->getter(base + f->offset, &out), 0);
  return pf::detail::AnyUnsafe::MoveFromPFAny(&out);
}

}  // namespace

TEST(Stl, ReflectedFieldsOfStdTypes) {
  pf::ObjectPtr<ConfigObj> obj = pf::make_object<ConfigObj>();
  EXPECT_EQ(SetField(obj.get(), "sizes", Ints({1, 2})), "");
  EXPECT_EQ(obj->sizes, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(GetField(obj.get(), "sizes").cast<std::vector<int64_t>>(), obj->sizes);
  pf::Array<pf::Any> bad{pf::Any(1), pf::Any(pf::String("x"))};
  EXPECT_EQ(SetField(obj.get(), "sizes", bad),
            "TypeError: list[int] element [1]: expected int, got str");
  EXPECT_EQ(obj->sizes, (std::vector<int64_t>{1, 2}));  // unchanged by a failed set
  EXPECT_EQ(SetField(obj.get(), "weights", pf::Map<pf::String, double>{{"w", 0.5}}), "");
  EXPECT_EQ(obj->weights.at("w"), 0.5);
  EXPECT_EQ(SetField(obj.get(), "tag", pf::Array<pf::Any>{pf::Any(1), pf::Any(pf::String("t"))}),
            "");
  EXPECT_EQ(std::get<1>(obj->tag), "t");
  EXPECT_EQ(SetField(obj.get(), "color", pf::Any(int64_t(2))), "");
  EXPECT_EQ(obj->color, Color::kGreen);
  EXPECT_EQ(GetField(obj.get(), "color").cast<int64_t>(), 2);
  EXPECT_EQ(SetField(obj.get(), "color", pf::Any(pf::String("red"))),
            "TypeError: expected test.Color, got str");
}

TEST(Stl, NumericRunsThenOtherKinds) {
  // The plain-int (plain-float) fast run stops at the first other kind; the rest still converts.
  pf::Array<pf::Any> ints{pf::Any(1), pf::Any(2), pf::Any(true), pf::Any(4)};
  EXPECT_EQ(pf::Any(ints).cast<std::vector<int64_t>>(), (std::vector<int64_t>{1, 2, 1, 4}));
  pf::Array<pf::Any> floats{pf::Any(1.5), pf::Any(2), pf::Any(3.5)};
  EXPECT_EQ(pf::Any(floats).cast<std::vector<double>>(), (std::vector<double>{1.5, 2.0, 3.5}));
  pf::Map<pf::Any, pf::Any> m{{pf::Any(pf::String("a")), pf::Any(1)},
                              {pf::Any(pf::String("a long key, not small")), pf::Any(2.5)}};
  auto um = pf::Any(m).cast<std::unordered_map<std::string, double>>();
  EXPECT_EQ(um.size(), 2u);
  EXPECT_EQ(um["a"], 1.0);
  EXPECT_EQ(um["a long key, not small"], 2.5);
}
