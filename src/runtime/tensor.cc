// Tensor entry points of c_api.h: adopting and exporting DLPack tensors, allocating empty ones.
#include <cstdlib>
#include <cstring>
#include <string>

#include "runtime/error.h"
#include "runtime/object.h"
#include "runtime/tensor.h"

namespace packedfun {
namespace detail {
namespace {

/*! Who owns the memory behind a Tensor and how to give it back. */
enum class Owner : uint8_t {
  kNone = 0,   // not yet adopted: the deleter has nothing to release
  kLegacy,     // `manager` is a DLManagedTensor*
  kVersioned,  // `manager` is a DLManagedTensorVersioned*
  kAligned,    // `manager` is memory from std::aligned_alloc
  kKeeper,     // `manager` is a PFObject* (a PFDLTensorArg's keeper) holding the data alive
};

/*! Shape and strides of tensors up to this rank live inside the object (no second allocation). */
constexpr int32_t kInlineRank = 4;
constexpr size_t kCpuAlignment = 64;

struct TensorImpl {
  PFTensorObject base;
  Owner owner;
  bool read_only;
  void* manager;
  int64_t* heap_dims;  // shape then strides, 2 * ndim entries, when ndim > kInlineRank
  int64_t inline_dims[2 * kInlineRank];
};

void ReleaseProducer(Owner owner, void* manager) noexcept {
  switch (owner) {
    case Owner::kLegacy: {
      auto* m = static_cast<DLManagedTensor*>(manager);
      if (m->deleter != nullptr) m->deleter(m);
      break;
    }
    case Owner::kVersioned: {
      auto* m = static_cast<DLManagedTensorVersioned*>(manager);
      if (m->deleter != nullptr) m->deleter(m);
      break;
    }
    case Owner::kAligned:
      std::free(manager);
      break;
    case Owner::kKeeper:
      DecRef(static_cast<PFObject*>(manager));
      break;
    case Owner::kNone:
      break;
  }
}

void DeleteTensor(PFObject* obj) noexcept;

/*! One dead Tensor's block kept for the next Tensor made on the same thread: a `Tensor`
 *  parameter makes and drops one Tensor per call, and reusing the block skips the allocator on both
 *  sides. Only a Tensor whose count reached 0 comes here, so nothing can still see it; the slot is
 *  the thread's own (no lock: a locked exchange on each side cost about 4 ns per call), and its
 *  block is freed when the thread ends. Trivial (constant-initialized, no destructor), as seq.cc's
 *  SpareSeq and for the same reason: one TLS lookup per use, not two (the second for a guard);
 *  SpareTensorReleaser frees the block at thread exit, registered by the first block kept. */
struct SpareTensor {
  TensorImpl* block;
  bool armed;   // SpareTensorReleaser is registered for this thread
  bool closed;  // the thread is ending: Tensors dying after this are freed
};
thread_local SpareTensor spare_tensor{};

/*! This thread's slot, its address looked up once (opaque to the compiler, as in seq.cc). */
inline SpareTensor* ThisThreadSpareTensor() noexcept {
  SpareTensor* spare = &spare_tensor;
  __asm__("" : "+r"(spare));
  return spare;
}

struct SpareTensorReleaser {
  bool armed = false;
  ~SpareTensorReleaser() {
    if (!armed) return;
    SpareTensor* spare = &spare_tensor;
    delete spare->block;
    spare->block = nullptr;
    spare->closed = true;
  }
};
thread_local SpareTensorReleaser spare_tensor_releaser;

/*! Registers the thread-exit release of the spare block (once per thread). */
__attribute__((noinline, cold)) void ArmSpareTensor(SpareTensor* spare) noexcept {
  spare_tensor_releaser.armed = true;
  spare->armed = true;
}

/*! Frees what `t` (owner already released) holds and keeps or frees its block. */
void FreeTensorImpl(TensorImpl* t) noexcept {
  delete[] t->heap_dims;
  SpareTensor* spare = ThisThreadSpareTensor();
  if (spare->block == nullptr && !spare->closed) {
    if (!spare->armed) ArmSpareTensor(spare);
    spare->block = t;
  } else {
    delete t;
  }
}

/*! A Tensor block with ref_count 1, no owner and no heap dims: the spare one or a new one. */
TensorImpl* TakeTensorImpl() {
  SpareTensor* spare = ThisThreadSpareTensor();
  TensorImpl* t = spare->block;
  if (t == nullptr) return AllocObject<TensorImpl>(kPFTypeTensor, &DeleteTensor);
  spare->block = nullptr;
  InitHeader(Header(t), kPFTypeTensor, &DeleteTensor);
  t->owner = Owner::kNone;
  t->read_only = false;
  t->manager = nullptr;
  t->heap_dims = nullptr;
  return t;
}

void DeleteTensor(PFObject* obj) noexcept {
  auto* t = As<TensorImpl>(obj);
  ReleaseProducer(t->owner, t->manager);
  FreeTensorImpl(t);
}

/*! CheckedNumel's errors, out of line: the happy path keeps a small frame. */
[[noreturn]] __attribute__((noinline, cold)) void ThrowBadShape(const int64_t* shape, int32_t axis,
                                                                const char* fn) {
  if (shape[axis] < 0) {
    Throw("ValueError", std::string(fn) + ": negative dimension " + std::to_string(shape[axis]) +
                            " at axis " + std::to_string(axis));
  }
  Throw("ValueError", std::string(fn) + ": the number of elements overflows");
}

/*! Number of elements; throws ValueError on a negative dimension or overflow. */
uint64_t CheckedNumel(const int64_t* shape, int32_t ndim, const char* fn) {
  uint64_t numel = 1;
  for (int32_t i = 0; i < ndim; ++i) {
    if (shape[i] < 0 || __builtin_mul_overflow(numel, static_cast<uint64_t>(shape[i]), &numel)) {
      ThrowBadShape(shape, i, fn);
    }
  }
  return numel;
}

/*! Whether `type` is one of the device types dlpack.h defines (the gaps 5 and 6 are none). */
bool IsDLPackDeviceType(int32_t type) {
  switch (type) {
    case kDLCPU:
    case kDLCUDA:
    case kDLCUDAHost:
    case kDLOpenCL:
    case kDLVulkan:
    case kDLMetal:
    case kDLVPI:
    case kDLROCM:
    case kDLROCMHost:
    case kDLExtDev:
    case kDLCUDAManaged:
    case kDLOneAPI:
    case kDLWebGPU:
    case kDLHexagon:
    case kDLMAIA:
    case kDLTrn:
      return true;
    default:
      return false;
  }
}

/*! ValidateLayout's checks but the shape's (CheckedNumel), without a word of the error. */
inline bool LayoutFieldsValid(const DLTensor& src) noexcept {
  return src.ndim >= 0 && (src.ndim == 0 || src.shape != nullptr) && src.dtype.bits != 0 &&
         src.dtype.lanes != 0 && IsDLPackDeviceType(static_cast<int32_t>(src.device.device_type)) &&
         src.device.device_id >= 0;
}

/*! The error of a layout LayoutFieldsValid refused, out of line. */
[[noreturn]] __attribute__((noinline, cold)) void ThrowBadLayout(const DLTensor& src,
                                                                 const char* fn) {
  if (src.ndim < 0) {
    Throw("ValueError", std::string(fn) + ": negative ndim " + std::to_string(src.ndim));
  }
  if (src.ndim > 0 && src.shape == nullptr) {
    Throw("ValueError", std::string(fn) + ": shape is NULL for ndim " + std::to_string(src.ndim));
  }
  if (src.dtype.bits == 0 || src.dtype.lanes == 0) {
    Throw("ValueError", std::string(fn) + ": invalid dtype with zero bits or lanes");
  }
  // Only the device types DLPack defines (no value of the enum is skipped silently: a tensor
  // must be describable as a packedfun.device), and ordinals are non-negative.
  Throw("ValueError", std::string(fn) + ": invalid device (" +
                          std::to_string(static_cast<int32_t>(src.device.device_type)) + ", " +
                          std::to_string(src.device.device_id) + ")");
}

/*! Checks ndim, shape and dtype (not data); returns the number of elements. Throws ValueError. */
uint64_t ValidateLayout(const DLTensor& src, const char* fn) {
  if (!LayoutFieldsValid(src)) ThrowBadLayout(src, fn);
  return CheckedNumel(src.shape, src.ndim, fn);
}

/*! Bytes of `numel` compact elements of `dtype`; sub-byte types are packed. */
uint64_t NumBytes(uint64_t numel, DLDataType dtype, const char* fn) {
  uint64_t bits = static_cast<uint64_t>(dtype.bits) * dtype.lanes;
  uint64_t total = 0;
  if (__builtin_mul_overflow(numel, bits, &total) || total > UINT64_MAX - 7) {
    Throw("ValueError", std::string(fn) + ": the tensor's size in bytes overflows");
  }
  return (total + 7) / 8;
}

void ValidateTensor(const DLTensor& src, const char* fn) {
  uint64_t numel = ValidateLayout(src, fn);
  if (numel != 0 && src.data == nullptr) {
    Throw("ValueError", std::string(fn) + ": data is NULL for a tensor of " +
                            std::to_string(numel) + " elements");
  }
}

/*! Compact row-major strides; a zero-size axis counts as 1 so strides stay meaningful. False
 *  when one does not fit in int64: only a tensor with no elements passes the size check with
 *  such axes (a hostile DLPack struct's (0, 2**62, 4)). */
bool FillCompactStrides(const int64_t* shape, int32_t ndim, int64_t* strides) noexcept {
  int64_t stride = 1;
  for (int32_t i = ndim - 1; i >= 0; --i) {
    strides[i] = stride;
    if (i > 0 && __builtin_mul_overflow(stride, shape[i] > 1 ? shape[i] : 1, &stride)) {
      return false;
    }
  }
  return true;
}

/*! A Tensor copying the metadata of `src` (validated) with no owner yet. Throws. */
TensorImpl* NewTensorImpl(const DLTensor& src, const char* fn) {
  ValidateTensor(src, fn);
  TensorImpl* t = TakeTensorImpl();
  int64_t* dims = t->inline_dims;
  if (src.ndim > kInlineRank) {
    dims = t->heap_dims = new (std::nothrow) int64_t[2 * static_cast<size_t>(src.ndim)];
    if (dims == nullptr) {
      FreeTensorImpl(t);
      throw std::bad_alloc();
    }
  }
  DLTensor& dst = t->base.tensor;
  dst = src;
  dst.shape = dims;
  dst.strides = dims + src.ndim;
  // A loop, not memcpy: the usual rank is 1 to 4, where the call costs more than the copy.
  for (int32_t i = 0; i < src.ndim; ++i) dst.shape[i] = src.shape[i];
  if (src.ndim > 0 && src.strides != nullptr) {
    for (int32_t i = 0; i < src.ndim; ++i) dst.strides[i] = src.strides[i];
  } else if (!FillCompactStrides(dst.shape, src.ndim, dst.strides)) {
    FreeTensorImpl(t);
    Throw("ValueError", std::string(fn) + ": the tensor's compact strides overflow int64");
  }
  return t;
}

/*! Adopts a producer's tensor; on any failure the producer is released before returning. */
int Adopt(const DLTensor* src, Owner owner, void* manager, bool read_only, PFObject** out,
          const char* fn) noexcept {
  TensorImpl* t = nullptr;
  try {
    if (out == nullptr) Throw("ValueError", std::string(fn) + ": out is NULL");
    t = NewTensorImpl(*src, fn);
  } catch (...) {
    ReleaseProducer(owner, manager);
    return RaiseCurrentException();
  }
  t->owner = owner;
  t->manager = manager;
  t->read_only = read_only;
  *out = Header(t);
  return 0;
}

__attribute__((noinline, cold)) int RaiseNotATensor(PFObject* obj, const char* fn) {
  if (obj == nullptr) return RaiseError("TypeError", std::string(fn) + ": the tensor is NULL");
  return RaiseError("TypeError", std::string(fn) + ": object of type index " +
                                     std::to_string(obj->type_index) + " is not a Tensor");
}

void DeleteExportedLegacy(DLManagedTensor* self) {
  DecRef(static_cast<PFObject*>(self->manager_ctx));
  delete self;
}

void DeleteExportedVersioned(DLManagedTensorVersioned* self) {
  DecRef(static_cast<PFObject*>(self->manager_ctx));
  delete self;
}

/*! Allocates `nbytes` of CPU memory aligned to kCpuAlignment (NULL for zero bytes). */
void* AllocCpu(uint64_t nbytes) {
  if (nbytes == 0) return nullptr;
  uint64_t rounded = (nbytes + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment;
  if (rounded < nbytes) Throw("MemoryError", "tensor allocation: the size overflows");
  void* data = std::aligned_alloc(kCpuAlignment, rounded);
  if (data == nullptr) {
    Throw("MemoryError", "tensor allocation: cannot allocate " + std::to_string(nbytes) + " bytes");
  }
  return data;
}

void* AllocOnDevice(DLDevice device, uint64_t nbytes) {
  switch (device.device_type) {
    case kDLCPU:
      return AllocCpu(nbytes);
    case kDLCUDA:
    case kDLCUDAHost:
    case kDLCUDAManaged:
      Throw("RuntimeError",
            "tensor allocation: cannot allocate on a CUDA device: packedfun was built "
            "without CUDA support");
    default:
      Throw("ValueError", "tensor allocation: unsupported device type " +
                              std::to_string(static_cast<int>(device.device_type)));
  }
}

}  // namespace

PFObject* TensorFromArg(const PFDLTensorArg& arg) {
  static const char* fn = "tensor argument";
  if (arg.keeper == nullptr) {
    Throw("ValueError", std::string(fn) + ": the promotable tensor argument has no keeper");
  }
  TensorImpl* t = NewTensorImpl(arg.tensor, fn);
  IncRef(arg.keeper);
  t->owner = Owner::kKeeper;
  t->manager = arg.keeper;
  t->read_only = (arg.flags & PACKEDFUN_DLTENSOR_ARG_READ_ONLY) != 0;
  return Header(t);
}

uint64_t TensorNumBytes(const DLTensor& t) {
  return NumBytes(ValidateLayout(t, "TensorNumBytes"), t.dtype, "TensorNumBytes");
}

}  // namespace detail
}  // namespace packedfun

using namespace packedfun::detail;

extern "C" {

PACKEDFUN_API int PFTensorFromDLPack(DLManagedTensor* managed, PFObject** out) {
  if (managed == nullptr) return RaiseError("ValueError", "PFTensorFromDLPack: managed is NULL");
  return Adopt(&managed->dl_tensor, Owner::kLegacy, managed, false, out, "DLPack tensor");
}

PACKEDFUN_API int PFTensorFromDLPackVersioned(DLManagedTensorVersioned* managed, PFObject** out) {
  static const char* fn = "PFTensorFromDLPackVersioned";
  if (managed == nullptr) return RaiseError("ValueError", std::string(fn) + ": managed is NULL");
  if (managed->version.major != 1) {
    // Only the fields up to `flags` are stable across majors; the deleter is one of them.
    std::string version =
        std::to_string(managed->version.major) + "." + std::to_string(managed->version.minor);
    if (managed->deleter != nullptr) managed->deleter(managed);
    return RaiseError("BufferError", "DLPack tensor: unsupported DLPack version " + version +
                                         " (this runtime reads 1.x)");
  }
  bool read_only = (managed->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
  return Adopt(&managed->dl_tensor, Owner::kVersioned, managed, read_only, out, "DLPack tensor");
}

PACKEDFUN_API int PFTensorToDLPack(PFObject* tensor, DLManagedTensor** out) {
  if (!IsTensor(tensor)) return RaiseNotATensor(tensor, "PFTensorToDLPack");
  if (out == nullptr) return RaiseError("ValueError", "PFTensorToDLPack: out is NULL");
  return Guard([&] {
    auto* m = new DLManagedTensor();
    m->dl_tensor = As<PFTensorObject>(tensor)->tensor;
    m->manager_ctx = tensor;
    m->deleter = &DeleteExportedLegacy;
    IncRef(tensor);
    *out = m;
    return 0;
  });
}

PACKEDFUN_API int PFTensorToDLPackVersioned(PFObject* tensor, DLManagedTensorVersioned** out) {
  if (!IsTensor(tensor)) return RaiseNotATensor(tensor, "PFTensorToDLPackVersioned");
  if (out == nullptr) return RaiseError("ValueError", "PFTensorToDLPackVersioned: out is NULL");
  return Guard([&] {
    auto* m = new DLManagedTensorVersioned();
    m->version.major = DLPACK_MAJOR_VERSION;
    m->version.minor = DLPACK_MINOR_VERSION;
    m->manager_ctx = tensor;
    m->deleter = &DeleteExportedVersioned;
    m->flags = As<TensorImpl>(tensor)->read_only ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
    m->dl_tensor = As<PFTensorObject>(tensor)->tensor;
    IncRef(tensor);
    *out = m;
    return 0;
  });
}

PACKEDFUN_API int PFTensorEmpty(const int64_t* shape, int32_t ndim, DLDataType dtype,
                                DLDevice device, PFObject** out) {
  if (out == nullptr) return RaiseError("ValueError", "PFTensorEmpty: out is NULL");
  return Guard([&] {
    // Validation failures name what the user asked for, not this entry point.
    const char* what = "tensor allocation";
    DLTensor src{nullptr, device, ndim, dtype, const_cast<int64_t*>(shape), nullptr, 0};
    uint64_t nbytes = NumBytes(ValidateLayout(src, what), dtype, what);
    src.data = AllocOnDevice(device, nbytes);
    TensorImpl* t = nullptr;
    try {
      t = NewTensorImpl(src, what);
    } catch (...) {
      std::free(src.data);
      throw;
    }
    t->owner = Owner::kAligned;
    t->manager = src.data;
    *out = Header(t);
    return 0;
  });
}

PACKEDFUN_API int PFTensorIsReadOnly(PFObject* tensor, int* out) {
  if (!IsTensor(tensor)) return RaiseNotATensor(tensor, "PFTensorIsReadOnly");
  if (out == nullptr) return RaiseError("ValueError", "PFTensorIsReadOnly: out is NULL");
  *out = As<TensorImpl>(tensor)->read_only ? 1 : 0;
  return 0;
}

}  // extern "C"
