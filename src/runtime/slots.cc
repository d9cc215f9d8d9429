// Slot types: object types whose instances are a header and a run of PFAny fields.
//
// A language binding defines a class (Python's py_class) as a slot type; the runtime allocates
// its instances, so their fields are reflected like a C++ type's and every caller (C++ reflection,
// structural equality, JSON, pickling, the GC's child walk) reads them through the same getters.
// Setters check the declared type: one checked setter per distinct (type, nullable) pair, taken
// from a pool of template instances, because a PFFieldSetter sees only the field's address.
#include <packedfun/c_api.h>
#include <packedfun/dtype.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <new>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/error.h"
#include "runtime/map.h"
#include "runtime/object.h"
#include "runtime/registry.h"
#include "runtime/string.h"
#include "runtime/tensor.h"
#include "runtime/type.h"

#define PACKEDFUN_NOINLINE_SLOTS __attribute__((noinline))

namespace packedfun {
namespace detail {
namespace {

/*! The slot part of an instance: the slot count (for the deleter), the binding's weak reference
 *  to its wrapper (PFObjectExchangeBindingRef), then the slots. It follows the header, or, for a
 *  type deriving from a native type with a layout (PFTypeRegisterLayout), that type's object. */
struct SlotTail {
  int64_t num_slots;
  std::atomic<void*> binding_ref;
  PFAny slots[1];  // num_slots entries (at least one is allocated)
};
constexpr int64_t kTailSlots = offsetof(SlotTail, slots);
constexpr int64_t kPlainTail = sizeof(PFObject);  // the tail's offset without a native parent

/*! The native object an instance starts with, when its root is a C++ type. */
struct NativeLayout {
  PFTypeLayoutInfo info;
  int64_t prefix;  // bytes allocated for it: its size rounded up to 16
};

/*! What a field accepts. */
struct SlotElems;

struct SlotCheck {
  int32_t type_index;
  int32_t nullable;
  const SlotElems* elems = nullptr;  // element types of a container field, or NULL: unchecked
};

/*! The declared element types of a container field (`list[T]`, `dict[K, V]`), or the members of
 *  a union (`Union[int, str]`, on a check whose type_index is kPFTypeAny), interned: equal
 *  schemas are one object, so checks compare by pointer. Never freed. */
struct SlotElems {
  bool is_map;      // false: an Array/List of `value`; true: a Map/Dict of `key` to `value`
  SlotCheck key;    // is_map only
  SlotCheck value;  // the elements (a map's values)
  std::vector<SlotCheck> alts;  // a union's members, in declared order (empty: not a union)
};

bool IsUnion(const SlotCheck& c) { return c.elems != nullptr && !c.elems->alts.empty(); }

/*! Whether two checks are the same (element schemas are interned, so compared by pointer). */
bool SameCheck(const SlotCheck& a, const SlotCheck& b) {
  return a.type_index == b.type_index && a.nullable == b.nullable && a.elems == b.elems;
}

struct SlotField {
  std::string name;
  std::string doc;
  int32_t flags;
  SlotCheck check;
};

struct SlotType {
  int32_t type_index;
  std::string key;
  int32_t parent;
  const NativeLayout* native;     // the native object first in each instance, or NULL
  int64_t tail_offset;            // from the header to the SlotTail
  int32_t num_own;                // own fields, the last of `fields`
  std::vector<SlotField> fields;  // every slot in layout order (ancestors' first)
  std::string ctor_doc;
};

constexpr int kPoolSize = 1024;
SlotCheck g_checks[kPoolSize];

struct SlotTable {
  std::mutex mu;
  std::unordered_map<int32_t, std::unique_ptr<SlotType>> types;        // never erased
  std::unordered_map<int32_t, std::unique_ptr<NativeLayout>> layouts;  // never erased
  int num_checks = 0;
};

SlotTable& Table() {
  static SlotTable* table = new SlotTable();  // leaked: deleters may run at exit
  return *table;
}

// Slot types of the first type indices, for lock-free lookup on the construction path.
constexpr int32_t kFastTypes = 1 << 14;
std::atomic<const SlotType*> g_fast[kFastTypes];

const SlotType* Find(int32_t type_index) {
  if (type_index >= 0 && type_index < kFastTypes) {
    const SlotType* st = g_fast[type_index].load(std::memory_order_acquire);
    if (st != nullptr) return st;
  }
  SlotTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.types.find(type_index);
  return it == t.types.end() ? nullptr : it->second.get();
}

std::string TypeName(int32_t type_index) {
  switch (type_index) {
    case kPFTypeAny:
      return "Any";
    case kPFTypeInt:
    case kPFTypeUInt64:
      return "int";
    case kPFTypeFloat:
      return "float";
    case kPFTypeBool:
      return "bool";
    case kPFTypeNone:
      return "None";
    case kPFTypeDataType:
      return "dtype";
    case kPFTypeDevice:
      return "Device";
    case kPFTypeString:
    case kPFTypeSmallStr:
    case kPFTypeRawStr:
    case kPFTypeStrView:
      return "str";
    case kPFTypeBytes:
    case kPFTypeSmallBytes:
    case kPFTypeBytesView:
      return "bytes";
    default:
      break;
  }
  const PFTypeInfo* info = nullptr;
  if (PFTypeGetInfo(type_index, &info) != 0) {
    PFObject* err = nullptr;
    PFErrorMoveFromRaised(&err);
    DecRef(err);
    return "type index " + std::to_string(type_index);
  }
  return std::string(info->type_key.data, info->type_key.size);
}

/*! A by-value field of type index `kind` (dtype, Device) given its name: `v` (owned) becomes
 *  `parse(name)`, stored by `store`; false, `v` kept, when it is no string or `parse` rejects it
 *  (the caller reports the mismatch: expected dtype/Device, got str). */
template <typename Parse, typename Store>
bool PodFromText(PFAny* v, int32_t kind, Parse parse, Store store) {
  std::string_view text;
  if (!AnyToStringView(*v, false, &text)) return false;
  decltype(parse(text)) value;
  try {
    value = parse(text);
  } catch (const std::exception&) {
    return false;
  }
  ReleaseAny(v);
  v->type_index = kind;
  v->zero_padding = 0;
  v->v_int64 = 0;
  store(v, value);
  return true;
}

/*! A dtype field given its name ("float32"). */
bool DataTypeFromText(PFAny* v) {
  return PodFromText(
      v, kPFTypeDataType, [](std::string_view t) { return ParseDataType(t); },
      [](PFAny* out, DLDataType d) { out->v_dtype = d; });
}

/*! A Device field given its name ("cpu", "cuda:1"). */
bool DeviceFromText(PFAny* v) {
  return PodFromText(
      v, kPFTypeDevice, [](std::string_view t) { return packedfun::DeviceFromString(t); },
      [](PFAny* out, DLDevice d) { out->v_device = d; });
}

bool Fits(const SlotCheck& c, PFAny* v);

/*! An Array given for a List field, or a Map for a Dict field (what a Python list or dict packs
 *  to): `v` (owned) becomes a new List or Dict of the same items, as storing a Python list makes a
 *  copy. Items declared List or Dict themselves (`list[list[int]]`) are remade in the new
 *  container, which no one else holds yet. */
bool Remake(const SlotCheck& c, PFAny* v) {
  PFAny out = NoneAny();
  if (c.type_index == kPFTypeList) {
    const PFSeqObject* seq = reinterpret_cast<const PFSeqObject*>(v->v_obj);
    CheckCall(PFListCreate(seq->data, seq->size, &out));
  } else {
    std::vector<PFAny> kv;
    int64_t cursor = 0;
    const PFAny* key = nullptr;
    const PFAny* value = nullptr;
    while (MapEntryAt(v->v_obj, &cursor, &key, &value)) {
      kv.push_back(*key);
      kv.push_back(*value);
    }
    CheckCall(PFDictCreate(kv.data(), static_cast<int64_t>(kv.size() / 2), &out));
  }
  ReleaseAny(v);
  *v = out;
  const SlotCheck* inner = c.elems == nullptr ? nullptr : &c.elems->value;
  if (inner == nullptr || (inner->type_index != kPFTypeList && inner->type_index != kPFTypeDict))
    return true;
  if (c.type_index == kPFTypeList) {
    PFSeqObject* seq = reinterpret_cast<PFSeqObject*>(v->v_obj);
    for (int64_t i = 0; i < seq->size; ++i) Fits(*inner, &seq->data[i]);  // ElementMismatch says
  } else {
    int64_t cursor = 0;
    const PFAny* key = nullptr;
    const PFAny* value = nullptr;
    while (MapEntryAt(v->v_obj, &cursor, &key, &value))
      Fits(*inner, const_cast<PFAny*>(value));  // a value, never a key: hashing is unchanged
  }
  return true;
}

/*! Whether the owned value `v` fits `c`; converts int to float in place for a float field, a
 *  dtype's or device's name to the dtype or device for such a field, and an Array or Map to a
 *  new List or Dict for a List or Dict field. */
bool FitsUnion(const SlotCheck& c, PFAny* v);

bool Fits(const SlotCheck& c, PFAny* v) {
  int32_t t = v->type_index;
  if (IsUnion(c)) return t == kPFTypeNone ? c.nullable != 0 : FitsUnion(c, v);
  if (c.type_index == kPFTypeAny) return true;
  if (t == kPFTypeNone) return c.nullable != 0;
  switch (c.type_index) {
    case kPFTypeInt:
      return t == kPFTypeInt || t == kPFTypeBool || t == kPFTypeUInt64;
    case kPFTypeBool:
      return t == kPFTypeBool;
    case kPFTypeFloat:
      if (t == kPFTypeInt || t == kPFTypeBool) {
        v->v_float64 = static_cast<double>(v->v_int64);
        v->type_index = kPFTypeFloat;
        return true;
      }
      return t == kPFTypeFloat;
    case kPFTypeString:
      return t == kPFTypeString || t == kPFTypeSmallStr;
    case kPFTypeBytes:
      return t == kPFTypeBytes || t == kPFTypeSmallBytes;
    case kPFTypeDataType:
      return t == kPFTypeDataType || DataTypeFromText(v);
    case kPFTypeDevice:
      return t == kPFTypeDevice || DeviceFromText(v);
    case kPFTypeList:
      return t == kPFTypeList || (t == kPFTypeArray && Remake(c, v));
    case kPFTypeDict:
      return t == kPFTypeDict || (t == kPFTypeMap && Remake(c, v));
    default:
      return IsObjectIndex(t) && PFTypeIsInstance(t, c.type_index) != 0;
  }
}

std::string CheckName(const SlotCheck& c);

/*! `view` (borrowed) made owned and checked against `c`. Throws TypeError prefixed by `where`. */
[[noreturn]] PACKEDFUN_NOINLINE_SLOTS void ThrowMismatch(const SlotCheck& c, int32_t got,
                                                         const SlotType* st, const SlotField* f) {
  std::string want = CheckName(c);
  std::string where = st != nullptr ? st->key + "." + f->name + ": " : "";
  Throw("TypeError", where + "expected " + want + ", got " + TypeName(got));
}

std::string ElemsName(const SlotElems& e) {
  return e.is_map ? "[" + CheckName(e.key) + ", " + CheckName(e.value) + "]"
                  : "[" + CheckName(e.value) + "]";
}

std::string CheckName(const SlotCheck& c) {
  std::string name = TypeName(c.type_index);
  if (IsUnion(c)) {
    name = "Union[";
    for (size_t i = 0; i < c.elems->alts.size(); ++i)
      name += (i > 0 ? ", " : "") + CheckName(c.elems->alts[i]);
    name += "]";
  } else if (c.elems != nullptr) {
    name += ElemsName(*c.elems);
  }
  return c.nullable ? "Optional[" + name + "]" : name;
}

/*! Whether an element (borrowed, owned by its container) fits `c`, as Fits but without
 *  converting it (an int fits a float element, a dtype's name a dtype element). */
std::string ElementMismatch(const SlotCheck& c, const PFAny& v);

bool ElementFits(const SlotCheck& c, const PFAny& e) {
  int32_t t = e.type_index;
  if (IsUnion(c)) {  // some member fits, its own element types included
    if (t == kPFTypeNone) return c.nullable != 0;
    for (const SlotCheck& alt : c.elems->alts) {
      if (!ElementFits(alt, e)) continue;
      if (alt.elems == nullptr || ElementMismatch(alt, e).empty()) return true;
    }
    return false;
  }
  if (c.type_index == kPFTypeFloat && (t == kPFTypeInt || t == kPFTypeBool)) return true;
  if (c.type_index == kPFTypeDataType && (t == kPFTypeString || t == kPFTypeSmallStr)) {
    PFAny copy = NoneAny();
    ViewToOwned(e, &copy);
    bool ok = DataTypeFromText(&copy);
    ReleaseAny(&copy);
    return ok;
  }
  // A device's name is not converted inside a container (the probe borrows: Fits must not
  // release it).
  if (c.type_index == kPFTypeDevice) return t == kPFTypeDevice;
  if (c.type_index == kPFTypeList || c.type_index == kPFTypeDict) return t == c.type_index;
  PFAny probe = e;  // Fits converts only the kinds handled above
  return Fits(c, &probe);
}

/*! "" when the elements of `v` (a container that fits `c`'s type) fit `c.elems`; else where the
 *  first mismatch is and what it is ("element [1]: expected int, got None"). */
std::string ElementError(const SlotCheck& c, const PFAny& e, const std::string& where) {
  if (!ElementFits(c, e))
    return where + "expected " + CheckName(c) + ", got " + TypeName(e.type_index);
  if (c.elems == nullptr || e.type_index == kPFTypeNone || IsUnion(c)) return "";
  std::string inner = ElementMismatch(c, e);
  return inner.empty() ? "" : where + inner;
}

std::string ElementMismatch(const SlotCheck& c, const PFAny& v) {
  // a union's member was checked with its elements when it was chosen (FitsUnion, ElementFits)
  if (c.elems == nullptr || IsUnion(c) || !IsObjectIndex(v.type_index)) return "";
  int32_t t = v.type_index;
  if (!c.elems->is_map && (t == kPFTypeArray || t == kPFTypeList)) {
    const PFSeqObject* seq = reinterpret_cast<const PFSeqObject*>(v.v_obj);
    for (int64_t i = 0; i < seq->size; ++i) {
      std::string m =
          ElementError(c.elems->value, seq->data[i], "element [" + std::to_string(i) + "]: ");
      if (!m.empty()) return m;
    }
  } else if (c.elems->is_map && (t == kPFTypeMap || t == kPFTypeDict)) {
    int64_t cursor = 0;
    const PFAny* key = nullptr;
    const PFAny* value = nullptr;
    while (MapEntryAt(v.v_obj, &cursor, &key, &value)) {
      std::string m = ElementError(c.elems->key, *key, "key: ");
      if (m.empty()) m = ElementError(c.elems->value, *value, "value: ");
      if (!m.empty()) return m;
    }
  }
  return "";
}

/*! Whether the owned value `v` fits a member of the union `c`, its element types included; the
 *  first member that does decides, and its conversion (an int to a float, a name to a dtype, an
 *  Array to a List) is kept. Each member is tried on its own reference, so a member that converts
 *  and then fails leaves `v` as it was. */
bool FitsUnion(const SlotCheck& c, PFAny* v) {
  for (const SlotCheck& alt : c.elems->alts) {
    PFAny probe = *v;
    if (IsObjectIndex(probe.type_index)) IncRef(probe.v_obj);
    if (Fits(alt, &probe) && (alt.elems == nullptr || probe.type_index == kPFTypeNone ||
                              ElementMismatch(alt, probe).empty())) {
      ReleaseAny(v);
      *v = probe;
      return true;
    }
    ReleaseAny(&probe);
  }
  return false;
}

/*! `view` (borrowed) made owned and checked against `c`. Throws TypeError naming the field of
 *  `st` when given (the message is only built on failure: this is the construction path). */
PFAny CheckedValue(const SlotCheck& c, const PFAny& view, const SlotType* st = nullptr,
                   const SlotField* f = nullptr) {
  PFAny v;
  int32_t t = view.type_index;
  if (t < kPFTypeDLTensorPtr || t == kPFTypeUInt64 || IsObjectIndex(t)) {  // no borrowed kind
    v = view;
    v.zero_padding = 0;
    if (IsObjectIndex(t)) IncRef(v.v_obj);
  } else {
    v = NoneAny();
    ViewToOwned(view, &v);
  }
  if (Fits(c, &v)) {
    if (c.elems == nullptr || v.type_index == kPFTypeNone) return v;
    std::string m = ElementMismatch(c, v);
    if (m.empty()) return v;
    ReleaseAny(&v);
    Throw("TypeError", (st != nullptr ? st->key + "." + f->name + ": " : "") + m);
  }
  int32_t got = v.type_index;
  ReleaseAny(&v);
  ThrowMismatch(c, got, st, f);
}

void Store(PFAny* slot, PFAny v) {
  PFAny old = *slot;
  *slot = v;
  ReleaseAny(&old);  // after the store: the old value's deleter may read this object
}

int SlotGetter(void* field, PFAny* result) {
  const PFAny* slot = static_cast<const PFAny*>(field);
  if (IsObjectIndex(slot->type_index)) IncRef(slot->v_obj);
  *result = *slot;
  return 0;
}

int AnySetter(void* field, const PFAny* value) {
  return Guard([&] {
    Store(static_cast<PFAny*>(field), CheckedValue(SlotCheck{kPFTypeAny, 1}, *value));
    return 0;
  });
}

// The checked store, once: each pool instance only binds its check and jumps here, so the pool's
// 1024 instances stay a tail call each (inlining this body into every one made this file the
// slowest of the runtime's to compile, 10 s of CPU, and 400 KB of its code).
[[gnu::noinline]] int CheckedSetter(const SlotCheck& check, void* field, const PFAny* value) {
  return Guard([&] {
    Store(static_cast<PFAny*>(field), CheckedValue(check, *value));
    return 0;
  });
}

template <int K>
int PoolSetter(void* field, const PFAny* value) {
  return CheckedSetter(g_checks[K], field, value);
}

template <int... K>
constexpr std::array<PFFieldSetter, sizeof...(K)> MakePool(std::integer_sequence<int, K...>) {
  return {{&PoolSetter<K>...}};
}

const std::array<PFFieldSetter, kPoolSize> kPool =
    MakePool(std::make_integer_sequence<int, kPoolSize>());

/*! The setter for `c` (caller holds the table lock). Throws when the pool is exhausted. */
PFFieldSetter SetterFor(SlotTable& t, const SlotCheck& c) {
  if (c.type_index == kPFTypeAny && !IsUnion(c)) return &AnySetter;
  for (int i = 0; i < t.num_checks; ++i) {
    if (SameCheck(g_checks[i], c)) return kPool[i];
  }
  if (t.num_checks == kPoolSize) {
    Throw("ValueError", "too many distinct declared field types (" + std::to_string(kPoolSize) +
                            "); declare further fields as Any");
  }
  g_checks[t.num_checks] = c;
  return kPool[t.num_checks++];
}

SlotTail* TailOf(const SlotType* st, PFObject* obj) {
  return reinterpret_cast<SlotTail*>(reinterpret_cast<char*>(obj) + st->tail_offset);
}

// Instances whose release is under way on this thread, or NULL: a long chain of slot objects
// (a linked list, a deep IR tree) is freed in a loop, not by one nested deleter per link.
thread_local std::vector<PFObject*>* t_dying = nullptr;

void FreeSlots(PFObject* p) {
  const SlotType* st = Find(p->type_index);
  SlotTail* tail = TailOf(st, p);
  for (int64_t i = 0; i < tail->num_slots; ++i) ReleaseAny(&tail->slots[i]);
  if (st->native == nullptr) {
    std::free(p);
    return;
  }
  st->native->info.destroy(p);
  std::free(reinterpret_cast<char*>(p) - st->native->info.header_offset);
}

void DeleteSlots(PFObject* obj) {
  if (t_dying != nullptr) {
    t_dying->push_back(obj);  // the loop below, further up this thread's stack, frees it
    return;
  }
  std::vector<PFObject*> dying{obj};
  struct Reset {
    ~Reset() { t_dying = nullptr; }
  } reset;
  t_dying = &dying;
  while (!dying.empty()) {
    PFObject* p = dying.back();
    dying.pop_back();
    FreeSlots(p);
  }
}

/*! A new instance of `st` with `n` slots set to None (and its native part default-constructed). */
PFObject* AllocSlots(const SlotType* st, int64_t n) {
  size_t prefix = st->native != nullptr ? static_cast<size_t>(st->native->prefix) : kPlainTail;
  size_t size = prefix + kTailSlots + sizeof(PFAny) * static_cast<size_t>(n > 0 ? n : 1);
  void* memory = std::malloc(size);
  if (memory == nullptr) throw std::bad_alloc();
  PFObject* header = static_cast<PFObject*>(memory);
  if (st->native != nullptr) {
    header = st->native->info.construct(memory);
    if (header == nullptr) {
      std::free(memory);
      CheckCall(-1);  // the constructor's error
    }
  }
  InitHeader(header, st->type_index, &DeleteSlots);
  SlotTail* tail = TailOf(st, header);
  tail->num_slots = n;
  new (&tail->binding_ref) std::atomic<void*>(nullptr);
  for (int64_t i = 0; i < n; ++i) tail->slots[i] = NoneAny();
  return header;
}

bool SameLayout(const SlotType& st, int32_t parent, const PFSlotFieldInfo* fields, int32_t n,
                const SlotElems* const* elems) {
  if (st.parent != parent || st.num_own != n) return false;
  size_t base = st.fields.size() - static_cast<size_t>(n);
  for (int32_t i = 0; i < n; ++i) {
    const SlotField& f = st.fields[base + i];
    if (f.name != std::string_view(fields[i].name.data, fields[i].name.size) ||
        f.flags != fields[i].flags || f.check.type_index != fields[i].static_type_index ||
        f.check.nullable != (fields[i].nullable != 0) ||
        f.check.elems != (elems != nullptr ? elems[i] : nullptr)) {
      return false;
    }
  }
  return true;
}

std::string ViewOf(const PFByteArray& a) { return a.size ? std::string(a.data, a.size) : ""; }

/*! Checks the request (under the lock); the fields of the new type, ancestors' first. */
/*! Throws ValueError when a native ancestor of `parent` (a type not defined as slots) reflects a
 *  field named `name`: the slot field would hide it from reflection by name. */
void CheckNativeNames(SlotTable& t, const std::string& key, int32_t parent,
                      const std::string& name) {
  const PFTypeInfo* info = nullptr;
  CheckCall(PFTypeGetInfo(parent, &info));
  for (int32_t d = 1; d <= info->depth; ++d) {
    int32_t ancestor = info->ancestors[d];
    const PFTypeInfo* a = nullptr;
    if (t.types.count(ancestor) != 0 || PFTypeGetInfo(ancestor, &a) != 0) continue;
    for (int32_t i = 0; i < a->num_fields; ++i) {
      if (std::string_view(a->fields[i].name.data, a->fields[i].name.size) == name) {
        Throw("ValueError", "type '" + key + "': field '" + name + "' is already a field of '" +
                                TypeName(ancestor) + "'");
      }
    }
  }
}

/*! Where the slots of a new type deriving from `parent` go: after the header, after the parent's
 *  slots, or after a native parent's object (its registered layout). */
void PlaceAfter(SlotTable& t, const std::string& key, int32_t parent, SlotType* st) {
  st->native = nullptr;
  st->tail_offset = kPlainTail;
  if (parent == kPFTypeObject) return;
  auto it = t.types.find(parent);
  if (it != t.types.end()) {
    st->native = it->second->native;
    st->tail_offset = it->second->tail_offset;
    st->fields = it->second->fields;
    return;
  }
  auto lt = t.layouts.find(parent);
  if (lt == t.layouts.end()) {
    Throw("TypeError", "cannot define '" + key + "' deriving from '" + TypeName(parent) +
                           "': a native parent must register its layout (a default-constructible "
                           "C++ type defined with reflection::ObjectDef), and this one did not");
  }
  st->native = lt->second.get();
  st->tail_offset = lt->second->prefix - lt->second->info.header_offset;
}

/*! Whether a field (or an element of a container field) may be declared of type `ti`. */
bool KnownDeclaredType(int32_t ti) {
  if (ti == kPFTypeAny || ti == kPFTypeInt || ti == kPFTypeBool || ti == kPFTypeFloat ||
      ti == kPFTypeDataType || ti == kPFTypeDevice) {
    return true;
  }
  const PFTypeInfo* info = nullptr;
  if (ti >= kPFTypeStaticObjectBegin && PFTypeGetInfo(ti, &info) == 0) return true;
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);
  DecRef(err);
  return false;
}

std::vector<SlotField> Validate(SlotTable& t, const std::string& key, int32_t parent,
                                const PFSlotFieldInfo* fields, int32_t n,
                                const SlotElems* const* elems, SlotType* st) {
  PlaceAfter(t, key, parent, st);
  std::vector<SlotField> all = std::move(st->fields);
  for (int32_t i = 0; i < n; ++i) {
    const PFSlotFieldInfo& f = fields[i];
    std::string name = ViewOf(f.name);
    if (name.empty()) Throw("ValueError", "type '" + key + "': a field has an empty name");
    for (const SlotField& g : all) {
      if (g.name == name)
        Throw("ValueError", "type '" + key + "': field '" + name + "' is defined twice");
    }
    if (st->native != nullptr) CheckNativeNames(t, key, parent, name);
    int32_t ti = f.static_type_index;
    if (!KnownDeclaredType(ti)) {
      Throw("TypeError", "type '" + key + "', field '" + name +
                             "': unsupported declared type index " + std::to_string(ti));
    }
    SlotCheck check{ti, f.nullable ? 1 : 0, elems != nullptr ? elems[i] : nullptr};
    all.push_back(SlotField{name, ViewOf(f.doc), f.flags, check});
  }
  return all;
}

/*! `__create__` of a slot type: the field values in layout order, no defaults. */
int ConstructorCall(void* self, const PFAny* args, int32_t n, PFAny* result) {
  PFObject* obj = nullptr;
  int32_t index = static_cast<int32_t>(reinterpret_cast<intptr_t>(self));
  if (PFObjectCreateSlots(index, args, n, &obj)) return -1;
  *result = ObjectAny(obj);
  return 0;
}

/*! Registers the static method `__create__` whose docstring names every field, in order (the
 *  form the Python value-graph rebuild reads). */
void RegisterConstructor(SlotType* st) {
  std::string names;
  for (const SlotField& f : st->fields) names += (names.empty() ? "" : ", ") + f.name;
  st->ctor_doc = st->key.substr(st->key.rfind('.') + 1) + "(" + names + ")";
  PFObject* func = nullptr;
  void* self = reinterpret_cast<void*>(static_cast<intptr_t>(st->type_index));
  CheckCall(PFFunctionCreate(self, &ConstructorCall, nullptr, &func));
  PFMethodInfo info;
  info.name = PFByteArray{"__create__", 10};
  info.doc = PFByteArray{st->ctor_doc.c_str(), st->ctor_doc.size()};
  info.method = func;
  info.flags = PACKEDFUN_METHOD_STATIC;
  info.reserved = 0;
  int rc = PFTypeRegisterMethod(st->type_index, &info);
  DecRef(func);
  CheckCall(rc);
}

/*! Whether `index` was only reserved (registered with `parent` and nothing else): a binding
 *  reserves the keys of classes that refer to each other before it defines their fields. */
bool Reserved(int32_t index, int32_t parent) {
  const PFTypeInfo* info = nullptr;
  if (PFTypeGetInfo(index, &info) != 0 || info->depth < 1) return false;
  return info->ancestors[info->depth - 1] == parent && info->num_fields == 0 &&
         info->num_methods == 0;
}

int32_t Register(const std::string& key, int32_t parent, const PFSlotFieldInfo* fields, int32_t n,
                 const SlotElems* const* elems = nullptr) {
  SlotTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  PFByteArray k{key.data(), key.size()};
  int32_t existing = -1;
  if (PFTypeKeyToIndex(&k, &existing) == 0) {
    auto it = t.types.find(existing);
    if (it != t.types.end() && SameLayout(*it->second, parent, fields, n, elems)) return existing;
    if (it == t.types.end() && Reserved(existing, parent)) existing = -1;
  }
  if (existing >= 0) {
    Throw("ValueError", "type key '" + key + "' is already taken by a type with a different " +
                            "layout (define it under another key)");
  }
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);  // the KeyError of the lookup, if it failed
  DecRef(err);
  auto st = std::make_unique<SlotType>();
  std::vector<SlotField> all = Validate(t, key, parent, fields, n, elems, st.get());
  // The pool entries are taken before the type exists, so a full pool registers nothing.
  std::vector<PFFieldSetter> setters;
  for (int32_t i = 0; i < n; ++i) setters.push_back(SetterFor(t, all[all.size() - n + i].check));
  int32_t index = -1;
  CheckCall(PFTypeRegister(&k, parent, &index));
  st->type_index = index;
  st->key = key;
  st->parent = parent;
  st->num_own = n;
  st->fields = std::move(all);
  size_t base = st->fields.size() - static_cast<size_t>(n);
  for (int32_t i = 0; i < n; ++i) {
    const SlotField& f = st->fields[base + i];
    PFFieldInfo info;
    info.name = PFByteArray{f.name.c_str(), f.name.size()};
    info.doc = PFByteArray{f.doc.c_str(), f.doc.size()};
    info.offset = st->tail_offset + kTailSlots + static_cast<int64_t>(sizeof(PFAny) * (base + i));
    info.flags = f.flags;
    info.static_type_index = f.check.type_index;
    info.getter = &SlotGetter;
    info.setter = (f.flags & PACKEDFUN_FIELD_READONLY) ? nullptr : setters[i];
    CheckCall(PFTypeRegisterField(index, &info));
  }
  RegisterConstructor(st.get());
  if (index < kFastTypes) g_fast[index].store(st.get(), std::memory_order_release);
  t.types.emplace(index, std::move(st));
  return index;
}

PFObject* Create(int32_t type_index, const PFAny* values, int32_t n) {
  const SlotType* st = Find(type_index);
  if (st == nullptr) Throw("TypeError", "type " + TypeName(type_index) + " is not a slot type");
  if (static_cast<size_t>(n) != st->fields.size()) {
    Throw("TypeError", st->key + ": expected " + std::to_string(st->fields.size()) +
                           " field values, got " + std::to_string(n));
  }
  PFObject* o = AllocSlots(st, n);
  SlotTail* tail = TailOf(st, o);
  try {
    for (int32_t i = 0; i < n; ++i) {
      const SlotField& f = st->fields[i];
      tail->slots[i] = CheckedValue(f.check, values[i], st, &f);
    }
  } catch (...) {
    DeleteSlots(o);
    throw;
  }
  return o;
}

/*! A new object of slot type `type_index` whose fields hold their type's zero value (0, 0.0,
 *  False) or None: what a Python-defined class's own __init__ starts from before it assigns them.
 */
int CreateBlankCall(void*, const PFAny* args, int32_t n, PFAny* result) {
  if (n != 1 || args[0].type_index != kPFTypeInt) {
    return RaiseError("TypeError", "packedfun.slot_object_create_blank: expected a type index");
  }
  return Guard([&] {
    auto index = static_cast<int32_t>(args[0].v_int64);
    const SlotType* st = Find(index);
    if (st == nullptr) Throw("TypeError", "type " + TypeName(index) + " is not a slot type");
    PFObject* o = AllocSlots(st, static_cast<int64_t>(st->fields.size()));
    SlotTail* tail = TailOf(st, o);
    for (size_t i = 0; i < st->fields.size(); ++i) {
      int32_t t = st->fields[i].check.type_index;
      if (t == kPFTypeInt || t == kPFTypeBool || t == kPFTypeFloat) {
        tail->slots[i] = PFAny{t, 0, {0}};  // 0, False; 0.0 (all bits zero)
      }
    }
    *result = ObjectAny(o);
    return 0;
  });
}

int CreateCall(void*, const PFAny* args, int32_t n, PFAny* result) {
  if (n < 1 || args[0].type_index != kPFTypeInt) {
    return RaiseError("TypeError", "packedfun.slot_object_create: expected a type index first");
  }
  PFObject* obj = nullptr;
  if (PFObjectCreateSlots(static_cast<int32_t>(args[0].v_int64), args + 1, n - 1, &obj)) return -1;
  *result = ObjectAny(obj);
  return 0;
}

std::string_view StringArg(const PFAny& v, const char* what) {
  std::string_view out;
  if (!AnyToStringView(v, false, &out)) Throw("TypeError", std::string(what) + " must be a str");
  return out;
}

int64_t IntArg(const PFAny& v, const char* what) {
  if (v.type_index != kPFTypeInt && v.type_index != kPFTypeBool) {
    Throw("TypeError", std::string(what) + " must be an int");
  }
  return v.v_int64;
}

const PFSeqObject* ArrayArg(const PFAny& v, const char* what) {
  if (v.type_index != kPFTypeArray && v.type_index != kPFTypeList) {
    Throw("TypeError", std::string(what) + " must be a list");
  }
  return reinterpret_cast<const PFSeqObject*>(v.v_obj);
}

/*! An interned element schema: `e` itself or the equal one interned before. */
const SlotElems* Intern(const SlotElems& e) {
  static std::mutex mu;
  static std::deque<SlotElems>* all = new std::deque<SlotElems>();  // leaked: setters point in
  std::lock_guard<std::mutex> lock(mu);
  for (const SlotElems& x : *all) {
    if (x.is_map == e.is_map && SameCheck(x.key, e.key) && SameCheck(x.value, e.value) &&
        std::equal(x.alts.begin(), x.alts.end(), e.alts.begin(), e.alts.end(), SameCheck)) {
      return &x;
    }
  }
  all->push_back(e);
  return &all->back();
}

SlotCheck CheckArg(const PFAny& v);

/*! A field's element schema: [] (none), [value] (a list's elements) or [key, value] (a dict's),
 *  each [type_index, nullable, elements]; or, on a check of type Any, ["union", member, ...]: the
 *  value is one of the members (two or more, each [type_index, nullable, elements]). NULL when
 *  nothing is checked (every element type Any, or a union with an Any member). */
const SlotElems* ElemsArg(const PFAny& v) {
  const PFSeqObject* list = ArrayArg(v, "a field's element types");
  if (list->size == 0) return nullptr;
  int32_t first = list->data[0].type_index;
  if (first == kPFTypeString || first == kPFTypeSmallStr) {
    if (StringArg(list->data[0], "a union's marker") != "union" || list->size < 3)
      Throw("TypeError", "a union's element types are [\"union\", member, member, ...]");
    SlotElems e{false, SlotCheck{kPFTypeAny, 1}, SlotCheck{kPFTypeAny, 1}, {}};
    for (int64_t i = 1; i < list->size; ++i) {
      SlotCheck alt = CheckArg(list->data[i]);
      if (alt.type_index == kPFTypeAny && !IsUnion(alt)) return nullptr;  // any value fits
      e.alts.push_back(alt);
    }
    return Intern(e);
  }
  if (list->size > 2)
    Throw("TypeError", "a field's element types are [] or [value] or [key, value]");
  SlotElems e;
  e.is_map = list->size == 2;
  e.key = e.is_map ? CheckArg(list->data[0]) : SlotCheck{kPFTypeAny, 1};
  e.value = CheckArg(list->data[list->size - 1]);
  auto any = [](const SlotCheck& c) { return c.type_index == kPFTypeAny && !IsUnion(c); };
  if (any(e.key) && any(e.value)) return nullptr;
  return Intern(e);
}

SlotCheck CheckArg(const PFAny& v) {
  const PFSeqObject* c = ArrayArg(v, "an element type");
  if (c->size != 3) Throw("TypeError", "an element type is [type_index, nullable, elements]");
  int32_t ti = static_cast<int32_t>(IntArg(c->data[0], "an element type index"));
  if (!KnownDeclaredType(ti)) {
    Throw("TypeError", "unsupported declared element type index " + std::to_string(ti));
  }
  const SlotElems* elems = ElemsArg(c->data[2]);
  bool any = ti == kPFTypeAny && (elems == nullptr || elems->alts.empty());  // None fits Any
  int32_t nullable = IntArg(c->data[1], "nullable") != 0 || any ? 1 : 0;
  return SlotCheck{ti, nullable, elems};
}

/*! (type_key, parent_index, [[name, doc, flags, static_type_index, nullable(, elements)], ...])
 *  -> index; `elements` as ElemsArg reads them (checked on every store, from every language). */
int RegisterCall(void*, const PFAny* args, int32_t n, PFAny* result) {
  return Guard([&] {
    if (n != 3) Throw("TypeError", "packedfun.slot_type_register: expected 3 arguments");
    std::string_view key = StringArg(args[0], "type_key");
    int32_t parent = static_cast<int32_t>(IntArg(args[1], "parent_index"));
    const PFSeqObject* list = ArrayArg(args[2], "fields");
    std::vector<PFSlotFieldInfo> fields(static_cast<size_t>(list->size));
    std::vector<const SlotElems*> elems(static_cast<size_t>(list->size), nullptr);
    for (int64_t i = 0; i < list->size; ++i) {
      const PFSeqObject* f = ArrayArg(list->data[i], "a field");
      if (f->size != 5 && f->size != 6) {
        Throw("TypeError", "a field is [name, doc, flags, type_index, nullable(, elements)]");
      }
      if (f->size == 6) elems[i] = ElemsArg(f->data[5]);
      std::string_view name = StringArg(f->data[0], "a field name");
      std::string_view doc = StringArg(f->data[1], "a field doc");
      fields[i].name = PFByteArray{name.data(), name.size()};
      fields[i].doc = PFByteArray{doc.data(), doc.size()};
      fields[i].flags = static_cast<int32_t>(IntArg(f->data[2], "field flags"));
      fields[i].static_type_index = static_cast<int32_t>(IntArg(f->data[3], "a field type"));
      fields[i].nullable = static_cast<int32_t>(IntArg(f->data[4], "nullable"));
      fields[i].reserved = 0;
    }
    if (key.empty()) Throw("ValueError", "packedfun.slot_type_register: empty type key");
    int32_t index = Register(std::string(key), parent, fields.data(),
                             static_cast<int32_t>(fields.size()), elems.data());
    result->type_index = kPFTypeInt;
    result->zero_padding = 0;
    result->v_int64 = index;
    return 0;
  });
}

/*! (type_index, name, function, is_static, doc): registers a method of any type from a binding
 *  (its strings are copied into storage kept for the life of the process). */
int MethodCall(void*, const PFAny* args, int32_t n, PFAny* result) {
  return Guard([&] {
    if (n != 5 || args[2].type_index != kPFTypeFunction) {
      Throw("TypeError",
            "packedfun.type_register_method: expected (type_index, name, function, "
            "is_static, doc)");
    }
    static std::deque<std::string>* names = new std::deque<std::string>();  // leaked on purpose
    std::string name(StringArg(args[1], "name")), doc(StringArg(args[4], "doc"));
    PFMethodInfo info;
    info.method = args[2].v_obj;
    info.flags = IntArg(args[3], "is_static") ? PACKEDFUN_METHOD_STATIC : 0;
    info.reserved = 0;
    {
      std::lock_guard<std::mutex> lock(Table().mu);
      names->push_back(std::move(name));
      info.name = PFByteArray{names->back().c_str(), names->back().size()};
      names->push_back(std::move(doc));
      info.doc = PFByteArray{names->back().c_str(), names->back().size()};
    }
    CheckCall(PFTypeRegisterMethod(static_cast<int32_t>(IntArg(args[0], "type_index")), &info));
    *result = NoneAny();
    return 0;
  });
}

/*! (type_index) -> [size, slot_size] for a slot type: the byte size of its instances' layout
 *  (from the start of the object to the end of its last slot; a type with no slots ends where its
 *  slots would start) and of one slot; None for any other type (a C++ type's size is not recorded
 *  in the type table). */
int LayoutCall(void*, const PFAny* args, int32_t n, PFAny* result) {
  return Guard([&] {
    if (n != 1) Throw("TypeError", "packedfun.slot_type_layout: expected 1 argument");
    const SlotType* st = Find(static_cast<int32_t>(IntArg(args[0], "type_index")));
    if (st == nullptr) {
      *result = NoneAny();
      return 0;
    }
    int64_t slot = static_cast<int64_t>(sizeof(PFAny));
    int64_t size = st->tail_offset + kTailSlots + slot * static_cast<int64_t>(st->fields.size());
    PFAny items[2];
    for (int i = 0; i < 2; ++i) {
      items[i].type_index = kPFTypeInt;
      items[i].zero_padding = 0;
      items[i].v_int64 = i == 0 ? size : slot;
    }
    CheckCall(PFArrayCreate(items, 2, result));
    return 0;
  });
}

/*! (type_key, parent_index) -> index: reserves a key (PFTypeRegister) for a slot type whose
 *  fields come later (classes that refer to each other). */
int ReserveCall(void*, const PFAny* args, int32_t n, PFAny* result) {
  return Guard([&] {
    if (n != 2) Throw("TypeError", "packedfun.slot_type_reserve: expected 2 arguments");
    std::string_view key = StringArg(args[0], "type_key");
    PFByteArray k{key.data(), key.size()};
    int32_t index = -1;
    CheckCall(PFTypeRegister(&k, static_cast<int32_t>(IntArg(args[1], "parent_index")), &index));
    result->type_index = kPFTypeInt;
    result->zero_padding = 0;
    result->v_int64 = index;
    return 0;
  });
}

/*! ([type_index, ...]) -> None: frees the keys of slot types (or reserved keys) of a group of
 *  classes whose definition failed, so that a corrected definition can take them (the binding
 *  passes only the keys this definition created). Refused, freeing nothing, for a type that is
 *  neither a slot type nor a bare reservation (a parent and nothing else), and for one that a type
 *  outside the list derives from or declares a field of. */
int ReleaseCall(void*, const PFAny* args, int32_t n, PFAny* result) {
  return Guard([&] {
    if (n != 1) Throw("TypeError", "packedfun.slot_type_release: expected 1 argument");
    const PFSeqObject* list = ArrayArg(args[0], "indices");
    std::vector<int32_t> indices;
    for (int64_t i = 0; i < list->size; ++i) {
      int32_t index = static_cast<int32_t>(IntArg(list->data[i], "a type index"));
      const PFTypeInfo* info = nullptr;
      bool bare =
          PFTypeGetInfo(index, &info) == 0 && info->num_fields == 0 && info->num_methods == 0;
      if (Find(index) == nullptr && !bare) {
        PFObject* err = nullptr;
        PFErrorMoveFromRaised(&err);  // the IndexError of an unknown index, if any
        DecRef(err);
        Throw("ValueError", "packedfun.slot_type_release: type " + TypeName(index) +
                                " is neither a slot type nor a reserved key");
      }
      indices.push_back(index);
    }
    ReleaseTypeKeys(indices);
    *result = NoneAny();
    return 0;
  });
}

/*! (object, field_name, value) -> None: stores `value` into the named slot field of a slot-type
 *  instance, read-only (frozen) fields included, checked against the field's declared type as
 *  every store is. The Python-defined classes' escape hatch (`type(obj).field.set(obj, value)`):
 *  a frozen field stays read-only to reflection setters and to attribute assignment. */
int SetFieldCall(void*, const PFAny* args, int32_t n, PFAny* result) {
  return Guard([&] {
    if (n != 3 || !IsObjectIndex(args[0].type_index)) {
      Throw("TypeError", "packedfun.slot_object_set_field: expected (object, field_name, value)");
    }
    PFObject* obj = args[0].v_obj;
    const SlotType* st = Find(obj->type_index);
    if (st == nullptr) {
      Throw("TypeError", "packedfun.slot_object_set_field: " + TypeName(obj->type_index) +
                             " is not a Python-defined (slot) type");
    }
    std::string_view name = StringArg(args[1], "field_name");
    for (size_t i = 0; i < st->fields.size(); ++i) {
      const SlotField& f = st->fields[i];
      if (f.name != name) continue;
      Store(&TailOf(st, obj)->slots[i], CheckedValue(f.check, args[2], st, &f));
      *result = NoneAny();
      return 0;
    }
    Throw("AttributeError", st->key + " has no slot field '" + std::string(name) + "'");
  });
}

const int kRegistered = [] {
  RegisterBuiltin("packedfun.slot_object_set_field", &SetFieldCall);
  RegisterBuiltin("packedfun.slot_type_layout", &LayoutCall);
  RegisterBuiltin("packedfun.slot_type_release", &ReleaseCall);
  RegisterBuiltin("packedfun.slot_type_reserve", &ReserveCall);
  RegisterBuiltin("packedfun.type_register_method", &MethodCall);
  RegisterBuiltin("packedfun.slot_object_create", &CreateCall);
  RegisterBuiltin("packedfun.slot_object_create_blank", &CreateBlankCall);
  RegisterBuiltin("packedfun.slot_type_register", &RegisterCall);
  return 0;
}();

}  // namespace
}  // namespace detail
}  // namespace packedfun

using namespace packedfun::detail;

extern "C" {

PACKEDFUN_API int PFTypeRegisterSlotType(const PFByteArray* type_key, int32_t parent_index,
                                         const PFSlotFieldInfo* fields, int32_t num_fields,
                                         int32_t* out) {
  return Guard([&] {
    std::string key = type_key != nullptr ? ViewOf(*type_key) : "";
    if (key.empty()) return RaiseError("ValueError", "PFTypeRegisterSlotType: empty type key");
    if (num_fields < 0 || (num_fields > 0 && fields == nullptr)) {
      return RaiseError("ValueError", "PFTypeRegisterSlotType: bad field list");
    }
    *out = Register(key, parent_index, fields, num_fields);
    return 0;
  });
}

PACKEDFUN_API int PFTypeGetNumSlots(int32_t type_index, int32_t* out) {
  return Guard([&] {
    const SlotType* st = Find(type_index);
    if (st == nullptr) Throw("TypeError", "type " + TypeName(type_index) + " is not a slot type");
    *out = static_cast<int32_t>(st->fields.size());
    return 0;
  });
}

PACKEDFUN_API int PFObjectCreateSlots(int32_t type_index, const PFAny* values, int32_t num_values,
                                      PFObject** out) {
  return Guard([&] {
    *out = Create(type_index, values, num_values);
    return 0;
  });
}

PACKEDFUN_API void* PFObjectGetBindingRef(const PFObject* obj) {
  if (obj == nullptr) return nullptr;
  if (obj->deleter != &DeleteSlots) {  // a tvm-ffi object's proxy keeps one too
    std::atomic<void*>* ref = ForeignBindingRef(const_cast<PFObject*>(obj));
    return ref != nullptr ? ref->load(std::memory_order_acquire) : nullptr;
  }
  SlotTail* tail = TailOf(Find(obj->type_index), const_cast<PFObject*>(obj));
  return tail->binding_ref.load(std::memory_order_acquire);
}

PACKEDFUN_API int PFObjectExchangeBindingRef(PFObject* obj, void* expected, void* desired) {
  if (obj == nullptr) return 0;
  if (obj->deleter != &DeleteSlots) {
    std::atomic<void*>* ref = ForeignBindingRef(obj);
    return ref != nullptr &&
           ref->compare_exchange_strong(expected, desired, std::memory_order_acq_rel);
  }
  SlotTail* tail = TailOf(Find(obj->type_index), obj);
  return tail->binding_ref.compare_exchange_strong(expected, desired, std::memory_order_acq_rel);
}

PACKEDFUN_API int PFTypeRegisterLayout(int32_t type_index, const PFTypeLayoutInfo* info) {
  return Guard([&] {
    if (info == nullptr || info->construct == nullptr || info->destroy == nullptr ||
        info->size < static_cast<int64_t>(sizeof(PFObject)) || info->alignment > 16 ||
        info->header_offset < 0 ||
        info->header_offset + static_cast<int64_t>(sizeof(PFObject)) > info->size) {
      return RaiseError("ValueError",
                        "PFTypeRegisterLayout: bad layout for " + TypeName(type_index));
    }
    const PFTypeInfo* type = nullptr;
    CheckCall(PFTypeGetInfo(type_index, &type));
    SlotTable& t = Table();
    std::lock_guard<std::mutex> lock(t.mu);
    if (t.layouts.count(type_index) != 0 || t.types.count(type_index) != 0) return 0;
    auto layout = std::make_unique<NativeLayout>();
    layout->info = *info;
    layout->prefix = (info->size + 15) / 16 * 16;
    t.layouts.emplace(type_index, std::move(layout));
    return 0;
  });
}

}  // extern "C"
