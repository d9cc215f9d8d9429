// The calling environment: the caller's stream and allocator, its lock (the GIL) and signals.
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

/*!
 * Releases the caller's lock (Python's GIL) for the life of this scope, whichever language called:
 * other threads of the caller run meanwhile, and threads this code waits for may call back.
 * Nothing to do (and nothing done) when the caller holds no lock: a C caller, or a function whose
 * GIL policy already released it. Touch no object of the caller's language inside the scope.
 *
 *   { packedfun::EnvReleaseCallerLock unlocked; pool.wait(); }
 */
class EnvReleaseCallerLock {
 public:
  EnvReleaseCallerLock() noexcept : token_(PFEnvReleaseCallerLock()) {}
  ~EnvReleaseCallerLock() { PFEnvAcquireCallerLock(token_); }
  EnvReleaseCallerLock(const EnvReleaseCallerLock&) = delete;
  EnvReleaseCallerLock& operator=(const EnvReleaseCallerLock&) = delete;

 private:
  void* token_;
};

/*!
 * Lets the caller notice signals: runs its pending signal handlers, and throws the error one of
 * them raised (KeyboardInterrupt for Ctrl-C in Python) so a long loop stops and the caller sees
 * the exception. Call it every few milliseconds of work; a no-op for a C caller.
 */
inline void EnvCheckSignals() { detail::CheckCallResult(PFEnvCheckSignals()); }

}  // namespace packedfun

#endif  // PACKEDFUN_ENV_H_
