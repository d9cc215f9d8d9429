// The bridge's registry, one registry both ways: tvm-ffi's globals (TVM_FFI_STATIC_INIT_BLOCK +
// refl::GlobalDef().def) seen through packedfun's for names packedfun's lacks, and packedfun's
// globals copied into tvm-ffi's registry, where they win over tvm-ffi's own entry of the same
// name (kept aside and put back when packedfun's goes). Registered with the runtime's registry
// at static initialisation (runtime/registry.h).
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "runtime/error.h"
#include "runtime/object.h"
#include "runtime/registry.h"
#include "runtime/string.h"
#include "tvm_ffi/bridge.h"

namespace packedfun {
namespace detail {
namespace tvmffi {
namespace {

/*! Releases a tvm-ffi value when it goes out of scope. */
struct TVMValue {
  PFAny value = NoneAny();
  TVMValue() = default;
  TVMValue(const TVMValue&) = delete;
  TVMValue& operator=(const TVMValue&) = delete;
  ~TVMValue() { ReleaseTVM(&value); }
};

/*! tvm-ffi's global `name` as a packedfun Function (new ref), or NULL. */
PFObject* GetGlobal(std::string_view name) {
  if (!AttachLoadedLibrary()) return nullptr;
  std::string key(name);
  PFByteArray bytes{key.data(), key.size()};
  void* handle = nullptr;
  if (GetApi().FunctionGetGlobal(&bytes, &handle) != 0) {
    RaiseFromTVM(key);
    throw AlreadyRaised{};
  }
  if (handle == nullptr) return nullptr;
  PFObject* original = nullptr;
  if (UnwrapTrampoline(handle, &original)) {  // a packedfun Function: the original, not a wrapper
    IncRef(original);
    GetApi().ObjectDecRef(handle);
    return original;
  }
  return NewFunction(Cell<FunctionCell>(handle)->safe_call, handle, nullptr, std::move(key));
}

/*! Appends the names of tvm-ffi's registry (through its `ffi.FunctionListGlobalNamesFunctor`). */
void ListNames(std::vector<std::string>* names) {
  if (!AttachLoadedLibrary()) return;
  TVMValue functor;
  CallGlobal("ffi.FunctionListGlobalNamesFunctor", nullptr, 0, &functor.value);
  if (functor.value.type_index != kFunction) {
    Throw("RuntimeError", "tvm-ffi's ffi.FunctionListGlobalNamesFunctor returned no Function");
  }
  PFAny index = NoneAny();
  index.type_index = kPFTypeInt;
  index.v_int64 = -1;
  TVMValue count;
  CallTVMFunction(functor.value.v_obj, &index, 1, &count.value);
  if (count.value.type_index != kPFTypeInt) Throw("RuntimeError", "tvm-ffi listed no name count");
  for (int64_t i = 0; i < count.value.v_int64; ++i) {
    index.v_int64 = i;
    TVMValue name;
    CallTVMFunction(functor.value.v_obj, &index, 1, &name.value);
    PFAny text = NoneAny();
    ToPF(name.value, &text, "a tvm-ffi global function name");
    std::string_view view;
    if (AnyToStringView(text, false, &view)) names->emplace_back(view);
    ReleaseAny(&text);
  }
}

/*! A tvm-ffi global (new ref), or NULL. */
void* TVMGetGlobal(const std::string& name) {
  PFByteArray key{name.data(), name.size()};
  void* handle = nullptr;
  if (GetApi().FunctionGetGlobal(&key, &handle) != 0) {
    RaiseFromTVM(name);
    throw AlreadyRaised{};
  }
  return handle;
}

void TVMSetGlobal(const std::string& name, void* func) {
  PFByteArray key{name.data(), name.size()};
  if (GetApi().FunctionSetGlobal(&key, func, 1) != 0) {
    RaiseFromTVM(name);
    throw AlreadyRaised{};
  }
}

void TVMRemoveGlobal(const std::string& name) {
  PFAny arg = NoneAny();
  arg.type_index = kPFTypeRawStr;
  arg.v_c_str = name.c_str();
  TVMValue removed;
  CallGlobal("ffi.FunctionRemoveGlobal", &arg, 1, &removed.value);
}

/*! Owns a reference of each side while it lives. */
struct Held {
  PFObject* pf = nullptr;
  void* tvm = nullptr;
  Held() = default;
  Held(const Held&) = delete;
  Held& operator=(const Held&) = delete;
  ~Held() { ReleaseLater(pf, tvm); }
};

/*!
 * packedfun's globals in tvm-ffi's registry. For each name packedfun registered, tvm-ffi's entry
 * is a tvm-ffi Function over packedfun's (WrapFunction); the entry it replaced, if tvm-ffi had
 * one of its own, is kept here and put back when packedfun's entry goes. `testing.*` names are
 * left out: both packages ship a testing library under that prefix, and tvm-ffi's (loaded by
 * `import tvm_ffi`, whichever package) must keep its own.
 *
 * tvm-ffi's registry has no lock (its writers are expected to be serialised by their callers):
 * every write the bridge makes is under `mu`.
 */
struct Mirror {
  std::recursive_mutex mu;  // a deleter run under it may register a global (a Python __del__)
  bool started = false;
  int suspended = 0;                               // loads in progress (see SuspendMirror)
  std::unordered_map<std::string, void*> entries;  // name -> displaced tvm-ffi Function or NULL
};

/*! Holds the mirror's lock; the references dropped meanwhile go after it is let go. */
class MirrorLock {
 public:
  explicit MirrorLock(Mirror& m) : lock_(m.mu) {}

 private:
  DeferredReleases deferred_;  // declared first: destroyed after the lock is released
  std::lock_guard<std::recursive_mutex> lock_;
};

Mirror& GetMirror() {
  static Mirror* mirror = new Mirror();  // leaked, like both registries: see registry.cc
  return *mirror;
}

bool Mirrored(std::string_view name) { return name.substr(0, 8) != "testing."; }

/*! Makes tvm-ffi's entry for `name` agree with packedfun's (under the mirror's lock). */
void SyncLocked(Mirror& m, const std::string& name) {
  Held mine, theirs;
  mine.pf = LookupOwnGlobal(name);
  theirs.tvm = TVMGetGlobal(name);
  PFObject* current = nullptr;
  bool is_mirror = theirs.tvm != nullptr && UnwrapTrampoline(theirs.tvm, &current);
  auto it = m.entries.find(name);
  if (mine.pf != nullptr) {
    if (is_mirror && current == mine.pf && it != m.entries.end()) return;  // up to date
    void* displaced = nullptr;
    if (theirs.tvm != nullptr && !is_mirror) std::swap(displaced, theirs.tvm);  // tvm-ffi's own
    if (it == m.entries.end()) it = m.entries.emplace(name, nullptr).first;
    if (displaced != nullptr) {
      ReleaseLater(nullptr, it->second);
      it->second = displaced;
    }
    Held wrapper;
    wrapper.tvm = WrapFunction(mine.pf);
    TVMSetGlobal(name, wrapper.tvm);
    return;
  }
  if (it == m.entries.end()) return;  // never packedfun's
  Held displaced;
  displaced.tvm = it->second;
  m.entries.erase(it);
  if (!is_mirror) return;  // replaced on tvm-ffi's side since: theirs stands
  if (displaced.tvm != nullptr) {
    TVMSetGlobal(name, displaced.tvm);
  } else {
    TVMRemoveGlobal(name);
  }
}

/*! Syncs every name packedfun or the mirror has (under the mirror's lock). */
void SyncAllLocked(Mirror& m) {
  std::unordered_set<std::string> names;
  for (std::string& n : OwnGlobalNames()) {
    if (Mirrored(n)) names.insert(std::move(n));
  }
  for (const auto& kv : m.entries) names.insert(kv.first);
  for (const std::string& n : names) SyncLocked(m, n);
}

/*! A failed copy (tvm-ffi refused, out of memory) leaves packedfun's registry as it is: the error
 *  is dropped, and the name is simply not seen by tvm-ffi. */
template <class F>
void Quietly(F&& body) noexcept {
  if (Guard([&] {
        body();
        return 0;
      }) != 0) {
    PFObject* ignored = nullptr;
    PFErrorMoveFromRaised(&ignored);
    DecRef(ignored);
  }
}

void Changed(std::string_view name) noexcept {
  if (!ApiReady() || !Mirrored(name)) return;
  Mirror& m = GetMirror();
  MirrorLock lock(m);
  if (!m.started || m.suspended != 0) return;  // the start or the load's end syncs every name
  Quietly([&] { SyncLocked(m, std::string(name)); });
}

/*! Removes tvm-ffi's global `name` (packedfun's registry lacks it): one registry, one removal. */
bool Remove(std::string_view name) {
  if (!AttachLoadedLibrary()) return false;
  Mirror& m = GetMirror();
  MirrorLock lock(m);
  std::string key(name);
  Held theirs;
  theirs.tvm = TVMGetGlobal(key);
  if (theirs.tvm == nullptr) return false;
  TVMRemoveGlobal(key);
  return true;
}

const ForeignRegistry kRegistry = {&GetGlobal, &ListNames, &Remove, &Changed};

[[maybe_unused]] const bool kRegistered = (SetForeignRegistry(&kRegistry), true);

}  // namespace

void StartRegistryMirror() noexcept {
  Mirror& m = GetMirror();
  MirrorLock lock(m);
  if (m.started) return;
  m.started = true;
  if (m.suspended == 0) Quietly([&] { SyncAllLocked(m); });
}

void SuspendRegistryMirror() noexcept {
  if (!ApiReady()) return;
  Mirror& m = GetMirror();
  MirrorLock lock(m);
  if (m.suspended++ != 0 || !m.started) return;
  // tvm-ffi's registry as tvm-ffi alone would have it: a library whose static initialisation
  // registers a name packedfun has (which tvm-ffi refuses, fatally, without override) loads.
  Quietly([&] {
    for (const auto& kv : m.entries) {
      Held theirs;
      theirs.tvm = TVMGetGlobal(kv.first);
      PFObject* current = nullptr;
      if (theirs.tvm == nullptr || !UnwrapTrampoline(theirs.tvm, &current)) continue;
      if (kv.second != nullptr) {
        TVMSetGlobal(kv.first, kv.second);
      } else {
        TVMRemoveGlobal(kv.first);
      }
    }
  });
}

void ResumeRegistryMirror() noexcept {
  if (!ApiReady()) return;
  Mirror& m = GetMirror();
  MirrorLock lock(m);
  if (m.suspended == 0 || --m.suspended != 0 || !m.started) return;
  Quietly([&] { SyncAllLocked(m); });
}

}  // namespace tvmffi
}  // namespace detail
}  // namespace packedfun
