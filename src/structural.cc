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

#include <cmath>
#include <cstring>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "internal/error.h"
#include "internal/map.h"
#include "internal/object.h"
#include "internal/registry.h"
#include "internal/string.h"

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

/*! One compared field of a reflected type. */
struct FieldRef {
  const PFFieldInfo* info;
};

std::vector<FieldRef> ComparedFields(int32_t type_index) {
  std::vector<FieldRef> out;
  const PFTypeInfo* info = nullptr;
  CheckCall(PFTypeGetInfo(type_index, &info));
  for (int32_t d = 0; d <= info->depth; ++d) {
    const PFTypeInfo* level = nullptr;
    CheckCall(PFTypeGetInfo(info->ancestors[d], &level));
    for (int32_t i = 0; i < level->num_fields; ++i) {
      if ((level->fields[i].flags & PACKEDFUN_FIELD_NO_COMPARE) == 0) {
        out.push_back({&level->fields[i]});
      }
    }
  }
  return out;
}

const PFAny* ReadField(PFObject* obj, const PFFieldInfo* field, Keeper* keep) {
  PFAny value = NoneAny();
  CheckCall(field->getter(reinterpret_cast<char*>(obj) + field->offset, &value));
  return keep->Hold(value);
}

/*! The children of a content-walked object, in order (maps: k0, v0, k1, v1, ...). */
void Children(PFObject* obj, Kind kind, Keeper* keep, std::vector<const PFAny*>* out) {
  if (kind == Kind::kSeq) {
    auto* seq = reinterpret_cast<PFSeqObject*>(obj);
    for (int64_t i = 0; i < seq->size; ++i) out->push_back(&seq->data[i]);
  } else if (kind == Kind::kMap) {
    const PFAny* items = keep->Hold(ObjectAny(MapItemsArray(obj)));
    auto* seq = reinterpret_cast<PFSeqObject*>(items->v_obj);
    for (int64_t i = 0; i < seq->size; ++i) out->push_back(&seq->data[i]);
  } else {
    for (const FieldRef& f : ComparedFields(obj->type_index)) {
      out->push_back(ReadField(obj, f.info, keep));
    }
  }
}

uint64_t TypeSeed(PFObject* obj) {
  const PFTypeInfo* info = nullptr;
  CheckCall(PFTypeGetInfo(obj->type_index, &info));
  return HashText(std::string_view(info->type_key.data, info->type_key.size), 1);
}

// ---- hashing
// -------------------------------------------------------------------------------------

struct HashFrame {
  PFObject* obj;
  Kind kind;
  std::vector<const PFAny*> kids;
  size_t next = 0;
  std::vector<uint64_t> hashes;
};

uint64_t FinishHash(const HashFrame& f) {
  uint64_t h = Combine(TypeSeed(f.obj), f.hashes.size());
  if (f.kind == Kind::kMap) {
    uint64_t sum = 0;  // order-independent: a sum of per-entry hashes
    for (size_t i = 0; i + 1 < f.hashes.size(); i += 2) {
      sum += Combine(f.hashes[i], f.hashes[i + 1]);
    }
    return Combine(h, sum);
  }
  for (uint64_t x : f.hashes) h = Combine(h, x);
  return h;
}

class Hasher {
 public:
  uint64_t Run(const PFAny& root) {
    uint64_t h = 0;
    if (Immediate(root, &h)) return h;
    Push(root.v_obj);
    while (true) {
      HashFrame& f = stack_.back();
      if (f.next < f.kids.size()) {
        if (Immediate(*f.kids[f.next], &h)) {
          f.hashes.push_back(h);
          ++f.next;
        } else {
          Push(f.kids[f.next]->v_obj);  // invalidates f
        }
        continue;
      }
      h = FinishHash(f);
      open_.erase(f.obj);
      done_[f.obj] = h;
      stack_.pop_back();
      if (stack_.empty()) return h;
      stack_.back().hashes.push_back(h);
      ++stack_.back().next;
    }
  }

 private:
  bool Immediate(const PFAny& v, uint64_t* h) {
    if (!IsObject(v)) {
      *h = LeafHash(v);
      return true;
    }
    PFObject* obj = v.v_obj;
    Kind kind = KindOf(obj);
    if (kind == Kind::kIdentity) {
      *h = LeafHash(v);
    } else if (kind == Kind::kShape) {
      *h = ShapeHash(obj);
    } else if (auto it = done_.find(obj); it != done_.end()) {
      *h = it->second;
    } else if (auto open = open_.find(obj); open != open_.end()) {
      *h = Combine(0xC1C1E, stack_.size() - open->second);  // a cycle: distance up the stack
    } else {
      return false;
    }
    return true;
  }

  void Push(PFObject* obj) {
    Kind kind = KindOf(obj);
    open_[obj] = stack_.size();
    stack_.push_back(HashFrame{obj, kind, {}, 0, {}});
    Children(obj, kind, &keep_, &stack_.back().kids);
  }

  Keeper keep_;
  std::vector<HashFrame> stack_;
  std::unordered_map<PFObject*, uint64_t> done_;
  std::unordered_map<PFObject*, size_t> open_;
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
  explicit Comparer(bool want_path) : want_path_(want_path) {}

  /*! Whether equal; when not and a path is wanted, `*path` is where the first difference is. */
  bool Run(const PFAny& a, const PFAny& b, std::string* path) {
    if (want_path_) steps_.push_back({-1, "root"});
    work_.push_back({&a, &b, 0});
    while (!work_.empty()) {
      Item item = work_.back();
      work_.pop_back();
      if (!Visit(item)) {
        if (want_path_) *path = PathOf(item.step);
        return false;
      }
    }
    return true;
  }

 private:
  struct Item {
    const PFAny* a;
    const PFAny* b;
    int64_t step;
  };

  bool Visit(const Item& item) {
    if (item.b == nullptr) return false;  // a map key missing on the right
    const PFAny& a = *item.a;
    const PFAny& b = *item.b;
    if (!IsObject(a) || !IsObject(b)) return !IsObject(a) && !IsObject(b) && LeafEqual(a, b);
    PFObject* oa = a.v_obj;
    PFObject* ob = b.v_obj;
    if (oa == ob) return true;
    if (oa->type_index != ob->type_index) return false;
    Kind kind = KindOf(oa);
    if (kind == Kind::kIdentity) return false;
    if (kind == Kind::kShape) return ShapeEqual(oa, ob);
    if (!seen_.insert({oa, ob}).second) return true;  // already compared or being compared
    if (kind == Kind::kSeq) return PushSeq(oa, ob, item.step);
    if (kind == Kind::kMap) return PushMap(oa, ob, item.step);
    return PushFields(oa, ob, item.step);
  }

  int64_t AddStep(int64_t parent, std::string text) {
    if (!want_path_) return 0;
    steps_.push_back({parent, std::move(text)});
    return static_cast<int64_t>(steps_.size()) - 1;
  }

  bool PushSeq(PFObject* oa, PFObject* ob, int64_t step) {
    auto* sa = reinterpret_cast<PFSeqObject*>(oa);
    auto* sb = reinterpret_cast<PFSeqObject*>(ob);
    if (sa->size != sb->size) return false;
    for (int64_t i = sa->size - 1; i >= 0; --i) {  // reversed: index 0 is compared first
      work_.push_back({&sa->data[i], &sb->data[i], AddStep(step, "[" + std::to_string(i) + "]")});
    }
    return true;
  }

  bool PushMap(PFObject* oa, PFObject* ob, int64_t step) {
    if (MapCount(oa) != MapCount(ob)) return false;
    const PFAny* items = keep_.Hold(ObjectAny(MapItemsArray(oa)));
    auto* seq = reinterpret_cast<PFSeqObject*>(items->v_obj);
    for (int64_t i = seq->size - 2; i >= 0; i -= 2) {
      const PFAny* other = MapFind(ob, seq->data[i]);
      int64_t child = want_path_ ? AddStep(step, KeyStep(seq->data[i])) : 0;
      work_.push_back({&seq->data[i + 1], other, child});
    }
    return true;
  }

  bool PushFields(PFObject* oa, PFObject* ob, int64_t step) {
    std::vector<FieldRef> fields = ComparedFields(oa->type_index);
    for (size_t i = fields.size(); i-- > 0;) {
      const PFFieldInfo* f = fields[i].info;
      const PFAny* va = ReadField(oa, f, &keep_);
      const PFAny* vb = ReadField(ob, f, &keep_);
      work_.push_back({va, vb, AddStep(step, "." + std::string(f->name.data, f->name.size))});
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
  Keeper keep_;
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
  return Guard([&] {
    std::string unused;
    *out = Comparer(false).Run(*a, *b, &unused) ? 1 : 0;
    return 0;
  });
}

PACKEDFUN_API int PFStructuralHash(const PFAny* value, uint64_t* out) {
  return Guard([&] {
    *out = Hasher().Run(*value);
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

int EqualCall(void*, const PFAny* args, int32_t n, PFAny* result) {
  if (CheckArity("packedfun.structural_equal", n, 2)) return -1;
  int equal = 0;
  if (PFStructuralEqual(&args[0], &args[1], &equal)) return -1;
  result->type_index = kPFTypeBool;
  result->v_int64 = equal;
  return 0;
}

int HashCall(void*, const PFAny* args, int32_t n, PFAny* result) {
  if (CheckArity("packedfun.structural_hash", n, 1)) return -1;
  uint64_t h = 0;
  if (PFStructuralHash(&args[0], &h)) return -1;
  result->type_index = kPFTypeInt;
  result->v_int64 = static_cast<int64_t>(h >> 1);  // non-negative, fits a Python hash
  return 0;
}

int DifferenceCall(void*, const PFAny* args, int32_t n, PFAny* result) {
  if (CheckArity("packedfun.structural_first_difference", n, 2)) return -1;
  return PFStructuralFirstDifference(&args[0], &args[1], result);
}

const int kRegistered = [] {
  RegisterBuiltin("packedfun.structural_equal", &EqualCall);
  RegisterBuiltin("packedfun.structural_hash", &HashCall);
  RegisterBuiltin("packedfun.structural_first_difference", &DifferenceCall);
  return 0;
}();

}  // namespace
}  // namespace detail
}  // namespace packedfun
