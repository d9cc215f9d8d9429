// Structural equality, hashing and first difference of values (containers, reflected objects).
//
// Both walks are iterative (explicit stacks on the heap), so nesting depth is bounded by memory,
// never by the C stack. Equality is co-inductive: a pair of objects already under comparison
// counts as equal, so cycles terminate. Hashing memoizes finished objects (a shared subtree is
// hashed once) and hashes an object met again while it is still open (a cycle) by its distance
// on the stack. Leaves compare by value (strings and bytes by content in either form, floats with
// NaN equal to NaN); Array/List/Map/Dict/Shape by content; reflected objects field by field,
// skipping fields flagged PACKEDFUN_FIELD_NO_COMPARE; every other object (functions, tensors,
// modules, errors, plain objects) by identity. Map keys are looked up with the map's own key
// semantics.
#include <packedfun/c_api.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "runtime/error.h"
#include "runtime/map.h"
#include "runtime/object.h"
#include "runtime/object_table.h"
#include "runtime/registry.h"
#include "runtime/seq.h"
#include "runtime/string.h"

namespace packedfun {
namespace detail {
namespace {

uint64_t SplitMix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t Combine(uint64_t seed, uint64_t value) { return SplitMix(seed * 31 + value); }

uint64_t HashText(std::string_view text, uint64_t seed) {
  uint64_t h = 0xcbf29ce484222325ULL ^ seed;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
  return SplitMix(h);
}

enum class Kind { kSeq, kMap, kShape, kReflected, kIdentity };

Kind KindOf(const PFObject* obj) {
  switch (obj->type_index) {
    case kPFTypeArray:
    case kPFTypeList:
      return Kind::kSeq;
    case kPFTypeMap:
    case kPFTypeDict:
      return Kind::kMap;
    case kPFTypeShape:
      return Kind::kShape;
    default:
      return obj->type_index >= kPFTypeDynamicBegin ? Kind::kReflected : Kind::kIdentity;
  }
}

bool IsObject(const PFAny& v) {
  return IsObjectIndex(v.type_index) && !AnyIsString(v) && !AnyIsBytes(v);
}

/*! Hash of a value that is not an object walked by content (all leaves, strings included). */
uint64_t LeafHash(const PFAny& v) {
  std::string_view text;
  if (AnyIsString(v) && AnyToStringView(v, false, &text)) return HashText(text, 65);
  if (AnyIsBytes(v) && AnyToStringView(v, true, &text)) return HashText(text, 66);
  uint64_t bits = 0;
  switch (v.type_index) {
    case kPFTypeNone:
      break;
    case kPFTypeFloat: {
      double d = v.v_float64;
      if (std::isnan(d)) d = std::nan("");
      if (d == 0.0) d = 0.0;
      std::memcpy(&bits, &d, sizeof(bits));
      break;
    }
    case kPFTypeDataType:
      bits = (uint64_t{v.v_dtype.code} << 24) | (uint64_t{v.v_dtype.bits} << 16) | v.v_dtype.lanes;
      break;
    case kPFTypeDevice:
      bits = (static_cast<uint64_t>(static_cast<uint32_t>(v.v_device.device_type)) << 32) |
             static_cast<uint32_t>(v.v_device.device_id);
      break;
    default:
      bits = static_cast<uint64_t>(v.v_int64);  // ints, bools, pointers, object identity
  }
  return Combine(static_cast<uint64_t>(v.type_index), bits);
}

bool LeafEqual(const PFAny& a, const PFAny& b) {
  std::string_view ta, tb;
  bool sa = AnyIsString(a), sb = AnyIsString(b);
  bool ba = AnyIsBytes(a), bb = AnyIsBytes(b);
  if (sa || sb || ba || bb) {
    if (sa != sb || ba != bb) return false;
    return AnyToStringView(a, ba, &ta) && AnyToStringView(b, bb, &tb) && ta == tb;
  }
  if (a.type_index != b.type_index) return false;
  switch (a.type_index) {
    case kPFTypeNone:
      return true;
    case kPFTypeFloat:
      return a.v_float64 == b.v_float64 || (std::isnan(a.v_float64) && std::isnan(b.v_float64));
    case kPFTypeDataType:
      return a.v_dtype.code == b.v_dtype.code && a.v_dtype.bits == b.v_dtype.bits &&
             a.v_dtype.lanes == b.v_dtype.lanes;
    case kPFTypeDevice:
      return a.v_device.device_type == b.v_device.device_type &&
             a.v_device.device_id == b.v_device.device_id;
    default:
      return a.v_int64 == b.v_int64;
  }
}

bool ShapeEqual(PFObject* a, PFObject* b) {
  auto* sa = reinterpret_cast<PFShapeObject*>(a);
  auto* sb = reinterpret_cast<PFShapeObject*>(b);
  return sa->size == sb->size &&
         (sa->size == 0 || std::memcmp(sa->data, sb->data, sa->size * sizeof(int64_t)) == 0);
}

uint64_t ShapeHash(PFObject* obj) {
  auto* s = reinterpret_cast<PFShapeObject*>(obj);
  uint64_t h = Combine(kPFTypeShape, static_cast<uint64_t>(s->size));
  for (int64_t i = 0; i < s->size; ++i) h = Combine(h, static_cast<uint64_t>(s->data[i]));
  return h;
}

/*! Owned values (field reads, map item arrays) kept alive for one walk; deque: stable addresses. */
class Keeper {
 public:
  ~Keeper() {
    for (PFAny& v : held_) ReleaseAny(&v);
  }
  const PFAny* Hold(PFAny v) {
    held_.push_back(v);
    return &held_.back();
  }

 private:
  std::deque<PFAny> held_;
};

std::vector<const PFFieldInfo*> ComparedFields(int32_t type_index) {
  std::vector<const PFFieldInfo*> out;
  const PFTypeInfo* info = nullptr;
  CheckCall(PFTypeGetInfo(type_index, &info));
  for (int32_t d = 0; d <= info->depth; ++d) {
    const PFTypeInfo* level = nullptr;
    CheckCall(PFTypeGetInfo(info->ancestors[d], &level));
    for (int32_t i = 0; i < level->num_fields; ++i) {
      if ((level->fields[i].flags & PACKEDFUN_FIELD_NO_COMPARE) == 0) {
        out.push_back(&level->fields[i]);
      }
    }
  }
  return out;
}

// ---- structural kinds of reflected types (PFTypeSetStructuralKind)
// ---------------------------------

std::mutex g_kinds_mu;
std::vector<int8_t> g_kinds;  // by type_index - kPFTypeDynamicBegin; -1: not set (inherit)
/*! Types set to DAG or FreeVar so far: while 0 (almost always), the same object on both sides is
 *  equal at once; once a variable or DAG type exists, equality walks it (the bindings it makes, or
 *  the pairs it records, are part of the answer). */
std::atomic<int> g_special_kinds{0};

int32_t OwnKind(int32_t type_index) {
  std::lock_guard<std::mutex> lock(g_kinds_mu);
  size_t i = static_cast<size_t>(type_index - kPFTypeDynamicBegin);
  return type_index >= kPFTypeDynamicBegin && i < g_kinds.size() ? g_kinds[i] : -1;
}

int32_t StructuralKindOf(int32_t type_index) {
  if (type_index < kPFTypeDynamicBegin) return kPFStructuralTree;
  const PFTypeInfo* info = nullptr;
  CheckCall(PFTypeGetInfo(type_index, &info));
  for (int32_t d = info->depth; d >= 0; --d) {
    int32_t kind = OwnKind(info->ancestors[d]);
    if (kind >= 0) return kind;
  }
  return kPFStructuralTree;
}

std::string TypeKeyOf(int32_t type_index) {
  const PFTypeInfo* info = nullptr;
  CheckCall(PFTypeGetInfo(type_index, &info));
  return std::string(info->type_key.data, info->type_key.size);
}

uint64_t TypeSeed(int32_t type_index) {
  const PFTypeInfo* info = nullptr;
  CheckCall(PFTypeGetInfo(type_index, &info));
  return HashText(std::string_view(info->type_key.data, info->type_key.size), 1);
}

/*! What each type met in one walk contributes (its seed, its compared fields), looked up once per
 *  type instead of once per object. */
class TypeCache {
 public:
  struct Entry {
    uint64_t seed;
    std::vector<const PFFieldInfo*> fields;
    int32_t kind;  // PFStructuralKind
  };
  /*! Throws TypeError for a type whose kind is kPFStructuralUnsupported. */
  const Entry& Get(int32_t type_index) {
    if (auto it = entries_.find(type_index); it != entries_.end()) return it->second;
    Entry entry{TypeSeed(type_index), {}, StructuralKindOf(type_index)};
    if (entry.kind == kPFStructuralUnsupported) {
      Throw("TypeError", "structural equality and hashing are not supported by type '" +
                             TypeKeyOf(type_index) + "' (its structural kind is unsupported)");
    }
    if (type_index >= kPFTypeDynamicBegin && entry.kind != kPFStructuralFreeVar) {
      entry.fields = ComparedFields(type_index);  // a variable is compared by its binding only
    }
    return entries_.emplace(type_index, std::move(entry)).first->second;
  }

 private:
  std::unordered_map<int32_t, Entry> entries_;  // references stay valid across inserts
};

const PFAny* ReadField(PFObject* obj, const PFFieldInfo* field, Keeper* keep) {
  PFAny value = NoneAny();
  CheckCall(field->getter(reinterpret_cast<char*>(obj) + field->offset, &value));
  return keep->Hold(value);
}

/*! Whether `obj`, met now for the first time, could be met again in this walk. Every stored
 *  reference is a counted one, so an object whose only reference is the slot the walk came through
 *  (count 1, plus the walk's own `borrowed_refs` to it) has no second path to it: it can neither be
 *  shared nor close a cycle, and needs no entry in a visited table (most nodes of a tree). */
bool MayMeetAgain(PFObject* obj, uint32_t borrowed_refs) {
  return __atomic_load_n(&obj->ref_count, __ATOMIC_RELAXED) > 1 + borrowed_refs;
}

// ---- hashing
// -------------------------------------------------------------------------------------

/*! An object being hashed: its children are kids_[begin, end), folded into `h` (maps: `sum`)
 *  one at a time, so no frame allocates. `borrowed_refs`: references to each child that the walk
 *  itself holds (1 for field reads, which the frame owns, and map item arrays; 0 for sequence
 *  slots). */
struct HashFrame {
  PFObject* obj;
  bool is_map, tracked, owns_kids;
  uint32_t borrowed_refs;
  size_t begin, next, end;
  uint64_t h, sum, key;
  bool cyclic;                   // reaches a cycle: hashed by its shallow hash (see CyclicHash)
  uint64_t shallow, skey, ssum;  // h, key and sum with every walked child as one constant
  bool in_def;                   // below a definition field: variables met are bound
  const std::vector<const PFFieldInfo*>* fields;  // a reflected object's compared fields
};

/*! The hash of a value that reaches a cycle. Equality unfolds cycles (l1 = [l1] equals l3 = [l4],
 *  l4 = [l3]), so such a hash may depend only on what every unfolding shares at the top: the
 *  type, the number of children and the children that are not walked (numbers, strings, shapes,
 *  identities), each walked child (a container or reflected object) counting as one constant. A
 *  value equal to one reaching a cycle unfolds infinitely too, so it reaches one as well and
 *  hashes alike; acyclic values keep their full hash. */
uint64_t CyclicHash(uint64_t shallow) { return Combine(0xC1C1E, shallow); }

/*! What a walked child adds to its parent's shallow hash. */
constexpr uint64_t kWalkedChild = 0x5EB7;

/*! Seeds of a variable's hash: bound (by its binding order) or free (by its identity). */
constexpr uint64_t kBoundVar = 0xB0D7A2;
constexpr uint64_t kFreeVar = 0xF2EE7A2;
/*! Seed of a DAG object met again (by the order it was first met in). */
constexpr uint64_t kDagRef = 0xDA6;

class Hasher {
 public:
  explicit Hasher(int32_t flags = 0) : flags_(flags) {}
  ~Hasher() {  // after an error: the field reads of frames still open
    for (const HashFrame& f : stack_) {
      for (size_t i = f.begin; f.owns_kids && i < f.end; ++i) ReleaseAny(&kids_[i]);
    }
  }

  uint64_t Run(const PFAny& root) {
    uint64_t h = 0;
    if (Immediate(root, false, &h)) return h;
    Push(root.v_obj, true, false);
    while (true) {
      HashFrame& f = stack_.back();
      if (f.next < f.end) {
        const PFAny& kid = kids_[f.next];
        bool def = f.in_def || (f.fields != nullptr && ((*f.fields)[f.next - f.begin]->flags &
                                                        PACKEDFUN_FIELD_STRUCTURAL_DEF));
        if (Immediate(kid, def, &h)) {
          if (immediate_cyclic_) f.cyclic = true;
          Add(&f, h, immediate_walked_ ? kWalkedChild : h);
        } else {
          Push(kid.v_obj, MayMeetAgain(kid.v_obj, f.borrowed_refs), def);  // invalidates f
        }
        continue;
      }
      h = f.cyclic   ? CyclicHash(f.is_map ? Combine(f.shallow, f.ssum) : f.shallow)
          : f.is_map ? Combine(f.h, f.sum)
                     : f.h;
      bool cyclic = f.cyclic;
      if (f.tracked) {
        ObjectTable::Slot* slot = table_.Find(f.obj);
        slot->value = h;
        slot->open = false;
        slot->cyclic = cyclic;
      }
      if (f.owns_kids) ReleaseKids(f.begin, f.end);
      kids_.resize(f.begin);
      stack_.pop_back();
      if (stack_.empty()) return h;
      if (cyclic) stack_.back().cyclic = true;
      Add(&stack_.back(), h, kWalkedChild);
    }
  }

 private:
  /*! Folds a child's hash in the way the old per-frame vectors were folded (same values). */
  static void Add(HashFrame* f, uint64_t x, uint64_t shallow) {
    if (!f->is_map) {
      f->h = Combine(f->h, x);
      f->shallow = Combine(f->shallow, shallow);
    } else if (((f->next - f->begin) & 1) == 0) {
      f->key = x;
      f->skey = shallow;
    } else {
      f->sum += Combine(f->key, x);  // order-independent: a sum of per-entry hashes
      f->ssum += Combine(f->skey, shallow);
    }
    ++f->next;
  }

  /*! A variable: by its binding order once bound (bound now when `def` or MAP_FREE_VARS), else
   *  by its identity, as equality pairs them. */
  uint64_t VarHash(PFObject* obj, uint64_t seed, bool def) {
    auto it = var_order_.find(obj);
    if (it == var_order_.end()) {
      if (!def && (flags_ & PACKEDFUN_STRUCTURAL_MAP_FREE_VARS) == 0) {
        return Combine(Combine(kFreeVar, seed), reinterpret_cast<uintptr_t>(obj));
      }
      it = var_order_.emplace(obj, var_order_.size()).first;
    }
    return Combine(Combine(kBoundVar, seed), it->second);
  }

  bool Immediate(const PFAny& v, bool def, uint64_t* h) {
    immediate_cyclic_ = immediate_walked_ = false;
    if (!IsObject(v)) {
      *h = LeafHash(v);
      return true;
    }
    PFObject* obj = v.v_obj;
    Kind kind = KindOf(obj);
    const TypeCache::Entry* type =
        kind == Kind::kReflected ? &types_.Get(obj->type_index) : nullptr;
    if (kind == Kind::kIdentity) {
      *h = LeafHash(v);
    } else if (kind == Kind::kShape) {
      *h = ShapeHash(obj);
    } else if (type != nullptr && type->kind == kPFStructuralFreeVar) {
      *h = VarHash(obj, type->seed, def);
    } else if (!stack_.empty() && !MayMeetAgain(obj, stack_.back().borrowed_refs)) {
      return false;  // never entered in the table, so not met before either
    } else if (const ObjectTable::Slot* slot = table_.Find(obj); slot == nullptr) {
      return false;
    } else if (slot->open) {
      *h = 0;  // a cycle: the frames it closes hash by CyclicHash
      immediate_cyclic_ = immediate_walked_ = true;
    } else if (type != nullptr && type->kind == kPFStructuralDAG) {
      *h = Combine(kDagRef, dag_order_[obj]);  // sharing counts: met again, by its first meeting
      immediate_cyclic_ = slot->cyclic;
      immediate_walked_ = true;
    } else {
      *h = slot->value;  // a shared subtree, hashed once
      immediate_cyclic_ = slot->cyclic;
      immediate_walked_ = true;
    }
    return true;
  }

  void Push(PFObject* obj, bool tracked, bool in_def) {
    Kind kind = KindOf(obj);
    const TypeCache::Entry& type = types_.Get(obj->type_index);
    if (type.kind == kPFStructuralDAG) {
      uint64_t order = dag_count_++;  // every DAG object counts, so equal values number alike
      if (tracked) dag_order_.emplace(obj, order);
    }
    if (tracked) table_.Insert(obj, stack_.size(), true);
    size_t begin = kids_.size();
    PFSeqObject* seq = nullptr;
    if (kind == Kind::kSeq) {
      seq = reinterpret_cast<PFSeqObject*>(obj);
    } else if (kind == Kind::kMap) {
      seq = reinterpret_cast<PFSeqObject*>(keep_.Hold(ObjectAny(MapItemsArray(obj)))->v_obj);
    }
    bool owns = kind == Kind::kReflected;
    uint32_t borrowed = kind == Kind::kSeq ? 0 : 1;
    stack_.push_back(HashFrame{obj, kind == Kind::kMap, tracked, owns, borrowed, begin, begin,
                               begin, 0, 0, 0, false, 0, 0, 0, in_def,
                               kind == Kind::kReflected ? &type.fields : nullptr});
    if (seq != nullptr) {
      kids_.insert(kids_.end(), seq->data, seq->data + seq->size);  // borrowed copies
    } else {
      for (const PFFieldInfo* f : type.fields) {
        PFAny value = NoneAny();
        CheckCall(f->getter(reinterpret_cast<char*>(obj) + f->offset, &value));
        kids_.push_back(value);            // owned by this frame until it pops
        stack_.back().end = kids_.size();  // counted at once: ~Hasher releases it on a throw
      }
    }
    HashFrame& f = stack_.back();
    f.end = kids_.size();
    f.h = Combine(type.seed, f.end - begin);
    f.shallow = f.h;
  }

  /*! Drops a finished frame's field reads right away (while their memory is still warm) when
   *  another reference keeps the object alive; a read that is the only reference (a value the
   *  getter made fresh) is kept to the end of the walk, so no address in the table is reused. */
  void ReleaseKids(size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      PFAny& v = kids_[i];
      if (!IsObjectIndex(v.type_index)) continue;
      PFAny owned = v;
      v = NoneAny();  // handed on: ~Hasher must not release it again if Hold throws
      if (__atomic_load_n(&owned.v_obj->ref_count, __ATOMIC_RELAXED) > 1) {
        DecRef(owned.v_obj);
      } else {
        keep_.Hold(owned);
      }
    }
  }

  int32_t flags_;
  std::unordered_map<PFObject*, uint64_t> var_order_;  // bound variables: their binding order
  std::unordered_map<PFObject*, uint64_t> dag_order_;  // DAG objects that may be met again
  uint64_t dag_count_ = 0;
  Keeper keep_;
  TypeCache types_;
  ObjectTable table_;
  bool immediate_cyclic_ = false;  // set by Immediate: its value reaches a cycle
  bool immediate_walked_ = false;  // set by Immediate: its value is a walked one (table)
  std::vector<HashFrame> stack_;
  std::vector<PFAny> kids_;
};

// ---- equality and first difference
// ---------------------------------------------------------------

struct PairHash {
  size_t operator()(const std::pair<PFObject*, PFObject*>& p) const {
    return std::hash<void*>()(p.first) * 31 + std::hash<void*>()(p.second);
  }
};

struct Step {
  int64_t parent;
  std::string text;
  int64_t kind = kPFAccessAttr;
  PFAny key = PFAny{};  // kPFAccessArrayItem: the index; kPFAccessMapItem: the key (borrowed);
                        // kPFAccessAttr: unused
};

std::string KeyStep(const PFAny& key) {
  std::string_view text;
  if (AnyIsString(key) && AnyToStringView(key, false, &text)) {
    std::string out = "[\"";
    for (char c : text) {
      if (c == '"' || c == '\\') out.push_back('\\');
      out.push_back(c);
    }
    return out + "\"]";
  }
  if (key.type_index == kPFTypeInt) return "[" + std::to_string(key.v_int64) + "]";
  if (key.type_index == kPFTypeBool) return key.v_int64 ? "[True]" : "[False]";
  return "[<key>]";
}

class Comparer {
 public:
  /*! `per_side`: a sequence or map whose size differs is compared item by item, and the first
   *  item missing on one side is the difference (PFStructuralFirstMismatch). */
  explicit Comparer(bool want_path, bool per_side = false, int32_t flags = 0)
      : want_path_(want_path || per_side), per_side_(per_side), flags_(flags) {}

  /*! Whether equal; when not and a path is wanted, `*path` is where the first difference is. */
  bool Run(const PFAny& a, const PFAny& b, std::string* path) {
    if (want_path_) steps_.push_back({-1, "root"});
    work_.push_back({&a, &b, 0, kRoot, kRoot, false});
    while (!work_.empty()) {
      Item item = work_.back();
      work_.pop_back();
      if (!Visit(item)) {
        if (want_path_) *path = PathOf(item.step);
        failed_ = item;
        return false;
      }
    }
    return true;
  }

  /*! After Run returned false with per_side: [lhs steps, rhs steps], each step [kind, value]
   *  (value: the field name, the index or the key, owned), as a new Array. */
  PFAny SidesOfFailure() {
    std::vector<int64_t> chain;
    for (int64_t s = failed_.step; s > 0; s = steps_[s].parent) chain.push_back(s);
    PFSeqObject* sides = NewSeq(kPFTypeArray, 2);
    PFAny out = ObjectAny(&sides->header);
    for (int side = 0; side < 2; ++side) {
      bool missing = (side == 0 ? failed_.a : failed_.b) == nullptr;
      PFSeqObject* path = NewSeq(kPFTypeArray, static_cast<int64_t>(chain.size()));
      SeqPush(sides, ObjectAny(&path->header));
      for (size_t i = chain.size(); i-- > 0;) {
        const Step& st = steps_[chain[i]];
        int64_t kind = st.kind + (missing && i == 0 ? 3 : 0);
        PFSeqObject* pair = NewSeq(kPFTypeArray, 2);
        SeqPush(path, ObjectAny(&pair->header));
        SeqPush(pair, PFAny{kPFTypeInt, 0, {kind}});
        PFAny value = NoneAny();
        if (st.kind == kPFAccessAttr) {
          value = MakeStringAny(st.text.substr(1));
        } else {
          CheckCall(PFAnyViewToOwned(&st.key, &value));
        }
        SeqPush(pair, value);
      }
    }
    return out;
  }

 private:
  static constexpr uint32_t kRoot = ~0u;  // the roots: always tracked
  struct Item {
    const PFAny* a;
    const PFAny* b;
    int64_t step;
    uint32_t held_a, held_b;  // references to a / b the walk itself holds (MayMeetAgain)
    bool in_def;              // below a definition field: variables met are bound
  };

  /*! Two variables: equal when bound to each other; an unbound pair is bound now in a definition
   *  (or with MAP_FREE_VARS), else equal only when it is one variable. */
  bool BindVar(PFObject* oa, PFObject* ob, bool in_def) {
    auto la = lvars_.find(oa);
    auto rb = rvars_.find(ob);
    if (la != lvars_.end() || rb != rvars_.end()) {
      return la != lvars_.end() && la->second == ob;  // then rvars_[ob] == oa too
    }
    if (!in_def && (flags_ & PACKEDFUN_STRUCTURAL_MAP_FREE_VARS) == 0) return oa == ob;
    lvars_.emplace(oa, ob);
    rvars_.emplace(ob, oa);
    return true;
  }

  /*! Two DAG objects: each may pair with one object of the other side only (sharing counts). */
  bool PairDag(PFObject* oa, PFObject* ob) {
    auto la = ldags_.find(oa);
    auto rb = rdags_.find(ob);
    if (la != ldags_.end() || rb != rdags_.end()) {
      return la != ldags_.end() && la->second == ob;
    }
    ldags_.emplace(oa, ob);
    rdags_.emplace(ob, oa);
    return true;
  }

  bool Visit(const Item& item) {
    if (item.a == nullptr || item.b == nullptr) return false;  // an item missing on one side
    const PFAny& a = *item.a;
    const PFAny& b = *item.b;
    if (!IsObject(a) || !IsObject(b)) return !IsObject(a) && !IsObject(b) && LeafEqual(a, b);
    PFObject* oa = a.v_obj;
    PFObject* ob = b.v_obj;
    // The same object on both sides is equal at once unless variables or DAG types exist: then
    // it is walked, for the bindings and pairs it makes (a term's variables may be bound to
    // another side's, so the same subterm may differ).
    bool plain = g_special_kinds.load(std::memory_order_relaxed) == 0;
    if (oa == ob && plain) return true;
    if (oa->type_index != ob->type_index) return false;
    Kind kind = KindOf(oa);
    if (kind == Kind::kIdentity) return oa == ob;
    if (kind == Kind::kShape) return ShapeEqual(oa, ob);
    if (kind == Kind::kReflected) {
      const TypeCache::Entry& type = types_.Get(oa->type_index);  // TypeError: unsupported
      if (type.kind == kPFStructuralFreeVar) return BindVar(oa, ob, item.in_def);
      if (type.kind == kPFStructuralDAG && !PairDag(oa, ob)) return false;
      if (type.kind == kPFStructuralConstTree && oa == ob) return true;
    }
    // A pair met again is already compared or being compared (co-induction). It can only recur
    // when both sides can be met again; most pairs of two trees cannot and skip the set.
    bool track =
        item.held_a == kRoot || (MayMeetAgain(oa, item.held_a) && MayMeetAgain(ob, item.held_b));
    if (track && !seen_.insert({oa, ob}).second) return true;
    if (kind == Kind::kSeq) return PushSeq(oa, ob, item.step, item.in_def);
    if (kind == Kind::kMap) return PushMap(oa, ob, item.step, item.in_def);
    return PushFields(oa, ob, item.step, item.in_def);
  }

  int64_t AddStep(int64_t parent, std::string text) {
    if (!want_path_) return 0;
    steps_.push_back({parent, std::move(text)});
    return static_cast<int64_t>(steps_.size()) - 1;
  }

  int64_t AddKeyStep(int64_t parent, std::string text, int64_t kind, const PFAny& key) {
    int64_t child = AddStep(parent, std::move(text));
    if (want_path_) {
      steps_[child].kind = kind;
      steps_[child].key = key;
    }
    return child;
  }

  bool PushSeq(PFObject* oa, PFObject* ob, int64_t step, bool in_def) {
    auto* sa = reinterpret_cast<PFSeqObject*>(oa);
    auto* sb = reinterpret_cast<PFSeqObject*>(ob);
    int64_t n = sa->size < sb->size ? sa->size : sb->size;
    if (sa->size != sb->size) {
      if (!per_side_) return false;
      // After the common items: the first item one side lacks.
      PFAny index{kPFTypeInt, 0, {n}};
      int64_t child = AddKeyStep(step, "[" + std::to_string(n) + "]", kPFAccessArrayItem, index);
      work_.push_back({n < sa->size ? &sa->data[n] : nullptr, n < sb->size ? &sb->data[n] : nullptr,
                       child, 0, 0, in_def});
    }
    for (int64_t i = n - 1; i >= 0; --i) {  // reversed: index 0 is compared first
      int64_t child = want_path_ ? AddKeyStep(step, "[" + std::to_string(i) + "]",
                                              kPFAccessArrayItem, PFAny{kPFTypeInt, 0, {i}})
                                 : 0;
      work_.push_back({&sa->data[i], &sb->data[i], child, 0, 0, in_def});
    }
    return true;
  }

  /*! With per_side, maps of different counts: the first key of b that a lacks, compared last. */
  void PushKeyMissingOnLeft(PFObject* oa, PFObject* ob, int64_t step, bool in_def) {
    const PFAny* items = keep_.Hold(ObjectAny(MapItemsArray(ob)));
    auto* seq = reinterpret_cast<PFSeqObject*>(items->v_obj);
    for (int64_t i = 0; i + 1 < seq->size; i += 2) {
      if (IsNaNKey(seq->data[i]) || MapFind(oa, seq->data[i]) != nullptr) continue;
      int64_t child = AddKeyStep(step, KeyStep(seq->data[i]), kPFAccessMapItem, seq->data[i]);
      work_.push_back({nullptr, &seq->data[i + 1], child, 0, 1, in_def});
      return;
    }
  }

  bool PushMap(PFObject* oa, PFObject* ob, int64_t step, bool in_def) {
    if (MapCount(oa) != MapCount(ob)) {
      if (!per_side_) return false;
      PushKeyMissingOnLeft(oa, ob, step, in_def);
    }
    const PFAny* items = keep_.Hold(ObjectAny(MapItemsArray(oa)));
    auto* seq = reinterpret_cast<PFSeqObject*>(items->v_obj);
    std::vector<const PFAny*> nan_values;  // b's values under NaN keys, in b's order
    size_t nan_keys = 0;                   // a's NaN keys, counted from the end
    for (int64_t i = 0; i < seq->size; i += 2) nan_keys += IsNaNKey(seq->data[i]);
    if (nan_keys != 0) nan_values = NaNKeyValues(ob);
    for (int64_t i = seq->size - 2; i >= 0; i -= 2) {
      const PFAny* other = nullptr;
      if (IsNaNKey(seq->data[i])) {
        // No lookup finds a NaN key (NaN != NaN), yet NaN keys are equal as leaves: the k-th
        // NaN key of a pairs with the k-th of b (a copy keeps the order of its entries).
        --nan_keys;
        if (nan_keys < nan_values.size()) other = nan_values[nan_keys];
      } else {
        other = MapFind(ob, seq->data[i]);
      }
      int64_t child =
          want_path_ ? AddKeyStep(step, KeyStep(seq->data[i]), kPFAccessMapItem, seq->data[i]) : 0;
      work_.push_back({&seq->data[i + 1], other, child, 1, 0, in_def});  // a: held by items
    }
    return true;
  }

  static bool IsNaNKey(const PFAny& key) {
    return key.type_index == kPFTypeFloat && std::isnan(key.v_float64);
  }

  /*! The values of `map`'s NaN-keyed entries, in its order (held by an items array kept). */
  std::vector<const PFAny*> NaNKeyValues(PFObject* map) {
    std::vector<const PFAny*> out;
    auto* seq = reinterpret_cast<PFSeqObject*>(keep_.Hold(ObjectAny(MapItemsArray(map)))->v_obj);
    for (int64_t i = 0; i + 1 < seq->size; i += 2) {
      if (IsNaNKey(seq->data[i])) out.push_back(&seq->data[i + 1]);
    }
    return out;
  }

  bool PushFields(PFObject* oa, PFObject* ob, int64_t step, bool in_def) {
    const std::vector<const PFFieldInfo*>& fields = types_.Get(oa->type_index).fields;
    for (size_t i = fields.size(); i-- > 0;) {
      const PFFieldInfo* f = fields[i];
      const PFAny* va = ReadField(oa, f, &keep_);
      const PFAny* vb = ReadField(ob, f, &keep_);
      int64_t child = want_path_ ? AddStep(step, "." + std::string(f->name.data, f->name.size)) : 0;
      bool def = in_def || (f->flags & PACKEDFUN_FIELD_STRUCTURAL_DEF) != 0;
      work_.push_back({va, vb, child, 1, 1, def});  // both: field reads the walk holds
    }
    return true;
  }

  std::string PathOf(int64_t step) const {
    std::vector<const std::string*> parts;
    for (int64_t s = step; s >= 0; s = steps_[s].parent) parts.push_back(&steps_[s].text);
    std::string out;
    for (size_t i = parts.size(); i-- > 0;) out += *parts[i];
    return out;
  }

  bool want_path_;
  bool per_side_;
  int32_t flags_;
  std::unordered_map<PFObject*, PFObject*> lvars_, rvars_;  // bound variables, each way
  std::unordered_map<PFObject*, PFObject*> ldags_, rdags_;  // paired DAG objects, each way
  Item failed_{nullptr, nullptr, 0, 0, 0, false};
  Keeper keep_;
  TypeCache types_;
  std::vector<Item> work_;
  std::vector<Step> steps_;
  std::unordered_set<std::pair<PFObject*, PFObject*>, PairHash> seen_;
};

}  // namespace
}  // namespace detail
}  // namespace packedfun

using packedfun::detail::Comparer;
using packedfun::detail::Guard;
using packedfun::detail::Hasher;

extern "C" {

PACKEDFUN_API int PFStructuralEqual(const PFAny* a, const PFAny* b, int* out) {
  return PFStructuralEqualEx(a, b, 0, out);
}

PACKEDFUN_API int PFStructuralHash(const PFAny* value, uint64_t* out) {
  return PFStructuralHashEx(value, 0, out);
}

PACKEDFUN_API int PFStructuralEqualEx(const PFAny* a, const PFAny* b, int32_t flags, int* out) {
  return Guard([&] {
    std::string unused;
    *out = Comparer(false, false, flags).Run(*a, *b, &unused) ? 1 : 0;
    return 0;
  });
}

PACKEDFUN_API int PFStructuralHashEx(const PFAny* value, int32_t flags, uint64_t* out) {
  return Guard([&] {
    *out = Hasher(flags).Run(*value);
    return 0;
  });
}

PACKEDFUN_API int PFTypeSetStructuralKind(int32_t type_index, int32_t kind) {
  using packedfun::detail::Throw;
  return Guard([&] {
    if (kind < kPFStructuralTree || kind > kPFStructuralUnsupported) {
      Throw("ValueError", "unknown structural kind " + std::to_string(kind) + " (0-4)");
    }
    const PFTypeInfo* info = nullptr;
    if (type_index < kPFTypeDynamicBegin || PFTypeGetInfo(type_index, &info) != 0) {
      Throw("TypeError",
            "a structural kind is set on a registered reflected type, not type index " +
                std::to_string(type_index));
    }
    namespace d = packedfun::detail;
    std::lock_guard<std::mutex> lock(d::g_kinds_mu);
    size_t i = static_cast<size_t>(type_index - kPFTypeDynamicBegin);
    if (d::g_kinds.size() <= i) d::g_kinds.resize(i + 1, -1);
    auto special = [](int32_t k) { return k == kPFStructuralDAG || k == kPFStructuralFreeVar; };
    d::g_special_kinds += (special(kind) ? 1 : 0) - (special(d::g_kinds[i]) ? 1 : 0);
    d::g_kinds[i] = static_cast<int8_t>(kind);
    return 0;
  });
}

PACKEDFUN_API int PFTypeGetStructuralKind(int32_t type_index, int32_t* out) {
  return Guard([&] {
    *out = packedfun::detail::StructuralKindOf(type_index);
    return 0;
  });
}

PACKEDFUN_API int PFStructuralFirstDifference(const PFAny* a, const PFAny* b, PFAny* out) {
  return Guard([&] {
    std::string path;
    if (Comparer(true).Run(*a, *b, &path)) {
      *out = packedfun::detail::NoneAny();
    } else {
      *out = packedfun::detail::MakeStringAny(path);
    }
    return 0;
  });
}

PACKEDFUN_API int PFStructuralFirstMismatch(const PFAny* a, const PFAny* b, PFAny* out) {
  return PFStructuralFirstMismatchEx(a, b, 0, out);
}

PACKEDFUN_API int PFStructuralFirstMismatchEx(const PFAny* a, const PFAny* b, int32_t flags,
                                              PFAny* out) {
  return Guard([&] {
    std::string path;
    Comparer comparer(true, true, flags);
    *out = comparer.Run(*a, *b, &path) ? packedfun::detail::NoneAny() : comparer.SidesOfFailure();
    return 0;
  });
}

}  // extern "C"

// ---- the same, as global functions for bindings ("packedfun.structural_*")
// -----------------------

namespace packedfun {
namespace detail {
namespace {

int CheckArity(const char* name, int32_t got, int32_t want) {
  if (got == want) return 0;
  return RaiseError("TypeError", std::string(name) + ": expected " + std::to_string(want) +
                                     " arguments, got " + std::to_string(got));
}

/*! The optional last argument of the structural globals: option bits (an int), 0 when absent. */
int FlagsArg(const char* name, const PFAny* args, int32_t n, int32_t want, int32_t* flags) {
  *flags = 0;
  if (n != want && n != want + 1) {
    return RaiseError("TypeError", std::string(name) + ": expected " + std::to_string(want) +
                                       " or " + std::to_string(want + 1) + " arguments, got " +
                                       std::to_string(n));
  }
  if (n == want + 1) {
    const PFAny& f = args[want];
    if (f.type_index != kPFTypeInt && f.type_index != kPFTypeBool) {
      return RaiseError("TypeError", std::string(name) + ": the option bits must be an int");
    }
    *flags = static_cast<int32_t>(f.v_int64);
  }
  return 0;
}

int EqualCall(void*, const PFAny* args, int32_t n, PFAny* result) {
  int32_t flags = 0;
  if (FlagsArg("packedfun.structural_equal", args, n, 2, &flags)) return -1;
  int equal = 0;
  if (PFStructuralEqualEx(&args[0], &args[1], flags, &equal)) return -1;
  result->type_index = kPFTypeBool;
  result->v_int64 = equal;
  return 0;
}

int HashCall(void*, const PFAny* args, int32_t n, PFAny* result) {
  int32_t flags = 0;
  if (FlagsArg("packedfun.structural_hash", args, n, 1, &flags)) return -1;
  uint64_t h = 0;
  if (PFStructuralHashEx(&args[0], flags, &h)) return -1;
  result->type_index = kPFTypeInt;
  result->v_int64 = static_cast<int64_t>(h >> 1);  // non-negative, fits a Python hash
  return 0;
}

int DifferenceCall(void*, const PFAny* args, int32_t n, PFAny* result) {
  if (CheckArity("packedfun.structural_first_difference", n, 2)) return -1;
  return PFStructuralFirstDifference(&args[0], &args[1], result);
}

/*! (steps) -> str: an access path as text, `root.body[3]["k"]`, a missing item as
 *  `[<missing:3>]` (each step [kind, value], kinds as PFStructuralFirstMismatch's). */
int PathStrCall(void*, const PFAny* args, int32_t n, PFAny* result) {
  if (CheckArity("packedfun.access_path_str", n, 1)) return -1;
  return Guard([&] {
    if (args[0].type_index != kPFTypeArray && args[0].type_index != kPFTypeList) {
      Throw("TypeError", "packedfun.access_path_str: expected a list of steps");
    }
    auto* steps = reinterpret_cast<const PFSeqObject*>(args[0].v_obj);
    std::string out = "root";
    for (int64_t i = 0; i < steps->size; ++i) {
      const PFAny& s = steps->data[i];
      const PFSeqObject* pair = nullptr;
      if (s.type_index == kPFTypeArray || s.type_index == kPFTypeList) {
        pair = reinterpret_cast<const PFSeqObject*>(s.v_obj);
      }
      if (pair == nullptr || pair->size != 2 || pair->data[0].type_index != kPFTypeInt ||
          pair->data[0].v_int64 < kPFAccessAttr ||
          pair->data[0].v_int64 > kPFAccessMapItemMissing) {
        Throw("ValueError",
              "packedfun.access_path_str: step " + std::to_string(i) + " is not [kind 0-5, value]");
      }
      int64_t kind = pair->data[0].v_int64;
      const PFAny& v = pair->data[1];
      std::string text;
      if (kind % 3 == kPFAccessAttr) {
        std::string_view name;
        if (!AnyToStringView(v, false, &name)) Throw("TypeError", "an attr step needs a str");
        text = std::string(name);
      } else if (kind % 3 == kPFAccessArrayItem) {
        if (v.type_index != kPFTypeInt) Throw("TypeError", "an array item step needs an int");
        text = std::to_string(v.v_int64);
      } else {
        text = KeyStep(v);
        text = text.substr(1, text.size() - 2);
      }
      bool missing = kind >= kPFAccessAttrMissing;
      if (missing) text = "<missing:" + text + ">";
      out += kind % 3 == kPFAccessAttr ? "." + text : "[" + text + "]";
    }
    *result = MakeStringAny(out);
    return 0;
  });
}

int MismatchCall(void*, const PFAny* args, int32_t n, PFAny* result) {
  int32_t flags = 0;
  if (FlagsArg("packedfun.structural_first_mismatch", args, n, 2, &flags)) return -1;
  return PFStructuralFirstMismatchEx(&args[0], &args[1], flags, result);
}

int SetKindCall(void*, const PFAny* args, int32_t n, PFAny* result) {
  if (CheckArity("packedfun.type_set_structural_kind", n, 2)) return -1;
  if (args[0].type_index != kPFTypeInt || args[1].type_index != kPFTypeInt) {
    return RaiseError("TypeError", "packedfun.type_set_structural_kind: expected (int, int)");
  }
  if (PFTypeSetStructuralKind(static_cast<int32_t>(args[0].v_int64),
                              static_cast<int32_t>(args[1].v_int64))) {
    return -1;
  }
  *result = NoneAny();
  return 0;
}

/*! (type index) -> [[name, def], ...]: the fields structural equality compares for a tree (those
 *  not marked PACKEDFUN_FIELD_NO_COMPARE, ancestors' first; a variable type's too, though equality
 *  compares its binding), each with 1 when it is a definition field
 *  (PACKEDFUN_FIELD_STRUCTURAL_DEF). For walks and maps that follow structural equality's view. */
int FieldsCall(void*, const PFAny* args, int32_t n, PFAny* result) {
  if (CheckArity("packedfun.type_structural_fields", n, 1)) return -1;
  return Guard([&] {
    if (args[0].type_index != kPFTypeInt) {
      Throw("TypeError", "packedfun.type_structural_fields: expected an int");
    }
    auto index = static_cast<int32_t>(args[0].v_int64);
    std::vector<const PFFieldInfo*> fields;
    if (index >= kPFTypeDynamicBegin) fields = ComparedFields(index);
    PFSeqObject* out = NewSeq(kPFTypeArray, static_cast<int64_t>(fields.size()));
    *result = ObjectAny(&out->header);
    for (const PFFieldInfo* f : fields) {
      PFSeqObject* pair = NewSeq(kPFTypeArray, 2);
      SeqPush(out, ObjectAny(&pair->header));
      SeqPush(pair, MakeStringAny(std::string(f->name.data, f->name.size)));
      SeqPush(pair, PFAny{kPFTypeInt, 0, {(f->flags & PACKEDFUN_FIELD_STRUCTURAL_DEF) ? 1 : 0}});
    }
    return 0;
  });
}

int GetKindCall(void*, const PFAny* args, int32_t n, PFAny* result) {
  if (CheckArity("packedfun.type_structural_kind", n, 1)) return -1;
  if (args[0].type_index != kPFTypeInt) {
    return RaiseError("TypeError", "packedfun.type_structural_kind: expected an int");
  }
  int32_t kind = 0;
  if (PFTypeGetStructuralKind(static_cast<int32_t>(args[0].v_int64), &kind)) return -1;
  result->type_index = kPFTypeInt;
  result->v_int64 = kind;
  return 0;
}

const int kRegistered = [] {
  RegisterBuiltin("packedfun.structural_first_mismatch", &MismatchCall);
  RegisterBuiltin("packedfun.type_set_structural_kind", &SetKindCall);
  RegisterBuiltin("packedfun.type_structural_kind", &GetKindCall);
  RegisterBuiltin("packedfun.type_structural_fields", &FieldsCall);
  RegisterBuiltin("packedfun.access_path_str", &PathStrCall);
  RegisterBuiltin("packedfun.structural_equal", &EqualCall);
  RegisterBuiltin("packedfun.structural_hash", &HashCall);
  RegisterBuiltin("packedfun.structural_first_difference", &DifferenceCall);
  return 0;
}();

}  // namespace
}  // namespace detail
}  // namespace packedfun
