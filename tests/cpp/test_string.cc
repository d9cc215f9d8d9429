// Tests of String and Bytes: small and object forms, sharing, comparisons, conversions.
#include <gtest/gtest.h>
#include <packedfun/packedfun.h>

#include <string>

namespace {

using packedfun::Any;
using packedfun::AnyView;
using packedfun::Bytes;
using packedfun::String;

TEST(String, SmallAndObjectForms) {
  String empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_STREQ(empty.c_str(), "");
  String small("seven77");
  EXPECT_EQ(small.raw().type_index, kPFTypeSmallStr);
  EXPECT_EQ(small.size(), 7u);
  EXPECT_STREQ(small.c_str(), "seven77");
  String big("eight888");
  EXPECT_EQ(big.raw().type_index, kPFTypeString);
  EXPECT_STREQ(big.c_str(), "eight888");
}

TEST(String, CopiesShareTheObject) {
  String a(std::string(100, 'a'));
  PFObject* obj = a.raw().v_obj;
  EXPECT_EQ(obj->ref_count, 1u);
  {
    String b = a;
    EXPECT_EQ(b.raw().v_obj, obj);
    EXPECT_EQ(b.data(), a.data());
    EXPECT_EQ(obj->ref_count, 2u);
    String c = std::move(b);
    EXPECT_EQ(obj->ref_count, 2u);
    EXPECT_TRUE(b.empty());  // NOLINT(bugprone-use-after-move)
  }
  EXPECT_EQ(obj->ref_count, 1u);
}

TEST(String, Comparisons) {
  String a("abc"), b("abd");
  EXPECT_TRUE(a == "abc");
  EXPECT_TRUE("abc" == a);
  EXPECT_TRUE(a == std::string("abc"));
  EXPECT_TRUE(a != b);
  EXPECT_TRUE(a < b);
  EXPECT_EQ(a.compare("abc"), 0);
  std::string s = a;
  EXPECT_EQ(s, "abc");
}

TEST(String, EmbeddedNul) {
  String s("a\0b", 3);
  EXPECT_EQ(s.size(), 3u);
  EXPECT_EQ(s.str(), std::string("a\0b", 3));
  EXPECT_FALSE(s == "a");
}

TEST(String, TryFromEveryStringKind) {
  PFAny raw{};
  raw.type_index = kPFTypeRawStr;
  raw.v_c_str = "from a raw C string";
  EXPECT_EQ(*String::TryFrom(raw), "from a raw C string");

  PFByteArray arr{"view!", 5};
  PFAny view{};
  view.type_index = kPFTypeStrView;
  view.v_ptr = &arr;
  EXPECT_EQ(*String::TryFrom(view), "view!");

  String obj(std::string(9, 'o'));
  std::optional<String> shared = String::TryFrom(obj.raw());
  EXPECT_EQ(shared->raw().v_obj, obj.raw().v_obj);

  PFAny bytes_view{};
  bytes_view.type_index = kPFTypeBytesView;
  bytes_view.v_ptr = &arr;
  EXPECT_FALSE(String::TryFrom(bytes_view).has_value());
  EXPECT_FALSE(Bytes::TryFrom(view).has_value());
  EXPECT_EQ(Bytes::TryFrom(bytes_view)->str(), "view!");
}

TEST(Bytes, FormsAndEquality) {
  Bytes small("\x00\x01\x02", 3);
  EXPECT_EQ(small.raw().type_index, kPFTypeSmallBytes);
  EXPECT_EQ(small.size(), 3u);
  EXPECT_EQ(small.data()[1], '\x01');
  Bytes big(std::string(64, '\xff'));
  EXPECT_EQ(big.raw().type_index, kPFTypeBytes);
  EXPECT_EQ(big.size(), 64u);
  EXPECT_TRUE(big == Bytes(std::string(64, '\xff')));
  EXPECT_TRUE(small != big);
  Any a = big;
  EXPECT_EQ(a.type_index(), kPFTypeBytes);
  EXPECT_EQ(a.type_name(), "bytes");
  EXPECT_EQ(a.cast<Bytes>(), big);
  EXPECT_FALSE(a.as<String>().has_value());
}

TEST(String, AnyRoundTrip) {
  String s("through any, as an object");
  Any a = s;
  EXPECT_EQ(a.raw().v_obj, s.raw().v_obj);
  EXPECT_EQ(a.cast<String>(), s);
  EXPECT_EQ(a.cast<std::string>(), "through any, as an object");
}

}  // namespace
