// Tests of the C++ Tensor, TensorView, data type and device helpers, and typed tensor functions.
#include <gtest/gtest.h>
#include "catch_error.h"
#include <packedfun/packedfun.h>

#include <string>
#include <thread>
#include <vector>

namespace {

using packedfun::Any;
using packedfun::AnyView;
using packedfun::Error;
using packedfun::Function;
using packedfun::Tensor;
using packedfun::TensorView;

TEST(DataType, ParsePrintAndCompare) {
  EXPECT_EQ(packedfun::DataTypeFromString("float32"), packedfun::kFloat32);
  EXPECT_EQ(packedfun::DataTypeFromString("bfloat16"), packedfun::kBFloat16);
  EXPECT_EQ(packedfun::DataTypeFromString("bool"), packedfun::kBool);
  DLDataType vec = packedfun::DataTypeFromString("float32x4");
  EXPECT_EQ(vec.lanes, 4);
  EXPECT_NE(vec, packedfun::kFloat32);
  EXPECT_EQ(packedfun::DataTypeToString(packedfun::kInt8), "int8");
  EXPECT_EQ(packedfun::DataTypeToString(vec), "float32x4");
  EXPECT_EQ(packedfun::DataTypeToString(packedfun::kComplex128), "complex128");
  EXPECT_EQ(packedfun::DataTypeBytes(packedfun::kFloat64), 8);
  EXPECT_EQ(packedfun::DataTypeBytes(vec), 16);
  Error e = Catch([] { packedfun::DataTypeFromString("floaty"); });
  EXPECT_EQ(e.kind(), "ValueError");
  EXPECT_NE(e.message().find("floaty"), std::string::npos);
}

TEST(Device, ParsePrintAndCompare) {
  EXPECT_EQ(packedfun::DeviceFromString("cpu"), packedfun::CPUDevice());
  EXPECT_EQ(packedfun::DeviceFromString("cuda:1"), packedfun::CUDADevice(1));
  EXPECT_NE(packedfun::CUDADevice(0), packedfun::CUDADevice(1));
  EXPECT_EQ(packedfun::DeviceToString(packedfun::CUDADevice(2)), "cuda:2");
  EXPECT_EQ(packedfun::DeviceToString(packedfun::CPUDevice()), "cpu:0");
  EXPECT_EQ(Catch([] { packedfun::DeviceFromString("gpu:x"); }).kind(), "ValueError");
  EXPECT_EQ(Catch([] { packedfun::DeviceFromString("cuda:"); }).kind(), "ValueError");
}

TEST(Tensor, EmptyIsAlignedContiguousAndReadable) {
  Tensor t = Tensor::Empty({2, 3}, packedfun::kFloat32);
  EXPECT_EQ(t.type_index(), kPFTypeTensor);
  EXPECT_EQ(t->ndim, 2);
  EXPECT_EQ(t->dtype, packedfun::kFloat32);
  EXPECT_EQ(t->shape[0], 2);
  EXPECT_EQ(t->shape[1], 3);
  EXPECT_EQ(t->strides[0], 3);
  EXPECT_EQ(t->strides[1], 1);
  EXPECT_EQ(t->device, packedfun::CPUDevice());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data) % 64, 0u);
  EXPECT_EQ(t.numel(), 6);
  EXPECT_TRUE(t.IsContiguous());
  EXPECT_FALSE(t.IsReadOnly());
  float* data = t.data_ptr<float>();
  for (int i = 0; i < 6; ++i) data[i] = static_cast<float>(i);
  TensorView v = t;
  EXPECT_EQ(v->data, t->data);
  EXPECT_EQ(v.data_ptr<float>()[5], 5.0f);
}

TEST(Tensor, EmptyErrors) {
  EXPECT_EQ(Catch([] { Tensor::Empty({-1}, packedfun::kFloat32); }).kind(), "ValueError");
  Error cuda = Catch([] { Tensor::Empty({4}, packedfun::kFloat32, packedfun::CUDADevice()); });
  EXPECT_NE(cuda.message().find("CUDA"), std::string::npos);
}

TEST(Tensor, ZeroDimAndZeroSize) {
  Tensor scalar = Tensor::Empty(std::vector<int64_t>{}, packedfun::kInt64);
  EXPECT_EQ(scalar->ndim, 0);
  EXPECT_EQ(scalar.numel(), 1);
  Tensor empty = Tensor::Empty({0, 5}, packedfun::kFloat32);
  EXPECT_EQ(empty.numel(), 0);
  EXPECT_EQ(empty->data, nullptr);
}

TEST(Tensor, DLPackRoundTripKeepsTheTensorAlive) {
  Tensor t = Tensor::Empty({4}, packedfun::kInt32);
  EXPECT_EQ(t.use_count(), 1u);
  DLManagedTensorVersioned* exported = t.ToDLPackVersioned();
  EXPECT_EQ(t.use_count(), 2u);
  Tensor back = Tensor::FromDLPackVersioned(exported);
  EXPECT_EQ(back->data, t->data);
  EXPECT_FALSE(back.same_as(t));
  back = Tensor();
  EXPECT_EQ(t.use_count(), 1u);
  DLManagedTensor* legacy = t.ToDLPack();
  EXPECT_EQ(t.use_count(), 2u);
  legacy->deleter(legacy);
  EXPECT_EQ(t.use_count(), 1u);
}

struct Producer {
  static int deletes;
  static void Delete(DLManagedTensorVersioned* self) {
    ++deletes;
    delete self;
  }
};
int Producer::deletes = 0;

TEST(Tensor, ReadOnlyFlagAndDeleterOnce) {
  static float storage[3] = {1, 2, 3};
  static int64_t shape[1] = {3};
  auto* m = new DLManagedTensorVersioned();
  m->version = {1, 0};
  m->flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  m->deleter = &Producer::Delete;
  m->dl_tensor = DLTensor{storage, {kDLCPU, 0}, 1, packedfun::kFloat32, shape, nullptr, 0};
  Producer::deletes = 0;
  {
    Tensor t = Tensor::FromDLPackVersioned(m);
    EXPECT_TRUE(t.IsReadOnly());
    EXPECT_EQ(t->strides[0], 1);  // computed: the producer gave none
    EXPECT_EQ(Producer::deletes, 0);
  }
  EXPECT_EQ(Producer::deletes, 1);
}

float SumFirst(TensorView x) {
  PACKEDFUN_CHECK(x->ndim == 1) << "x must be 1-d";
  PACKEDFUN_CHECK(x->dtype == packedfun::kFloat32) << "x must be float32";
  return x.data_ptr<float>()[0] + x.data_ptr<float>()[x->shape[0] - 1];
}

TEST(Tensor, TypedFunctionsTakeViewsAndTensors) {
  Function f = Function::FromTyped(SumFirst, "test.sum_first");
  Tensor t = Tensor::Empty({3}, packedfun::kFloat32);
  t.data_ptr<float>()[0] = 1.5f;
  t.data_ptr<float>()[2] = 2.0f;
  EXPECT_EQ(f(t).cast<double>(), 3.5);
  DLTensor raw = *t;
  EXPECT_EQ(f(&raw).cast<double>(), 3.5);      // a borrowed DLTensor*
  EXPECT_EQ(f(t.view()).cast<double>(), 3.5);  // a TensorView passes as the object
  Error wrong = Catch([&] { f(1); });
  EXPECT_EQ(wrong.kind(), "TypeError");
  EXPECT_NE(wrong.message().find("test.sum_first: argument 0: expected Tensor, got int"),
            std::string::npos);
  Tensor ints = Tensor::Empty({3}, packedfun::kInt32);
  Error dtype = Catch([&] { f(ints); });
  EXPECT_NE(dtype.message().find("x must be float32"), std::string::npos);
}

/*! A promotable argument over `owner`'s data, kept alive by `owner` itself as the keeper. */
PFAny PromotableArg(const Tensor& owner, PFDLTensorArg* arg, uint32_t flags) {
  *arg = PFDLTensorArg{*owner, owner.get(), flags, 0};
  PFAny v{};
  v.type_index = kPFTypeDLTensorPtr;
  v.zero_padding = PACKEDFUN_DLTENSOR_ARG_TAG;
  v.v_ptr = &arg->tensor;
  return v;
}

TEST(Tensor, PromotableArgumentsOwnTheirKeeper) {
  Tensor owner = Tensor::Empty({4}, packedfun::kFloat32);
  PFDLTensorArg arg;
  PFAny view = PromotableArg(owner, &arg, PACKEDFUN_DLTENSOR_ARG_READ_ONLY);
  uint64_t base = owner.use_count();
  Function keep = Function::FromTyped([](Tensor x) { return x; }, "test.keep");
  Function from_view =
      Function::FromTyped([](TensorView x) { return Tensor::FromView(x); }, "test.from_view");
  Function readonly =
      Function::FromTyped([](TensorView x) { return x.IsReadOnly(); }, "test.readonly");
  Function pass_on =
      Function::FromTyped([&keep](TensorView x) { return keep(x).cast<Tensor>(); }, "test.pass_on");
  std::vector<Tensor> kept;
  for (const Function& f : {keep, from_view, pass_on}) {
    kept.push_back(f(AnyView::FromPFAny(view)).cast<Tensor>());
    EXPECT_FALSE(kept.back().same_as(owner));
    EXPECT_EQ(kept.back()->data, owner->data);  // shares the memory
    EXPECT_EQ(kept.back()->shape[0], 4);
    EXPECT_TRUE(kept.back().IsReadOnly());  // the flag is kept
  }
  EXPECT_EQ(owner.use_count(), base + 3);  // each holds the keeper
  EXPECT_TRUE(readonly(AnyView::FromPFAny(view)).cast<bool>());
  Any any(AnyView::FromPFAny(view));
  EXPECT_EQ(owner.use_count(), base + 4);
  kept.clear();
  any = Any();
  EXPECT_EQ(owner.use_count(), base);
  arg.keeper = nullptr;  // a malformed argument is an error, not a crash
  EXPECT_EQ(Catch([&] { keep(AnyView::FromPFAny(view)); }).kind(), "ValueError");
  view.zero_padding = 0;  // a plain DLTensor*: a Tensor borrowing the data, no keeper
  EXPECT_FALSE(readonly(AnyView::FromPFAny(view)).cast<bool>());
  EXPECT_EQ(keep(AnyView::FromPFAny(view)).cast<Tensor>()->data, owner->data);
  EXPECT_EQ(owner.use_count(), base);
}

TEST(Tensor, ADeadTensorsBlockIsReusedWithNothingOfItsPast) {
  // The runtime keeps one dead Tensor's block for the next Tensor made: nothing of the dead one
  // (read-only flag, owner, rank > 4 dims on the heap, strides) may show through, and a Tensor
  // still alive is never handed out again.
  Tensor owner = Tensor::Empty({2, 3}, packedfun::kFloat32);
  Function keep = Function::FromTyped([](Tensor x) { return x; }, "test.keep");
  Function strides = Function::FromTyped(
      [](Tensor x) { return x->strides[0] * 10 + x->strides[1]; }, "test.strides");
  static float six[720] = {};
  int64_t big_shape[6] = {1, 2, 3, 4, 5, 6};
  auto* m = new DLManagedTensorVersioned();
  m->version = {1, 0};
  m->flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  m->deleter = &Producer::Delete;
  m->dl_tensor = DLTensor{six, {kDLCPU, 0}, 6, packedfun::kFloat32, big_shape, nullptr, 0};
  Producer::deletes = 0;
  {
    Tensor big = Tensor::FromDLPackVersioned(m);  // read-only, rank 6: heap dims
    EXPECT_TRUE(big.IsReadOnly());
  }
  EXPECT_EQ(Producer::deletes, 1);  // released when it died, not when the block is reused
  Tensor empty = Tensor::Empty({2, 3}, packedfun::kFloat32);  // takes the dead one's block
  EXPECT_FALSE(empty.IsReadOnly());
  EXPECT_EQ(empty->strides[0], 3);
  empty = Tensor();
  for (int round = 0; round < 3; ++round) {
    PFDLTensorArg arg;
    PFAny view = PromotableArg(owner, &arg, 0);
    uint64_t base = owner.use_count();
    Tensor kept = keep(AnyView::FromPFAny(view)).cast<Tensor>();
    EXPECT_FALSE(kept.IsReadOnly());
    EXPECT_EQ(kept->ndim, 2);
    EXPECT_EQ(kept->shape[0], 2);
    EXPECT_EQ(kept->shape[1], 3);
    EXPECT_EQ(kept->strides[0], 3);
    EXPECT_EQ(kept->strides[1], 1);
    EXPECT_EQ(kept->data, owner->data);
    EXPECT_EQ(owner.use_count(), base + 1);  // owns the keeper, as a fresh Tensor does
    // Made while `kept` lives: another block, and `kept` stays as it was.
    EXPECT_EQ(strides(AnyView::FromPFAny(view)).cast<int64_t>(), 31);
    Tensor other = keep(AnyView::FromPFAny(view)).cast<Tensor>();
    EXPECT_FALSE(other.same_as(kept));
    EXPECT_EQ(kept->shape[1], 3);
    EXPECT_EQ(kept.use_count(), 1u);
  }
}

TEST(Tensor, TensorsAndArraysMadeOnOneThreadDieOnAnother) {
  // Each thread keeps its own spare block: a Tensor or Array made on one thread and dropped on
  // another goes to that thread's slot (or is freed), and a thread's spare is freed when it ends
  // (the sanitized run checks the leak).
  Tensor owner = Tensor::Empty({8}, packedfun::kFloat32);
  Function keep = Function::FromTyped([](Tensor x) { return x; }, "test.keep");
  std::vector<Tensor> handed;
  std::vector<packedfun::Array<int64_t>> arrays;
  for (int round = 0; round < 4; ++round) {
    std::thread worker([&] {
      for (int i = 0; i < 3; ++i) {
        PFDLTensorArg arg;
        PFAny view = PromotableArg(owner, &arg, 0);
        Tensor t = keep(AnyView::FromPFAny(view)).cast<Tensor>();
        if (i == 0) handed.push_back(t);  // dies on the main thread
        arrays.push_back(packedfun::Array<int64_t>({round, i}));
      }
      handed.erase(handed.begin(), handed.begin() + (handed.size() > 2 ? 1 : 0));
    });
    worker.join();
    for (const Tensor& t : handed) EXPECT_EQ(t->data, owner->data);
    arrays.resize(1);
  }
  EXPECT_EQ(arrays[0][0], 0);
  EXPECT_EQ(arrays[0][1], 0);
  handed.clear();
  EXPECT_EQ(owner.use_count(), 1u);
}

TEST(Tensor, ObjectsDyingAsTheirThreadEndsAreFreed) {
  // The thread_local below is made before the runtime keeps a spare block on this thread, so its
  // destructor runs after the runtime's thread-exit release: the Array and Tensor it drops then
  // must be freed, not kept in a slot nobody frees (the sanitized run checks the leak).
  std::thread worker([] {
    static thread_local std::vector<packedfun::ObjectRef> late;
    late.push_back(packedfun::Array<int64_t>({1, 2}));
    late.push_back(Tensor::Empty({4}, packedfun::kFloat32));
    packedfun::Array<int64_t> spare_array({3});  // made and dropped: fills this thread's slots
    Tensor spare_tensor = Tensor::Empty({2}, packedfun::kFloat32);
    EXPECT_EQ(spare_array[0], 3);
    EXPECT_EQ(spare_tensor->shape[0], 2);
  });
  worker.join();
}

TEST(Tensor, ReturnedAndReceivedAsTensor) {
  Function make = Function::FromTyped(
      [](int64_t n, DLDataType dtype) { return Tensor::Empty({n}, dtype); }, "test.make");
  Any made = make(5, packedfun::kInt16);
  Tensor t = made.cast<Tensor>();
  EXPECT_EQ(t->shape[0], 5);
  EXPECT_EQ(t->dtype, packedfun::kInt16);
  Function keep = Function::FromTyped([](Tensor x) { return x; }, "test.keep");
  DLTensor raw = *t;
  Tensor kept = keep(&raw).cast<Tensor>();  // a new Tensor over the borrowed data
  EXPECT_EQ(kept->data, t->data);
  EXPECT_FALSE(kept.same_as(t));
  EXPECT_TRUE(keep(t).cast<Tensor>().same_as(t));
  EXPECT_EQ(Catch([&] { keep("x"); }).kind(), "TypeError");
  Function dev = Function::FromTyped([](DLDevice d) { return d.device_id; }, "test.dev");
  EXPECT_EQ(dev(packedfun::CUDADevice(3)).cast<int64_t>(), 3);
}

}  // namespace
