// C++ tests of the calling environment: stream slots, the caller's allocator, lock and signal
// hooks.
#include <gtest/gtest.h>
#include <packedfun/packedfun.h>

#include <atomic>
#include <cstdlib>
#include <thread>

#include "catch_error.h"

namespace pf = packedfun;

namespace {

DLDevice Cuda(int32_t id) { return DLDevice{kDLCUDA, id}; }

std::atomic<int64_t> g_allocs{0}, g_frees{0};

void CountingDeleter(DLManagedTensorVersioned* m) {
  std::free(m->dl_tensor.data);
  delete[] m->dl_tensor.shape;
  delete m;
  ++g_frees;
}

/*! A test allocator counting allocations and frees (malloc underneath). */
int CountingAllocator(DLTensor* proto, DLManagedTensorVersioned** out, void* ctx,
                      void (*set_error)(void*, const char*, const char*)) {
  if (proto->ndim == 1 && proto->shape[0] == 13) {
    set_error(ctx, "MemoryError", "counting allocator: 13 is unlucky");
    return -1;
  }
  int64_t n = 1;
  auto* m = new DLManagedTensorVersioned{};
  m->version = {1, 0};
  m->dl_tensor = *proto;
  m->dl_tensor.shape = new int64_t[proto->ndim > 0 ? proto->ndim : 1];
  for (int32_t i = 0; i < proto->ndim; ++i) n *= (m->dl_tensor.shape[i] = proto->shape[i]);
  m->dl_tensor.strides = nullptr;
  m->dl_tensor.data = std::malloc(static_cast<size_t>(n * proto->dtype.bits / 8 + 1));
  m->deleter = &CountingDeleter;
  *out = m;
  ++g_allocs;
  return 0;
}

}  // namespace

TEST(Env, StreamSlotsArePerDeviceAndThread) {
  EXPECT_EQ(pf::EnvGetStream(Cuda(0)), nullptr);
  void* s0 = reinterpret_cast<void*>(0x1000);
  {
    pf::EnvStreamScope scope(Cuda(0), s0);
    EXPECT_EQ(pf::EnvGetStream(Cuda(0)), s0);
    EXPECT_EQ(pf::EnvGetStream(Cuda(1)), nullptr);
    {
      pf::EnvStreamScope inner(Cuda(0), reinterpret_cast<void*>(0x2000));
      EXPECT_EQ(pf::EnvGetStream(Cuda(0)), reinterpret_cast<void*>(0x2000));
    }
    EXPECT_EQ(pf::EnvGetStream(Cuda(0)), s0);
    void* seen_elsewhere = s0;
    std::thread([&] { seen_elsewhere = pf::EnvGetStream(Cuda(0)); }).join();
    EXPECT_EQ(seen_elsewhere, nullptr);
    // A callee sees it through the call.
    pf::Function report = pf::Function::FromTyped(
        [](DLDevice d) { return reinterpret_cast<intptr_t>(pf::EnvGetStream(d)); });
    EXPECT_EQ(report(Cuda(0)).cast<int64_t>(), 0x1000);
  }
  EXPECT_EQ(pf::EnvGetStream(Cuda(0)), nullptr);
  EXPECT_NE(PFEnvSetStream(-1, 0, nullptr, nullptr), 0);
  EXPECT_NE(std::string(Catch([] { pf::detail::ThrowRaised(); }).what()).find("ValueError"),
            std::string::npos);
}

TEST(Env, TensorsComeFromTheCallersAllocatorBalanced) {
  pf::Function make = pf::Function::FromTyped(
      [](int64_t n) { return pf::Tensor::FromEnvAlloc({n, 2}, DLDataType{kDLFloat, 32, 1}); });
  int64_t a0 = g_allocs, f0 = g_frees;
  {
    pf::EnvAllocatorScope scope(&CountingAllocator);
    for (int i = 0; i < 10000; ++i) {
      pf::Tensor t = make(int64_t(3)).cast<pf::Tensor>();
      ASSERT_EQ(t->shape[0], 3);
      ASSERT_EQ(t->shape[1], 2);
      static_cast<float*>(t->data)[5] = 1.0f;  // writable, 3 x 2 floats
    }
    pf::Error e = Catch([] { pf::Tensor::FromEnvAlloc({13}, DLDataType{kDLFloat, 32, 1}); });
    EXPECT_EQ(std::string(e.what()), "MemoryError: counting allocator: 13 is unlucky");
  }
  EXPECT_EQ(g_allocs - a0, 10000);
  EXPECT_EQ(g_frees - f0, 10000);
  // Without an allocator: the runtime's own.
  pf::Tensor plain = pf::Tensor::FromEnvAlloc({4}, DLDataType{kDLFloat, 32, 1});
  EXPECT_EQ(plain->shape[0], 4);
  EXPECT_EQ(g_allocs - a0, 10000);
  EXPECT_NE(PFEnvTensorAlloc(nullptr, 1, DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0}, nullptr),
            0);
  pf::detail::DiscardRaised();
}

namespace {
int g_held = 0, g_released = 0, g_acquired = 0;
int HeldHook() { return g_held; }
void* ReleaseHook() {
  ++g_released;
  g_held = 0;
  return &g_released;
}
void AcquireHook(void* token) {
  EXPECT_EQ(token, &g_released);
  ++g_acquired;
  g_held = 1;
}
void InterruptHook() { PFErrorSetRaisedFromCStr("KeyboardInterrupt", ""); }
void QuietHook() {}
}  // namespace

TEST(Env, LockHooksAreNoOpsWithoutABinding) {
  PFEnvSetLockHooks(nullptr, nullptr, nullptr, nullptr, nullptr);
  EXPECT_EQ(PFEnvReleaseCallerLock(), nullptr);
  PFEnvAcquireCallerLock(nullptr);
  EXPECT_EQ(PFEnvCheckSignals(), 0);
  {
    pf::EnvReleaseCallerLock unlocked;
  }
  pf::EnvCheckSignals();  // does not throw
}

TEST(Env, ReleaseCallerLockScopeUsesTheHooks) {
  PFEnvSetLockHooks(&HeldHook, &ReleaseHook, &AcquireHook, &QuietHook, nullptr);
  g_held = 1;
  {
    pf::EnvReleaseCallerLock unlocked;
    EXPECT_EQ(g_held, 0);
    pf::EnvReleaseCallerLock nested;  // not held any more: nothing to release
    EXPECT_EQ(g_released, 1);
  }
  EXPECT_EQ(g_held, 1);
  EXPECT_EQ(g_acquired, 1);
  pf::EnvCheckSignals();  // the hook raised nothing
  PFEnvSetLockHooks(&HeldHook, &ReleaseHook, &AcquireHook, &InterruptHook, nullptr);
  EXPECT_EQ(std::string(Catch([] { pf::EnvCheckSignals(); }).kind()), "KeyboardInterrupt");
  PFEnvSetLockHooks(nullptr, nullptr, nullptr, nullptr, nullptr);
}

namespace {
int g_deleted = 0;
int GoneHook() { return 1; }
int NotHeldHook() { return 0; }
int CallNothing(void*, const PFAny*, int32_t, PFAny*) { return 0; }
void CountDelete(void*) { ++g_deleted; }
}  // namespace

TEST(Env, DeletersAreLeakedOnceTheCallersLockIsGone) {
  PFObject* f = nullptr;
  ASSERT_EQ(PFFunctionCreate(nullptr, &CallNothing, &CountDelete, &f), 0);
  PFEnvSetLockHooks(&NotHeldHook, &ReleaseHook, &AcquireHook, &QuietHook, &GoneHook);
  PFObjectDecRef(f);  // the language is shutting down: its deleter must not run
  EXPECT_EQ(g_deleted, 0);
  PFEnvSetLockHooks(nullptr, nullptr, nullptr, nullptr, nullptr);
  ASSERT_EQ(PFFunctionCreate(nullptr, &CallNothing, &CountDelete, &f), 0);
  PFObjectDecRef(f);
  EXPECT_EQ(g_deleted, 1);
}

namespace {
int g_guarded_calls = 0;
int g_has_state = 1;
void* ThreadStateHook() { return g_has_state ? &g_has_state : nullptr; }
int GuardedBody(void* self, const PFAny*, int32_t, PFAny* result) {
  ++g_guarded_calls;
  result->type_index = kPFTypeInt;
  result->v_int64 = reinterpret_cast<intptr_t>(self);
  return 0;
}
int NotGoneHook() { return 0; }
int64_t CallGuarded(PFObject* f) {
  PFAny out{};
  if (PFFunctionCall(f, nullptr, 0, &out) != 0) {
    pf::detail::DiscardRaised();
    return -1;
  }
  return out.v_int64;
}
}  // namespace

TEST(Env, GuardedCallsAreRefusedOnceTheLanguageCloses) {
  PFObject* f = nullptr;
  ASSERT_EQ(PFFunctionCreate(reinterpret_cast<void*>(7), &PFEnvGuardedCall, nullptr, &f), 0);
  EXPECT_EQ(CallGuarded(f), -1);  // no binding set a body
  PFEnvSetGuardedCall(&ThreadStateHook, &GuardedBody);
  g_held = 0;
  PFEnvSetLockHooks(&HeldHook, &ReleaseHook, &AcquireHook, &QuietHook, &NotGoneHook);
  EXPECT_EQ(CallGuarded(f), 7);
  EXPECT_EQ(PFEnvCloseLock(100), 0);  // nothing inside: returns at once
  g_has_state = 0;
  EXPECT_EQ(CallGuarded(f), -1);  // a thread the language never saw is refused from now on
  g_held = 1;
  EXPECT_EQ(CallGuarded(f), -1);  // held() is not trusted on a thread without a state
  g_has_state = 1;
  EXPECT_EQ(CallGuarded(f), 7);  // the lock's holder enters
  g_held = 0;
  EXPECT_EQ(CallGuarded(f), 7);  // so do the language's own threads, until it is gone
  EXPECT_EQ(g_guarded_calls, 3);
  g_has_state = 0;
  PFEnvSetLockHooks(&NotHeldHook, &ReleaseHook, &AcquireHook, &QuietHook, &NotGoneHook);
  EXPECT_EQ(CallGuarded(f), 7);  // installing hooks opens it again
  PFEnvSetLockHooks(&NotHeldHook, &ReleaseHook, &AcquireHook, &QuietHook, &GoneHook);
  g_has_state = 1;
  EXPECT_EQ(CallGuarded(f), -1);  // gone: only the lock's holder enters
  g_has_state = 1;
  PFEnvSetLockHooks(nullptr, nullptr, nullptr, nullptr, nullptr);
  PFEnvSetGuardedCall(nullptr, nullptr);
  PFObjectDecRef(f);
}

TEST(Env, CloseLockWaitsForThreadsInsideTheBinding) {
  static std::atomic<int> stage{0};
  PFObject* f = nullptr;
  ASSERT_EQ(PFFunctionCreate(nullptr, &PFEnvGuardedCall, nullptr, &f), 0);
  PFEnvSetGuardedCall(&ThreadStateHook, [](void*, const PFAny*, int32_t, PFAny*) -> int {
    stage = 1;
    while (stage.load() == 1) std::this_thread::yield();
    return 0;
  });
  PFEnvSetLockHooks(&NotHeldHook, &ReleaseHook, &AcquireHook, &QuietHook, &NotGoneHook);
  std::thread inside([f] { CallGuarded(f); });
  while (stage.load() == 0) std::this_thread::yield();
  EXPECT_EQ(PFEnvCloseLock(1), 1);  // still inside at the timeout
  stage = 2;
  EXPECT_EQ(PFEnvCloseLock(10000), 0);
  inside.join();
  PFEnvSetLockHooks(nullptr, nullptr, nullptr, nullptr, nullptr);
  PFEnvSetGuardedCall(nullptr, nullptr);
  PFObjectDecRef(f);
}
