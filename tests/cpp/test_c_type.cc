// C-ABI tests: the type table, O(1) IsInstance through ancestors, and reflection registration.
#include <gtest/gtest.h>
#include <packedfun/c_api.h>

#include <cstring>
#include <string>

namespace {

PFByteArray Bytes(const char* s) { return PFByteArray{s, std::strlen(s)}; }

const PFTypeInfo* Info(int32_t index) {
  const PFTypeInfo* info = nullptr;
  EXPECT_EQ(PFTypeGetInfo(index, &info), 0);
  return info;
}

bool IsInstance(int32_t t, int32_t base) {
  const PFTypeInfo* ti = Info(t);
  const PFTypeInfo* bi = Info(base);
  return ti->depth >= bi->depth && ti->ancestors[bi->depth] == base;
}

int32_t Register(const char* key, int32_t parent) {
  PFByteArray k = Bytes(key);
  int32_t index = -1;
  EXPECT_EQ(PFTypeRegister(&k, parent, &index), 0);
  return index;
}

std::string TakeErrorKind() {
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);
  if (err == nullptr) return "";
  auto* e = reinterpret_cast<PFErrorObject*>(err);
  std::string kind(e->kind.data, e->kind.size);
  PFObjectDecRef(err);
  return kind;
}

TEST(CType, StaticKeys) {
  const char* keys[] = {"packedfun.Object", "packedfun.String",   "packedfun.Bytes",
                        "packedfun.Error",  "packedfun.Function", "packedfun.Opaque",
                        "packedfun.Shape",  "packedfun.Tensor",   "packedfun.Array",
                        "packedfun.Map",    "packedfun.List",     "packedfun.Dict",
                        "packedfun.Module"};
  for (int32_t i = 0; i < 13; ++i) {
    PFByteArray k = Bytes(keys[i]);
    int32_t index = -1;
    ASSERT_EQ(PFTypeKeyToIndex(&k, &index), 0);
    EXPECT_EQ(index, kPFTypeObject + i);
    const PFTypeInfo* info = Info(index);
    EXPECT_EQ(std::string(info->type_key.data, info->type_key.size), keys[i]);
    EXPECT_EQ(info->depth, i == 0 ? 0 : 1);
    EXPECT_EQ(info->ancestors[info->depth], index);
    EXPECT_TRUE(IsInstance(index, kPFTypeObject));
  }
}

TEST(CType, PodInfos) {
  const PFTypeInfo* info = Info(kPFTypeInt);
  EXPECT_EQ(std::string(info->type_key.data, info->type_key.size), "int");
  EXPECT_EQ(info->depth, 0);
  EXPECT_EQ(info->ancestors[0], kPFTypeInt);
  EXPECT_EQ(std::string(Info(kPFTypeSmallBytes)->type_key.data), "SmallBytes");
  EXPECT_EQ(std::string(Info(kPFTypeRawStr)->type_key.data), "const char*");
  EXPECT_FALSE(IsInstance(kPFTypeInt, kPFTypeObject));
  PFByteArray k = Bytes("float");
  int32_t index = -1;
  ASSERT_EQ(PFTypeKeyToIndex(&k, &index), 0);
  EXPECT_EQ(index, kPFTypeFloat);
}

TEST(CType, RegisterHierarchy) {
  int32_t base = Register("ctest.Base", kPFTypeObject);
  int32_t mid = Register("ctest.Mid", base);
  int32_t leaf = Register("ctest.Leaf", mid);
  int32_t other = Register("ctest.Other", kPFTypeObject);
  EXPECT_GE(base, kPFTypeDynamicBegin);
  EXPECT_EQ(Info(leaf)->depth, 3);
  EXPECT_EQ(Info(leaf)->ancestors[0], kPFTypeObject);
  EXPECT_EQ(Info(leaf)->ancestors[1], base);
  EXPECT_EQ(Info(leaf)->ancestors[2], mid);
  EXPECT_TRUE(IsInstance(leaf, base));
  EXPECT_TRUE(IsInstance(leaf, mid));
  EXPECT_TRUE(IsInstance(mid, base));
  EXPECT_FALSE(IsInstance(base, mid));
  EXPECT_FALSE(IsInstance(leaf, other));
  EXPECT_FALSE(IsInstance(other, base));
  // Same key, same parent: the same index.
  EXPECT_EQ(Register("ctest.Mid", base), mid);
  // Same key, another parent: TypeError.
  PFByteArray k = Bytes("ctest.Mid");
  int32_t index = -1;
  EXPECT_NE(PFTypeRegister(&k, other, &index), 0);
  EXPECT_EQ(TakeErrorKind(), "TypeError");
  EXPECT_EQ(index, -1);
}

TEST(CType, Errors) {
  PFByteArray k = Bytes("ctest.never.registered");
  int32_t index = -1;
  EXPECT_NE(PFTypeKeyToIndex(&k, &index), 0);
  EXPECT_EQ(TakeErrorKind(), "KeyError");
  const PFTypeInfo* info = nullptr;
  EXPECT_NE(PFTypeGetInfo(100, &info), 0);
  EXPECT_EQ(TakeErrorKind(), "IndexError");
  EXPECT_NE(PFTypeGetInfo(-5, &info), 0);
  EXPECT_EQ(TakeErrorKind(), "IndexError");
  EXPECT_NE(PFTypeRegister(&k, kPFTypeInt, &index), 0);  // a POD parent
  EXPECT_EQ(TakeErrorKind(), "TypeError");
  EXPECT_NE(PFTypeRegister(&k, 5000, &index), 0);  // an unknown parent
  EXPECT_EQ(TakeErrorKind(), "TypeError");
}

struct Point {
  PFObject header;
  int64_t x;
};

int GetInt(void* field, PFAny* result) {
  result->type_index = kPFTypeInt;
  result->v_int64 = *static_cast<int64_t*>(field);
  return 0;
}

int SetInt(void* field, const PFAny* value) {
  if (value->type_index != kPFTypeInt) return PFErrorSetRaisedFromCStr("TypeError", "int expected");
  *static_cast<int64_t*>(field) = value->v_int64;
  return 0;
}

int Nop(void*, const PFAny*, int32_t, PFAny*) { return 0; }

TEST(CType, FieldsMethodsAndDoc) {
  int32_t t = Register("ctest.Point", kPFTypeObject);
  PFFieldInfo field = {
      Bytes("x"), Bytes("the x coordinate"), offsetof(Point, x), 0, kPFTypeInt, &GetInt, &SetInt};
  ASSERT_EQ(PFTypeRegisterField(t, &field), 0);
  EXPECT_NE(PFTypeRegisterField(t, &field), 0);
  EXPECT_EQ(TakeErrorKind(), "ValueError");
  PFFieldInfo no_getter = field;
  no_getter.name = Bytes("y");
  no_getter.getter = nullptr;
  EXPECT_NE(PFTypeRegisterField(t, &no_getter), 0);
  EXPECT_EQ(TakeErrorKind(), "ValueError");

  PFObject* fn = nullptr;
  ASSERT_EQ(PFFunctionCreate(nullptr, &Nop, nullptr, &fn), 0);
  PFMethodInfo method = {Bytes("__create__"), Bytes("makes a point"), fn, PACKEDFUN_METHOD_STATIC,
                         0};
  ASSERT_EQ(PFTypeRegisterMethod(t, &method), 0);
  EXPECT_EQ(fn->ref_count, 2u);  // the type table holds one
  PFObjectDecRef(fn);
  PFByteArray doc = Bytes("A point.");
  ASSERT_EQ(PFTypeSetDoc(t, &doc), 0);

  const PFTypeInfo* info = Info(t);
  ASSERT_EQ(info->num_fields, 1);
  EXPECT_STREQ(info->fields[0].name.data, "x");
  EXPECT_EQ(info->fields[0].offset, static_cast<int64_t>(offsetof(Point, x)));
  ASSERT_EQ(info->num_methods, 1);
  EXPECT_STREQ(info->methods[0].name.data, "__create__");
  EXPECT_EQ(info->methods[0].flags, PACKEDFUN_METHOD_STATIC);
  EXPECT_EQ(info->methods[0].method, fn);
  EXPECT_EQ(std::string(info->doc.data, info->doc.size), "A point.");

  // Fields are used through their getters/setters on the object's memory.
  Point p{};
  p.x = 3;
  PFAny v;
  ASSERT_EQ(info->fields[0].getter(reinterpret_cast<char*>(&p) + info->fields[0].offset, &v), 0);
  EXPECT_EQ(v.v_int64, 3);

  PFObject* opaque = nullptr;
  ASSERT_EQ(PFOpaqueObjectCreate(nullptr, nullptr, &opaque), 0);
  PFMethodInfo bad = method;
  bad.name = Bytes("bad");
  bad.method = opaque;
  EXPECT_NE(PFTypeRegisterMethod(t, &bad), 0);
  EXPECT_EQ(TakeErrorKind(), "TypeError");
  PFObjectDecRef(opaque);
  EXPECT_NE(PFTypeRegisterField(4000, &field), 0);
  EXPECT_EQ(TakeErrorKind(), "IndexError");
}

}  // namespace
