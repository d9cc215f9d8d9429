// C-ABI tests: reference counting, opaque objects, PFAny ownership helpers and the ABI version.
#include <gtest/gtest.h>
#include <packedfun/c_api.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

namespace {

std::atomic<int> g_freed{0};
void CountFree(void* handle) {
  ++g_freed;
  *static_cast<int*>(handle) += 1;
}

PFObject* MakeOpaque(int* counter) {
  PFObject* obj = nullptr;
  EXPECT_EQ(PFOpaqueObjectCreate(counter, &CountFree, &obj), 0);
  return obj;
}

TEST(CObject, OpaqueDeleterRunsOnceAtZero) {
  int freed = 0;
  PFObject* obj = MakeOpaque(&freed);
  ASSERT_NE(obj, nullptr);
  EXPECT_EQ(obj->type_index, kPFTypeOpaque);
  EXPECT_EQ(obj->ref_count, 1u);
  EXPECT_EQ(reinterpret_cast<PFOpaqueObject*>(obj)->handle, &freed);
  PFObjectIncRef(obj);
  PFObjectIncRef(obj);
  EXPECT_EQ(obj->ref_count, 3u);
  PFObjectDecRef(obj);
  PFObjectDecRef(obj);
  EXPECT_EQ(freed, 0);
  PFObjectDecRef(obj);
  EXPECT_EQ(freed, 1);
}

TEST(CObject, NullIsIgnored) {
  PFObjectIncRef(nullptr);
  PFObjectDecRef(nullptr);
  PFAny none;
  std::memset(&none, 0, sizeof(none));
  PFAnyRelease(&none);
  EXPECT_EQ(none.type_index, kPFTypeNone);
}

TEST(CObject, OpaqueWithoutFreeHandle) {
  PFObject* obj = nullptr;
  ASSERT_EQ(PFOpaqueObjectCreate(reinterpret_cast<void*>(0x1234), nullptr, &obj), 0);
  PFObjectDecRef(obj);
}

TEST(CObject, ConcurrentRefCountingFreesExactlyOnce) {
  int freed = 0;
  PFObject* obj = MakeOpaque(&freed);
  constexpr int kThreads = 4, kIters = 20000;
  for (int i = 0; i < kThreads; ++i) PFObjectIncRef(obj);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([obj] {
      for (int i = 0; i < kIters; ++i) {
        PFObjectIncRef(obj);
        PFObjectDecRef(obj);
      }
      PFObjectDecRef(obj);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(freed, 0);
  EXPECT_EQ(obj->ref_count, 1u);
  PFObjectDecRef(obj);
  EXPECT_EQ(freed, 1);
}

TEST(CAny, ViewToOwnedObjectGainsReference) {
  int freed = 0;
  PFObject* obj = MakeOpaque(&freed);
  PFAny view;
  view.type_index = obj->type_index;
  view.zero_padding = 0;
  view.v_obj = obj;
  PFAny owned;
  ASSERT_EQ(PFAnyViewToOwned(&view, &owned), 0);
  EXPECT_EQ(owned.v_obj, obj);
  EXPECT_EQ(obj->ref_count, 2u);
  PFAnyRelease(&owned);
  EXPECT_EQ(owned.type_index, kPFTypeNone);
  EXPECT_EQ(owned.v_int64, 0);
  EXPECT_EQ(obj->ref_count, 1u);
  PFObjectDecRef(obj);
  EXPECT_EQ(freed, 1);
}

TEST(CAny, ViewToOwnedCopiesPodAndStrings) {
  PFAny v, out;
  v.type_index = kPFTypeFloat;
  v.zero_padding = 0;
  v.v_float64 = 2.5;
  ASSERT_EQ(PFAnyViewToOwned(&v, &out), 0);
  EXPECT_EQ(out.type_index, kPFTypeFloat);
  EXPECT_EQ(out.v_float64, 2.5);

  v.type_index = kPFTypeRawStr;
  v.v_c_str = "hi";
  ASSERT_EQ(PFAnyViewToOwned(&v, &out), 0);
  EXPECT_EQ(out.type_index, kPFTypeSmallStr);
  EXPECT_EQ(out.small_len, 2u);
  EXPECT_STREQ(out.v_bytes, "hi");

  std::string long_text("a long string\0with nul", 22);
  PFByteArray arr{long_text.data(), long_text.size()};
  v.type_index = kPFTypeStrView;
  v.v_ptr = &arr;
  ASSERT_EQ(PFAnyViewToOwned(&v, &out), 0);
  ASSERT_EQ(out.type_index, kPFTypeString);
  auto* s = reinterpret_cast<PFBytesObject*>(out.v_obj);
  EXPECT_EQ(std::string(s->bytes.data, s->bytes.size), long_text);
  EXPECT_EQ(s->bytes.data[s->bytes.size], '\0');
  PFAnyRelease(&out);

  v.type_index = kPFTypeBytesView;
  ASSERT_EQ(PFAnyViewToOwned(&v, &out), 0);
  EXPECT_EQ(out.type_index, kPFTypeBytes);
  PFAnyRelease(&out);
}

int CollectChild(PFObject* child, void* ctx) {
  static_cast<std::vector<PFObject*>*>(ctx)->push_back(child);
  return 0;
}

int StopAtFirst(PFObject*, void*) { return 7; }

TEST(CObject, VisitChildrenListsContainerObjectsBorrowed) {
  int freed = 0;
  PFObject* a = MakeOpaque(&freed);
  PFObject* b = MakeOpaque(&freed);
  PFAny items[3];
  items[0].type_index = kPFTypeOpaque;
  items[0].zero_padding = 0;
  items[0].v_obj = a;
  items[1].type_index = kPFTypeInt;
  items[1].zero_padding = 0;
  items[1].v_int64 = 5;
  items[2] = items[0];
  items[2].v_obj = b;
  PFAny list, map;
  ASSERT_EQ(PFListCreate(items, 3, &list), 0);
  ASSERT_EQ(PFMapCreate(items + 1, 1, &map), 0);  // {5: b}
  std::vector<PFObject*> seen;
  EXPECT_EQ(PFObjectVisitChildren(list.v_obj, &CollectChild, &seen), 0);
  EXPECT_EQ(seen, (std::vector<PFObject*>{a, b}));  // the int is no object
  EXPECT_EQ(a->ref_count, 2u);                      // the visit added no reference
  seen.clear();
  EXPECT_EQ(PFObjectVisitChildren(map.v_obj, &CollectChild, &seen), 0);
  EXPECT_EQ(seen, (std::vector<PFObject*>{b}));
  EXPECT_EQ(PFObjectVisitChildren(list.v_obj, &StopAtFirst, nullptr), 7);
  seen.clear();
  EXPECT_EQ(PFObjectVisitChildren(a, &CollectChild, &seen), 0);  // an Opaque's handle is foreign
  EXPECT_TRUE(seen.empty());
  EXPECT_EQ(PFObjectVisitChildren(nullptr, &CollectChild, &seen), 0);
  PFAnyRelease(&list);
  PFAnyRelease(&map);
  PFObjectDecRef(a);
  PFObjectDecRef(b);
  EXPECT_EQ(freed, 2);
}

TEST(CVersion, MatchesHeader) {
  EXPECT_EQ(PFGetABIVersion(),
            (uint32_t{PACKEDFUN_ABI_VERSION_MAJOR} << 16) | PACKEDFUN_ABI_VERSION_MINOR);
}

}  // namespace
