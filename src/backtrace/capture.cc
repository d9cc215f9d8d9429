// Native backtraces for errors: cheap raw capture (symbolized later, in symbolize.cc).
#include "backtrace/backtrace.h"

#include <link.h>
#include <pthread.h>
#include <unwind.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace packedfun {
namespace detail {
namespace {

/*! The address range of the runtime's own code, so its frames can be dropped from the top. */
struct CodeRange {
  uintptr_t lo = 0;
  uintptr_t hi = 0;
};

int FindRuntimeRange(struct dl_phdr_info* info, size_t, void* data) {
  auto* range = static_cast<CodeRange*>(data);
  auto self = reinterpret_cast<uintptr_t>(&FindRuntimeRange);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) & ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
    uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    uintptr_t hi = lo + ph.p_memsz;
    if (self >= lo && self < hi) {
      range->lo = lo;
      range->hi = hi;
      return 1;
    }
  }
  return 0;
}

const CodeRange& RuntimeRange() {
  static const CodeRange range = [] {
    CodeRange r;
    dl_iterate_phdr(&FindRuntimeRange, &r);
    return r;
  }();
  return range;
}

bool CaptureEnabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("PACKEDFUN_BACKTRACE");
    return v == nullptr || std::strcmp(v, "0") != 0;
  }();
  return enabled;
}

// ---- the frame cache -----------------------------------------------------------------------
// Unwinding with DWARF CFI costs ~250 ns a frame. On x86-64 the stack pointer of a caller is the
// callee's CFA, and a frame's CFA sits at a fixed distance from its stack pointer at each return
// address; we learn that distance from the slow unwinder once per return address and afterwards
// walk the stack with one table probe and one load per frame. A return address seen with two
// different distances is marked unusable; every load is bounds-checked against the thread's
// stack, so a wrong guess can only produce a wrong frame, never a crash.

constexpr int kCacheBits = 12;
constexpr uint64_t kDeltaMask = 0xFFFF;
constexpr uint64_t kDeltaTerminal = 0xFFFF;  // the stack ended after this frame
constexpr uint64_t kDeltaUnusable = 0xFFFE;  // seen with several distances
constexpr uint64_t kDeltaStop = 0xFFFD;      // EndsBacktrace: the capture ends with this frame

std::atomic<uint64_t> g_frame_cache[1 << kCacheBits];  // (pc << 16) | delta; 0 when empty
// Bumped by every change to an entry, so that copies of entries (a thread's last chain, below)
// know when to be dropped.
std::atomic<uint32_t> g_cache_generation{0};

size_t CacheSlot(uintptr_t pc) noexcept {
  return static_cast<size_t>((pc * 0x9E3779B97F4A7C15ULL) >> (64 - kCacheBits));
}

uint64_t CacheLookup(uintptr_t pc) noexcept {
  size_t mask = (size_t{1} << kCacheBits) - 1;
  for (size_t i = CacheSlot(pc), n = 0; n < 8; ++n, i = (i + 1) & mask) {
    uint64_t e = g_frame_cache[i].load(std::memory_order_relaxed);
    if (e == 0) return 0;
    if ((e >> 16) == pc) return e & kDeltaMask;
  }
  return 0;
}

void CacheStore(uintptr_t pc, uint64_t delta) noexcept {
  if (pc >= (uintptr_t{1} << 48)) return;
  size_t mask = (size_t{1} << kCacheBits) - 1;
  for (size_t i = CacheSlot(pc), n = 0; n < 8; ++n, i = (i + 1) & mask) {
    uint64_t e = g_frame_cache[i].load(std::memory_order_relaxed);
    if (e == 0) {
      uint64_t entry = (static_cast<uint64_t>(pc) << 16) | delta;
      if (g_frame_cache[i].compare_exchange_strong(e, entry)) return;
    }
    if ((e >> 16) != pc) continue;
    uint64_t old = e & kDeltaMask;
    if (old == delta || old == kDeltaStop) return;  // a stop is its file's property: final
    if (delta == kDeltaStop) {
      g_frame_cache[i].store((static_cast<uint64_t>(pc) << 16) | delta, std::memory_order_relaxed);
      g_cache_generation.fetch_add(1, std::memory_order_release);
      return;
    }
    if (old == kDeltaUnusable) return;
    if (old == kDeltaTerminal && delta != kDeltaTerminal) return;
    // A distance learned before is replaced by "terminal"; two distances mean "unusable".
    uint64_t now = old != kDeltaTerminal && delta == kDeltaTerminal ? delta : kDeltaUnusable;
    g_frame_cache[i].store((static_cast<uint64_t>(pc) << 16) | now, std::memory_order_relaxed);
    g_cache_generation.fetch_add(1, std::memory_order_release);
    return;
  }
}

// ---- the thread's last chain -----------------------------------------------------------------
// Errors mostly come from the same place again, so a walk mostly repeats the thread's previous
// one. Each thread keeps the (return address, distance) pairs of its last fast walk, a copy of
// cache entries in a few adjacent bytes: a frame that matches the same depth of that chain needs no
// probe of the table, whose entries are scattered over 32 KiB and miss the data cache between
// errors (half the walk's time by perf sampling). The copy is dropped when any entry changes.

constexpr int kChainDepth = 16;

/*! The calling thread's stack bounds, looked up once per thread, and its last chain. */
struct StackBounds {
  uintptr_t lo = 0, hi = 0;
  bool known = false;
  uint32_t chain_generation = 0;  // g_cache_generation when the chain was recorded
  int chain_size = 0;
  uintptr_t chain_pc[kChainDepth];
  uint16_t chain_delta[kChainDepth];
};

StackBounds& ThreadStack() noexcept {
  thread_local StackBounds bounds = [] {
    StackBounds b;
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return b;
    void* addr = nullptr;
    size_t size = 0;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0 && size != 0) {
      b.lo = reinterpret_cast<uintptr_t>(addr);
      b.hi = b.lo + size;
      b.known = true;
    }
    pthread_attr_destroy(&attr);
    return b;
  }();
  return bounds;
}

struct UnwindState {
  void** pcs;
  int max_frames;
  int count;
  bool in_prefix;  // still inside the runtime's innermost frames
  uintptr_t lo, hi;
  uintptr_t prev_cfa;  // stack pointer of the frame seen last
  uintptr_t last_pc;   // return address of the frame seen last, 0 before the first
  bool stopped;        // ended at a frame that ends the backtrace (not at the stack's end)
};

/*! Records one frame; returns false once enough frames are recorded. */
bool Record(UnwindState* st, uintptr_t pc) noexcept {
  if (st->in_prefix) {
    if (pc >= st->lo && pc < st->hi) return true;
    st->in_prefix = false;
  }
  st->pcs[st->count++] = reinterpret_cast<void*>(pc);
  return st->count < st->max_frames;
}

// Note: in a backtrace callback _Unwind_GetCFA returns the stack pointer of the frame whose
// return address _Unwind_GetIP returns (the CFA of its callee), so a frame's size is known one
// callback later.
_Unwind_Reason_Code OnFrame(struct _Unwind_Context* ctx, void* arg) {
  auto* st = static_cast<UnwindState*>(arg);
  uintptr_t pc = _Unwind_GetIP(ctx);
  uintptr_t sp = _Unwind_GetCFA(ctx);
  if (pc == 0) return _URC_END_OF_STACK;
  if (st->last_pc != 0 && sp > st->prev_cfa && sp - st->prev_cfa < kDeltaStop) {
    CacheStore(st->last_pc, sp - st->prev_cfa);
  }
  bool first = st->last_pc == 0;  // Walk's own frame
  st->prev_cfa = sp;
  st->last_pc = pc;
  if (first) return _URC_NO_REASON;
  if (!Record(st, pc)) return _URC_END_OF_STACK;
  // The caller's code (a binding, the interpreter): symbolization would stop here, so does the
  // capture, and the cache remembers it so that the fast walk stops here too.
  if (!st->in_prefix && EndsBacktrace(reinterpret_cast<void*>(pc))) {
    CacheStore(pc, kDeltaStop);
    st->stopped = true;
    return _URC_END_OF_STACK;
  }
  return _URC_NO_REASON;
}

/*! The distance of `pc` at `depth` of the walk: from the thread's last chain when it matches
 *  there, else from the table (recorded into the chain); 0 when unknown. */
inline uint64_t FrameDelta(StackBounds* chain, int depth, uintptr_t pc) noexcept {
  if (depth < chain->chain_size && chain->chain_pc[depth] == pc) return chain->chain_delta[depth];
  uint64_t delta = CacheLookup(pc);
  if (depth < kChainDepth && delta != 0 && delta != kDeltaUnusable) {
    chain->chain_pc[depth] = pc;
    chain->chain_delta[depth] = static_cast<uint16_t>(delta);
    chain->chain_size = depth + 1;  // deeper entries belonged to another chain
  }
  return delta;
}

/*! The fast walk: true when every frame was found in the cache. */
bool WalkCached(UnwindState* st, uintptr_t sp, uintptr_t pc) noexcept {
#if defined(__x86_64__)
  StackBounds* stack = &ThreadStack();
  // Opaque to the compiler from here: else it recomputes the thread_local's address (a
  // __tls_get_addr call) at every use in the loop instead of keeping the pointer.
  asm("" : "+r"(stack));
  if (!stack->known) return false;
  const uintptr_t stack_lo = stack->lo, stack_hi = stack->hi;
  uint32_t generation = g_cache_generation.load(std::memory_order_acquire);
  if (stack->chain_generation != generation) {
    stack->chain_size = 0;
    stack->chain_generation = generation;
  }
  for (int depth = 0;; ++depth) {
    uint64_t delta = FrameDelta(stack, depth, pc);
    if (delta == 0 || delta == kDeltaUnusable) return false;
    if (!Record(st, pc) || delta == kDeltaTerminal || delta == kDeltaStop) return true;
    uintptr_t cfa = sp + delta;
    if (sp < stack_lo || cfa > stack_hi || cfa < sp + 8) return false;
    sp = cfa;
    pc = *reinterpret_cast<const uintptr_t*>(cfa - 8);
  }
#else
  (void)st;
  (void)sp;
  (void)pc;
  return false;
#endif
}

/*! Walks the caller's stack: cached when possible, else with the unwinder (filling the cache). */
__attribute__((noinline)) int Walk(void** pcs, int max_frames, uintptr_t lo, uintptr_t hi) {
  UnwindState st{pcs, max_frames, 0, true, lo, hi, 0, 0, false};
  auto sp = reinterpret_cast<uintptr_t>(__builtin_dwarf_cfa());
  auto pc = reinterpret_cast<uintptr_t>(__builtin_return_address(0));
  if (WalkCached(&st, sp, pc)) return st.count;
  st.count = 0;
  st.in_prefix = true;
  _Unwind_Backtrace(&OnFrame, &st);
  // The unwinder stopped on its own: remember where the stack ends.
  if (!st.stopped && st.count < max_frames && st.count > 0) {
    CacheStore(st.last_pc, kDeltaTerminal);
  }
  return st.count;
}

}  // namespace

int CaptureBacktrace(void** pcs, int max_frames) noexcept {
  if (max_frames <= 0 || !CaptureEnabled()) return 0;
  const CodeRange& range = RuntimeRange();
  return Walk(pcs, max_frames, range.lo, range.hi);
}

}  // namespace detail
}  // namespace packedfun
