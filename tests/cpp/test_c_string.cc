// C-ABI tests: strings and bytes in their small inline and object forms.
#include <gtest/gtest.h>
#include <packedfun/c_api.h>

#include <string>

namespace {

PFAny MakeString(const std::string& text, bool bytes = false) {
  PFByteArray arr{text.data(), text.size()};
  PFAny out;
  EXPECT_EQ(bytes ? PFBytesCreate(&arr, &out) : PFStringCreate(&arr, &out), 0);
  return out;
}

std::string Contents(const PFAny& v) {
  if (v.type_index == kPFTypeSmallStr || v.type_index == kPFTypeSmallBytes) {
    return std::string(v.v_bytes, v.small_len);
  }
  auto* obj = reinterpret_cast<PFBytesObject*>(v.v_obj);
  return std::string(obj->bytes.data, obj->bytes.size);
}

TEST(CString, UpToSevenBytesIsSmall) {
  for (const std::string text : {"", "a", "seven!!"}) {
    PFAny v = MakeString(text);
    EXPECT_EQ(v.type_index, kPFTypeSmallStr);
    EXPECT_EQ(v.small_len, text.size());
    EXPECT_EQ(v.v_bytes[text.size()], '\0');  // NUL-terminated
    EXPECT_EQ(Contents(v), text);
    PFAnyRelease(&v);
  }
}

TEST(CString, EightBytesAndMoreIsAnObject) {
  std::string text = "eight!!!";
  PFAny v = MakeString(text);
  ASSERT_EQ(v.type_index, kPFTypeString);
  EXPECT_EQ(v.zero_padding, 0u);
  auto* obj = reinterpret_cast<PFBytesObject*>(v.v_obj);
  EXPECT_EQ(obj->header.type_index, kPFTypeString);
  EXPECT_EQ(obj->header.ref_count, 1u);
  EXPECT_EQ(obj->bytes.size, 8u);
  EXPECT_EQ(obj->bytes.data[8], '\0');
  EXPECT_NE(static_cast<const void*>(obj->bytes.data), static_cast<const void*>(text.data()));
  EXPECT_EQ(Contents(v), text);
  PFAnyRelease(&v);
  EXPECT_EQ(v.type_index, kPFTypeNone);
}

TEST(CString, EmbeddedNulsSurvive) {
  std::string small("a\0b", 3);
  std::string large("abc\0def\0ghij", 12);
  PFAny s = MakeString(small), l = MakeString(large);
  EXPECT_EQ(Contents(s), small);
  EXPECT_EQ(Contents(l), large);
  PFAnyRelease(&s);
  PFAnyRelease(&l);
}

TEST(CString, BytesForms) {
  PFAny s = MakeString(std::string("\xff\x00\x01", 3), true);
  EXPECT_EQ(s.type_index, kPFTypeSmallBytes);
  EXPECT_EQ(Contents(s), std::string("\xff\x00\x01", 3));
  std::string big(1000, '\x80');
  PFAny b = MakeString(big, true);
  EXPECT_EQ(b.type_index, kPFTypeBytes);
  EXPECT_EQ(Contents(b), big);
  PFAnyRelease(&s);
  PFAnyRelease(&b);
}

TEST(CString, NullDataWithZeroSize) {
  PFByteArray empty{nullptr, 0};
  PFAny out;
  ASSERT_EQ(PFStringCreate(&empty, &out), 0);
  EXPECT_EQ(out.type_index, kPFTypeSmallStr);
  EXPECT_EQ(out.small_len, 0u);
  ASSERT_EQ(PFBytesCreate(&empty, &out), 0);
  EXPECT_EQ(out.type_index, kPFTypeSmallBytes);
}

TEST(CString, SharedReferences) {
  PFAny v = MakeString("a string that is long enough");
  PFAny copy;
  ASSERT_EQ(PFAnyViewToOwned(&v, &copy), 0);
  EXPECT_EQ(copy.v_obj, v.v_obj);
  EXPECT_EQ(v.v_obj->ref_count, 2u);
  PFAnyRelease(&copy);
  EXPECT_EQ(v.v_obj->ref_count, 1u);
  PFAnyRelease(&v);
}

}  // namespace
