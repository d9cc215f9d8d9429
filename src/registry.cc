// The global function registry: name -> Function (+ docstring), shared by the whole process.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "internal/error.h"
#include "internal/object.h"
#include "internal/seq.h"
#include "internal/string.h"

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

/*! Bumped under the write lock by every change; a cached lookup is valid only while the generation
 *  it was made at is still current. */
std::atomic<uint64_t> g_generation{1};

/*!
 * Each thread's recent lookups, so that a hit takes neither the lock nor a hash: only a load of the
 * generation, a name comparison and the reference the caller gets. A slot owns a reference to its
 * function (it can never dangle, whatever other threads remove). Every change to the registry
 * makes all slots stale; a thread releases its stale slots at its next cache miss (which is its
 * next lookup), at once when it changes the registry itself, and when it exits (CacheReleaser).
 */
constexpr size_t kCacheSlots = 4;
constexpr size_t kCachedNameMax = 48;
struct CacheSlot {
  uint64_t generation;  // 0: empty
  PFObject* func;       // owned
  size_t size;
  char name[kCachedNameMax];
};
struct LookupCache {
  CacheSlot slots[kCacheSlots];
  size_t next_victim;
};
thread_local LookupCache tls_cache{};

PFObject* CacheHit(std::string_view name, uint64_t generation) noexcept {
  for (CacheSlot& slot : tls_cache.slots) {
    if (slot.generation == generation && slot.size == name.size() &&
        std::memcmp(slot.name, name.data(), name.size()) == 0) {
      return slot.func;
    }
  }
  return nullptr;
}

/*! Empties the slots not made at `generation` (all of them for 0). References are dropped only
 *  once the slots are consistent: a deleter may look functions up again. */
void ReleaseStaleSlots(uint64_t generation) noexcept {
  PFObject* dead[kCacheSlots] = {};
  for (size_t i = 0; i < kCacheSlots; ++i) {
    CacheSlot& slot = tls_cache.slots[i];
    if (slot.generation != 0 && slot.generation != generation) {
      dead[i] = slot.func;
      slot.generation = 0;
      slot.func = nullptr;
    }
  }
  for (PFObject* f : dead) DecRef(f);
}

/*! The thread that loaded the runtime: at process exit its slots are leaked like the registry,
 *  since a function may be backed by code (Python) that is finalized by then. */
const std::thread::id g_loading_thread = std::this_thread::get_id();

/*! Releases a thread's cache when the thread exits. Kept apart from the (trivial) cache so that
 *  only the miss path pays for the thread-exit registration. */
struct CacheReleaser {
  bool armed = false;
  ~CacheReleaser() {
    if (std::this_thread::get_id() != g_loading_thread) ReleaseStaleSlots(0);
  }
};
thread_local CacheReleaser tls_releaser;

/*! Caches `func` (found at `generation`) under `name`, taking a reference of its own. */
void CacheStore(std::string_view name, PFObject* func, uint64_t generation) noexcept {
  ReleaseStaleSlots(generation);
  if (func == nullptr || name.size() > kCachedNameMax) return;
  tls_releaser.armed = true;  // the first use registers the thread-exit release
  LookupCache& cache = tls_cache;
  CacheSlot& slot = cache.slots[cache.next_victim];
  cache.next_victim = (cache.next_victim + 1) % kCacheSlots;
  PFObject* old = slot.generation != 0 ? slot.func : nullptr;
  IncRef(func);
  slot.func = func;
  slot.size = name.size();
  std::memcpy(slot.name, name.data(), name.size());
  slot.generation = generation;
  DecRef(old);
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
    DecRef(SetEntry(key, func, override != 0, doc));
    ReleaseStaleSlots(0);
    return 0;
  });
}

PACKEDFUN_API int PFFunctionGetGlobal(const PFByteArray* name, PFObject** out) {
  return Guard([&] {
    std::string_view key = ViewOf(name);
    // Read before the lookup: a change racing with it leaves the cached result stale, not wrong.
    uint64_t generation = g_generation.load(std::memory_order_acquire);
    PFObject* func = CacheHit(key, generation);
    if (func != nullptr) {
      IncRef(func);
    } else {
      func = LockedLookup(key);
      CacheStore(key, func, generation);
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
    std::sort(names.begin(), names.end());
    PFSeqObject* arr = NewSeq(kPFTypeArray, static_cast<int64_t>(names.size()));
    PFAny result = ObjectAny(Header(arr));
    try {
      for (const std::string& n : names) arr->data[arr->size++] = MakeStringAny(n);
    } catch (...) {
      ReleaseAny(&result);
      throw;
    }
    *out = result;
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
    ReleaseStaleSlots(0);  // this thread's cached reference must not outlive the removal
    DecRef(old);
    return 0;
  });
}

}  // extern "C"
