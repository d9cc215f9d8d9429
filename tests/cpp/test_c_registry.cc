// C-ABI tests: the global function registry (set/get/doc/list/remove and the override rules).
#include <gtest/gtest.h>
#include <packedfun/c_api.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

PFByteArray Bytes(const char* s) { return PFByteArray{s, std::strlen(s)}; }

int g_deleted = 0;
void CountDelete(void*) { ++g_deleted; }

int ReturnSelf(void* self, const PFAny*, int32_t, PFAny* result) {
  result->type_index = kPFTypeInt;
  result->v_int64 = reinterpret_cast<intptr_t>(self);
  return 0;
}

PFObject* MakeFunc(intptr_t tag) {
  PFObject* f = nullptr;
  EXPECT_EQ(PFFunctionCreate(reinterpret_cast<void*>(tag), &ReturnSelf, &CountDelete, &f), 0);
  return f;
}

int64_t CallTag(PFObject* f) {
  PFAny result;
  std::memset(&result, 0, sizeof(result));
  EXPECT_EQ(PFFunctionCall(f, nullptr, 0, &result), 0);
  return result.v_int64;
}

std::string AnyText(const PFAny& v) {
  if (v.type_index == kPFTypeSmallStr) return std::string(v.v_bytes, v.small_len);
  auto* s = reinterpret_cast<PFBytesObject*>(v.v_obj);
  return std::string(s->bytes.data, s->bytes.size);
}

std::string TakeError(std::string* kind) {
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);
  if (err == nullptr) return "";
  auto* e = reinterpret_cast<PFErrorObject*>(err);
  kind->assign(e->kind.data, e->kind.size);
  std::string message(e->message.data, e->message.size);
  PFObjectDecRef(err);
  return message;
}

TEST(CRegistry, SetGetRemoveAndOwnership) {
  g_deleted = 0;
  PFByteArray name = Bytes("ctest.registry.tagged");
  PFObject* f = MakeFunc(7);
  ASSERT_EQ(PFFunctionSetGlobal(&name, f, 0, nullptr), 0);
  PFObjectDecRef(f);  // the registry keeps its own reference
  EXPECT_EQ(g_deleted, 0);
  PFObject* got = nullptr;
  ASSERT_EQ(PFFunctionGetGlobal(&name, &got), 0);
  ASSERT_EQ(got, f);
  EXPECT_EQ(CallTag(got), 7);
  int removed = -1;
  ASSERT_EQ(PFFunctionRemoveGlobal(&name, &removed), 0);
  EXPECT_EQ(removed, 1);
  EXPECT_EQ(g_deleted, 0);  // still held by `got`
  PFObjectDecRef(got);
  EXPECT_EQ(g_deleted, 1);
  ASSERT_EQ(PFFunctionRemoveGlobal(&name, &removed), 0);
  EXPECT_EQ(removed, 0);
}

TEST(CRegistry, MissingIsNullNotAnError) {
  PFByteArray name = Bytes("ctest.registry.no_such_function");
  PFObject* got = reinterpret_cast<PFObject*>(0x1);
  ASSERT_EQ(PFFunctionGetGlobal(&name, &got), 0);
  EXPECT_EQ(got, nullptr);
  PFAny doc;
  ASSERT_EQ(PFFunctionGetGlobalDoc(&name, &doc), 0);
  EXPECT_EQ(doc.type_index, kPFTypeNone);
}

TEST(CRegistry, OverrideRules) {
  g_deleted = 0;
  PFByteArray name = Bytes("mylib.add");
  PFObject* first = MakeFunc(1);
  PFObject* second = MakeFunc(2);
  ASSERT_EQ(PFFunctionSetGlobal(&name, first, 0, nullptr), 0);
  EXPECT_NE(PFFunctionSetGlobal(&name, second, 0, nullptr), 0);
  std::string kind;
  EXPECT_EQ(TakeError(&kind),
            "Global function 'mylib.add' is already registered; pass override=True to replace it");
  EXPECT_EQ(kind, "ValueError");
  PFObject* got = nullptr;
  ASSERT_EQ(PFFunctionGetGlobal(&name, &got), 0);
  EXPECT_EQ(CallTag(got), 1);
  PFObjectDecRef(got);

  ASSERT_EQ(PFFunctionSetGlobal(&name, second, 1, nullptr), 0);
  ASSERT_EQ(PFFunctionGetGlobal(&name, &got), 0);
  EXPECT_EQ(CallTag(got), 2);
  PFObjectDecRef(got);
  PFObjectDecRef(first);  // the registry released its reference to `first` on override
  EXPECT_EQ(g_deleted, 1);
  int removed = 0;
  ASSERT_EQ(PFFunctionRemoveGlobal(&name, &removed), 0);
  PFObjectDecRef(second);
  EXPECT_EQ(g_deleted, 2);
}

TEST(CRegistry, RejectsNonFunctions) {
  PFByteArray name = Bytes("ctest.registry.not_a_function");
  PFObject* opaque = nullptr;
  ASSERT_EQ(PFOpaqueObjectCreate(nullptr, nullptr, &opaque), 0);
  EXPECT_NE(PFFunctionSetGlobal(&name, opaque, 0, nullptr), 0);
  std::string kind;
  EXPECT_NE(TakeError(&kind).find("ctest.registry.not_a_function"), std::string::npos);
  EXPECT_EQ(kind, "TypeError");
  PFObjectDecRef(opaque);
}

TEST(CRegistry, DocStrings) {
  PFByteArray name = Bytes("ctest.registry.documented");
  PFByteArray doc = Bytes("Adds two integers and returns their sum.");
  PFObject* f = MakeFunc(3);
  ASSERT_EQ(PFFunctionSetGlobal(&name, f, 0, &doc), 0);
  PFAny got;
  ASSERT_EQ(PFFunctionGetGlobalDoc(&name, &got), 0);
  EXPECT_EQ(got.type_index, kPFTypeString);
  EXPECT_EQ(AnyText(got), "Adds two integers and returns their sum.");
  PFAnyRelease(&got);
  PFByteArray short_doc = Bytes("tiny");
  ASSERT_EQ(PFFunctionSetGlobal(&name, f, 1, &short_doc), 0);
  ASSERT_EQ(PFFunctionGetGlobalDoc(&name, &got), 0);
  EXPECT_EQ(got.type_index, kPFTypeSmallStr);
  EXPECT_EQ(AnyText(got), "tiny");
  ASSERT_EQ(PFFunctionSetGlobal(&name, f, 1, nullptr), 0);
  ASSERT_EQ(PFFunctionGetGlobalDoc(&name, &got), 0);
  EXPECT_EQ(got.type_index, kPFTypeNone);
  int removed = 0;
  PFFunctionRemoveGlobal(&name, &removed);
  PFObjectDecRef(f);
}

TEST(CRegistry, ListNamesIsSortedArrayOfStrings) {
  const char* names[] = {"ctest.list.zeta", "ctest.list.alpha", "ctest.list.m"};
  PFObject* f = MakeFunc(0);
  for (const char* n : names) {
    PFByteArray name = Bytes(n);
    ASSERT_EQ(PFFunctionSetGlobal(&name, f, 0, nullptr), 0);
  }
  PFAny list;
  ASSERT_EQ(PFFunctionListGlobalNames(&list), 0);
  ASSERT_EQ(list.type_index, kPFTypeArray);
  auto* seq = reinterpret_cast<PFSeqObject*>(list.v_obj);
  std::vector<std::string> got;
  for (int64_t i = 0; i < seq->size; ++i) {
    std::string s = AnyText(seq->data[i]);
    if (s.rfind("ctest.list.", 0) == 0) got.push_back(s);
  }
  EXPECT_EQ(got, (std::vector<std::string>{"ctest.list.alpha", "ctest.list.m", "ctest.list.zeta"}));
  for (int64_t i = 1; i < seq->size; ++i) {
    EXPECT_LT(AnyText(seq->data[i - 1]), AnyText(seq->data[i]));
  }
  PFAnyRelease(&list);
  for (const char* n : names) {
    PFByteArray name = Bytes(n);
    int removed = 0;
    PFFunctionRemoveGlobal(&name, &removed);
    EXPECT_EQ(removed, 1);
  }
  PFObjectDecRef(f);
}

}  // namespace
