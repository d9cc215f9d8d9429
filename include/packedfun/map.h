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
 * expected int, got str"). Read with Get (optional), at / operator[] (KeyError), items().
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
  static Map _type_try_from(PFObject* obj) {
    detail::ReportElementMismatch(_type_name(), [&] { Access::_type_check_elements(obj); });
    return Map(ObjectPtr<PFObject>::FromBorrowed(obj), 0);
  }

 private:
  Map(ObjectPtr<PFObject> p, int) noexcept : ObjectRef(std::move(p)) {}
  static ObjectPtr<PFObject> Own(PFObject* obj) noexcept {
    return ObjectPtr<PFObject>::FromOwned(obj);
  }
};

}  // namespace packedfun

#endif  // PACKEDFUN_MAP_H_
