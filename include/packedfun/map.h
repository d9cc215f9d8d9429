// Map<K, V>: a typed reference to an immutable, insertion-ordered hash map (kPFTypeMap).
#ifndef PACKEDFUN_MAP_H_
#define PACKEDFUN_MAP_H_

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
 * An immutable map from K to V. Keys hash by value for strings, bytes and numbers, by identity for
 * other objects. Keys and values are checked when the Map arrives ("Map[str, int] element ['k']:
 * expected int, got str"), and converted, as for Array, when one is stored otherwise than K or V
 * stores it (the Map is then a converted copy). Read with Get (optional), at / operator[]
 * (KeyError), items().
 */
template <typename K = Any, typename V = Any>
class Map : public ObjectRef, public detail::MapAccess<K, V, Map<K, V>> {
  using Access = detail::MapAccess<K, V, Map<K, V>>;

 public:
  using key_type = K;
  using mapped_type = V;
  static constexpr const char* kKind = "Map";
  static constexpr int32_t _type_static_index = kPFTypeMap;

  Map() : Map(std::initializer_list<std::pair<K, V>>{}) {}
  Map(std::initializer_list<std::pair<K, V>> items)  // NOLINT(runtime/explicit)
      : ObjectRef(Own(Access::Build(items.begin(), items.end(), &PFMapCreate))) {}
  explicit Map(const std::vector<std::pair<K, V>>& items)
      : ObjectRef(Own(Access::Build(items.begin(), items.end(), &PFMapCreate))) {}

  using Access::_type_name;
  static constexpr bool _type_is_nullable = false;
  static bool _type_accepts(int32_t type_index) noexcept { return type_index == kPFTypeMap; }
  static constexpr bool _type_copies_to_convert = true;
  /*! `obj` itself when its keys and values are stored as K and V store them; else a copy of the
   *  entries converted (an int value arriving in a Map<str, double> becomes a float). */
  static Map _type_try_from(PFObject* obj) {
    bool kept = true;
    detail::ReportElementMismatch(&_type_name, [&] { kept = Access::_type_check_elements(obj); });
    if (kept) return Map(ObjectPtr<PFObject>::FromBorrowed(obj), 0);
    return Map(Own(Access::Converted(obj, &PFMapCreate)), 0);
  }

 private:
  Map(ObjectPtr<PFObject> p, int) noexcept : ObjectRef(std::move(p)) {}
  static ObjectPtr<PFObject> Own(PFObject* obj) noexcept {
    return ObjectPtr<PFObject>::FromOwned(obj);
  }
};

}  // namespace packedfun

#endif  // PACKEDFUN_MAP_H_
