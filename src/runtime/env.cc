// The calling environment: per-thread GPU stream slots, the caller's tensor allocator,
// the caller's lock and signal hooks.
#include <packedfun/c_api.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "runtime/env.h"
#include "runtime/error.h"

namespace packedfun {
namespace detail {
namespace {

/*! What readers of the environment need, as plain data: one thread-local lookup with no
 *  initialization guard, which is all a call that mirrors the environment pays when nothing is
 *  set. */
struct EnvState {
  PFEnvTensorAllocator allocator;
  const EnvStreamSlot* slots;  // the storage of tls_streams
  size_t count;
};
thread_local EnvState tls_env = {nullptr, nullptr, 0};

std::atomic<const ForeignEnv*> g_foreign_env{nullptr};

/*! The calling thread's stream slots: few devices per thread, so a short vector scanned in order
 *  beats any map. A slot set back to NULL stays (a later set reuses it). Only PFEnvSetStream
 *  changes it; readers go through tls_env, which is emptied when the thread's slots are freed. */
struct StreamSlots {
  std::vector<EnvStreamSlot> slots;
  ~StreamSlots() {
    tls_env.slots = nullptr;
    tls_env.count = 0;
  }
};
thread_local StreamSlots tls_streams;

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

/*! The binding's lock hooks: set once at its import, read on every release/acquire/check, so
 *  plain atomic pointers (a binding installs them before any code can use them). */
struct LockHooks {
  std::atomic<int (*)(void)> held{nullptr};
  std::atomic<void* (*)(void)> release{nullptr};
  std::atomic<void (*)(void*)> acquire{nullptr};
  std::atomic<void (*)(void)> check_signals{nullptr};
  std::atomic<int (*)(void)> gone{nullptr};
  std::atomic<void* (*)(void)> thread_state{nullptr};  // PFEnvSetGuardedCall
  std::atomic<PFSafeCall> guarded_call{nullptr};
};
LockHooks lock_hooks;  // constant-initialised: no static destructor runs at exit

/*! Threads admitted into the binding's code without holding its lock (BindingEntry), and whether
 *  the language is closing (PFEnvCloseLock). Only threads without the lock touch the counter: they
 *  are about to wait for the lock anyway, so one shared atomic costs nothing that matters. */
struct Gate {
  std::atomic<int64_t> inflight{0};
  std::atomic<int> closing{0};
};
Gate gate;  // constant-initialised

/*! Whether the calling thread holds the binding's lock. A thread with no state of its own in the
 *  language cannot hold it, whatever held() says: CPython's PyGILState_Check answers "held" when it
 *  cannot tell (after finalization deleted its thread-state key), which the ctypes binding, with
 *  no C code of its own, cannot correct. */
bool CallerHoldsLock() noexcept {
  auto held = lock_hooks.held.load(std::memory_order_acquire);
  if (held == nullptr || !held()) return false;
  auto thread_state = lock_hooks.thread_state.load(std::memory_order_acquire);
  return thread_state == nullptr || thread_state() != nullptr;
}

/*! A guarded callable called once its language is shutting down, or before any binding set one. */
__attribute__((noinline, cold)) int RaiseGuardedCallRefused(bool unset) {
  return RaiseError("RuntimeError",
                    unset ? "PFEnvGuardedCall: no binding set a guarded call (PFEnvSetGuardedCall)"
                          : "packedfun: a callback into the calling language was called while "
                            "that language is shutting down");
}

}  // namespace

void SetForeignEnv(const ForeignEnv* env) noexcept {
  g_foreign_env.store(env, std::memory_order_release);
}

const EnvStreamSlot* EnvSnapshot(size_t* count, PFEnvTensorAllocator* allocator) noexcept {
  const EnvState& env = tls_env;
  *allocator = env.allocator;
  *count = env.count;
  return env.slots;
}

BindingEntry::BindingEntry() noexcept {
  auto gone = lock_hooks.gone.load(std::memory_order_acquire);
  if (gone == nullptr || CallerHoldsLock()) return;  // no binding's lock, or this thread holds it
  // Counted before the check: PFEnvCloseLock sets `closing` before it reads the count, so either
  // it sees this thread or this thread sees `closing`.
  gate.inflight.fetch_add(1, std::memory_order_seq_cst);
  counted_ = true;
  if (gone()) {
    admitted_ = false;
  } else if (gate.closing.load(std::memory_order_seq_cst) != 0) {
    // Closing: threads the language never saw stay out. Its own threads (a daemon Python thread
    // that released the GIL for a call) still enter until it is gone, as under a binding that
    // never closes: CPython ends them quietly when they take the GIL, where a refusal would print
    // a traceback per thread at every exit.
    auto thread_state = lock_hooks.thread_state.load(std::memory_order_acquire);
    admitted_ = thread_state != nullptr && thread_state() != nullptr;
  }
}

BindingEntry::~BindingEntry() {
  if (counted_) gate.inflight.fetch_sub(1, std::memory_order_seq_cst);
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
    std::vector<EnvStreamSlot>& slots = tls_streams.slots;
    for (EnvStreamSlot& slot : slots) {
      if (slot.device_type == device_type && slot.device_id == device_id) {
        if (out_prev != nullptr) *out_prev = slot.stream;
        slot.stream = stream;
        return 0;
      }
    }
    if (out_prev != nullptr) *out_prev = nullptr;
    slots.push_back(EnvStreamSlot{device_type, device_id, stream});
    tls_env.slots = slots.data();
    tls_env.count = slots.size();
    return 0;
  });
}

PACKEDFUN_API void* PFEnvGetStream(int32_t device_type, int32_t device_id) {
  const EnvState& env = tls_env;
  for (size_t i = 0; i < env.count; ++i) {
    const EnvStreamSlot& slot = env.slots[i];
    if (slot.device_type == device_type && slot.device_id == device_id) return slot.stream;
  }
  const ForeignEnv* foreign = g_foreign_env.load(std::memory_order_acquire);
  return foreign != nullptr ? foreign->get_stream(device_type, device_id) : nullptr;
}

PACKEDFUN_API int PFEnvSetTensorAllocator(PFEnvTensorAllocator allocator,
                                          PFEnvTensorAllocator* out_prev) {
  EnvState* env = &tls_env;
  __asm__("" : "+r"(env));  // one TLS lookup: else the store looks the address up again
  if (out_prev != nullptr) *out_prev = env->allocator;
  env->allocator = allocator;
  return 0;
}

PACKEDFUN_API int PFEnvTensorAlloc(const int64_t* shape, int32_t ndim, DLDataType dtype,
                                   DLDevice device, PFObject** out) {
  PFEnvTensorAllocator allocator = tls_env.allocator;
  if (allocator == nullptr) {
    const ForeignEnv* foreign = g_foreign_env.load(std::memory_order_acquire);
    if (foreign != nullptr) allocator = foreign->get_allocator();
  }
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

PACKEDFUN_API int PFEnvSetLockHooks(int (*held)(void), void* (*release)(void),
                                    void (*acquire)(void* token), void (*check_signals)(void),
                                    int (*gone)(void)) {
  lock_hooks.held.store(held, std::memory_order_release);
  lock_hooks.release.store(release, std::memory_order_release);
  lock_hooks.acquire.store(acquire, std::memory_order_release);
  lock_hooks.check_signals.store(check_signals, std::memory_order_release);
  lock_hooks.gone.store(gone, std::memory_order_release);
  gate.closing.store(0, std::memory_order_seq_cst);  // a binding (re)starting: open again
  return 0;
}

PACKEDFUN_API void* PFEnvReleaseCallerLock(void) {
  auto release = lock_hooks.release.load(std::memory_order_acquire);
  if (release == nullptr || !CallerHoldsLock()) return nullptr;
  return release();
}

PACKEDFUN_API void PFEnvAcquireCallerLock(void* token) {
  auto acquire = lock_hooks.acquire.load(std::memory_order_acquire);
  if (token != nullptr && acquire != nullptr) acquire(token);
}

PACKEDFUN_API int PFEnvCheckSignals(void) {
  auto check = lock_hooks.check_signals.load(std::memory_order_acquire);
  if (check == nullptr) return 0;
  BindingEntry entry;  // the hook may be the binding's code (ctypes)
  if (!entry.admitted()) return 0;
  // The hook reports by raising: a binding may not be able to return a value from every path
  // (ctypes loses a callback's result when the exception comes as the callback is entered).
  PFObject* before = PeekRaised();
  check();
  PFObject* after = PeekRaised();
  return after != nullptr && after != before ? -1 : 0;
}

PACKEDFUN_API int PFEnvSetGuardedCall(void* (*thread_state)(void), PFSafeCall call) {
  lock_hooks.thread_state.store(thread_state, std::memory_order_release);
  lock_hooks.guarded_call.store(call, std::memory_order_release);
  return 0;
}

PACKEDFUN_API int PFEnvGuardedCall(void* self, const PFAny* args, int32_t num_args, PFAny* result) {
  PFSafeCall call = lock_hooks.guarded_call.load(std::memory_order_acquire);
  if (__builtin_expect(call == nullptr, 0)) return RaiseGuardedCallRefused(true);
  BindingEntry entry;
  if (__builtin_expect(!entry.admitted(), 0)) return RaiseGuardedCallRefused(false);
  return call(self, args, num_args, result);
}

PACKEDFUN_API int PFEnvCloseLock(int32_t timeout_ms) {
  gate.closing.store(1, std::memory_order_seq_cst);
  void* token = PFEnvReleaseCallerLock();  // admitted threads may need the lock to finish
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (gate.inflight.load(std::memory_order_seq_cst) > 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  PFEnvAcquireCallerLock(token);
  return gate.inflight.load(std::memory_order_seq_cst) > 0 ? 1 : 0;
}

}  // extern "C"
