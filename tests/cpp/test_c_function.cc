// C-ABI tests: creating packed functions, calling them, ownership of `self` and call errors.
#include <gtest/gtest.h>
#include "abi_values.h"
#include <packedfun/c_api.h>

#include <cstring>
#include <string>

namespace {

PFAny None() {
  PFAny a;
  std::memset(&a, 0, sizeof(a));
  return a;
}

int AddAll(void* self, const PFAny* args, int32_t n, PFAny* result) {
  int64_t sum = self != nullptr ? *static_cast<int64_t*>(self) : 0;
  for (int32_t i = 0; i < n; ++i) {
    if (args[i].type_index != kPFTypeInt) {
      return PFErrorSetRaisedFromCStr("TypeError", "AddAll: expected int");
    }
    sum += args[i].v_int64;
  }
  *result = Int(sum);
  return 0;
}

int g_self_deleted = 0;
void DeleteSelf(void* self) {
  ++g_self_deleted;
  delete static_cast<int64_t*>(self);
}

std::string TakeErrorKind(std::string* message = nullptr) {
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);
  if (err == nullptr) return "";
  auto* e = reinterpret_cast<PFErrorObject*>(err);
  std::string kind(e->kind.data, e->kind.size);
  if (message != nullptr) message->assign(e->message.data, e->message.size);
  PFObjectDecRef(err);
  return kind;
}

TEST(CFunction, CreateAndCall) {
  g_self_deleted = 0;
  PFObject* f = nullptr;
  ASSERT_EQ(PFFunctionCreate(new int64_t(100), &AddAll, &DeleteSelf, &f), 0);
  EXPECT_EQ(f->type_index, kPFTypeFunction);
  PFAny args[3] = {Int(1), Int(2), Int(3)};
  PFAny result = None();
  ASSERT_EQ(PFFunctionCall(f, args, 3, &result), 0);
  EXPECT_EQ(result.type_index, kPFTypeInt);
  EXPECT_EQ(result.v_int64, 106);
  // The struct is public: bindings may call through it directly.
  auto* fo = reinterpret_cast<PFFunctionObject*>(f);
  result = None();
  ASSERT_EQ(fo->safe_call(fo->self, args, 1, &result), 0);
  EXPECT_EQ(result.v_int64, 101);
  PFObjectIncRef(f);
  PFObjectDecRef(f);
  EXPECT_EQ(g_self_deleted, 0);
  PFObjectDecRef(f);
  EXPECT_EQ(g_self_deleted, 1);
}

TEST(CFunction, ErrorPropagatesAndResultStaysNone) {
  PFObject* f = nullptr;
  ASSERT_EQ(PFFunctionCreate(nullptr, &AddAll, nullptr, &f), 0);
  PFAny args[2] = {Int(1), None()};
  PFAny result = None();
  std::string message;
  EXPECT_NE(PFFunctionCall(f, args, 2, &result), 0);
  EXPECT_EQ(result.type_index, kPFTypeNone);
  EXPECT_EQ(TakeErrorKind(&message), "TypeError");
  EXPECT_EQ(message, "AddAll: expected int");
  PFObjectDecRef(f);
}

TEST(CFunction, CallingANonFunctionIsATypeError) {
  PFObject* opaque = nullptr;
  ASSERT_EQ(PFOpaqueObjectCreate(nullptr, nullptr, &opaque), 0);
  PFAny result = None();
  EXPECT_NE(PFFunctionCall(opaque, nullptr, 0, &result), 0);
  EXPECT_EQ(TakeErrorKind(), "TypeError");
  EXPECT_NE(PFFunctionCall(nullptr, nullptr, 0, &result), 0);
  EXPECT_EQ(TakeErrorKind(), "TypeError");
  PFObjectDecRef(opaque);
}

TEST(CFunction, NullBodyFailsAndStillReleasesSelf) {
  g_self_deleted = 0;
  PFObject* f = reinterpret_cast<PFObject*>(0x1);
  EXPECT_NE(PFFunctionCreate(new int64_t(1), nullptr, &DeleteSelf, &f), 0);
  EXPECT_EQ(f, reinterpret_cast<PFObject*>(0x1));  // untouched on failure
  EXPECT_EQ(g_self_deleted, 1);
  EXPECT_EQ(TakeErrorKind(), "ValueError");
}

int Recurse(void* self, const PFAny* args, int32_t, PFAny* result) {
  int64_t depth = args[0].v_int64;
  if (depth == 0) {
    *result = Int(0);
    return 0;
  }
  PFAny next = Int(depth - 1);
  PFAny inner = None();
  if (PFFunctionCall(static_cast<PFObject*>(self), &next, 1, &inner) != 0) return -1;
  *result = Int(inner.v_int64 + 1);
  return 0;
}

TEST(CFunction, MetadataReturningATypeKeySetsTheNamedResultFlag) {
  PFObject* f = nullptr;
  ASSERT_EQ(PFFunctionCreate(nullptr, &AddAll, nullptr, &f), 0);
  auto set = [&](const char* json) {
    PFByteArray text{json, std::strlen(json)};
    EXPECT_EQ(PFFunctionSetMetadata(f, &text), 0);
    return (f->flags & PACKEDFUN_FUNCTION_FLAG_NAMED_RESULT) != 0;
  };
  EXPECT_TRUE(set(R"({"name": "f", "params": [], "return": "mylib.Color"})"));
  EXPECT_FALSE(set(R"({"name": "f", "return": "int"})"));  // replaced: cleared
  EXPECT_TRUE(set(R"({"return":"mylib.Color"})"));         // compact JSON
  EXPECT_FALSE(set(R"({"return": "Optional[mylib.Color]"})"));
  EXPECT_FALSE(set(R"({"return": "Tensor"})"));
  EXPECT_FALSE(set(R"({"name": "f", "doc": "the \"return\": \"x\" is quoted"})"));
  EXPECT_TRUE(f->flags & PACKEDFUN_FUNCTION_FLAG_HAS_METADATA);
  PFObjectDecRef(f);
}

TEST(CFunction, NestedCalls) {
  PFObject* f = nullptr;
  ASSERT_EQ(PFFunctionCreate(nullptr, &Recurse, nullptr, &f), 0);
  reinterpret_cast<PFFunctionObject*>(f)->self = f;  // a weak self-reference for the test
  PFAny arg = Int(50), result = None();
  ASSERT_EQ(PFFunctionCall(f, &arg, 1, &result), 0);
  EXPECT_EQ(result.v_int64, 50);
  PFObjectDecRef(f);
}

}  // namespace
