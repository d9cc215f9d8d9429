// Map and Dict: an insertion-ordered hash map keyed by value (strings, bytes, numbers) or identity.
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <random>
#include <string_view>
#include <vector>

#include "runtime/error.h"
#include "runtime/map.h"
#include "runtime/object.h"
#include "runtime/seq.h"
#include "runtime/string.h"

namespace packedfun {
namespace detail {
namespace {

/*! A key reduced to what equality looks at: like a Python dict's keys, so 1 == 1.0 == True,
 *  "a" != b"a", and a NaN equals no key. A dict finds a NaN key only through the very same float
 *  object; identity does not cross the ABI, so every NaN here behaves as a distinct NaN object. */
struct KeyView {
  enum Kind : uint8_t { kNone, kStr, kBytes, kInt, kFloat, kNaN, kBits, kObj } kind = kNone;
  int32_t type_index = 0;
  std::string_view text;
  uint64_t bits = 0;  // int64 value, float bits, POD payload or object address
};

KeyView ViewKey(const PFAny& k) noexcept {
  KeyView v;
  if (AnyToStringView(k, false, &v.text)) {
    v.kind = KeyView::kStr;
  } else if (AnyToStringView(k, true, &v.text)) {
    v.kind = KeyView::kBytes;
  } else if (k.type_index == kPFTypeNone) {
    v.kind = KeyView::kNone;
  } else if (k.type_index == kPFTypeInt || k.type_index == kPFTypeBool) {
    v.kind = KeyView::kInt;
    v.bits = static_cast<uint64_t>(k.v_int64);
  } else if (k.type_index == kPFTypeFloat) {
    double f = k.v_float64;
    if (std::isnan(f)) {
      v.kind = KeyView::kNaN;
    } else if (f == std::trunc(f) && f >= -9223372036854775808.0 && f < 9223372036854775808.0) {
      v.kind = KeyView::kInt;
      v.bits = static_cast<uint64_t>(static_cast<int64_t>(f));
    } else if (f == std::trunc(f) && f >= 9223372036854775808.0 && f < 18446744073709551616.0) {
      v.kind = KeyView::kBits;  // 2**63 <= f < 2**64: equal to that kPFTypeUInt64 key, as in a dict
      v.type_index = kPFTypeUInt64;
      v.bits = static_cast<uint64_t>(f);
    } else {
      v.kind = KeyView::kFloat;
      std::memcpy(&v.bits, &f, sizeof(f));
    }
  } else if (IsObjectIndex(k.type_index)) {
    v.kind = KeyView::kObj;
    v.bits = reinterpret_cast<uintptr_t>(k.v_obj);
  } else {
    v.kind = KeyView::kBits;
    v.type_index = k.type_index;
    if (k.type_index == kPFTypeDataType) {
      std::memcpy(&v.bits, &k.v_dtype, sizeof(k.v_dtype));
    } else {
      v.bits = static_cast<uint64_t>(k.v_int64);
    }
  }
  return v;
}

uint64_t Mix(uint64_t x) noexcept {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

/*! Two secret words drawn once per process. Keys are hashed under them so that nobody can pick
 *  keys that all land in one probe chain (the finalizer alone is invertible: unseeded, such a key
 *  set is easy to compute and turns every insertion and lookup linear in the map's size). */
struct HashSeed {
  uint64_t k0, k1;
};

HashSeed DrawSeed() noexcept {
  HashSeed seed{0x243f6a8885a308d3ULL, 0x13198a2e03707344ULL};
  try {
    std::random_device rd;
    seed.k0 ^= (static_cast<uint64_t>(rd()) << 32) ^ rd();
    seed.k1 ^= (static_cast<uint64_t>(rd()) << 32) ^ rd();
  } catch (...) {  // no entropy source: fall back to the clock and an address (ASLR)
    uint64_t t = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    seed.k0 ^= Mix(t);
    seed.k1 ^= Mix(reinterpret_cast<uintptr_t>(&seed) ^ t);
  }
  return seed;
}

const HashSeed& Seed() noexcept {
  static const HashSeed seed = DrawSeed();
  return seed;
}

uint64_t HashKey(const KeyView& k) noexcept {
  const HashSeed& seed = Seed();
  if (k.kind == KeyView::kNaN) {
    // No lookup can find a NaN, so its hash only places it: a fresh one each time keeps many NaN
    // keys from sharing one probe chain (as CPython 3.10 hashes NaN by identity, for that reason).
    static std::atomic<uint64_t> nan_count{0};
    return Mix(Mix(nan_count.fetch_add(1, std::memory_order_relaxed) ^ seed.k0) ^ seed.k1);
  }
  if (k.kind == KeyView::kStr || k.kind == KeyView::kBytes) {
    uint64_t h = 1469598103934665603ULL ^ seed.k0;  // FNV-1a from a secret starting state
    for (char c : k.text) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    return Mix(Mix(h + k.kind) ^ seed.k1);
  }
  uint64_t x = k.bits ^ (static_cast<uint64_t>(k.kind) << 56) ^ static_cast<uint32_t>(k.type_index);
  return Mix(Mix(x ^ seed.k0) ^ seed.k1);
}

bool KeyEqual(const KeyView& a, const KeyView& b) noexcept {
  if (a.kind != b.kind || a.kind == KeyView::kNaN) return false;
  if (a.kind == KeyView::kStr || a.kind == KeyView::kBytes) return a.text == b.text;
  return a.bits == b.bits && a.type_index == b.type_index;
}

constexpr int64_t kEmpty = -1;
constexpr int64_t kTombstone = -2;

// A used table slot holds the entry's index in its low 40 bits and 23 bits of the key's hash above
// them: a probe rejects almost every other key's slot without reading that key's entry, so a large
// map costs about one cache miss per lookup instead of one per probed slot.
constexpr int kIndexBits = 40;
constexpr int64_t kIndexMask = (int64_t{1} << kIndexBits) - 1;

inline int64_t SlotValue(int64_t index, uint64_t hash) noexcept {
  return static_cast<int64_t>((hash >> 41) << kIndexBits) | index;
}
inline size_t EntryIndex(int64_t slot_value) noexcept {
  return static_cast<size_t>(slot_value & kIndexMask);
}
inline bool TagMatches(int64_t slot_value, uint64_t hash) noexcept {
  return (static_cast<uint64_t>(slot_value) >> kIndexBits) == (hash >> 41);
}

struct Entry {
  PFAny key;
  PFAny value;
  uint64_t hash;
  bool live;
};

struct MapImpl {
  PFObject header;
  std::vector<Entry> entries;  // insertion order; erased entries stay until the next rehash
  std::vector<int64_t> table;  // open addressing: SlotValue(entry index, hash), kEmpty, kTombstone
  int64_t live = 0;
  int64_t used = 0;  // table slots not kEmpty
  // False while a map made by PFMapCreateDistinct has neither hashes nor table: iterating it (a
  // dict argument headed for std::map) never needs them. Set once, under IndexMutex(), by the
  // first operation that looks a key up; read with acquire before `table` is touched.
  std::atomic<bool> indexed{true};

  ~MapImpl() { Clear(); }

  void Clear() noexcept {
    // Empty the map before releasing anything: a deleter may re-enter it.
    std::vector<Entry> old;
    old.swap(entries);
    table.clear();
    live = used = 0;
    for (Entry& e : old) {
      if (!e.live) continue;
      ReleaseAny(&e.key);
      ReleaseAny(&e.value);
    }
  }

  /*! The table slot holding `key`, or -1. */
  int64_t FindSlot(const KeyView& key, uint64_t hash) const noexcept {
    if (table.empty()) return -1;
    size_t mask = table.size() - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
      int64_t value = table[i];
      if (value == kEmpty) return -1;
      if (value == kTombstone || !TagMatches(value, hash)) continue;
      const Entry& e = entries[EntryIndex(value)];
      if (e.hash == hash && KeyEqual(ViewKey(e.key), key)) return static_cast<int64_t>(i);
    }
  }

  void PlaceIndex(uint64_t hash, int64_t idx) noexcept {
    size_t mask = table.size() - 1;
    size_t i = hash & mask;
    while (table[i] >= 0) i = (i + 1) & mask;
    if (table[i] == kEmpty) ++used;
    table[i] = SlotValue(idx, hash);
  }

  /*! Drops erased entries and rebuilds the table with room for `want` live entries. */
  void Rehash(int64_t want) {
    size_t cap = 8;
    while (cap * 3 < static_cast<size_t>(want) * 4 + 4) cap *= 2;
    std::vector<int64_t> fresh(cap, kEmpty);
    std::vector<Entry> kept;
    kept.reserve(static_cast<size_t>(want));
    for (const Entry& e : entries) {
      if (e.live) kept.push_back(e);
    }
    table.swap(fresh);
    entries.swap(kept);
    used = 0;
    for (size_t i = 0; i < entries.size(); ++i) {
      PlaceIndex(entries[i].hash, static_cast<int64_t>(i));
    }
  }
};

/*! Serializes the lazy index builds of all maps: rare (once per map, only for maps that are
 *  looked up after a distinct-key creation) and short. */
std::mutex& IndexMutex() {
  static std::mutex mu;
  return mu;
}

/*! Builds the hashes and table of a map made without them, once. Entries stay where they are
 *  (another thread may be iterating them) and only their `hash` fields, which iteration never
 *  reads, are written. */
__attribute__((noinline)) void BuildIndex(MapImpl* m) {
  std::lock_guard<std::mutex> lock(IndexMutex());
  if (m->indexed.load(std::memory_order_relaxed)) return;
  size_t cap = 8;
  while (cap * 3 < static_cast<size_t>(m->live) * 4 + 4) cap *= 2;
  std::vector<int64_t> fresh(cap, kEmpty);
  for (Entry& e : m->entries) e.hash = HashKey(ViewKey(e.key));
  m->table.swap(fresh);
  m->used = 0;
  for (size_t i = 0; i < m->entries.size(); ++i) {
    m->PlaceIndex(m->entries[i].hash, static_cast<int64_t>(i));
  }
  m->indexed.store(true, std::memory_order_release);
}

/*! `m`, its index built first when it has none yet. */
inline MapImpl* Indexed(MapImpl* m) {
  if (!m->indexed.load(std::memory_order_acquire)) BuildIndex(m);
  return m;
}

// ViewToOwned, with the plain-POD case (most keys and values, short strings) inline.
inline void CopyToOwned(const PFAny& view, PFAny* out) {
  if ((!IsObjectIndex(view.type_index) && view.type_index < kPFTypeDLTensorPtr) ||
      view.type_index == kPFTypeSmallStr || view.type_index == kPFTypeSmallBytes) {
    *out = view;
    return;
  }
  ViewToOwned(view, out);
}

MapImpl* CheckMap(PFObject* obj) {
  if (!IsMapObject(obj)) Throw("TypeError", "expected a packedfun.Map or packedfun.Dict object");
  return As<MapImpl>(obj);
}

}  // namespace

PFObject* NewMap(int32_t type_index) { return Header(AllocObject<MapImpl>(type_index)); }

bool IsMapObject(const PFObject* obj) noexcept {
  return obj != nullptr && (obj->type_index == kPFTypeMap || obj->type_index == kPFTypeDict);
}

void MapReserve(PFObject* map, int64_t num_items) {
  if (num_items > 0) As<MapImpl>(map)->Rehash(num_items);
}

void MapSet(PFObject* map, const PFAny& key, const PFAny& value) {
  MapImpl* m = Indexed(As<MapImpl>(map));
  KeyView kv = ViewKey(key);
  uint64_t hash = HashKey(kv);
  PFAny owned_value;
  CopyToOwned(value, &owned_value);
  int64_t slot = m->FindSlot(kv, hash);
  if (slot >= 0) {
    Entry& e = m->entries[EntryIndex(m->table[static_cast<size_t>(slot)])];
    PFAny old_value = e.value;
    e.value = owned_value;
    ReleaseAny(&old_value);  // last: a deleter may re-enter this map
    return;
  }
  PFAny owned_key = NoneAny();
  try {
    if (kv.kind == KeyView::kStr &&
        (key.type_index == kPFTypeStrView || key.type_index == kPFTypeRawStr)) {
      owned_key = MakeStringAny(kv.text);  // the text is already at hand: no second decode
    } else {
      CopyToOwned(key, &owned_key);
    }
    if (static_cast<size_t>(m->used + 1) * 4 > m->table.size() * 3 ||
        m->entries.size() == m->entries.capacity()) {
      m->Rehash(m->live + 1 > m->live * 2 ? m->live + 1 : m->live * 2);
    }
    m->entries.push_back(Entry{owned_key, owned_value, hash, true});
  } catch (...) {
    ReleaseAny(&owned_key);
    ReleaseAny(&owned_value);
    throw;
  }
  m->PlaceIndex(hash, static_cast<int64_t>(m->entries.size() - 1));
  ++m->live;
}

const PFAny* MapFind(PFObject* map, const PFAny& key) {
  MapImpl* m = Indexed(As<MapImpl>(map));
  KeyView kv = ViewKey(key);
  int64_t slot = m->FindSlot(kv, HashKey(kv));
  if (slot < 0) return nullptr;
  return &m->entries[EntryIndex(m->table[static_cast<size_t>(slot)])].value;
}

bool MapErase(PFObject* map, const PFAny& key) {
  MapImpl* m = Indexed(As<MapImpl>(map));
  KeyView kv = ViewKey(key);
  int64_t slot = m->FindSlot(kv, HashKey(kv));
  if (slot < 0) return false;
  Entry& e = m->entries[EntryIndex(m->table[static_cast<size_t>(slot)])];
  PFAny old_key = e.key, old_value = e.value;
  e.live = false;
  e.key = e.value = NoneAny();
  m->table[static_cast<size_t>(slot)] = kTombstone;
  --m->live;
  // Release last: a deleter may re-enter this map.
  ReleaseAny(&old_key);
  ReleaseAny(&old_value);
  return true;
}

void MapClear(PFObject* map) noexcept { As<MapImpl>(map)->Clear(); }

int64_t MapCount(PFObject* map) noexcept { return As<MapImpl>(map)->live; }

int MapVisitObjects(PFObject* map, int (*visit)(PFObject* obj, void* ctx), void* ctx) {
  for (const Entry& e : As<MapImpl>(map)->entries) {
    if (!e.live) continue;
    if (IsObjectIndex(e.key.type_index)) {
      if (int rc = visit(e.key.v_obj, ctx)) return rc;
    }
    if (IsObjectIndex(e.value.type_index)) {
      if (int rc = visit(e.value.v_obj, ctx)) return rc;
    }
  }
  return 0;
}

bool MapEntryAt(PFObject* map, int64_t* cursor, const PFAny** key, const PFAny** value) noexcept {
  MapImpl* m = As<MapImpl>(map);
  size_t n = m->entries.size();
  for (size_t i = static_cast<size_t>(*cursor); i < n; ++i) {
    const Entry& e = m->entries[i];
    if (!e.live) continue;
    *cursor = static_cast<int64_t>(i + 1);
    *key = &e.key;
    *value = &e.value;
    return true;
  }
  *cursor = static_cast<int64_t>(n);
  return false;
}

PFObject* MapItemsArray(PFObject* map) {
  MapImpl* m = As<MapImpl>(map);
  PFSeqObject* arr = NewSeq(kPFTypeArray, m->live * 2);
  for (const Entry& e : m->entries) {
    if (!e.live) continue;
    // Stored keys and values are owned and never borrowed kinds: copying cannot fail.
    ViewToOwned(e.key, &arr->data[arr->size++]);
    ViewToOwned(e.value, &arr->data[arr->size++]);
  }
  return Header(arr);
}

}  // namespace detail
}  // namespace packedfun

using namespace packedfun::detail;

extern "C" {

PACKEDFUN_API int PFMapCreate(const PFAny* kv, int64_t num_items, PFAny* out) {
  return Guard([&] {
    if (num_items < 0) return RaiseError("ValueError", "PFMapCreate: negative num_items");
    PFAny result = ObjectAny(NewMap(kPFTypeMap));
    try {
      MapReserve(result.v_obj, num_items);
      for (int64_t i = 0; i < num_items; ++i) MapSet(result.v_obj, kv[2 * i], kv[2 * i + 1]);
    } catch (...) {
      ReleaseAny(&result);
      throw;
    }
    *out = result;
    return 0;
  });
}

PACKEDFUN_API int PFMapCreateDistinct(const PFAny* kv, int64_t num_items, PFAny* out) {
  return Guard([&] {
    if (num_items < 0) return RaiseError("ValueError", "PFMapCreateDistinct: negative num_items");
    PFAny result = ObjectAny(NewMap(kPFTypeMap));
    MapImpl* m = As<MapImpl>(result.v_obj);
    try {
      m->entries.reserve(static_cast<size_t>(num_items));
      m->indexed.store(false, std::memory_order_relaxed);
      for (int64_t i = 0; i < num_items; ++i) {
        PFAny key = NoneAny(), value = NoneAny();
        try {
          CopyToOwned(kv[2 * i], &key);
          CopyToOwned(kv[2 * i + 1], &value);
        } catch (...) {
          ReleaseAny(&key);
          throw;
        }
        m->entries.push_back(Entry{key, value, 0, true});  // reserved: cannot throw
        ++m->live;
      }
    } catch (...) {
      ReleaseAny(&result);
      throw;
    }
    *out = result;
    return 0;
  });
}

PACKEDFUN_API int PFMapReadEntries(PFObject* map, int64_t* cursor, PFAny* kv, int64_t max_items,
                                   int64_t* num_read) {
  return Guard([&] {
    MapImpl* m = CheckMap(map);
    if (*cursor < 0 || max_items < 0) {
      return RaiseError("ValueError", "PFMapReadEntries: negative cursor or max_items");
    }
    const size_t n = m->entries.size();
    size_t i = static_cast<size_t>(*cursor);
    int64_t got = 0;
    for (; i < n && got < max_items; ++i) {
      const Entry& e = m->entries[i];
      if (!e.live) continue;
      kv[2 * got] = e.key;
      kv[2 * got + 1] = e.value;
      ++got;
    }
    *cursor = static_cast<int64_t>(i < n ? i : n);
    *num_read = got;
    return 0;
  });
}

PACKEDFUN_API int PFMapSize(PFObject* map, int64_t* out) {
  return Guard([&] {
    *out = CheckMap(map)->live;
    return 0;
  });
}

PACKEDFUN_API int PFMapGetItem(PFObject* map, const PFAny* key, PFAny* out, int* found) {
  return Guard([&] {
    CheckMap(map);
    const PFAny* value = MapFind(map, *key);
    if (value != nullptr) ViewToOwned(*value, out);
    *found = value != nullptr ? 1 : 0;
    return 0;
  });
}

PACKEDFUN_API int PFMapItems(PFObject* map, PFAny* out) {
  return Guard([&] {
    CheckMap(map);
    *out = ObjectAny(MapItemsArray(map));
    return 0;
  });
}

PACKEDFUN_API int PFMapIterNext(PFObject* map, int64_t* cursor, PFAny* key, PFAny* value,
                                int* found) {
  return Guard([&] {
    CheckMap(map);
    if (*cursor < 0) return RaiseError("ValueError", "PFMapIterNext: negative cursor");
    const PFAny* k = nullptr;
    const PFAny* v = nullptr;
    *found = MapEntryAt(map, cursor, &k, &v) ? 1 : 0;
    if (*found) {
      if (key != nullptr) *key = *k;
      if (value != nullptr) *value = *v;
    }
    return 0;
  });
}

}  // extern "C"
