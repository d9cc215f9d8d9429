// Private runtime helper: a flat open-addressing table keyed by object address (graph walks).
#ifndef PACKEDFUN_SRC_INTERNAL_OBJECT_TABLE_H_
#define PACKEDFUN_SRC_INTERNAL_OBJECT_TABLE_H_

#include <packedfun/c_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace packedfun {
namespace detail {

/*! Object address -> (value, open flag), linear probing in one array, doubled at half load.
 *  A walk that visits a million objects does one probe into contiguous memory per lookup instead of
 *  chasing a node-based std::unordered_map (an allocation per entry, a cache miss per step).
 * Entries are never erased: a walk only adds and updates. */
class ObjectTable {
 public:
  struct Slot {
    PFObject* key;  /*!< nullptr: empty */
    uint64_t value; /*!< the caller's: a finished hash, or a stack depth while open */
    bool open;      /*!< still being walked */
    bool cyclic;    /*!< the caller's: a finished value that reaches a cycle */
  };

  /*! The slot of `key`, or nullptr when absent. Valid until the next Insert. */
  Slot* Find(PFObject* key) noexcept {
    if (slots_.empty()) return nullptr;
    for (size_t i = Home(key);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.key == key) return &s;
      if (s.key == nullptr) return nullptr;
    }
  }

  /*! Adds `key` (absent) and returns its slot, valid until the next Insert. Throws bad_alloc. */
  Slot* Insert(PFObject* key, uint64_t value, bool open) {
    if (2 * (used_ + 1) > slots_.size()) Grow();
    size_t i = Home(key);
    while (slots_[i].key != nullptr) i = (i + 1) & mask_;
    slots_[i] = Slot{key, value, open, false};
    ++used_;
    return &slots_[i];
  }

 private:
  size_t Home(PFObject* key) const noexcept {
    uint64_t x = reinterpret_cast<uintptr_t>(key) * 0x9e3779b97f4a7c15ULL;  // Fibonacci hashing
    return static_cast<size_t>(x >> shift_);
  }

  void Grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    size_t size = old.empty() ? 64 : old.size() * 2;
    slots_.assign(size, Slot{nullptr, 0, false, false});
    mask_ = size - 1;
    shift_ = 64;
    for (size_t n = size; n > 1; n >>= 1) --shift_;
    used_ = 0;
    for (const Slot& s : old) {
      if (s.key != nullptr) Insert(s.key, s.value, s.open)->cyclic = s.cyclic;
    }
  }

  std::vector<Slot> slots_;
  size_t used_ = 0;
  size_t mask_ = 0;
  int shift_ = 64;
};

}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_SRC_INTERNAL_OBJECT_TABLE_H_
