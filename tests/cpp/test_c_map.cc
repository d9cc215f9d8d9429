// C-ABI tests: Map creation and lookups by value (strings in every form, numbers) or identity.
#include <gtest/gtest.h>
#include "abi_values.h"
#include <packedfun/c_api.h>

#include <cstring>
#include <string>

namespace {

PFAny Float(double v) {
  PFAny a;
  a.type_index = kPFTypeFloat;
  a.zero_padding = 0;
  a.v_float64 = v;
  return a;
}

PFAny Bool(bool v) {
  PFAny a = Int(v ? 1 : 0);
  a.type_index = kPFTypeBool;
  return a;
}

PFAny RawStr(const char* s) {
  PFAny a;
  a.type_index = kPFTypeRawStr;
  a.zero_padding = 0;
  a.v_c_str = s;
  return a;
}

PFAny View(int32_t type_index, const PFByteArray* arr) {
  PFAny a;
  a.type_index = type_index;
  a.zero_padding = 0;
  a.v_ptr = const_cast<PFByteArray*>(arr);
  return a;
}

PFAny Owned(const char* s) {
  PFByteArray arr{s, std::strlen(s)};
  PFAny out;
  EXPECT_EQ(PFStringCreate(&arr, &out), 0);
  return out;
}

/*! Looks `key` up; returns the int value or -1 when missing. */
int64_t Lookup(PFObject* map, PFAny key) {
  PFAny out;
  int found = -1;
  EXPECT_EQ(PFMapGetItem(map, &key, &out, &found), 0);
  if (!found) return -1;
  int64_t v = out.v_int64;
  PFAnyRelease(&out);
  return v;
}

TEST(CMap, StringKeysMatchInEveryForm) {
  const char* long_key = "a key longer than seven bytes";
  PFAny kv[4] = {RawStr("short"), Int(1), RawStr(long_key), Int(2)};
  PFAny map;
  ASSERT_EQ(PFMapCreate(kv, 2, &map), 0);
  ASSERT_EQ(map.type_index, kPFTypeMap);
  int64_t size = 0;
  ASSERT_EQ(PFMapSize(map.v_obj, &size), 0);
  EXPECT_EQ(size, 2);

  EXPECT_EQ(Lookup(map.v_obj, RawStr("short")), 1);
  PFAny small = Owned("short");
  EXPECT_EQ(small.type_index, kPFTypeSmallStr);
  EXPECT_EQ(Lookup(map.v_obj, small), 1);
  PFAny large = Owned(long_key);
  EXPECT_EQ(large.type_index, kPFTypeString);
  EXPECT_EQ(Lookup(map.v_obj, large), 2);  // a different String object with equal contents
  PFAnyRelease(&large);
  std::string copy(long_key);
  PFByteArray arr{copy.data(), copy.size()};
  EXPECT_EQ(Lookup(map.v_obj, View(kPFTypeStrView, &arr)), 2);
  EXPECT_EQ(Lookup(map.v_obj, View(kPFTypeBytesView, &arr)), -1);  // bytes are not str
  EXPECT_EQ(Lookup(map.v_obj, RawStr("missing")), -1);
  PFAnyRelease(&map);
}

TEST(CMap, NumbersCompareByValue) {
  PFAny kv[6] = {Int(1), Int(10), Float(2.5), Int(20), Int(-7), Int(30)};
  PFAny map;
  ASSERT_EQ(PFMapCreate(kv, 3, &map), 0);
  EXPECT_EQ(Lookup(map.v_obj, Int(1)), 10);
  EXPECT_EQ(Lookup(map.v_obj, Float(1.0)), 10);
  EXPECT_EQ(Lookup(map.v_obj, Bool(true)), 10);
  EXPECT_EQ(Lookup(map.v_obj, Float(2.5)), 20);
  EXPECT_EQ(Lookup(map.v_obj, Int(2)), -1);
  EXPECT_EQ(Lookup(map.v_obj, Int(-7)), 30);
  EXPECT_EQ(Lookup(map.v_obj, RawStr("1")), -1);
  PFAnyRelease(&map);
}

TEST(CMap, LaterDuplicatesWinAndOrderIsInsertionOrder) {
  PFAny kv[8] = {RawStr("b"), Int(1), RawStr("a"), Int(2),
                 RawStr("c"), Int(3), RawStr("b"), Int(4)};
  PFAny map;
  ASSERT_EQ(PFMapCreate(kv, 4, &map), 0);
  int64_t size = 0;
  PFMapSize(map.v_obj, &size);
  EXPECT_EQ(size, 3);
  EXPECT_EQ(Lookup(map.v_obj, RawStr("b")), 4);
  PFAny items;
  ASSERT_EQ(PFMapItems(map.v_obj, &items), 0);
  ASSERT_EQ(items.type_index, kPFTypeArray);
  auto* seq = reinterpret_cast<PFSeqObject*>(items.v_obj);
  ASSERT_EQ(seq->size, 6);
  const char* keys[3] = {"b", "a", "c"};
  int64_t values[3] = {4, 2, 3};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(seq->data[2 * i].type_index, kPFTypeSmallStr);
    EXPECT_STREQ(seq->data[2 * i].v_bytes, keys[i]);
    EXPECT_EQ(seq->data[2 * i + 1].v_int64, values[i]);
  }
  PFAnyRelease(&items);
  PFAnyRelease(&map);
}

TEST(CMap, IterNextWalksEntriesInOrderWithoutCopying) {
  PFAny kv[6] = {RawStr("b"), Int(1), RawStr("a"), Int(2), RawStr("c"), Int(3)};
  PFAny dict;
  ASSERT_EQ(PFDictCreate(kv, 3, &dict), 0);
  ASSERT_EQ(PFDictDelItem(dict.v_obj, &kv[2]), 0);  // "a": a removed entry is skipped
  int64_t cursor = 0;
  int found = 0;
  PFAny key = {}, value = {};
  const char* keys[2] = {"b", "c"};
  int64_t values[2] = {1, 3};
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(PFMapIterNext(dict.v_obj, &cursor, &key, &value, &found), 0);
    ASSERT_EQ(found, 1);
    EXPECT_STREQ(key.v_bytes, keys[i]);
    EXPECT_EQ(value.v_int64, values[i]);
  }
  ASSERT_EQ(PFMapIterNext(dict.v_obj, &cursor, nullptr, nullptr, &found), 0);
  EXPECT_EQ(found, 0);
  ASSERT_EQ(PFMapIterNext(dict.v_obj, &cursor, nullptr, nullptr, &found), 0);
  EXPECT_EQ(found, 0);  // stays at the end
  cursor = -1;
  EXPECT_NE(PFMapIterNext(dict.v_obj, &cursor, nullptr, nullptr, &found), 0);
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);
  PFObjectDecRef(err);
  PFAnyRelease(&dict);
}

TEST(CMap, ObjectsAreKeyedByIdentityAndOwned) {
  PFObject* a = nullptr;
  PFObject* b = nullptr;
  ASSERT_EQ(PFOpaqueObjectCreate(nullptr, nullptr, &a), 0);
  ASSERT_EQ(PFOpaqueObjectCreate(nullptr, nullptr, &b), 0);
  PFAny ka = {}, kb = {};
  ka.type_index = kb.type_index = kPFTypeOpaque;
  ka.v_obj = a;
  kb.v_obj = b;
  PFAny kv[2] = {ka, Int(5)};
  PFAny map;
  ASSERT_EQ(PFMapCreate(kv, 1, &map), 0);
  EXPECT_EQ(a->ref_count, 2u);
  EXPECT_EQ(Lookup(map.v_obj, ka), 5);
  EXPECT_EQ(Lookup(map.v_obj, kb), -1);
  PFAnyRelease(&map);
  EXPECT_EQ(a->ref_count, 1u);
  PFObjectDecRef(a);
  PFObjectDecRef(b);
}

TEST(CMap, ManyEntries) {
  constexpr int kN = 1000;
  PFAny* kv = new PFAny[2 * kN];
  std::string keys[kN];
  for (int i = 0; i < kN; ++i) {
    keys[i] = "key number " + std::to_string(i);
    kv[2 * i] = RawStr(keys[i].c_str());
    kv[2 * i + 1] = Int(i);
  }
  PFAny map;
  ASSERT_EQ(PFMapCreate(kv, kN, &map), 0);
  delete[] kv;
  int64_t size = 0;
  PFMapSize(map.v_obj, &size);
  EXPECT_EQ(size, kN);
  for (int i = 0; i < kN; ++i) ASSERT_EQ(Lookup(map.v_obj, RawStr(keys[i].c_str())), i);
  PFAnyRelease(&map);
}

TEST(CMap, NonMapIsATypeError) {
  PFObject* opaque = nullptr;
  ASSERT_EQ(PFOpaqueObjectCreate(nullptr, nullptr, &opaque), 0);
  int64_t size = 0;
  EXPECT_NE(PFMapSize(opaque, &size), 0);
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);
  ASSERT_NE(err, nullptr);
  auto* e = reinterpret_cast<PFErrorObject*>(err);
  EXPECT_EQ(std::string(e->kind.data, e->kind.size), "TypeError");
  PFObjectDecRef(err);
  PFObjectDecRef(opaque);
}

}  // namespace
