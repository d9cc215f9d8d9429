// Tests of the tensor entry points of c_api.h: DLPack adoption and export, empty tensors, errors.
#include <gtest/gtest.h>
#include "abi_values.h"
#include <packedfun/c_api.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

/*! A producer's tensor: owns shape, strides and data; counts how often its deleter ran. */
struct Producer {
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  std::vector<float> data;
  int* deleted;
  DLManagedTensor legacy{};
  DLManagedTensorVersioned versioned{};
};

void FillTensor(Producer* p, DLTensor* t, bool with_strides) {
  int64_t numel = 1;
  for (int64_t d : p->shape) numel *= d;
  p->data.assign(static_cast<size_t>(numel), 1.5f);
  t->data = numel == 0 ? nullptr : p->data.data();
  t->device = DLDevice{kDLCPU, 0};
  t->ndim = static_cast<int32_t>(p->shape.size());
  t->dtype = DLDataType{kDLFloat, 32, 1};
  t->shape = p->shape.data();
  t->strides = with_strides ? p->strides.data() : nullptr;
  t->byte_offset = 0;
}

DLManagedTensor* MakeLegacy(std::vector<int64_t> shape, int* deleted,
                            std::vector<int64_t> strides = {}) {
  auto* p = new Producer{std::move(shape), std::move(strides), {}, deleted};
  FillTensor(p, &p->legacy.dl_tensor, !p->strides.empty());
  p->legacy.manager_ctx = p;
  p->legacy.deleter = [](DLManagedTensor* self) {
    auto* owner = static_cast<Producer*>(self->manager_ctx);
    ++*owner->deleted;
    delete owner;
  };
  return &p->legacy;
}

DLManagedTensorVersioned* MakeVersioned(std::vector<int64_t> shape, int* deleted, uint64_t flags,
                                        uint32_t major = 1) {
  auto* p = new Producer{std::move(shape), {}, {}, deleted};
  FillTensor(p, &p->versioned.dl_tensor, false);
  p->versioned.version = DLPackVersion{major, 2};
  p->versioned.flags = flags;
  p->versioned.manager_ctx = p;
  p->versioned.deleter = [](DLManagedTensorVersioned* self) {
    auto* owner = static_cast<Producer*>(self->manager_ctx);
    ++*owner->deleted;
    delete owner;
  };
  return &p->versioned;
}

DLTensor& View(PFObject* t) { return reinterpret_cast<PFTensorObject*>(t)->tensor; }

std::vector<int64_t> Vec(const int64_t* p, int32_t n) { return std::vector<int64_t>(p, p + n); }

TEST(CTensor, AdoptsLegacyAndRunsDeleterOnceOnDeath) {
  int deleted = 0;
  DLManagedTensor* m = MakeLegacy({2, 3, 4}, &deleted);
  void* data = m->dl_tensor.data;
  int64_t* producer_shape = m->dl_tensor.shape;
  PFObject* t = nullptr;
  ASSERT_EQ(PFTensorFromDLPack(m, &t), 0) << TakeError();
  EXPECT_EQ(t->type_index, kPFTypeTensor);
  EXPECT_EQ(t->ref_count, 1u);
  DLTensor& v = View(t);
  EXPECT_EQ(v.data, data);
  EXPECT_EQ(v.ndim, 3);
  EXPECT_NE(v.shape, producer_shape);  // owned copy
  EXPECT_EQ(Vec(v.shape, 3), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(Vec(v.strides, 3), (std::vector<int64_t>{12, 4, 1}));  // computed
  EXPECT_EQ(deleted, 0);
  PFObjectIncRef(t);
  PFObjectDecRef(t);
  EXPECT_EQ(deleted, 0);
  PFObjectDecRef(t);
  EXPECT_EQ(deleted, 1);
}

TEST(CTensor, CopiesProducerStridesAndHighRanks) {
  int deleted = 0;
  DLManagedTensor* m = MakeLegacy({2, 3}, &deleted, {1, 2});
  PFObject* t = nullptr;
  ASSERT_EQ(PFTensorFromDLPack(m, &t), 0) << TakeError();
  EXPECT_NE(View(t).strides, m->dl_tensor.strides);
  EXPECT_EQ(Vec(View(t).strides, 2), (std::vector<int64_t>{1, 2}));
  PFObjectDecRef(t);
  std::vector<int64_t> shape = {2, 1, 3, 1, 2, 2, 1};
  m = MakeLegacy(shape, &deleted);
  ASSERT_EQ(PFTensorFromDLPack(m, &t), 0) << TakeError();
  EXPECT_EQ(Vec(View(t).shape, 7), shape);
  EXPECT_EQ(Vec(View(t).strides, 7), (std::vector<int64_t>{12, 12, 4, 4, 2, 1, 1}));
  PFObjectDecRef(t);
  EXPECT_EQ(deleted, 2);
}

TEST(CTensor, ZeroSizeAndZeroDimTensors) {
  int deleted = 0;
  PFObject* t = nullptr;
  ASSERT_EQ(PFTensorFromDLPack(MakeLegacy({0, 3}, &deleted), &t), 0) << TakeError();
  EXPECT_EQ(View(t).data, nullptr);
  EXPECT_EQ(Vec(View(t).strides, 2), (std::vector<int64_t>{3, 1}));
  PFObjectDecRef(t);
  ASSERT_EQ(PFTensorFromDLPack(MakeLegacy({}, &deleted), &t), 0) << TakeError();
  EXPECT_EQ(View(t).ndim, 0);
  EXPECT_NE(View(t).data, nullptr);
  PFObjectDecRef(t);
  EXPECT_EQ(deleted, 2);
}

TEST(CTensor, NullDeleterIsAllowed) {
  int deleted = 0;
  DLManagedTensor* m = MakeLegacy({4}, &deleted);
  auto* owner = static_cast<Producer*>(m->manager_ctx);
  m->deleter = nullptr;
  PFObject* t = nullptr;
  ASSERT_EQ(PFTensorFromDLPack(m, &t), 0) << TakeError();
  PFObjectDecRef(t);
  EXPECT_EQ(deleted, 0);
  delete owner;
}

/*! Adopting `m` fails with `kind`, the deleter has run once and *out is untouched. */
void ExpectAdoptFails(DLManagedTensor* m, int* deleted, const std::string& kind,
                      const std::string& needle) {
  PFObject* sentinel = reinterpret_cast<PFObject*>(0x1);
  PFObject* t = sentinel;
  EXPECT_NE(PFTensorFromDLPack(m, &t), 0);
  std::string err = TakeError();
  EXPECT_TRUE(StartsWith(err, kind + ": ")) << err;
  EXPECT_NE(err.find(needle), std::string::npos) << err;
  EXPECT_EQ(t, sentinel);
  EXPECT_EQ(*deleted, 1);
}

TEST(CTensor, InvalidInputFailsAndStillRunsTheDeleterOnce) {
  int deleted = 0;
  DLManagedTensor* m = MakeLegacy({2, 3}, &deleted);
  m->dl_tensor.shape[1] = -3;
  ExpectAdoptFails(m, &deleted, "ValueError", "negative dimension -3");
  deleted = 0;
  m = MakeLegacy({2}, &deleted);
  m->dl_tensor.ndim = -1;
  ExpectAdoptFails(m, &deleted, "ValueError", "negative ndim");
  deleted = 0;
  m = MakeLegacy({2}, &deleted);
  m->dl_tensor.shape = nullptr;
  ExpectAdoptFails(m, &deleted, "ValueError", "shape is NULL");
  deleted = 0;
  m = MakeLegacy({2}, &deleted);
  m->dl_tensor.data = nullptr;
  ExpectAdoptFails(m, &deleted, "ValueError", "data is NULL");
  deleted = 0;
  m = MakeLegacy({2}, &deleted);
  m->dl_tensor.dtype.lanes = 0;
  ExpectAdoptFails(m, &deleted, "ValueError", "dtype");
}

TEST(CTensor, NullArgumentsAreValueErrors) {
  int deleted = 0;
  EXPECT_NE(PFTensorFromDLPack(MakeLegacy({2}, &deleted), nullptr), 0);
  EXPECT_TRUE(StartsWith(TakeError(), "ValueError: "));
  EXPECT_EQ(deleted, 1);
  PFObject* t = nullptr;
  EXPECT_NE(PFTensorFromDLPack(nullptr, &t), 0);
  EXPECT_TRUE(StartsWith(TakeError(), "ValueError: "));
  EXPECT_NE(PFTensorFromDLPackVersioned(nullptr, &t), 0);
  EXPECT_TRUE(StartsWith(TakeError(), "ValueError: "));
}

TEST(CTensor, RoundTripSharesDataAndKeepsTheTensorAlive) {
  int deleted = 0;
  DLManagedTensor* m = MakeLegacy({3, 2}, &deleted);
  void* data = m->dl_tensor.data;
  PFObject* t = nullptr;
  ASSERT_EQ(PFTensorFromDLPack(m, &t), 0);
  DLManagedTensor* out = nullptr;
  ASSERT_EQ(PFTensorToDLPack(t, &out), 0) << TakeError();
  EXPECT_EQ(t->ref_count, 2u);
  PFObjectDecRef(t);  // the export alone keeps the tensor (and the producer) alive
  EXPECT_EQ(deleted, 0);
  EXPECT_EQ(out->dl_tensor.data, data);
  EXPECT_EQ(Vec(out->dl_tensor.shape, 2), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(Vec(out->dl_tensor.strides, 2), (std::vector<int64_t>{2, 1}));
  static_cast<float*>(out->dl_tensor.data)[5] = 7.0f;
  // Re-adopting the export gives a second Tensor over the same memory.
  PFObject* again = nullptr;
  ASSERT_EQ(PFTensorFromDLPack(out, &again), 0);
  EXPECT_EQ(View(again).data, data);
  EXPECT_EQ(static_cast<float*>(View(again).data)[5], 7.0f);
  EXPECT_EQ(deleted, 0);
  PFObjectDecRef(again);  // runs out->deleter, which drops the last ref of t
  EXPECT_EQ(deleted, 1);
}

TEST(CTensor, VersionedKeepsReadOnlyFlagBothWays) {
  int deleted = 0;
  PFObject* t = nullptr;
  ASSERT_EQ(
      PFTensorFromDLPackVersioned(MakeVersioned({4}, &deleted, DLPACK_FLAG_BITMASK_READ_ONLY), &t),
      0);
  int ro = -1;
  ASSERT_EQ(PFTensorIsReadOnly(t, &ro), 0);
  EXPECT_EQ(ro, 1);
  DLManagedTensorVersioned* out = nullptr;
  ASSERT_EQ(PFTensorToDLPackVersioned(t, &out), 0) << TakeError();
  EXPECT_EQ(out->version.major, 1u);
  EXPECT_EQ(out->flags & DLPACK_FLAG_BITMASK_READ_ONLY, DLPACK_FLAG_BITMASK_READ_ONLY);
  EXPECT_EQ(out->dl_tensor.data, View(t).data);
  PFObjectDecRef(t);
  EXPECT_EQ(deleted, 0);
  out->deleter(out);
  EXPECT_EQ(deleted, 1);

  ASSERT_EQ(PFTensorFromDLPackVersioned(MakeVersioned({4}, &deleted, 0), &t), 0);
  ASSERT_EQ(PFTensorIsReadOnly(t, &ro), 0);
  EXPECT_EQ(ro, 0);
  ASSERT_EQ(PFTensorToDLPackVersioned(t, &out), 0);
  EXPECT_EQ(out->flags & DLPACK_FLAG_BITMASK_READ_ONLY, 0u);
  out->deleter(out);
  PFObjectDecRef(t);
  EXPECT_EQ(deleted, 2);
}

TEST(CTensor, LegacyTensorsAreWritable) {
  int deleted = 0;
  PFObject* t = nullptr;
  ASSERT_EQ(PFTensorFromDLPack(MakeLegacy({1}, &deleted), &t), 0);
  int ro = -1;
  ASSERT_EQ(PFTensorIsReadOnly(t, &ro), 0);
  EXPECT_EQ(ro, 0);
  PFObjectDecRef(t);
}

TEST(CTensor, VersionedMajorMismatchIsBufferErrorAndRunsDeleter) {
  int deleted = 0;
  PFObject* t = nullptr;
  EXPECT_NE(PFTensorFromDLPackVersioned(MakeVersioned({4}, &deleted, 0, 2), &t), 0);
  std::string err = TakeError();
  EXPECT_TRUE(StartsWith(err, "BufferError: ")) << err;
  EXPECT_NE(err.find("2.2"), std::string::npos) << err;
  EXPECT_EQ(deleted, 1);
  EXPECT_EQ(t, nullptr);
}

TEST(CTensor, NonTensorsAreTypeErrors) {
  PFObject* opaque = nullptr;
  ASSERT_EQ(PFOpaqueObjectCreate(nullptr, nullptr, &opaque), 0);
  DLManagedTensor* out = nullptr;
  EXPECT_NE(PFTensorToDLPack(opaque, &out), 0);
  EXPECT_TRUE(StartsWith(TakeError(), "TypeError: "));
  DLManagedTensorVersioned* vout = nullptr;
  EXPECT_NE(PFTensorToDLPackVersioned(nullptr, &vout), 0);
  EXPECT_TRUE(StartsWith(TakeError(), "TypeError: "));
  int ro = 0;
  EXPECT_NE(PFTensorIsReadOnly(opaque, &ro), 0);
  EXPECT_TRUE(StartsWith(TakeError(), "TypeError: "));
  EXPECT_EQ(out, nullptr);
  PFObjectDecRef(opaque);
}

TEST(CTensor, EmptyAllocatesAlignedContiguousCpuMemory) {
  const int64_t shape[] = {3, 5, 7};
  PFObject* t = nullptr;
  ASSERT_EQ(PFTensorEmpty(shape, 3, DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0}, &t), 0)
      << TakeError();
  DLTensor& v = View(t);
  ASSERT_NE(v.data, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data) % 64, 0u);
  EXPECT_EQ(v.device.device_type, kDLCPU);
  EXPECT_EQ(v.byte_offset, 0u);
  EXPECT_EQ(Vec(v.shape, 3), (std::vector<int64_t>{3, 5, 7}));
  EXPECT_EQ(Vec(v.strides, 3), (std::vector<int64_t>{35, 7, 1}));
  std::memset(v.data, 0x5a, 3 * 5 * 7 * sizeof(float));  // the whole extent is writable
  int ro = -1;
  ASSERT_EQ(PFTensorIsReadOnly(t, &ro), 0);
  EXPECT_EQ(ro, 0);
  PFObjectDecRef(t);
}

TEST(CTensor, EmptyHandlesZeroSizeScalarsAndSubByteTypes) {
  const int64_t zero[] = {4, 0};
  PFObject* t = nullptr;
  ASSERT_EQ(PFTensorEmpty(zero, 2, DLDataType{kDLInt, 64, 1}, DLDevice{kDLCPU, 0}, &t), 0);
  EXPECT_EQ(View(t).data, nullptr);
  PFObjectDecRef(t);
  ASSERT_EQ(PFTensorEmpty(nullptr, 0, DLDataType{kDLFloat, 64, 1}, DLDevice{kDLCPU, 0}, &t), 0);
  EXPECT_NE(View(t).data, nullptr);
  *static_cast<double*>(View(t).data) = 1.0;
  PFObjectDecRef(t);
  const int64_t odd[] = {3};
  ASSERT_EQ(PFTensorEmpty(odd, 1, DLDataType{kDLFloat4_e2m1fn, 4, 1}, DLDevice{kDLCPU, 0}, &t), 0);
  PFObjectDecRef(t);
}

/*! PFTensorEmpty fails with `kind` and a message containing `needle`. */
void ExpectEmptyFails(const int64_t* shape, int32_t ndim, DLDataType dtype, DLDevice device,
                      const std::string& kind, const std::string& needle) {
  PFObject* t = nullptr;
  EXPECT_NE(PFTensorEmpty(shape, ndim, dtype, device, &t), 0);
  std::string err = TakeError();
  EXPECT_TRUE(StartsWith(err, kind + ": ")) << err;
  EXPECT_NE(err.find(needle), std::string::npos) << err;
  EXPECT_EQ(t, nullptr);
}

TEST(CTensor, EmptyRejectsInvalidInput) {
  const DLDataType f32{kDLFloat, 32, 1};
  const DLDevice cpu{kDLCPU, 0};
  const int64_t negative[] = {2, -1};
  ExpectEmptyFails(negative, 2, f32, cpu, "ValueError", "negative dimension -1 at axis 1");
  ExpectEmptyFails(negative, -1, f32, cpu, "ValueError", "negative ndim");
  ExpectEmptyFails(nullptr, 2, f32, cpu, "ValueError", "shape is NULL");
  ExpectEmptyFails(negative, 1, DLDataType{kDLFloat, 0, 1}, cpu, "ValueError", "dtype");
  const int64_t huge[] = {INT64_MAX, INT64_MAX};
  ExpectEmptyFails(huge, 2, f32, cpu, "ValueError", "overflow");
  ExpectEmptyFails(negative, 1, f32, DLDevice{kDLVulkan, 0}, "ValueError", "device type 7");
  PFObject* t = nullptr;
  EXPECT_NE(PFTensorEmpty(negative, 1, f32, cpu, nullptr), 0);
  EXPECT_TRUE(StartsWith(TakeError(), "ValueError: "));
  EXPECT_EQ(t, nullptr);
}

TEST(CTensor, EmptyOnCudaWithoutCudaIsAClearRuntimeError) {
  const int64_t shape[] = {4};
  ExpectEmptyFails(shape, 1, DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCUDA, 0}, "RuntimeError",
                   "packedfun was built without CUDA support");
}

TEST(CTensor, EmptyTooLargeIsMemoryError) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer aborts on impossible allocations instead of returning NULL";
#endif
  const int64_t shape[] = {int64_t{1} << 60};
  ExpectEmptyFails(shape, 1, DLDataType{kDLInt, 8, 1}, DLDevice{kDLCPU, 0}, "MemoryError",
                   "cannot allocate");
}

}  // namespace
