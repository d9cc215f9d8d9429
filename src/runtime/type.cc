// The process-wide type table: type keys <-> indices, ancestors for O(1) IsInstance, reflection.
#include <atomic>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "runtime/error.h"
#include "runtime/object.h"
#include "runtime/seq.h"
#include "runtime/string.h"
#include "runtime/type.h"

namespace packedfun {
namespace detail {
namespace {

// Indices map to entries through fixed-size chunks allocated on demand: readers never lock and an
// entry never moves, while the table grows to millions of types without reserving their memory.
constexpr int32_t kChunkBits = 12;
constexpr int32_t kChunkSize = 1 << kChunkBits;
constexpr int32_t kMaxChunks = 1 << 18;  // 2^30 type indices in all
constexpr int64_t kMaxTypes = static_cast<int64_t>(kMaxChunks) * kChunkSize;

/*! One type; never freed, so the PFTypeInfo address is stable for the life of the process. */
struct TypeEntry {
  PFTypeInfo info;
  std::string key;
  std::vector<int32_t> ancestors;
  std::vector<PFFieldInfo> fields;
  std::vector<PFMethodInfo> methods;
};

struct Chunk {
  std::atomic<TypeEntry*> entries[kChunkSize];
};

// Zero-initialised static storage: pages of it are only mapped once a chunk pointer is stored.
std::atomic<Chunk*> chunks[kMaxChunks];

/*! Leaked at exit on purpose: method Functions may be backed by code already gone by then. */
struct TypeTable {
  std::mutex mu;  // serializes registration; readers of chunks never lock
  std::unordered_map<std::string, int32_t> by_key;
  int32_t next_dynamic = kPFTypeDynamicBegin;

  TypeTable();
  TypeEntry* Add(int32_t index, std::string_view key, const TypeEntry* parent, bool keyed = true);
  TypeEntry* Get(int32_t index) const noexcept {
    if (index < 0 || index >= kMaxTypes) return nullptr;
    Chunk* chunk = chunks[index >> kChunkBits].load(std::memory_order_acquire);
    if (chunk == nullptr) return nullptr;
    return chunk->entries[index & (kChunkSize - 1)].load(std::memory_order_acquire);
  }
};

const char* const kPodKeys[] = {"None",        "int",      "bool",         "float",
                                "void*",       "DataType", "Device",       "DLTensor*",
                                "const char*", "StrView",  "BytesView",    "SmallStr",
                                "SmallBytes",  "uint64",   "ContainerView"};
const char* const kStaticKeys[] = {"packedfun.Object", "packedfun.String",   "packedfun.Bytes",
                                   "packedfun.Error",  "packedfun.Function", "packedfun.Opaque",
                                   "packedfun.Shape",  "packedfun.Tensor",   "packedfun.Array",
                                   "packedfun.Map",    "packedfun.List",     "packedfun.Dict",
                                   "packedfun.Module"};

TypeTable::TypeTable() {
  for (int32_t i = 0; i <= kPFTypeContainerView; ++i) Add(i, kPodKeys[i], nullptr);
  TypeEntry* object = Add(kPFTypeObject, kStaticKeys[0], nullptr);
  for (int32_t i = kPFTypeObject + 1; i <= kPFTypeModule; ++i) {
    Add(i, kStaticKeys[i - kPFTypeObject], object);
  }
}

TypeEntry* TypeTable::Add(int32_t index, std::string_view key, const TypeEntry* parent,
                          bool keyed) {
  auto* e = new TypeEntry();
  e->key.assign(key);
  if (parent != nullptr) e->ancestors = parent->ancestors;
  e->ancestors.push_back(index);
  e->info.type_index = index;
  e->info.depth = static_cast<int32_t>(e->ancestors.size() - 1);
  e->info.type_key = PFByteArray{e->key.c_str(), e->key.size()};
  e->info.ancestors = e->ancestors.data();
  e->info.num_fields = e->info.num_methods = 0;
  e->info.fields = nullptr;
  e->info.methods = nullptr;
  e->info.doc = PFByteArray{"", 0};
  if (keyed) by_key.emplace(e->key, index);
  std::atomic<Chunk*>& slot = chunks[index >> kChunkBits];
  Chunk* chunk = slot.load(std::memory_order_relaxed);  // only writers (under mu) store chunks
  if (chunk == nullptr) {
    chunk = new Chunk();
    for (auto& entry : chunk->entries) entry.store(nullptr, std::memory_order_relaxed);
    slot.store(chunk, std::memory_order_release);
  }
  chunk->entries[index & (kChunkSize - 1)].store(e, std::memory_order_release);
  return e;
}

TypeTable& Table() {
  static TypeTable* table = new TypeTable();
  return *table;
}

std::string_view ViewOf(const PFByteArray* a) {
  if (a == nullptr || a->size == 0) return {};
  return std::string_view(a->data, a->size);
}

TypeEntry* CheckType(int32_t type_index) {
  TypeEntry* e = Table().Get(type_index);
  if (e == nullptr) Throw("IndexError", "unknown type index " + std::to_string(type_index));
  return e;
}

int32_t ParentOf(const TypeEntry* e) noexcept {
  return e->info.depth > 0 ? e->ancestors[e->info.depth - 1] : -1;
}

int32_t Register(std::string_view key, int32_t parent_index, bool keyed) {
  TypeTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = keyed ? t.by_key.find(std::string(key)) : t.by_key.end();
  if (it != t.by_key.end()) {
    int32_t old_parent = ParentOf(t.Get(it->second));
    if (old_parent == parent_index) return it->second;
    Throw("TypeError", "type '" + std::string(key) + "' is already registered with parent index " +
                           std::to_string(old_parent) + ", not " + std::to_string(parent_index));
  }
  TypeEntry* parent = parent_index >= kPFTypeStaticObjectBegin ? t.Get(parent_index) : nullptr;
  if (parent == nullptr) {
    Throw("TypeError", "cannot register type '" + std::string(key) + "': parent index " +
                           std::to_string(parent_index) + " is not an object type");
  }
  if (t.next_dynamic >= kMaxTypes) {
    Throw("RuntimeError", "the type table is full (" + std::to_string(kMaxTypes) + " types)");
  }
  TypeEntry* e = t.Add(t.next_dynamic, key, parent, keyed);
  ++t.next_dynamic;
  return e->info.type_index;
}

std::atomic<const ForeignTypes*> g_foreign_types{nullptr};

thread_local TypeRedefinitionCheck* t_redefinition_check = nullptr;

bool SameField(const PFFieldInfo& a, const PFFieldInfo& b) {
  return a.offset == b.offset && a.flags == b.flags && a.static_type_index == b.static_type_index &&
         (a.setter == nullptr) == (b.setter == nullptr);
}

/*! A method's signature record ("" without one). */
std::string MetadataText(PFObject* method) {
  PFAny record;
  if (PFFunctionGetMetadata(method, &record) != 0) throw AlreadyRaised{};
  std::string_view text;
  std::string out = AnyToStringView(record, false, &text) ? std::string(text) : std::string();
  ReleaseAny(&record);
  return out;
}

bool SameMethod(const PFMethodInfo& a, const PFMethodInfo& b) {
  return a.flags == b.flags && MetadataText(a.method) == MetadataText(b.method);
}

/*!
 * Under a TypeRedefinitionCheck (a library being loaded), whether to skip registering `field` or
 * `method` (one of them is NULL) of `e` because an earlier definition of the type exists: an
 * identical member is accepted, anything else recorded as the load's conflict. Called with the
 * table's lock held.
 */
bool SkipRedefinition(TypeEntry* e, const PFFieldInfo* field, const PFMethodInfo* method) {
  TypeRedefinitionCheck* check = t_redefinition_check;
  if (check == nullptr) return false;
  auto [it, first] = check->touched.try_emplace(e->info.type_index);
  TypeRedefinitionCheck::Baseline& before = it->second;
  if (first) {
    before.fields = e->fields.size();
    before.methods = e->methods.size();
  }
  if (before.fields == 0 && before.methods == 0) return false;  // defined by this load
  std::string what;
  if (field != nullptr) {
    ++before.seen_fields;
    std::string_view name = ViewOf(&field->name);
    for (size_t i = 0; i < before.fields; ++i) {
      if (ViewOf(&e->fields[i].name) != name) continue;
      if (SameField(e->fields[i], *field)) return ++before.matched_fields, true;
      what = "field '" + std::string(name) + "' changed";
    }
    if (what.empty()) what = "field '" + std::string(name) + "' is new";
  } else {
    std::string_view name = ViewOf(&method->name);
    for (size_t i = 0; i < before.methods; ++i) {
      if (ViewOf(&e->methods[i].name) != name) continue;
      if (SameMethod(e->methods[i], *method)) return true;
      what = "method '" + std::string(name) + "' changed";
    }
    if (what.empty()) what = "method '" + std::string(name) + "' is new";
  }
  if (check->conflict.empty()) {
    check->conflict =
        "object type '" + e->key + "' is already defined in this process (" + what + ")";
  }
  return true;
}

}  // namespace

int32_t RegisterUnkeyed(std::string_view key, int32_t parent_index) {
  return Register(key, parent_index, false);
}

void SetForeignTypes(const ForeignTypes* types) noexcept {
  g_foreign_types.store(types, std::memory_order_release);
}

void ReleaseTypeKeys(const std::vector<int32_t>& indices) {
  TypeTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto listed = [&](int32_t index) {
    for (int32_t i : indices) {
      if (i == index) return true;
    }
    return false;
  };
  for (int32_t index : indices) {
    TypeEntry* e = index >= kPFTypeDynamicBegin ? t.Get(index) : nullptr;
    auto it = e != nullptr ? t.by_key.find(e->key) : t.by_key.end();
    if (it == t.by_key.end() || it->second != index) {
      Throw("ValueError", "cannot free the key of type index " + std::to_string(index) +
                              ": not a dynamic type that its key names");
    }
  }
  for (int32_t index = kPFTypeDynamicBegin; index < t.next_dynamic; ++index) {
    const TypeEntry* e = t.Get(index);
    if (e == nullptr || listed(index)) continue;
    for (int32_t a : e->ancestors) {
      if (a != index && listed(a)) {
        Throw("ValueError", "cannot free the key of type '" + t.Get(a)->key + "': type '" + e->key +
                                "' derives from it");
      }
    }
    for (const PFFieldInfo& f : e->fields) {
      if (listed(f.static_type_index)) {
        Throw("ValueError", "cannot free the key of type '" + t.Get(f.static_type_index)->key +
                                "': field '" + std::string(ViewOf(&f.name)) + "' of type '" +
                                e->key + "' is declared with it");
      }
    }
  }
  for (int32_t index : indices) t.by_key.erase(t.Get(index)->key);
}

std::atomic<void*>* ForeignBindingRef(PFObject* obj) noexcept {
  const ForeignTypes* foreign = g_foreign_types.load(std::memory_order_acquire);
  return foreign != nullptr && foreign->binding_ref != nullptr ? foreign->binding_ref(obj)
                                                               : nullptr;
}

TypeRedefinitionCheck::TypeRedefinitionCheck() noexcept : outer_(t_redefinition_check) {
  t_redefinition_check = this;
}

TypeRedefinitionCheck::~TypeRedefinitionCheck() { t_redefinition_check = outer_; }

std::string TypeRedefinitionCheck::Conflict() const {
  if (!conflict.empty()) return conflict;
  for (const auto& [index, before] : touched) {
    if (before.seen_fields == 0 || before.matched_fields == before.fields) continue;
    return "object type '" + Table().Get(index)->key +
           "' is already defined in this process (a field of the loaded definition is missing)";
  }
  return "";
}

}  // namespace detail
}  // namespace packedfun

using namespace packedfun::detail;

extern "C" {

PACKEDFUN_API int PFTypeKeyToIndex(const PFByteArray* type_key, int32_t* out) {
  return Guard([&] {
    std::string key(ViewOf(type_key));
    TypeTable& t = Table();
    {
      std::lock_guard<std::mutex> lock(t.mu);
      auto it = t.by_key.find(key);
      if (it != t.by_key.end()) return *out = it->second, 0;
    }
    // A type of another FFI in the process (a tvm-ffi library's) is mirrored on first use.
    const ForeignTypes* foreign = g_foreign_types.load(std::memory_order_acquire);
    int32_t found = foreign != nullptr ? foreign->find(key) : -1;
    if (found < 0) return RaiseError("KeyError", "unknown type key '" + key + "'");
    *out = found;
    return 0;
  });
}

PACKEDFUN_API int PFTypeGetInfo(int32_t type_index, const PFTypeInfo** out) {
  TypeEntry* e = Table().Get(type_index);
  if (e == nullptr)
    return RaiseError("IndexError", "unknown type index " + std::to_string(type_index));
  *out = &e->info;
  return 0;
}

PACKEDFUN_API int PFTypeRegister(const PFByteArray* type_key, int32_t parent_index, int32_t* out) {
  return Guard([&] {
    std::string_view key = ViewOf(type_key);
    if (key.empty()) return RaiseError("ValueError", "PFTypeRegister: empty type key");
    *out = Register(key, parent_index, true);
    return 0;
  });
}

PACKEDFUN_API int PFTypeRegisterField(int32_t type_index, const PFFieldInfo* info) {
  return Guard([&] {
    TypeEntry* e = CheckType(type_index);
    std::string_view name = ViewOf(&info->name);
    if (info->getter == nullptr) {
      return RaiseError("ValueError", "field '" + std::string(name) + "' has no getter");
    }
    std::lock_guard<std::mutex> lock(Table().mu);
    if (SkipRedefinition(e, info, nullptr)) return 0;
    for (const PFFieldInfo& f : e->fields) {
      if (ViewOf(&f.name) == name) {
        return RaiseError("ValueError",
                          "type '" + e->key + "' already has a field '" + std::string(name) + "'");
      }
    }
    e->fields.push_back(*info);
    e->info.fields = e->fields.data();
    e->info.num_fields = static_cast<int32_t>(e->fields.size());
    return 0;
  });
}

PACKEDFUN_API int PFTypeRegisterMethod(int32_t type_index, const PFMethodInfo* info) {
  return Guard([&] {
    TypeEntry* e = CheckType(type_index);
    std::string_view name = ViewOf(&info->name);
    if (info->method == nullptr || info->method->type_index != kPFTypeFunction) {
      return RaiseError("TypeError", "method '" + std::string(name) + "' must be a Function");
    }
    std::lock_guard<std::mutex> lock(Table().mu);
    if (SkipRedefinition(e, nullptr, info)) return 0;
    for (const PFMethodInfo& m : e->methods) {
      if (ViewOf(&m.name) == name) {
        return RaiseError("ValueError",
                          "type '" + e->key + "' already has a method '" + std::string(name) + "'");
      }
    }
    e->methods.push_back(*info);
    e->methods.back().reserved = 0;
    IncRef(info->method);
    e->info.methods = e->methods.data();
    e->info.num_methods = static_cast<int32_t>(e->methods.size());
    return 0;
  });
}

PACKEDFUN_API int PFTypeSetDoc(int32_t type_index, const PFByteArray* doc) {
  return Guard([&] {
    TypeEntry* e = CheckType(type_index);
    std::lock_guard<std::mutex> lock(Table().mu);
    e->info.doc = doc != nullptr ? *doc : PFByteArray{"", 0};
    return 0;
  });
}

PACKEDFUN_API int PFTypeIsInstance(int32_t type_index, int32_t base_index) {
  const TypeTable& t = Table();
  const TypeEntry* e = t.Get(type_index);
  const TypeEntry* base = t.Get(base_index);
  if (e == nullptr || base == nullptr) return 0;
  int32_t d = base->info.depth;
  return e->info.depth >= d && e->ancestors[d] == base_index ? 1 : 0;
}

PACKEDFUN_API int PFTypeListKeys(PFAny* out, int32_t* num_types) {
  return Guard([&] {
    TypeTable& t = Table();
    int32_t end = 0;
    {
      std::lock_guard<std::mutex> lock(t.mu);
      end = t.next_dynamic;
    }
    PFSeqObject* arr = NewSeq(kPFTypeArray, end);
    PFAny result = ObjectAny(Header(arr));
    try {
      for (int32_t i = 0; i < end; ++i) {
        const TypeEntry* e = t.Get(i);
        arr->data[i] = e != nullptr ? MakeStringAny(e->key) : MakeStringAny(std::string_view());
        arr->size = i + 1;
      }
    } catch (...) {
      ReleaseAny(&result);
      throw;
    }
    *out = result;
    if (num_types != nullptr) *num_types = end;
    return 0;
  });
}

}  // extern "C"
