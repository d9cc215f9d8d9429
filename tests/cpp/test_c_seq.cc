// C-ABI tests: Array and Shape creation, element ownership and conversion of borrowed kinds.
#include <gtest/gtest.h>
#include "abi_values.h"
#include <packedfun/c_api.h>

#include <cstring>
#include <string>

namespace {

int g_freed = 0;
void CountFree(void*) { ++g_freed; }

PFAny Obj(PFObject* obj) {
  PFAny a;
  a.type_index = obj->type_index;
  a.zero_padding = 0;
  a.v_obj = obj;
  return a;
}

std::string Contents(const PFAny& v) {
  if (v.type_index == kPFTypeSmallStr) return std::string(v.v_bytes, v.small_len);
  auto* obj = reinterpret_cast<PFBytesObject*>(v.v_obj);
  return std::string(obj->bytes.data, obj->bytes.size);
}

TEST(CSeq, ArrayOwnsCopiesOfItsElements) {
  g_freed = 0;
  PFObject* opaque = nullptr;
  ASSERT_EQ(PFOpaqueObjectCreate(nullptr, &CountFree, &opaque), 0);
  std::string long_text = "a borrowed string view, long";
  PFByteArray view{long_text.data(), long_text.size()};
  PFAny items[4];
  items[0] = Int(42);
  items[1] = Obj(opaque);
  items[2].type_index = kPFTypeRawStr;
  items[2].zero_padding = 0;
  items[2].v_c_str = "short";
  items[3].type_index = kPFTypeStrView;
  items[3].zero_padding = 0;
  items[3].v_ptr = &view;

  PFAny arr;
  ASSERT_EQ(PFArrayCreate(items, 4, &arr), 0);
  ASSERT_EQ(arr.type_index, kPFTypeArray);
  auto* seq = reinterpret_cast<PFSeqObject*>(arr.v_obj);
  ASSERT_EQ(seq->size, 4);
  EXPECT_GE(seq->capacity, 4);
  EXPECT_EQ(seq->data[0].v_int64, 42);
  EXPECT_EQ(seq->data[1].v_obj, opaque);
  EXPECT_EQ(opaque->ref_count, 2u);
  EXPECT_EQ(seq->data[2].type_index, kPFTypeSmallStr);  // borrowed kinds become owned strings
  EXPECT_EQ(Contents(seq->data[2]), "short");
  EXPECT_EQ(seq->data[3].type_index, kPFTypeString);
  EXPECT_EQ(Contents(seq->data[3]), long_text);

  PFObjectDecRef(opaque);
  EXPECT_EQ(g_freed, 0);
  PFAnyRelease(&arr);  // releases every element
  EXPECT_EQ(g_freed, 1);
}

TEST(CSeq, EmptyArray) {
  PFAny arr;
  ASSERT_EQ(PFArrayCreate(nullptr, 0, &arr), 0);
  EXPECT_EQ(reinterpret_cast<PFSeqObject*>(arr.v_obj)->size, 0);
  PFAnyRelease(&arr);
}

TEST(CSeq, ArrayWithoutItemsIsFilledInPlaceByItsCreator) {
  g_freed = 0;
  PFAny arr;
  ASSERT_EQ(PFArrayCreate(nullptr, 9, &arr), 0);
  auto* seq = reinterpret_cast<PFSeqObject*>(arr.v_obj);
  ASSERT_EQ(seq->size, 0);
  ASSERT_GE(seq->capacity, 9);
  PFObject* opaque = nullptr;
  ASSERT_EQ(PFOpaqueObjectCreate(nullptr, CountFree, &opaque), 0);
  seq->data[seq->size++] = Int(5);
  seq->data[seq->size++] = Obj(opaque);  // the creator's reference moves into the cell
  seq->data[seq->size++] = Int(6);
  PFAnyRelease(&arr);  // releases the object among the filled cells, nothing past `size`
  EXPECT_EQ(g_freed, 1);
}

TEST(CSeq, ADeadSequencesBlockIsReusedWithNothingOfItsPast) {
  // The runtime keeps one dead Array's or List's block for the next one made: its elements are
  // released when it dies (not when the block is reused), the next one starts empty with room
  // for what it asked, and a sequence still alive is never handed out again.
  g_freed = 0;
  PFObject* opaque = nullptr;
  ASSERT_EQ(PFOpaqueObjectCreate(nullptr, &CountFree, &opaque), 0);
  PFAny items[3] = {Int(1), Obj(opaque), Int(3)};
  PFAny first;
  ASSERT_EQ(PFArrayCreate(items, 3, &first), 0);
  PFObjectDecRef(opaque);  // the array holds the only reference now
  PFAnyRelease(&first);
  EXPECT_EQ(g_freed, 1);
  for (int round = 0; round < 3; ++round) {
    PFAny a;
    ASSERT_EQ(PFListCreate(nullptr, 0, &a), 0);  // a List, then grown past its inline slots
    for (int64_t i = 0; i < 20; ++i) {
      PFAny v = Int(i);
      ASSERT_EQ(PFListAppend(a.v_obj, &v), 0);
    }
    EXPECT_EQ(a.v_obj->type_index, kPFTypeList);
    PFAny b;
    ASSERT_EQ(PFArrayCreate(nullptr, 2, &b), 0);
    auto* seq = reinterpret_cast<PFSeqObject*>(b.v_obj);
    EXPECT_EQ(b.v_obj->type_index, kPFTypeArray);
    EXPECT_EQ(b.v_obj->ref_count, 1u);
    EXPECT_EQ(seq->size, 0);
    EXPECT_GE(seq->capacity, 2);
    EXPECT_EQ(seq->data, reinterpret_cast<PFAny*>(seq + 1));
    seq->data[seq->size++] = Int(7);
    PFAny c_items[2] = {Int(8), Int(9)};
    PFAny c;
    ASSERT_EQ(PFArrayCreate(c_items, 2, &c), 0);
    EXPECT_NE(c.v_obj, b.v_obj);
    EXPECT_EQ(seq->data[0].v_int64, 7);  // untouched by the Array made while it lives
    PFAnyRelease(&b);
    PFAnyRelease(&a);
    PFAny d_items[1] = {Int(10)};
    PFAny d;
    ASSERT_EQ(PFArrayCreate(d_items, 1, &d), 0);
    auto* d_seq = reinterpret_cast<PFSeqObject*>(d.v_obj);
    EXPECT_EQ(d_seq->size, 1);
    EXPECT_EQ(d_seq->data[0].v_int64, 10);
    EXPECT_EQ(reinterpret_cast<PFSeqObject*>(c.v_obj)->data[1].v_int64, 9);
    PFAnyRelease(&d);
    PFAnyRelease(&c);
  }
  EXPECT_EQ(g_freed, 1);
}

TEST(CSeq, NestedArrays) {
  PFAny inner_items[2] = {Int(1), Int(2)};
  PFAny inner;
  ASSERT_EQ(PFArrayCreate(inner_items, 2, &inner), 0);
  PFAny outer;
  ASSERT_EQ(PFArrayCreate(&inner, 1, &outer), 0);
  EXPECT_EQ(inner.v_obj->ref_count, 2u);
  PFAnyRelease(&inner);
  auto* seq = reinterpret_cast<PFSeqObject*>(outer.v_obj);
  auto* nested = reinterpret_cast<PFSeqObject*>(seq->data[0].v_obj);
  EXPECT_EQ(nested->data[1].v_int64, 2);
  PFAnyRelease(&outer);
}

TEST(CSeq, NegativeCountIsAValueError) {
  PFAny arr;
  EXPECT_NE(PFArrayCreate(nullptr, -1, &arr), 0);
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);
  ASSERT_NE(err, nullptr);
  auto* e = reinterpret_cast<PFErrorObject*>(err);
  EXPECT_EQ(std::string(e->kind.data, e->kind.size), "ValueError");
  PFObjectDecRef(err);
}

TEST(CSeq, Shape) {
  int64_t dims[3] = {2, 3, 4};
  PFObject* shape = nullptr;
  ASSERT_EQ(PFShapeCreate(dims, 3, &shape), 0);
  EXPECT_EQ(shape->type_index, kPFTypeShape);
  auto* s = reinterpret_cast<PFShapeObject*>(shape);
  ASSERT_EQ(s->size, 3);
  EXPECT_NE(s->data, dims);  // copied
  EXPECT_EQ(s->data[0], 2);
  EXPECT_EQ(s->data[2], 4);
  PFObjectDecRef(shape);
  ASSERT_EQ(PFShapeCreate(nullptr, 0, &shape), 0);
  EXPECT_EQ(reinterpret_cast<PFShapeObject*>(shape)->size, 0);
  PFObjectDecRef(shape);
}

}  // namespace
