// C-ABI tests: Map creation and lookups by value (strings in every form, numbers) or identity.
#include <gtest/gtest.h>
#include "abi_values.h"
#include <packedfun/c_api.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

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

/*! Fails the test unless `map` is a Map of `expected` entries; call it inside
 *  ASSERT_NO_FATAL_FAILURE so that a miss stops the test before the map is read. */
void CheckMapOfSize(const PFAny& map, int64_t expected) {
  ASSERT_EQ(map.type_index, kPFTypeMap);
  int64_t size = -1;
  ASSERT_EQ(PFMapSize(map.v_obj, &size), 0);
  EXPECT_EQ(size, expected);
}

TEST(CMap, StringKeysMatchInEveryForm) {
  const char* long_key = "a key longer than seven bytes";
  PFAny kv[4] = {RawStr("short"), Int(1), RawStr(long_key), Int(2)};
  PFAny map;
  ASSERT_EQ(PFMapCreate(kv, 2, &map), 0);
  ASSERT_NO_FATAL_FAILURE(CheckMapOfSize(map, 2));

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
  ASSERT_NO_FATAL_FAILURE(CheckMapOfSize(map, 3));
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

TEST(CMap, ReadEntriesReadsBatchesOfBorrowedViews) {
  PFAny kv[10] = {RawStr("a"), Int(0),      RawStr("b"), Int(1),      RawStr("c"),
                  Int(2),      RawStr("d"), Int(3),      RawStr("e"), Int(4)};
  PFAny dict;
  ASSERT_EQ(PFDictCreate(kv, 5, &dict), 0);
  ASSERT_EQ(PFDictDelItem(dict.v_obj, &kv[2]), 0);  // "b": a removed entry is skipped
  PFAny out[4];
  int64_t cursor = 0, got = -1;
  ASSERT_EQ(PFMapReadEntries(dict.v_obj, &cursor, out, 2, &got), 0);
  ASSERT_EQ(got, 2);
  EXPECT_STREQ(out[0].v_bytes, "a");
  EXPECT_STREQ(out[2].v_bytes, "c");
  EXPECT_EQ(out[3].v_int64, 2);
  ASSERT_EQ(PFMapReadEntries(dict.v_obj, &cursor, out, 2, &got), 0);
  ASSERT_EQ(got, 2);
  EXPECT_STREQ(out[0].v_bytes, "d");
  EXPECT_EQ(out[3].v_int64, 4);
  ASSERT_EQ(PFMapReadEntries(dict.v_obj, &cursor, out, 2, &got), 0);
  EXPECT_EQ(got, 0);  // the end, and it stays there
  ASSERT_EQ(PFMapReadEntries(dict.v_obj, &cursor, out, 2, &got), 0);
  EXPECT_EQ(got, 0);
  cursor = -1;
  EXPECT_NE(PFMapReadEntries(dict.v_obj, &cursor, out, 2, &got), 0);
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);
  ASSERT_NE(err, nullptr);
  PFObjectDecRef(err);
  PFAny list;
  ASSERT_EQ(PFListCreate(kv, 2, &list), 0);
  cursor = 0;
  EXPECT_NE(PFMapReadEntries(list.v_obj, &cursor, out, 2, &got), 0);  // TypeError: not a map
  PFAnyRelease(&list);
  PFErrorMoveFromRaised(&err);
  PFObjectDecRef(err);
  PFAnyRelease(&dict);
}

TEST(CMap, CreateDistinctKeepsOrderAndFindsKeysOnceLookedUp) {
  PFByteArray long_text = {"a key longer than seven bytes", 29};
  PFAny kv[8] = {View(kPFTypeStrView, &long_text),
                 Int(1),
                 RawStr("b"),
                 Float(2.5),
                 Int(7),
                 Int(3),
                 Bool(false),
                 RawStr("zero")};
  PFAny map;
  ASSERT_EQ(PFMapCreateDistinct(kv, 4, &map), 0);
  ASSERT_NO_FATAL_FAILURE(CheckMapOfSize(map, 4));
  PFAny out[8];
  int64_t cursor = 0, got = 0;
  ASSERT_EQ(PFMapReadEntries(map.v_obj, &cursor, out, 4, &got), 0);
  ASSERT_EQ(got, 4);
  EXPECT_EQ(out[0].type_index, kPFTypeString);  // an owned copy, not the caller's view
  EXPECT_EQ(out[3].v_float64, 2.5);
  EXPECT_EQ(out[4].v_int64, 7);
  // The first lookup hashes the keys; every key is found, 0.0 finds the False key as a dict does.
  for (int i = 0; i < 4; ++i) {
    PFAny value;
    int found = 0;
    ASSERT_EQ(PFMapGetItem(map.v_obj, &kv[2 * i], &value, &found), 0);
    EXPECT_EQ(found, 1) << i;
    PFAnyRelease(&value);
  }
  PFAny zero = Float(0.0), value;
  int found = 0;
  ASSERT_EQ(PFMapGetItem(map.v_obj, &zero, &value, &found), 0);
  EXPECT_EQ(found, 1);
  PFAnyRelease(&value);
  PFAny absent = RawStr("absent");
  ASSERT_EQ(PFMapGetItem(map.v_obj, &absent, &value, &found), 0);
  EXPECT_EQ(found, 0);
  EXPECT_NE(PFMapCreateDistinct(kv, -1, &map), 0);
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);
  PFObjectDecRef(err);
  PFAnyRelease(&map);
}

TEST(CMap, CreateDistinctIndexesOnceUnderConcurrentLookups) {
  constexpr int kKeys = 200, kThreads = 4;
  std::vector<std::string> texts;
  for (int i = 0; i < kKeys; ++i) texts.push_back("key number " + std::to_string(i));
  std::vector<PFByteArray> views(kKeys);
  std::vector<PFAny> kv;
  for (int i = 0; i < kKeys; ++i) {
    views[i] = PFByteArray{texts[i].data(), texts[i].size()};
    kv.push_back(View(kPFTypeStrView, &views[i]));
    kv.push_back(Int(i));
  }
  for (int round = 0; round < 20; ++round) {
    PFAny map;
    ASSERT_EQ(PFMapCreateDistinct(kv.data(), kKeys, &map), 0);
    std::vector<int> missing(kThreads, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kKeys; ++i) {
          PFAny value;
          int found = 0;
          if (PFMapGetItem(map.v_obj, &kv[2 * i], &value, &found) != 0 || !found ||
              value.v_int64 != i) {
            ++missing[t];
          }
        }
      });
    }
    for (std::thread& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) EXPECT_EQ(missing[t], 0) << "round " << round;
    PFAnyRelease(&map);
  }
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
  ASSERT_NO_FATAL_FAILURE(CheckMapOfSize(map, kN));
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
