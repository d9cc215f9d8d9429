// The calling environment (ABI 1.3): per-thread GPU stream slots and the caller's tensor allocator.
#include <packedfun/c_api.h>

#include <string>
#include <vector>

#include "internal/env.h"
#include "internal/error.h"

namespace packedfun {
namespace detail {
namespace {

/*! The calling thread's stream slots: few devices per thread, so a short vector scanned in order
 *  beats any map. A slot set back to NULL stays (a later set reuses it). */
thread_local std::vector<EnvStreamSlot> tls_streams;
thread_local PFEnvTensorAllocator tls_allocator = nullptr;

/*! Collects the allocator's error (its set_error callback). */
struct AllocError {
  std::string kind = "RuntimeError";
  std::string message = "the tensor allocator failed without an error";
};

void SetAllocError(void* ctx, const char* kind, const char* message) {
  AllocError* e = static_cast<AllocError*>(ctx);
  e->kind = kind != nullptr ? kind : "RuntimeError";
  e->message = message != nullptr ? message : "";
}

}  // namespace

const EnvStreamSlot* EnvSnapshot(size_t* count, PFEnvTensorAllocator* allocator) noexcept {
  *allocator = tls_allocator;
  *count = tls_streams.size();
  return tls_streams.data();
}

}  // namespace detail
}  // namespace packedfun

using namespace packedfun::detail;

extern "C" {

PACKEDFUN_API int PFEnvSetStream(int32_t device_type, int32_t device_id, void* stream,
                                 void** out_prev) {
  if (device_type < 0 || device_id < 0) {
    return RaiseError("ValueError", "PFEnvSetStream: device_type " + std::to_string(device_type) +
                                        " / device_id " + std::to_string(device_id) +
                                        " must not be negative");
  }
  return Guard([&] {
    for (EnvStreamSlot& slot : tls_streams) {
      if (slot.device_type == device_type && slot.device_id == device_id) {
        if (out_prev != nullptr) *out_prev = slot.stream;
        slot.stream = stream;
        return 0;
      }
    }
    if (out_prev != nullptr) *out_prev = nullptr;
    tls_streams.push_back(EnvStreamSlot{device_type, device_id, stream});
    return 0;
  });
}

PACKEDFUN_API void* PFEnvGetStream(int32_t device_type, int32_t device_id) {
  for (const EnvStreamSlot& slot : tls_streams) {
    if (slot.device_type == device_type && slot.device_id == device_id) return slot.stream;
  }
  return nullptr;
}

PACKEDFUN_API int PFEnvSetTensorAllocator(PFEnvTensorAllocator allocator,
                                          PFEnvTensorAllocator* out_prev) {
  if (out_prev != nullptr) *out_prev = tls_allocator;
  tls_allocator = allocator;
  return 0;
}

PACKEDFUN_API int PFEnvTensorAlloc(const int64_t* shape, int32_t ndim, DLDataType dtype,
                                   DLDevice device, PFObject** out) {
  PFEnvTensorAllocator allocator = tls_allocator;
  if (allocator == nullptr) return PFTensorEmpty(shape, ndim, dtype, device, out);
  if (out == nullptr || ndim < 0 || (ndim > 0 && shape == nullptr)) {
    return RaiseError("ValueError", "PFEnvTensorAlloc: bad shape or NULL out");
  }
  for (int32_t i = 0; i < ndim; ++i) {
    if (shape[i] < 0) {
      return RaiseError("ValueError", "PFEnvTensorAlloc: dimension " + std::to_string(i) +
                                          " is negative (" + std::to_string(shape[i]) + ")");
    }
  }
  DLTensor prototype{};
  prototype.device = device;
  prototype.ndim = ndim;
  prototype.dtype = dtype;
  prototype.shape = const_cast<int64_t*>(shape);
  DLManagedTensorVersioned* managed = nullptr;
  AllocError error;
  if (allocator(&prototype, &managed, &error, &SetAllocError) != 0 || managed == nullptr) {
    return RaiseError(error.kind, error.message);
  }
  return PFTensorFromDLPackVersioned(managed, out);
}

}  // extern "C"
