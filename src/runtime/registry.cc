// The global function registry: name -> Function (+ docstring), shared by the whole process.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "runtime/error.h"
#include "runtime/object.h"
#include "runtime/registry.h"
#include "runtime/seq.h"
#include "runtime/string.h"

namespace packedfun {
namespace detail {
namespace {

struct Entry {
  std::string name;
  PFObject* func = nullptr;  // owned
  bool has_doc = false;
  std::string doc;
};

/*! Intentionally leaked at exit: functions may be backed by code (Python, unloaded modules) that is
 *  gone by the time static destructors run. */
struct Registry {
  std::shared_mutex mu;
  std::unordered_map<std::string_view, std::unique_ptr<Entry>> entries;  // keys view Entry::name
};

Registry& GlobalRegistry() {
  static Registry* registry = new Registry();
  return *registry;
}

/*! The foreign registry consulted on a miss (constant-initialised: set at static init). */
std::atomic<const ForeignRegistry*> g_foreign{nullptr};

/*! Bumped under the write lock by every change; a cached lookup is valid only while the generation
 *  it was made at is still current. */
std::atomic<uint64_t> g_generation{1};

/*!
 * Each thread's recent lookups, so that a hit takes neither the registry lock nor a hash: only a
 * load of the generation, an uncontended exchange on the thread's own spinlock, a name comparison
 * and the reference the caller gets. A slot owns a reference to its function, so it never dangles.
 *
 * Every thread's cache is listed (CacheList) from its first store until it exits, so that a writer
 * can reach it: after each change the writer takes the stale slots out of every cache, under each
 * cache's spinlock, and drops their references once it holds no lock at all (a deleter may use the
 * registry again). A store made at a generation that is no longer current is refused under the
 * same spinlock, so no stale reference can slip in behind a sweep. Hence a removed function is held
 * by no cache once PFFunctionRemoveGlobal returns.
 */
constexpr size_t kCacheSlots = 4;
constexpr size_t kCachedNameMax = 48;
struct CacheSlot {
  uint64_t generation;  // 0: empty
  PFObject* func;       // owned
  size_t size;
  char name[kCachedNameMax];
};
enum CacheState : uint8_t { kUnlisted = 0, kListed, kExited };
struct LookupCache {
  std::atomic<bool> busy;  // the spinlock guarding `slots`
  CacheState state;        // touched by the owning thread only (and, when listed, under the list)
  size_t next_victim;
  LookupCache* prev;  // links of CacheList, guarded by its mutex
  LookupCache* next;
  CacheSlot slots[kCacheSlots];
};
/*! Trivial (constant-initialized, no destructor), so that the hit path needs no TLS guard. */
thread_local LookupCache tls_cache{};

/*! All listed caches. Leaked at exit, like the registry: threads may outlive static destructors. */
struct CacheList {
  std::mutex mu;
  LookupCache* head = nullptr;
};
CacheList& Caches() {
  static CacheList* list = new CacheList();
  return *list;
}

/*! Holds a cache's spinlock: uncontended except while a writer sweeps that very cache. */
class CacheLock {
 public:
  explicit CacheLock(LookupCache& cache) noexcept : cache_(cache) {
    while (cache_.busy.exchange(true, std::memory_order_acquire)) {
      while (cache_.busy.load(std::memory_order_relaxed)) std::this_thread::yield();
    }
  }
  ~CacheLock() { cache_.busy.store(false, std::memory_order_release); }
  CacheLock(const CacheLock&) = delete;
  CacheLock& operator=(const CacheLock&) = delete;

 private:
  LookupCache& cache_;
};

/*! A new reference to the function cached under `name` at `generation`, or null. */
PFObject* CacheHit(std::string_view name, uint64_t generation) noexcept {
  LookupCache& cache = tls_cache;
  CacheLock lock(cache);
  for (CacheSlot& slot : cache.slots) {
    if (slot.generation == generation && slot.size == name.size() &&
        std::memcmp(slot.name, name.data(), name.size()) == 0) {
      IncRef(slot.func);
      return slot.func;
    }
  }
  return nullptr;
}

/*! Empties `slot`, handing its reference to the caller. */
PFObject* TakeSlot(CacheSlot& slot) noexcept {
  PFObject* func = slot.func;
  slot.generation = 0;
  slot.func = nullptr;
  return func;
}

/*! Under the cache's lock: moves the references of the slots not made at the current generation
 *  into `dead` (all of them when `all`). Reserves first, so that a bad_alloc takes nothing. */
void TakeStaleSlots(LookupCache& cache, bool all, std::vector<PFObject*>* dead) {
  dead->reserve(dead->size() + kCacheSlots);
  CacheLock lock(cache);
  uint64_t current = g_generation.load(std::memory_order_acquire);
  for (CacheSlot& slot : cache.slots) {
    if (slot.generation != 0 && (all || slot.generation != current)) {
      dead->push_back(TakeSlot(slot));
    }
  }
}

/*! After a change: takes the stale slots out of every thread's cache, then releases them with no
 *  lock held. Out of memory, the rest are left to their threads' next store or exit. */
void SweepCaches() noexcept {
  std::vector<PFObject*> dead;
  {
    CacheList& list = Caches();
    std::lock_guard<std::mutex> lock(list.mu);
    try {
      for (LookupCache* cache = list.head; cache != nullptr; cache = cache->next) {
        TakeStaleSlots(*cache, /*all=*/false, &dead);
      }
    } catch (const std::bad_alloc&) {
    }
  }
  for (PFObject* f : dead) DecRef(f);
}

/*! The thread that loaded the runtime: at process exit its slots are leaked like the registry,
 *  since a function may be backed by code (Python) that is finalized by then. */
const std::thread::id g_loading_thread = std::this_thread::get_id();

/*! Unlists a thread's cache and releases it when the thread exits. Kept apart from the (trivial)
 *  cache so that only the first store pays for the thread-exit registration. */
struct CacheReleaser {
  bool armed = false;
  ~CacheReleaser() {
    if (!armed) return;
    LookupCache& cache = tls_cache;
    {
      CacheList& list = Caches();
      std::lock_guard<std::mutex> lock(list.mu);
      (cache.prev != nullptr ? cache.prev->next : list.head) = cache.next;
      if (cache.next != nullptr) cache.next->prev = cache.prev;
      cache.state = kExited;  // lookups made by later thread-exit code are not cached
    }
    PFObject* dead[kCacheSlots] = {};
    {
      CacheLock lock(cache);
      for (size_t i = 0; i < kCacheSlots; ++i) dead[i] = TakeSlot(cache.slots[i]);
    }
    if (std::this_thread::get_id() == g_loading_thread) return;
    for (PFObject* f : dead) DecRef(f);
  }
};
thread_local CacheReleaser tls_releaser;

/*! Lists this thread's cache, so that writers can reach it; false if that failed. */
bool ListCache(LookupCache& cache) noexcept {
  try {
    tls_releaser.armed = true;  // registers the thread-exit release
    CacheList& list = Caches();
    std::lock_guard<std::mutex> lock(list.mu);
    cache.prev = nullptr;
    cache.next = list.head;
    if (list.head != nullptr) list.head->prev = &cache;
    list.head = &cache;
    cache.state = kListed;
    return true;
  } catch (...) {
    return false;
  }
}

/*! Caches `func` (found at `generation`) under `name`, taking a reference of its own, unless a
 *  change has been made since: a sweep may already have passed this cache. */
void CacheStore(std::string_view name, PFObject* func, uint64_t generation) noexcept {
  LookupCache& cache = tls_cache;
  if (func == nullptr || name.size() > kCachedNameMax || cache.state == kExited) return;
  if (cache.state == kUnlisted && !ListCache(cache)) return;
  PFObject* dead[kCacheSlots + 1] = {};
  {
    CacheLock lock(cache);
    if (g_generation.load(std::memory_order_acquire) != generation) return;
    for (size_t i = 0; i < kCacheSlots; ++i) {  // left by a sweep that ran out of memory
      CacheSlot& slot = cache.slots[i];
      if (slot.generation != 0 && slot.generation != generation) dead[i] = TakeSlot(slot);
    }
    CacheSlot& slot = cache.slots[cache.next_victim];
    cache.next_victim = (cache.next_victim + 1) % kCacheSlots;
    if (slot.generation != 0) dead[kCacheSlots] = TakeSlot(slot);
    IncRef(func);
    slot.func = func;
    slot.size = name.size();
    std::memcpy(slot.name, name.data(), name.size());
    slot.generation = generation;
  }
  for (PFObject* f : dead) DecRef(f);
}

/*! The registered function (a new reference) or null, through the lock. */
PFObject* LockedLookup(std::string_view name) {
  Registry& reg = GlobalRegistry();
  std::shared_lock<std::shared_mutex> lock(reg.mu);
  auto it = reg.entries.find(name);
  PFObject* func = it == reg.entries.end() ? nullptr : it->second->func;
  IncRef(func);
  return func;
}

/*! Tells the foreign registry that packedfun's entry for `name` changed. */
void NotifyForeign(std::string_view name) noexcept {
  const ForeignRegistry* foreign = g_foreign.load(std::memory_order_acquire);
  if (foreign != nullptr) foreign->changed(name);
}

/*! A change was made (under the write lock): every cached lookup is stale. */
void BumpGeneration() noexcept { g_generation.fetch_add(1, std::memory_order_release); }

std::string_view ViewOf(const PFByteArray* a) {
  if (a == nullptr || a->size == 0) return {};
  return std::string_view(a->data, a->size);
}

void CheckIsFunction(std::string_view name, PFObject* func) {
  if (func == nullptr || func->type_index != kPFTypeFunction) {
    Throw("TypeError", "Global function '" + std::string(name) + "' must be a Function");
  }
}

/*! Replaces or inserts; the old function (if any) is returned for release outside the lock. */
PFObject* SetEntry(std::string_view name, PFObject* func, bool override, const PFByteArray* doc) {
  Registry& reg = GlobalRegistry();
  auto entry = std::make_unique<Entry>();
  entry->name.assign(name);
  entry->has_doc = doc != nullptr;
  entry->doc.assign(ViewOf(doc));
  std::unique_lock<std::shared_mutex> lock(reg.mu);
  auto it = reg.entries.find(name);
  PFObject* old = nullptr;
  if (it != reg.entries.end()) {
    if (!override) {
      Throw("ValueError", "Global function '" + std::string(name) +
                              "' is already registered; pass override=True to replace it");
    }
    old = it->second->func;
    reg.entries.erase(it);
  }
  IncRef(func);
  entry->func = func;
  std::string_view key = entry->name;
  reg.entries.emplace(key, std::move(entry));
  BumpGeneration();
  return old;
}

}  // namespace
}  // namespace detail
}  // namespace packedfun

using namespace packedfun::detail;

extern "C" {

PACKEDFUN_API int PFFunctionSetGlobal(const PFByteArray* name, PFObject* func, int override,
                                      const PFByteArray* doc) {
  return Guard([&] {
    std::string_view key = ViewOf(name);
    CheckIsFunction(key, func);
    PFObject* old = SetEntry(key, func, override != 0, doc);
    SweepCaches();
    DecRef(old);
    NotifyForeign(key);
    return 0;
  });
}

PACKEDFUN_API int PFFunctionGetGlobal(const PFByteArray* name, PFObject** out) {
  return Guard([&] {
    std::string_view key = ViewOf(name);
    // Read before the lookup: a change racing with it leaves the cached result stale, not wrong.
    uint64_t generation = g_generation.load(std::memory_order_acquire);
    PFObject* func = CacheHit(key, generation);
    if (func == nullptr) {
      func = LockedLookup(key);
      CacheStore(key, func, generation);
    }
    if (func == nullptr) {  // packedfun's own entry wins; then the foreign registry's
      const ForeignRegistry* foreign = g_foreign.load(std::memory_order_acquire);
      if (foreign != nullptr) func = foreign->get(key);
    }
    *out = func;
    return 0;
  });
}

PACKEDFUN_API int PFFunctionGetGlobalDoc(const PFByteArray* name, PFAny* out) {
  return Guard([&] {
    Registry& reg = GlobalRegistry();
    std::string doc;
    bool found = false;
    {
      std::shared_lock<std::shared_mutex> lock(reg.mu);
      auto it = reg.entries.find(ViewOf(name));
      if (it != reg.entries.end() && it->second->has_doc) {
        found = true;
        doc = it->second->doc;
      }
    }
    *out = found ? MakeStringAny(doc) : NoneAny();
    return 0;
  });
}

PACKEDFUN_API int PFFunctionListGlobalNames(PFAny* out) {
  return Guard([&] {
    Registry& reg = GlobalRegistry();
    std::vector<std::string> names;
    {
      std::shared_lock<std::shared_mutex> lock(reg.mu);
      names.reserve(reg.entries.size());
      for (const auto& kv : reg.entries) names.emplace_back(kv.first);
    }
    const ForeignRegistry* foreign = g_foreign.load(std::memory_order_acquire);
    if (foreign != nullptr) foreign->list(&names);
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    *out = MakeStringArray(names);
    return 0;
  });
}

PACKEDFUN_API int PFFunctionRemoveGlobal(const PFByteArray* name, int* removed) {
  return Guard([&] {
    Registry& reg = GlobalRegistry();
    PFObject* old = nullptr;
    {
      std::unique_lock<std::shared_mutex> lock(reg.mu);
      auto it = reg.entries.find(ViewOf(name));
      if (it != reg.entries.end()) {
        old = it->second->func;
        reg.entries.erase(it);
        BumpGeneration();
      }
    }
    *removed = old != nullptr ? 1 : 0;
    if (old != nullptr) SweepCaches();  // no cache may hold it once this returns
    DecRef(old);
    const ForeignRegistry* foreign = g_foreign.load(std::memory_order_acquire);
    if (foreign != nullptr) {
      if (old != nullptr) {
        foreign->changed(ViewOf(name));
      } else if (foreign->remove(ViewOf(name))) {  // one registry: the name it had goes too
        *removed = 1;
      }
    }
    return 0;
  });
}

}  // extern "C"

namespace packedfun {
namespace detail {

void SetForeignRegistry(const ForeignRegistry* registry) noexcept {
  g_foreign.store(registry, std::memory_order_release);
}

PFObject* LookupOwnGlobal(std::string_view name) { return LockedLookup(name); }

std::vector<std::string> OwnGlobalNames() {
  Registry& reg = GlobalRegistry();
  std::vector<std::string> names;
  std::shared_lock<std::shared_mutex> lock(reg.mu);
  names.reserve(reg.entries.size());
  for (const auto& kv : reg.entries) names.emplace_back(kv.first);
  return names;
}

void RegisterBuiltin(const char* name, PFSafeCall call) noexcept {
  PFObject* func = nullptr;
  if (PFFunctionCreate(nullptr, call, nullptr, &func) != 0) return;
  PFByteArray key{name, std::strlen(name)};
  PFFunctionSetGlobal(&key, func, 1, nullptr);
  DecRef(func);
}

}  // namespace detail
}  // namespace packedfun
