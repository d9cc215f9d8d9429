// Internal: MapAccess, the read side (size, lookup, items) shared by Map and Dict.
#ifndef PACKEDFUN_DETAIL_MAP_ACCESS_H_
#define PACKEDFUN_DETAIL_MAP_ACCESS_H_

#include <packedfun/any.h>
#include <packedfun/c_api.h>
#include <packedfun/detail/container_details.h>
#include <packedfun/error.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace packedfun {
namespace detail {

/*! The key/value Array of a map object (PFMapItems), owned. */
inline Any MapItemsOf(PFObject* map) {
  PFAny out;
  SetPod(&out, kPFTypeNone);
  CheckCallResult(PFMapItems(map, &out));
  return AnyUnsafe::MoveFromPFAny(&out);
}

/*! Read access shared by Map<K, V> and Dict<K, V>. */
template <typename K, typename V, typename Self>
class MapAccess {
 public:
  int64_t size() const {
    int64_t n = 0;
    CheckCallResult(PFMapSize(self().get(), &n));
    return n;
  }
  bool empty() const { return size() == 0; }
  /*! The value of `key`, or nullopt when absent. */
  std::optional<V> Get(const K& key) const {
    PFAny k, out;
    PFByteArray scratch;
    TypeTraits<TraitsKey<K>>::ToView(key, &k, &scratch);
    SetPod(&out, kPFTypeNone);
    int found = 0;
    CheckCallResult(PFMapGetItem(self().get(), &k, &out, &found));
    if (!found) return std::nullopt;
    Any owner = AnyUnsafe::MoveFromPFAny(&out);
    return ElementAs<V>(owner.raw(), Self::_type_name() + " value for " + KeyPathPiece(k), 0);
  }
  /*! The value of `key`; KeyError naming it when absent. */
  V at(const K& key) const {
    std::optional<V> v = Get(key);
    if (!v) {
      PFAny k;
      PFByteArray scratch;
      TypeTraits<TraitsKey<K>>::ToView(key, &k, &scratch);
      throw Error("KeyError", Self::_type_name() + ": key " + KeyPathPiece(k) + " not found");
    }
    return std::move(*v);
  }
  V operator[](const K& key) const { return at(key); }
  bool count(const K& key) const { return Get(key).has_value(); }
  /*! A snapshot of the entries, in iteration (insertion) order. */
  std::vector<std::pair<K, V>> items() const {
    Any arr = MapItemsOf(self().get());
    const PFSeqObject* s = reinterpret_cast<const PFSeqObject*>(arr.raw().v_obj);
    std::vector<std::pair<K, V>> out;
    out.reserve(static_cast<size_t>(s->size / 2));
    for (int64_t i = 0; i + 1 < s->size; i += 2) {
      out.emplace_back(ElementAs<K>(s->data[i], Self::_type_name() + " key", i / 2),
                       ElementAs<V>(s->data[i + 1], Self::_type_name() + " value", i / 2));
    }
    return out;
  }

  /*! Throws ElementMismatch unless every key is a K and every value a V. Returns whether every
   *  key and value is also stored as K and V store them (detail::KeptAs); when not, a Map<K, V>
   *  made from `obj` is a converted copy (Converted). */
  static bool _type_check_elements(PFObject* obj) {
    bool kept = true;
    if constexpr (!(IsAnyElement<K>() && IsAnyElement<V>())) {
      Any arr = MapItemsOf(obj);
      const PFSeqObject* s = reinterpret_cast<const PFSeqObject*>(arr.raw().v_obj);
      for (int64_t i = 0; i + 1 < s->size; i += 2) {
        const PFAny& key = s->data[i];
        bool k = CheckElement<K>(key, [&key] { return KeyPathPiece(key) + " key"; });
        bool v = CheckElement<V>(s->data[i + 1], [&key] { return KeyPathPiece(key); });
        kept = kept && k && v;
      }
    }
    return kept;
  }
  static std::string _type_name() {
    if constexpr (IsAnyElement<K>() && IsAnyElement<V>()) {
      return Self::kKind;
    } else {
      return std::string(Self::kKind) + "[" + ElementTypeName<K>() + ", " + ElementTypeName<V>() +
             "]";
    }
  }

 protected:
  const Self& self() const noexcept { return static_cast<const Self&>(*this); }
  /*! A new map (by `create`) of the entries of `obj` converted to K and V, for entries that
   *  _type_check_elements accepted but did not keep. */
  static PFObject* Converted(PFObject* obj, int (*create)(const PFAny*, int64_t, PFAny*)) {
    Any arr = MapItemsOf(obj);
    const PFSeqObject* s = reinterpret_cast<const PFSeqObject*>(arr.raw().v_obj);
    OwnedAnys kv(static_cast<size_t>(s->size));
    for (int64_t i = 0; i + 1 < s->size; i += 2) {
      std::optional<K> k = TypeTraits<K>::TryFrom(&s->data[i]);
      if (!k) k = ElementAs<K>(s->data[i], Self::_type_name() + " key", i / 2);
      std::optional<V> v = TypeTraits<V>::TryFrom(&s->data[i + 1]);
      if (!v) v = ElementAs<V>(s->data[i + 1], Self::_type_name() + " value", i / 2);
      kv.push(ToOwnedAny<K>(std::move(*k)));
      kv.push(ToOwnedAny<V>(std::move(*v)));
    }
    PFAny out;
    SetPod(&out, kPFTypeNone);
    CheckCallResult(create(kv.data(), kv.size() / 2, &out));
    return out.v_obj;
  }
  /*! A new map from C++ pairs, made by `create` (PFMapCreate or PFDictCreate). */
  template <typename It>
  static PFObject* Build(It first, It last, int (*create)(const PFAny*, int64_t, PFAny*)) {
    OwnedAnys kv(0);
    for (; first != last; ++first) {
      kv.push(ToOwnedAny<K>(K(first->first)));
      kv.push(ToOwnedAny<V>(V(first->second)));
    }
    PFAny out;
    SetPod(&out, kPFTypeNone);
    CheckCallResult(create(kv.data(), kv.size() / 2, &out));
    return out.v_obj;
  }
};

}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_DETAIL_MAP_ACCESS_H_
