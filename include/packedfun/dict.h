// Dict<K, V>: a typed reference to a mutable, insertion-ordered hash map (kPFTypeDict).
#ifndef PACKEDFUN_DICT_H_
#define PACKEDFUN_DICT_H_

#include <packedfun/any.h>
#include <packedfun/c_api.h>
#include <packedfun/detail/container_details.h>
#include <packedfun/detail/map_access.h>
#include <packedfun/object.h>

#include <initializer_list>
#include <utility>
#include <vector>

namespace packedfun {

/*!
 * A mutable map from K to V, written through the C ABI (PFDict*) so every language sees the
 * change. Reads as Map does; values are converted again when read (another language may have
 * stored something else since the Dict arrived). The Dict stays the caller's object: nothing
 * stored in it is converted in place (unlike Map, which converts by copying).
 */
template <typename K = Any, typename V = Any>
class Dict : public ObjectRef, public detail::MapAccess<K, V, Dict<K, V>> {
  using Access = detail::MapAccess<K, V, Dict<K, V>>;

 public:
  using key_type = K;
  using mapped_type = V;
  static constexpr const char* kKind = "Dict";
  static constexpr int32_t _type_static_index = kPFTypeDict;

  Dict() : Dict(std::initializer_list<std::pair<K, V>>{}) {}
  Dict(std::initializer_list<std::pair<K, V>> items)  // NOLINT(runtime/explicit)
      : ObjectRef(Own(Access::Build(items.begin(), items.end(), &PFDictCreate))) {}
  explicit Dict(const std::vector<std::pair<K, V>>& items)
      : ObjectRef(Own(Access::Build(items.begin(), items.end(), &PFDictCreate))) {}

  /*! Inserts or replaces `key` -> `value`. */
  void Set(const K& key, const V& value) const {
    PFAny k = detail::ToOwnedAny<K>(K(key));
    PFAny v = detail::ToOwnedAny<V>(V(value));
    int rc = PFDictSetItem(get(), &k, &v);
    PFAnyRelease(&k);
    PFAnyRelease(&v);
    detail::CheckCallResult(rc);
  }
  /*! Removes `key`; KeyError when absent. */
  void Erase(const K& key) const {
    PFAny k = detail::ToOwnedAny<K>(K(key));
    int rc = PFDictDelItem(get(), &k);
    PFAnyRelease(&k);
    detail::CheckCallResult(rc);
  }
  void Clear() const { detail::CheckCallResult(PFDictClear(get())); }
  /*! The standard containers' spellings: `erase` removes `key` when present (no KeyError when
   * absent, as std::map), `clear` is Clear. */
  void erase(const K& key) const {
    if (this->count(key)) Erase(key);
  }
  void clear() const { Clear(); }

  using Access::_type_name;
  static constexpr bool _type_is_nullable = false;
  static bool _type_accepts(int32_t type_index) noexcept { return type_index == kPFTypeDict; }
  static Dict _type_try_from(PFObject* obj) {
    detail::ReportElementMismatch(&_type_name, [&] { Access::_type_check_elements(obj); });
    return Dict(ObjectPtr<PFObject>::FromBorrowed(obj), 0);
  }

 private:
  Dict(ObjectPtr<PFObject> p, int) noexcept : ObjectRef(std::move(p)) {}
  static ObjectPtr<PFObject> Own(PFObject* obj) noexcept {
    return ObjectPtr<PFObject>::FromOwned(obj);
  }
};

}  // namespace packedfun

#endif  // PACKEDFUN_DICT_H_
