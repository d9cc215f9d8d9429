// The global function registry: name -> Function (+ docstring), shared by the whole process.
#include <algorithm>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
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
    return 0;
  });
}

PACKEDFUN_API int PFFunctionGetGlobal(const PFByteArray* name, PFObject** out) {
  return Guard([&] {
    Registry& reg = GlobalRegistry();
    std::shared_lock<std::shared_mutex> lock(reg.mu);
    auto it = reg.entries.find(ViewOf(name));
    PFObject* func = it == reg.entries.end() ? nullptr : it->second->func;
    IncRef(func);
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
      }
    }
    *removed = old != nullptr ? 1 : 0;
    DecRef(old);
    return 0;
  });
}

}  // extern "C"
