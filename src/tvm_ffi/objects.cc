// Apache TVM FFI bridge: objects of tvm-ffi's own types (a library's IntPair) as packedfun objects
// of mirrored types: the same type key and parent chain, fields and methods read through
// tvm-ffi's reflection, the tvm-ffi object itself held inside and handed back as itself.
#include <atomic>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "runtime/error.h"
#include "runtime/object.h"
#include "runtime/registry.h"
#include "runtime/string.h"
#include "runtime/type.h"
#include "tvm_ffi/bridge.h"

namespace packedfun {
namespace detail {
namespace tvmffi {
namespace {

constexpr int32_t kTVMObject = 64;  // tvm-ffi's root type, ffi.Object

/*! One field of a mirrored type, copied out of tvm-ffi's type table. Never freed: packedfun's
 *  type table points at its strings and every proxy at the record. */
struct FieldRec {
  int32_t pos;  // the field's slot in every proxy of its type and of the types deriving from it
  int64_t offset;
  int64_t flags;
  int (*getter)(void* field, PFAny* out);
  void* setter;
  std::string name;
  std::string doc;
};

/*! A tvm-ffi type mirrored into packedfun's type table. Never freed. */
struct Mirror {
  int32_t pf_index;
  std::vector<const FieldRec*> slots;  // ancestors' fields first, then the type's own
  std::deque<std::string> texts;       // names and docs packedfun's type table points at
};

/*!
 * A packedfun object standing for a tvm-ffi object. packedfun reads a field through a getter
 * given only the field's address (object + offset), so each proxy carries one slot per field
 * after this header: slot `pos` holds the field's record, and the record's `pos` leads from the
 * slot back to the proxy and its tvm-ffi object. The slots follow the struct in the same block.
 */
struct Proxy {
  PFObject header;
  void* tvm;                       // owned tvm-ffi reference
  std::atomic<void*> binding_ref;  // the binding's wrapper (PFObjectGetBindingRef), weak
};

/*!
 * The live proxies by tvm-ffi object, so an object that crosses again while its proxy lives comes
 * back as that proxy (one packedfun object, one Python wrapper, per tvm-ffi object). The map holds
 * no reference: a proxy leaves it in its deleter, and a lookup takes a reference only from a proxy
 * whose count has not reached 0 (TryIncRefAlive; a dying one is replaced, never revived).
 */
std::mutex& LiveMutex() {
  static std::mutex mutex;
  return mutex;
}

std::unordered_map<void*, Proxy*>& Live() {  // guarded by LiveMutex
  static auto* live = new std::unordered_map<void*, Proxy*>();
  return *live;
}

const FieldRec** Slots(Proxy* p) noexcept {
  return reinterpret_cast<const FieldRec**>(reinterpret_cast<char*>(p) + sizeof(Proxy));
}

void DeleteProxy(PFObject* obj) noexcept {
  Proxy* p = reinterpret_cast<Proxy*>(obj);
  {
    std::lock_guard<std::mutex> lock(LiveMutex());
    auto found = Live().find(p->tvm);
    if (found != Live().end() && found->second == p) Live().erase(found);
  }
  GetApi().ObjectDecRef(p->tvm);
  std::free(p);
}

/*! The proxy and field record behind a field address handed to a getter or setter. */
Proxy* ProxyOfField(void* field, const FieldRec** rec) noexcept {
  *rec = *static_cast<const FieldRec* const*>(field);
  char* slots = static_cast<char*>(field) - sizeof(FieldRec*) * static_cast<size_t>((*rec)->pos);
  return reinterpret_cast<Proxy*>(slots - sizeof(Proxy));
}

int GetField(void* field, PFAny* result) {
  const FieldRec* rec = nullptr;
  Proxy* p = ProxyOfField(field, &rec);
  PFAny value = NoneAny();
  if (rec->getter(static_cast<char*>(p->tvm) + rec->offset, &value) != 0) {
    return RaiseFromTVM(rec->name);
  }
  int rc = Guard([&] {
    ToPF(value, result, "field");
    return 0;
  });
  ReleaseTVM(&value);
  return rc;
}

/*! Stores `value` into field `rec` of the tvm-ffi object behind `p` through tvm-ffi's setter. */
int StoreField(Proxy* p, const FieldRec* rec, const PFAny* value) {
  return Guard([&] {
    Temps temps;
    PFAny tvm_value = NoneAny();
    ToTVM(*value, &tvm_value, &temps, ToTVMOptions{true, true}, "field value");
    void* address = static_cast<char*>(p->tvm) + rec->offset;
    int rc = 0;
    if (rec->flags & kFieldSetterIsFunction) {  // tvm-ffi calls it with (field address, value)
      PFAny args[2] = {NoneAny(), tvm_value};
      args[0].type_index = kPFTypeOpaquePtr;
      args[0].v_ptr = address;
      PFAny ignored = NoneAny();
      rc = Cell<FunctionCell>(rec->setter)->safe_call(rec->setter, args, 2, &ignored);
      if (rc == 0) ReleaseTVM(&ignored);
    } else {
      rc = reinterpret_cast<int (*)(void*, const PFAny*)>(rec->setter)(address, &tvm_value);
    }
    return rc == 0 ? 0 : RaiseFromTVM(rec->name);
  });
}

int SetField(void* field, const PFAny* value) {
  const FieldRec* rec = nullptr;
  Proxy* p = ProxyOfField(field, &rec);
  return StoreField(p, rec, value);
}

std::mutex& MirrorMutex() {
  static std::mutex mutex;
  return mutex;
}

std::unordered_map<int32_t, Mirror*>& Mirrors() {  // guarded by MirrorMutex
  static auto* mirrors = new std::unordered_map<int32_t, Mirror*>();
  return *mirrors;
}

// Lock-free reads for the common type indices (a crossing must not take a lock).
constexpr int32_t kFastIndices = 1 << 12;
std::atomic<Mirror*> g_fast[kFastIndices];

thread_local bool t_mirroring = false;  // PFTypeKeyToIndex asks the hook below: not while we ask

PFByteArray Keep(Mirror* m, std::string_view text) {
  const std::string& kept = m->texts.emplace_back(text);
  return PFByteArray{kept.data(), kept.size()};
}

std::string_view ViewOf(const PFByteArray& a) {
  return a.size == 0 ? std::string_view() : std::string_view(a.data, a.size);
}

/*! packedfun's index for `key` when packedfun itself already has a type of that name, else -1. */
int32_t NativeIndex(const std::string& key) {
  PFByteArray bytes{key.data(), key.size()};
  int32_t index = -1;
  t_mirroring = true;
  int rc = PFTypeKeyToIndex(&bytes, &index);
  t_mirroring = false;
  if (rc == 0) return index;
  PFObject* ignored = nullptr;
  PFErrorMoveFromRaised(&ignored);
  DecRef(ignored);
  return -1;
}

void AddFields(Mirror* m, int32_t pf_index, const TypeInfo* info) {
  for (int32_t i = 0; i < info->num_fields; ++i) {
    const FieldInfo& f = info->fields[i];
    auto* rec = new FieldRec{static_cast<int32_t>(m->slots.size()),
                             f.offset,
                             f.flags,
                             f.getter,
                             f.setter,
                             std::string(ViewOf(f.name)),
                             std::string(ViewOf(f.doc))};
    m->slots.push_back(rec);
    bool writable = (f.flags & kFieldWritable) != 0 && f.setter != nullptr;
    PFFieldInfo field{};
    field.name = PFByteArray{rec->name.data(), rec->name.size()};
    field.doc = PFByteArray{rec->doc.data(), rec->doc.size()};
    field.offset = static_cast<int64_t>(sizeof(Proxy) + sizeof(FieldRec*) * rec->pos);
    field.flags = writable ? 0 : PACKEDFUN_FIELD_READONLY;
    field.static_type_index = kPFTypeAny;
    field.getter = &GetField;
    field.setter = writable ? &SetField : nullptr;
    CheckCall(PFTypeRegisterField(pf_index, &field));
  }
}

void AddMethod(Mirror* m, int32_t pf_index, const std::string& key, std::string_view name,
               const MethodInfo& method) {
  if (method.method.type_index != kFunction) return;
  void* handle = method.method.v_obj;
  GetApi().ObjectIncRef(handle);
  PFObject* func = NewFunction(Cell<FunctionCell>(handle)->safe_call, handle, nullptr,
                               key + "." + std::string(ViewOf(method.name)));
  PFMethodInfo info{};
  info.name = Keep(m, name);
  info.doc = Keep(m, ViewOf(method.doc));
  info.method = func;
  info.flags = (method.flags & kMethodStatic) ? PACKEDFUN_METHOD_STATIC : 0;
  int rc = PFTypeRegisterMethod(pf_index, &info);
  DecRef(func);
  CheckCall(rc);
}

void AddMethods(Mirror* m, int32_t pf_index, const std::string& key, const TypeInfo* info) {
  for (int32_t i = 0; i < info->num_methods; ++i) {
    const MethodInfo& method = info->methods[i];
    AddMethod(m, pf_index, key, ViewOf(method.name), method);
    // tvm-ffi's constructor (refl::init) is packedfun's: `Cls(...)` calls it on both sides.
    if (ViewOf(method.name) == "__ffi_init__" && (method.flags & kMethodStatic)) {
      AddMethod(m, pf_index, key, "__create__", method);
    }
  }
}

/*! Mirrors tvm-ffi type `tvm_index` (and its ancestors first). Called with MirrorMutex held. */
Mirror* MirrorLocked(int32_t tvm_index) {
  auto found = Mirrors().find(tvm_index);
  if (found != Mirrors().end()) return found->second;
  const TypeInfo* info = GetApi().GetTypeInfo(tvm_index);
  if (info == nullptr) {
    Throw("TypeError", "tvm-ffi object of unknown type index " + std::to_string(tvm_index) +
                           " cannot cross into packedfun");
  }
  std::string key(ViewOf(info->type_key));
  const Mirror* parent = nullptr;
  int32_t parent_index = kPFTypeObject;
  if (info->type_depth > 0) {
    int32_t parent_tvm = info->type_ancestors[info->type_depth - 1]->type_index;
    if (parent_tvm != kTVMObject) {
      parent = MirrorLocked(parent_tvm);
      parent_index = parent->pf_index;
    }
  }
  auto* m = new Mirror();
  if (parent != nullptr) m->slots = parent->slots;
  if (NativeIndex(key) >= 0) {
    // packedfun has a type of its own with this key (both testing libraries define
    // testing.TestIntPair): the mirror is a second type of that key, which the key lookup never
    // names (it names packedfun's); tvm-ffi's objects reach it, and so does
    // packedfun.tvm_ffi_type_index.
    m->pf_index = RegisterUnkeyed(key, parent_index);
  } else {
    PFByteArray key_bytes{key.data(), key.size()};
    CheckCall(PFTypeRegister(&key_bytes, parent_index, &m->pf_index));
  }
  AddFields(m, m->pf_index, info);
  AddMethods(m, m->pf_index, key, info);
  // tvm-ffi's optional TVMFFITypeMetadata starts with the type's docstring.
  if (const auto* doc = static_cast<const PFByteArray*>(info->metadata); doc && doc->size != 0) {
    PFByteArray kept = Keep(m, ViewOf(*doc));
    CheckCall(PFTypeSetDoc(m->pf_index, &kept));
  }
  Mirrors().emplace(tvm_index, m);
  if (tvm_index >= 0 && tvm_index < kFastIndices) {
    g_fast[tvm_index].store(m, std::memory_order_release);
  }
  return m;
}

const Mirror* MirrorOf(int32_t tvm_index) {
  if (tvm_index >= 0 && tvm_index < kFastIndices) {
    if (Mirror* m = g_fast[tvm_index].load(std::memory_order_acquire)) return m;
  }
  std::lock_guard<std::mutex> lock(MirrorMutex());
  return MirrorLocked(tvm_index);
}

/*! The packedfun index mirroring tvm-ffi's type `key` (mirrored on first use); -1 when no
 *  libtvm_ffi is loaded, its table lacks the key, or the type is one packedfun translates. */
int32_t TVMTypeOfKey(std::string_view key) {
  if (!AttachLoadedLibrary()) return -1;
  PFByteArray bytes{key.data(), key.size()};
  int32_t tvm_index = -1;
  if (GetApi().TypeKeyToIndex(&bytes, &tvm_index) != 0) {
    void* err = nullptr;
    GetApi().ErrorMoveFromRaised(&err);
    if (err != nullptr) GetApi().ObjectDecRef(err);
    return -1;
  }
  // tvm-ffi's built-in types that packedfun translates (String, Array, ...) are not mirrored.
  if (tvm_index < kTVMObject || (tvm_index <= kDict && tvm_index != kModule)) return -1;
  return MirrorOf(tvm_index)->pf_index;
}

/*! The ForeignTypes hook: tvm-ffi's type `key`, mirrored (register_object under the switch). */
int32_t FindType(std::string_view key) { return t_mirroring ? -1 : TVMTypeOfKey(key); }

/*! The ForeignTypes hook: the binding reference of a proxy. */
std::atomic<void*>* BindingRef(PFObject* obj) {
  if (obj->deleter != &DeleteProxy) return nullptr;
  return &reinterpret_cast<Proxy*>(obj)->binding_ref;
}

const ForeignTypes kForeignTypes = {&FindType, &BindingRef};

[[maybe_unused]] const bool kRegistered = (SetForeignTypes(&kForeignTypes), true);

/*! The tvm-ffi type index of mirrored type `pf_index`, or -1 when it mirrors none. */
int32_t MirroredIndex(int64_t pf_index) {
  std::lock_guard<std::mutex> lock(MirrorMutex());
  for (const auto& entry : Mirrors()) {
    if (entry.second->pf_index == pf_index) return entry.first;
  }
  return -1;
}

/*! The global "packedfun.tvm_ffi_type_attr": (type index, name) -> the tvm-ffi type attribute
 *  `name` (`__ffi_eq__`, `__ffi_hash__`, ...) of a mirrored type, None when the type mirrors no
 *  tvm-ffi type or tvm-ffi has no such attribute for it. */
int TypeAttrCall(void*, const PFAny* args, int32_t n, PFAny* result) {
  std::string_view name;
  if (n != 2 || args[0].type_index != kPFTypeInt || !AnyToStringView(args[1], false, &name)) {
    return RaiseError("TypeError", "packedfun.tvm_ffi_type_attr: expected an int and a str");
  }
  return Guard([&] {
    *result = NoneAny();
    int32_t tvm_index = MirroredIndex(args[0].v_int64);
    if (tvm_index < 0 || GetApi().GetTypeAttrColumn == nullptr) return 0;
    PFByteArray key{name.data(), name.size()};
    const TypeAttrColumn* column = GetApi().GetTypeAttrColumn(&key);
    if (column == nullptr) return 0;
    int64_t offset = static_cast<int64_t>(tvm_index) - column->begin_index;
    if (offset < 0 || offset >= column->size) return 0;
    ToPF(column->data[offset], result, "a tvm-ffi type attribute");  // the column keeps its own
    return 0;
  });
}

/*! The global "packedfun.tvm_ffi_type_index": (type key) -> the packedfun index of tvm-ffi's
 *  type of that key, even where packedfun has a type of its own with the key (which the key
 *  lookup names); None when no loaded tvm-ffi library registers it. */
int TypeIndexCall(void*, const PFAny* args, int32_t n, PFAny* result) {
  std::string_view key;
  if (n != 1 || !AnyToStringView(args[0], false, &key)) {
    return RaiseError("TypeError", "packedfun.tvm_ffi_type_index: expected a type key (str)");
  }
  return Guard([&] {
    int32_t index = TVMTypeOfKey(key);
    *result = NoneAny();
    if (index >= 0) {
      result->type_index = kPFTypeInt;
      result->v_int64 = index;
    }
    return 0;
  });
}

/*! The global "packedfun.tvm_ffi_force_set_field": (object, field name, value) stores the value
 *  through tvm-ffi's setter of the field even where the field is read-only from Python (tvm-ffi's
 *  `FFIProperty.set`, which its `__replace__` uses). TypeError when the object is not of a tvm-ffi
 *  type, AttributeError when the type reflects no such field or tvm-ffi gives it no setter. */
int ForceSetFieldCall(void*, const PFAny* args, int32_t n, PFAny* result) {
  std::string_view name;
  if (n != 3 || !IsObjectIndex(args[0].type_index) || !AnyToStringView(args[1], false, &name)) {
    return RaiseError("TypeError",
                      "packedfun.tvm_ffi_force_set_field: expected an object, a str and a value");
  }
  PFObject* obj = args[0].v_obj;
  if (obj->deleter != &DeleteProxy) {
    return RaiseError("TypeError",
                      "packedfun.tvm_ffi_force_set_field: the object is not of a tvm-ffi type");
  }
  Proxy* p = reinterpret_cast<Proxy*>(obj);
  const FieldRec* rec = nullptr;
  int rc = Guard([&] {
    const Mirror* m = MirrorOf(static_cast<Object*>(p->tvm)->type_index);
    for (const FieldRec* f : m->slots) {
      if (f->name == name) rec = f;  // a derived type's field of the same name comes last
    }
    return 0;
  });
  if (rc != 0) return rc;
  if (rec == nullptr || rec->setter == nullptr) {
    return RaiseError("AttributeError", "tvm-ffi type '" +
                                            TypeKey(static_cast<Object*>(p->tvm)->type_index) +
                                            "' has no settable field '" + std::string(name) + "'");
  }
  *result = NoneAny();
  return StoreField(p, rec, &args[2]);
}

[[maybe_unused]] const bool kBuiltinsRegistered =
    (RegisterBuiltin("packedfun.tvm_ffi_type_attr", &TypeAttrCall),
     RegisterBuiltin("packedfun.tvm_ffi_type_index", &TypeIndexCall),
     RegisterBuiltin("packedfun.tvm_ffi_force_set_field", &ForceSetFieldCall), true);

}  // namespace

void ObjectToProxy(const PFAny& in, PFAny* out) {
  const Mirror* m = MirrorOf(in.type_index);
  std::lock_guard<std::mutex> lock(LiveMutex());
  Proxy*& live = Live()[in.v_obj];  // may throw: nothing made yet
  if (live != nullptr && TryIncRefAlive(&live->header)) {
    *out = ObjectAny(&live->header);
    return;
  }
  size_t slots = m->slots.size();
  void* memory = std::malloc(sizeof(Proxy) + sizeof(FieldRec*) * slots);
  if (memory == nullptr) {
    if (live == nullptr) Live().erase(in.v_obj);
    throw std::bad_alloc();
  }
  Proxy* p = static_cast<Proxy*>(memory);
  InitHeader(&p->header, m->pf_index, &DeleteProxy);
  GetApi().ObjectIncRef(in.v_obj);
  p->tvm = in.v_obj;
  new (&p->binding_ref) std::atomic<void*>(nullptr);
  for (size_t i = 0; i < slots; ++i) Slots(p)[i] = m->slots[i];
  live = p;  // a dying proxy of the same object then leaves the entry alone in its deleter
  *out = ObjectAny(&p->header);
}

int32_t MirroredTVMIndex(int32_t pf_index) { return MirroredIndex(pf_index); }

bool ProxyToTVM(PFObject* obj, PFAny* out) noexcept {
  if (obj == nullptr || obj->deleter != &DeleteProxy) return false;
  Proxy* p = reinterpret_cast<Proxy*>(obj);
  *out = NoneAny();
  out->type_index = static_cast<Object*>(p->tvm)->type_index;
  out->v_obj = static_cast<PFObject*>(p->tvm);
  return true;
}

}  // namespace tvmffi
}  // namespace detail
}  // namespace packedfun
