// The calling environment: the stream a kernel should launch on, set by whoever called it.
#ifndef PACKEDFUN_ENV_H_
#define PACKEDFUN_ENV_H_

#include <packedfun/c_api.h>
#include <packedfun/error.h>

namespace packedfun {

/*!
 * The stream the caller uses on `device` (a cudaStream_t for CUDA), or nullptr for the default
 * stream. Python callers set it with `packedfun.use_stream(device, stream)`, and automatically to
 * torch's current stream when a CUDA torch.Tensor is passed. Launch on it:
 *
 *   auto stream = static_cast<cudaStream_t>(packedfun::EnvGetStream(x->device));
 *   kernel<<<blocks, threads, 0, stream>>>(...);
 */
inline void* EnvGetStream(DLDevice device) noexcept {
  return PFEnvGetStream(static_cast<int32_t>(device.device_type), device.device_id);
}

/*! Sets the calling thread's stream for `device` for the life of this scope (C++ callers). */
class EnvStreamScope {
 public:
  EnvStreamScope(DLDevice device, void* stream) : device_(device) {
    detail::CheckCallResult(PFEnvSetStream(static_cast<int32_t>(device.device_type),
                                           device.device_id, stream, &previous_));
  }
  ~EnvStreamScope() {
    PFEnvSetStream(static_cast<int32_t>(device_.device_type), device_.device_id, previous_,
                   nullptr);
  }
  EnvStreamScope(const EnvStreamScope&) = delete;
  EnvStreamScope& operator=(const EnvStreamScope&) = delete;

 private:
  DLDevice device_;
  void* previous_ = nullptr;
};

/*! Sets the calling thread's tensor allocator (Tensor::FromEnvAlloc) for the life of this scope. */
class EnvAllocatorScope {
 public:
  explicit EnvAllocatorScope(PFEnvTensorAllocator allocator) {
    PFEnvSetTensorAllocator(allocator, &previous_);
  }
  ~EnvAllocatorScope() { PFEnvSetTensorAllocator(previous_, nullptr); }
  EnvAllocatorScope(const EnvAllocatorScope&) = delete;
  EnvAllocatorScope& operator=(const EnvAllocatorScope&) = delete;

 private:
  PFEnvTensorAllocator previous_ = nullptr;
};

}  // namespace packedfun

#endif  // PACKEDFUN_ENV_H_
