// C++ tests of container views: std parameters reading a caller's container in place.
#include <gtest/gtest.h>
#include <packedfun/packedfun.h>
#include <packedfun/stl.h>

#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace pf = packedfun;

namespace {

/*! A caller's container as a binding would lend it: its items are PFAny cells here. Plain cells
 *  are ints (and, in a mapping, short str keys and number values); materialize builds the Array
 *  or Map, or fails as the caller's conversion would. */
struct FakeView {
  PFContainerView view;
  std::vector<PFAny> cells;  // items, or key/value pairs
  int materialized = 0;
  bool fail = false;
};

const FakeView& Of(const PFContainerView* v) { return *reinterpret_cast<const FakeView*>(v); }

bool PlainEntryCell(const PFAny& c) {
  return c.type_index == kPFTypeInt || c.type_index == kPFTypeFloat ||
         c.type_index == kPFTypeSmallStr;
}

int64_t ReadInt64(const PFContainerView* v, int64_t start, int64_t* out, int64_t n) {
  if (v->kind != kPFTypeArray) return 0;
  int64_t i = 0;
  for (; i < n && Of(v).cells[start + i].type_index == kPFTypeInt; ++i) {
    out[i] = Of(v).cells[start + i].v_int64;
  }
  return i;
}

int64_t ReadFloat64(const PFContainerView* v, int64_t start, double* out, int64_t n) {
  if (v->kind != kPFTypeArray) return 0;
  int64_t i = 0;
  for (; i < n && Of(v).cells[start + i].type_index == kPFTypeFloat; ++i) {
    out[i] = Of(v).cells[start + i].v_float64;
  }
  return i;
}

int64_t ReadEntries(const PFContainerView* v, int64_t* cursor, PFAny* kv, PFByteArray*,
                    int64_t max_items) {
  if (v->kind != kPFTypeMap) return 0;
  int64_t got = 0;
  const std::vector<PFAny>& cells = Of(v).cells;
  while (got < max_items && 2 * *cursor < static_cast<int64_t>(cells.size())) {
    const PFAny& key = cells[2 * *cursor];
    const PFAny& value = cells[2 * *cursor + 1];
    if (!PlainEntryCell(key) || !PlainEntryCell(value)) break;
    kv[2 * got] = key;
    kv[2 * got + 1] = value;
    ++got;
    ++*cursor;
  }
  return got;
}

int Materialize(const PFContainerView* v, PFAny* out) {
  FakeView& self = const_cast<FakeView&>(Of(v));
  ++self.materialized;
  if (self.fail) return PFErrorSetRaisedFromCStr("ValueError", "caller: element 1 is bad");
  const int64_t n = static_cast<int64_t>(self.cells.size());
  return v->kind == kPFTypeMap ? PFMapCreate(self.cells.data(), n / 2, out)
                               : PFArrayCreate(self.cells.data(), n, out);
}

const PFContainerViewVTable kVTable = {ReadInt64, ReadFloat64, ReadEntries, Materialize};

PFAny Int(int64_t x) { return pf::Any(x).raw(); }
PFAny Float(double x) { return pf::Any(x).raw(); }
PFAny Small(const char* s) {  // an inline short str: owns nothing
  PFAny out = pf::Any(pf::String(s)).raw();
  EXPECT_EQ(out.type_index, kPFTypeSmallStr);
  return out;
}

FakeView Seq(std::vector<PFAny> cells) {
  FakeView f{{&kVTable, kPFTypeArray, 0, static_cast<int64_t>(cells.size()), nullptr},
             std::move(cells)};
  return f;
}

FakeView Dict(std::vector<PFAny> kv) {
  FakeView f{{&kVTable, kPFTypeMap, 0, static_cast<int64_t>(kv.size() / 2), nullptr},
             std::move(kv)};
  return f;
}

/*! Calls `f` with `arg` as the view's argument: "ok <result>" or "<Kind>: <message>". */
std::string Call(const pf::Function& f, const PFAny& arg) {
  const auto* fo = reinterpret_cast<const PFFunctionObject*>(f.get());
  PFAny rv = pf::Any().raw();
  if (fo->safe_call(fo->self, &arg, 1, &rv) == 0) {
    pf::Any owned = pf::detail::AnyUnsafe::MoveFromPFAny(&rv);
    if (owned.type_index() == kPFTypeFloat) return "ok " + std::to_string(owned.cast<double>());
    return "ok " + std::to_string(owned.cast<int64_t>());
  }
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);
  const auto* e = reinterpret_cast<const PFErrorObject*>(err);
  std::string out = std::string(e->kind.data, e->kind.size) + ": " +
                    std::string(e->message.data, e->message.size);
  PFObjectDecRef(err);
  return out;
}

PFAny AsArg(FakeView& v) {
  PFAny a = pf::Any().raw();
  a.type_index = kPFTypeContainerView;
  a.v_ptr = &v.view;
  return a;
}

/*! The outcome of the same call with the Array/Map the caller makes without a view. */
std::string CallMaterialized(const pf::Function& f, FakeView& v) {
  PFAny made = pf::Any().raw();
  EXPECT_EQ(Materialize(&v.view, &made), 0);
  pf::Any owner = pf::detail::AnyUnsafe::MoveFromPFAny(&made);
  return Call(f, owner.raw());
}

pf::Function VectorSum() {
  return pf::Function::FromTyped(
      [](const std::vector<int64_t>& v) {
        int64_t s = 0;
        for (int64_t x : v) s += x;
        return s;
      },
      "vsum");
}

pf::Function MapSum() {
  return pf::Function::FromTyped(
      [](const std::unordered_map<std::string, double>& d) {
        double s = 0;
        for (const auto& kv : d) s += kv.second + static_cast<double>(kv.first.size());
        return s;
      },
      "msum");
}

uint32_t ViewBits(const pf::Function& f) {
  return f.get()->flags >> PACKEDFUN_FUNCTION_VIEW_ARGS_SHIFT;
}

}  // namespace

TEST(ContainerView, TypedFunctionsDeclareTheirViewArguments) {
  EXPECT_EQ(ViewBits(VectorSum()), 1u);
  EXPECT_EQ(ViewBits(MapSum()), 1u);
  pf::Function mixed = pf::Function::FromTyped([](std::vector<double>, pf::Array<int64_t>,
                                                  std::map<std::string, int64_t>,
                                                  std::vector<std::string>, pf::Any) { return 0; });
  EXPECT_EQ(ViewBits(mixed), 0b111u);  // an Array of numbers reads a view too
  EXPECT_EQ(ViewBits(pf::Function::FromTyped([](int64_t x) { return x; })), 0u);
  EXPECT_EQ(ViewBits(pf::Function::FromTyped([](pf::Array<pf::Any> a) { return a.size(); })), 0u);
  EXPECT_EQ(ViewBits(pf::Function::FromTyped([](pf::Array<bool> a) { return a.size(); })), 0u);
}

TEST(ContainerView, ArrayOfNumbersIsFilledFromTheView) {
  pf::Function asum = pf::Function::FromTyped(
      [](const pf::Array<int32_t>& a) {
        int64_t s = 0;
        for (int32_t x : a) s += x;
        return s;
      },
      "asum");
  std::vector<PFAny> many;
  for (int i = 0; i < 150; ++i) many.push_back(Int(i));  // past one 64-item chunk
  FakeView v = Seq(many);
  EXPECT_EQ(Call(asum, AsArg(v)), "ok 11175");
  EXPECT_EQ(v.materialized, 0);
  FakeView wide = Seq({Int(1), Int(int64_t{1} << 40)});  // does not fit int32: as its Array
  EXPECT_EQ(Call(asum, AsArg(wide)), CallMaterialized(asum, wide));
  EXPECT_EQ(wide.materialized, 2);
  pf::Function first = pf::Function::FromTyped([](pf::Array<double> a) { return a[0] + a[1]; });
  FakeView floats = Seq({Float(1.0), Float(0.5)});
  EXPECT_EQ(Call(first, AsArg(floats)), "ok 1.500000");
  EXPECT_EQ(floats.materialized, 0);
  FakeView mixed = Seq({Int(1), Float(0.5)});  // this fake reads no int as a float: its Array
  EXPECT_EQ(Call(first, AsArg(mixed)), CallMaterialized(first, mixed));
  EXPECT_EQ(Call(first, AsArg(mixed)), "ok 1.500000");
}

TEST(ContainerView, PlainSequenceIsReadInPlace) {
  pf::Function vsum = VectorSum();
  FakeView v = Seq({Int(1), Int(2), Int(40)});
  EXPECT_EQ(Call(vsum, AsArg(v)), "ok 43");
  EXPECT_EQ(v.materialized, 0);
  FakeView empty = Seq({});
  EXPECT_EQ(Call(vsum, AsArg(empty)), "ok 0");
  pf::Function fsum = pf::Function::FromTyped([](std::vector<double> v) { return v.at(0) + 1; });
  FakeView floats = Seq({Float(1.5)});
  EXPECT_EQ(Call(fsum, AsArg(floats)), "ok 2.500000");
  EXPECT_EQ(floats.materialized, 0);
}

TEST(ContainerView, NarrowIntegersAreRangeChecked) {
  pf::Function u8 = pf::Function::FromTyped(
      [](const std::vector<uint8_t>& v) {
        int64_t s = 0;
        for (uint8_t x : v) s += x;
        return s;
      },
      "u8");
  std::vector<PFAny> many;
  for (int i = 0; i < 150; ++i) many.push_back(Int(i));  // past one 64-item chunk
  FakeView v = Seq(many);
  EXPECT_EQ(Call(u8, AsArg(v)), "ok 11175");
  EXPECT_EQ(v.materialized, 0);
  FakeView wide = Seq({Int(1), Int(256)});
  EXPECT_EQ(Call(u8, AsArg(wide)), CallMaterialized(u8, wide));
  EXPECT_EQ(wide.materialized, 2);
}

TEST(ContainerView, AnythingElseConvertsAsItsArray) {
  pf::Function vsum = VectorSum();
  FakeView bad = Seq({Int(1), Small("x")});
  std::string expected = "TypeError: vsum: argument 0[1]: expected int, got str";
  EXPECT_EQ(Call(vsum, AsArg(bad)), expected);
  EXPECT_EQ(bad.materialized, 1);
  EXPECT_EQ(CallMaterialized(vsum, bad), expected);
  FakeView dict = Dict({Small("a"), Float(1.0)});  // a mapping for a vector: "got Map"
  EXPECT_EQ(Call(vsum, AsArg(dict)), CallMaterialized(vsum, dict));
  EXPECT_EQ(Call(vsum, AsArg(dict)), "TypeError: vsum: argument 0: expected list[int], got Map");
}

TEST(ContainerView, TheCallersConversionErrorPassesUnchanged) {
  pf::Function vsum = VectorSum();
  FakeView v = Seq({Int(1), Small("x")});
  v.fail = true;
  EXPECT_EQ(Call(vsum, AsArg(v)), "ValueError: caller: element 1 is bad");
}

TEST(ContainerView, MappingsReadInPlaceOrAsTheirMap) {
  pf::Function msum = MapSum();
  FakeView d = Dict({Small("ab"), Float(1.5), Small("c"), Int(2)});
  EXPECT_EQ(Call(msum, AsArg(d)), "ok 6.500000");
  EXPECT_EQ(d.materialized, 0);
  FakeView bad = Dict({Small("a"), Float(1.0), Small("b"), Small("x")});
  EXPECT_EQ(Call(msum, AsArg(bad)), CallMaterialized(msum, bad));
  EXPECT_EQ(Call(msum, AsArg(bad)), "TypeError: msum: argument 0['b']: expected float, got str");
  FakeView int_key = Dict({Int(1), Float(1.0)});
  EXPECT_EQ(Call(msum, AsArg(int_key)),
            "TypeError: msum: argument 0[1] key: expected str, got int");
  FakeView seq = Seq({Int(1)});
  EXPECT_EQ(Call(msum, AsArg(seq)),
            "TypeError: msum: argument 0: expected dict[str, float], got Array");
}

TEST(ContainerView, ViewToOwnedMaterializes) {
  FakeView v = Seq({Int(7), Int(8)});
  PFAny arg = AsArg(v);
  PFAny owned = pf::Any().raw();
  ASSERT_EQ(PFAnyViewToOwned(&arg, &owned), 0);
  pf::Any array = pf::detail::AnyUnsafe::MoveFromPFAny(&owned);
  EXPECT_EQ(array.cast<std::vector<int64_t>>(), (std::vector<int64_t>{7, 8}));
  v.fail = true;
  EXPECT_NE(PFAnyViewToOwned(&arg, &owned), 0);
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);
  ASSERT_NE(err, nullptr);
  PFObjectDecRef(err);
}
