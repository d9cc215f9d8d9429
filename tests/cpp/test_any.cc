// Tests of Any / AnyView: conversions both ways, error messages, ownership and reference counts.
#include <gtest/gtest.h>
#include "catch_error.h"
#include <packedfun/packedfun.h>

#include <cstring>
#include <string>

namespace {

using packedfun::Any;
using packedfun::AnyView;
using packedfun::Bytes;
using packedfun::Error;
using packedfun::Function;
using packedfun::ObjectRef;
using packedfun::String;

TEST(Any, DefaultIsNone) {
  Any a;
  EXPECT_TRUE(a.is_none());
  EXPECT_EQ(a.type_index(), kPFTypeNone);
  EXPECT_TRUE(a == nullptr);
  EXPECT_EQ(a.type_name(), "None");
}

TEST(Any, PodRoundTrips) {
  Any i = 42;
  EXPECT_EQ(i.type_index(), kPFTypeInt);
  EXPECT_EQ(i.cast<int64_t>(), 42);
  EXPECT_EQ(i.cast<int>(), 42);
  EXPECT_DOUBLE_EQ(i.cast<double>(), 42.0);  // int widens to float

  Any b = true;
  EXPECT_EQ(b.type_index(), kPFTypeBool);
  EXPECT_TRUE(b.cast<bool>());
  EXPECT_EQ(b.cast<int64_t>(), 1);

  Any d = 2.5;
  EXPECT_EQ(d.type_index(), kPFTypeFloat);
  EXPECT_DOUBLE_EQ(d.cast<double>(), 2.5);
  EXPECT_FALSE(d.as<int64_t>().has_value());  // float never narrows to int

  int x = 0;
  Any p = static_cast<void*>(&x);
  EXPECT_EQ(p.type_index(), kPFTypeOpaquePtr);
  EXPECT_EQ(p.cast<void*>(), &x);
  EXPECT_EQ(Any().cast<void*>(), nullptr);  // None reads as a NULL pointer

  DLDataType f32{kDLFloat, 32, 1};
  Any dt = f32;
  EXPECT_EQ(dt.type_index(), kPFTypeDataType);
  DLDataType back = dt.cast<DLDataType>();
  EXPECT_EQ(back.code, kDLFloat);
  EXPECT_EQ(back.bits, 32);
  EXPECT_EQ(back.lanes, 1);

  DLDevice dev{kDLCUDA, 3};
  Any dv = dev;
  EXPECT_EQ(dv.type_index(), kPFTypeDevice);
  EXPECT_EQ(dv.cast<DLDevice>().device_id, 3);
}

TEST(Any, ImplicitConversionOperator) {
  Any a = 7;
  int64_t v = a;
  double d = a;
  EXPECT_EQ(v, 7);
  EXPECT_DOUBLE_EQ(d, 7.0);
}

TEST(Any, DataTypeParsesFromString) {
  Any s = "float16";
  DLDataType t = s.cast<DLDataType>();
  EXPECT_EQ(t.code, kDLFloat);
  EXPECT_EQ(t.bits, 16);
}

TEST(Any, StringsAreOwnedCopies) {
  std::string text = "a longer string than seven bytes";
  Any a = text;
  text[0] = 'X';  // the Any does not borrow
  EXPECT_EQ(a.type_index(), kPFTypeString);
  EXPECT_EQ(a.cast<std::string>(), "a longer string than seven bytes");
  Any small = "hi";
  EXPECT_EQ(small.type_index(), kPFTypeSmallStr);
  EXPECT_EQ(small.cast<String>(), "hi");
  EXPECT_EQ(small.type_name(), "str");
}

TEST(Any, EmbeddedNulSurvives) {
  std::string text("a\0b\0c-and-more", 14);
  Any a = text;
  EXPECT_EQ(a.cast<std::string>(), text);
  EXPECT_EQ(a.cast<String>().size(), 14u);
}

TEST(Any, WordCopyKeepsAllSixteenBytes) {
  // CopyPFAny copies a PFAny as two words (results just written by a callee): every byte, the
  // small-string length and inline bytes included, arrives.
  PFAny src;
  unsigned char pattern[sizeof(PFAny)];
  for (size_t i = 0; i < sizeof(pattern); ++i) pattern[i] = static_cast<unsigned char>(0xA0 + i);
  std::memcpy(&src, pattern, sizeof(src));
  PFAny dst;
  std::memset(&dst, 0, sizeof(dst));
  packedfun::detail::CopyPFAny(&dst, &src);
  EXPECT_EQ(std::memcmp(&dst, pattern, sizeof(dst)), 0);

  // And through a call: a small string result moves out of the callee's slot intact.
  Function f = Function::FromTyped([]() { return String("abcdefg"); });
  Any r = f();
  EXPECT_EQ(r.type_index(), kPFTypeSmallStr);
  EXPECT_EQ(r.cast<String>(), "abcdefg");
}

TEST(Any, FromAnyViewCopiesBorrowedKinds) {
  std::string buffer = "borrowed bytes that will change";
  PFByteArray arr{buffer.data(), buffer.size()};
  PFAny view{};
  view.type_index = kPFTypeStrView;
  view.v_ptr = &arr;
  Any owned = AnyView::FromPFAny(view);
  buffer.assign(buffer.size(), 'z');
  EXPECT_EQ(owned.type_index(), kPFTypeString);
  EXPECT_EQ(owned.cast<std::string>(), "borrowed bytes that will change");

  PFAny raw{};
  raw.type_index = kPFTypeRawStr;
  raw.v_c_str = "raw";
  Any from_raw = AnyView::FromPFAny(raw);
  EXPECT_EQ(from_raw.type_index(), kPFTypeSmallStr);
  EXPECT_EQ(from_raw.cast<String>(), "raw");
}

TEST(Any, CastErrorNamesBothTypes) {
  Any s = "hello";
  Error e = Catch([&] { s.cast<int64_t>(); });
  EXPECT_EQ(e.kind(), "TypeError");
  EXPECT_EQ(e.message(), "expected int, got str");
  Error f = Catch([&] { Any(1).cast<Function>(); });
  EXPECT_EQ(f.message(), "expected Function, got int");
  Error g = Catch([&] { Any(1.5).cast<String>(); });
  EXPECT_EQ(g.message(), "expected str, got float");
  Error h = Catch([&] { Any().cast<Bytes>(); });
  EXPECT_EQ(h.message(), "expected bytes, got None");
}

TEST(Any, NarrowIntOverflowIsOverflowError) {
  Any big = int64_t{5000000000};
  Error e = Catch([&] { big.cast<int32_t>(); });
  EXPECT_EQ(e.kind(), "OverflowError");
  EXPECT_EQ(e.message(), "value 5000000000 does not fit in int32");
  Error n = Catch([&] { Any(-1).cast<uint32_t>(); });
  EXPECT_EQ(n.kind(), "OverflowError");
  EXPECT_EQ(big.cast<int64_t>(), 5000000000);
}

TEST(Any, Uint64UsesTheFullRange) {
  Any top = ~uint64_t{0};
  EXPECT_EQ(top.type_index(), kPFTypeUInt64);
  EXPECT_EQ(top.cast<uint64_t>(), ~uint64_t{0});
  EXPECT_EQ(top.cast<double>(), 18446744073709551615.0);
  Any small = uint64_t{7};  // below 2**63 an unsigned value travels as a plain int
  EXPECT_EQ(small.type_index(), kPFTypeInt);
  EXPECT_EQ(small.cast<uint64_t>(), 7u);
  Error e = Catch([] { Any(uint64_t{1} << 63).cast<int64_t>(); });
  EXPECT_EQ(e.kind(), "OverflowError");
  EXPECT_EQ(e.message(), "value 9223372036854775808 does not fit in int64");
  Error n = Catch([] { Any(int64_t{-1}).cast<uint64_t>(); });
  EXPECT_EQ(n.message(), "value -1 does not fit in uint64");
}

TEST(Any, OptionalConversions) {
  EXPECT_EQ(Any().cast<std::optional<int64_t>>(), std::nullopt);
  EXPECT_EQ(Any(3).cast<std::optional<int64_t>>(), 3);
  Error e = Catch([] { Any("x").cast<std::optional<int64_t>>(); });
  EXPECT_EQ(e.message(), "expected Optional[int], got str");
  Any none = std::optional<double>();
  EXPECT_TRUE(none.is_none());
}

TEST(Any, ObjectReferenceCounting) {
  Any s = std::string(40, 'q');  // a String object
  ASSERT_EQ(s.type_index(), kPFTypeString);
  PFObject* obj = s.raw().v_obj;
  EXPECT_EQ(obj->ref_count, 1u);
  {
    Any copy = s;
    EXPECT_EQ(obj->ref_count, 2u);
    AnyView view = copy;  // views never count
    EXPECT_EQ(obj->ref_count, 2u);
    ObjectRef ref = view.cast<ObjectRef>();
    EXPECT_EQ(obj->ref_count, 3u);
    EXPECT_EQ(ref.get(), obj);
    EXPECT_EQ(ref.type_index(), kPFTypeString);
  }
  EXPECT_EQ(obj->ref_count, 1u);
  Any moved = std::move(s);
  EXPECT_TRUE(s.is_none());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(obj->ref_count, 1u);
  moved = 5;
  EXPECT_EQ(moved.cast<int64_t>(), 5);
}

TEST(Any, ObjectRefAcceptsNone) {
  ObjectRef r = Any().cast<ObjectRef>();
  EXPECT_FALSE(r.defined());
  Error e = Catch([] { Any().cast<Function>(); });
  EXPECT_EQ(e.message(), "expected Function, got None");
}

TEST(AnyView, ViewsDoNotOwn) {
  Any s = std::string(20, 'v');
  AnyView v = s;
  EXPECT_EQ(v.type_index(), kPFTypeString);
  EXPECT_EQ(v.cast<std::string>(), std::string(20, 'v'));
  EXPECT_EQ(s.raw().v_obj->ref_count, 1u);
  EXPECT_FALSE(v.as<int64_t>().has_value());
  Any back = v;
  EXPECT_EQ(s.raw().v_obj->ref_count, 2u);
}

}  // namespace
