// The standard-library bridge: std::vector, array, map, unordered_map, function (and
// std::tuple/pair/variant via tuple.h/variant.h; std::string_view is in string.h). Opt-in:
// include it where a signature needs it.
#ifndef PACKEDFUN_STL_H_
#define PACKEDFUN_STL_H_

#include <packedfun/c_api.h>
#include <packedfun/detail/bytes_any.h>
#include <packedfun/detail/nested_convert.h>
#include <packedfun/detail/type_traits.h>
#include <packedfun/tuple.h>
#include <packedfun/typed_function.h>
#include <packedfun/variant.h>

#include <array>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace packedfun {
namespace detail {

/*! The payload of a cell known to hold a T (int64_t or double). */
template <typename T>
inline T PlainValue(const PFAny& cell) noexcept {
  if constexpr (std::is_same<T, int64_t>::value) {
    return cell.v_int64;
  } else {
    return cell.v_float64;
  }
}

/*! Copies the leading run of plain ints (T = int64_t) or floats (T = double) of `src[0, n)` into
 *  `dst`; returns its length. Four cells are tested with one branch (compilers at -O2 neither
 *  unroll nor vectorize the one-cell loop), about half the instructions per element. */
template <typename T>
int64_t PlainRun(const PFAny* src, int64_t n, T* dst) noexcept {
  constexpr int32_t kWant = std::is_same<T, int64_t>::value ? kPFTypeInt : kPFTypeFloat;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const PFAny* c = src + i;
    if (((c[0].type_index ^ kWant) | (c[1].type_index ^ kWant) | (c[2].type_index ^ kWant) |
         (c[3].type_index ^ kWant)) != 0) {
      break;
    }
    dst[i] = PlainValue<T>(c[0]);
    dst[i + 1] = PlainValue<T>(c[1]);
    dst[i + 2] = PlainValue<T>(c[2]);
    dst[i + 3] = PlainValue<T>(c[3]);
  }
  for (; i < n && src[i].type_index == kWant; ++i) dst[i] = PlainValue<T>(src[i]);
  return i;
}

/*! The conversions shared by std::vector and std::array (`SeqT`, elements T, fixed size N or 0
 *  for any size). A sequence (Python list/tuple, Array, List) arrives; an Array returns. */
template <typename SeqT, typename T, size_t N>
struct SeqTraitsBase {
  static void ToOwned(const SeqT& v, PFAny* out) {
    OwnedAnys items(v.size());
    for (const auto& x : v) items.push(ToOwnedAny<T>(T(x)));
    MakeArrayFromOwned(items, out);
  }
  static std::optional<SeqT> TryFromNested(const PFAny* v) {
    const PFSeqObject* s = AsSeq(v);
    if (s == nullptr) return std::nullopt;
    SeqT out{};
    if constexpr (N == 0 && (std::is_arithmetic<T>::value || std::is_enum<T>::value)) {
      out.resize(static_cast<size_t>(s->size));  // ints, floats, enums: no per-element growth
      T* dst = out.data();
      // Plain ints (floats) first, locals only (stores to `dst` could otherwise alias `s`).
      int64_t i = 0;
      const int64_t n = s->size;
      const PFAny* src = s->data;
      if constexpr (std::is_same<T, int64_t>::value || std::is_same<T, double>::value) {
        i = PlainRun<T>(src, n, dst);
      }
      for (; i < s->size; ++i) {
        std::optional<T> r = TypeTraits<T>::TryFrom(&s->data[i]);  // inline: no path on success
        dst[i] = r ? *r : ElementFrom<T>(s->data[i], [i] { return IndexPiece(i); });
      }
    } else if constexpr (N == 0) {
      out.reserve(static_cast<size_t>(s->size));
      for (int64_t i = 0; i < s->size; ++i) {
        out.push_back(ElementFrom<T>(s->data[i], [i] { return IndexPiece(i); }));
      }
    } else {
      if (s->size != static_cast<int64_t>(N)) {
        throw ElementMismatch{"", std::to_string(N) + " items", std::to_string(s->size) + " items"};
      }
      for (size_t i = 0; i < N; ++i) {
        out[i] = ElementFrom<T>(s->data[i], [i] { return IndexPiece(i); });
      }
    }
    return out;
  }
  static std::optional<SeqT> TryFrom(const PFAny* v) { return TryFromReported<SeqT>(v); }

  /*! A std::vector of integers (not bool) or double reads a caller's list in place
   *  (kPFTypeContainerView): no Array between the two, one pass over the items. (float is left
   *  out: an int through double to float could round twice where the Array path rounds once.) */
  static constexpr bool kReadsContainerView =
      N == 0 && ((std::is_integral<T>::value && !std::is_same<T, bool>::value) ||
                 std::is_same<T, double>::value);
  /*! The vector of `view`, or nullopt unless every item is plain and fits T (the typed call then
   *  converts the view's Array as usual: same result, same errors). */
  static std::optional<SeqT> TryFromContainerView(const PFContainerView* view) {
    if constexpr (kReadsContainerView) {
      if (view->kind != kPFTypeArray) return std::nullopt;
      const int64_t n = view->size;
      SeqT out(static_cast<size_t>(n));
      if constexpr (std::is_same<T, int64_t>::value) {
        if (view->vtable->read_int64(view, 0, out.data(), n) != n) return std::nullopt;
      } else if constexpr (std::is_same<T, double>::value) {
        if (view->vtable->read_float64(view, 0, out.data(), n) != n) return std::nullopt;
      } else if (!ReadNarrowed(view, out.data())) {
        return std::nullopt;
      }
      return out;
    }
    return std::nullopt;
  }
  /*! The other integer types: read in chunks as int64, each value then taken as TypeTraits<T>
   *  takes an int (its range check included). False at the first item that is not. */
  static bool ReadNarrowed(const PFContainerView* view, T* dst) {
    constexpr int64_t kChunk = 64;
    int64_t buf[kChunk];
    for (int64_t start = 0; start < view->size; start += kChunk) {
      const int64_t m = view->size - start < kChunk ? view->size - start : kChunk;
      if (view->vtable->read_int64(view, start, buf, m) != m) return false;
      for (int64_t k = 0; k < m; ++k) {
        PFAny cell;
        SetPod(&cell, kPFTypeInt);
        cell.v_int64 = buf[k];
        std::optional<T> r = TypeTraits<T>::TryFrom(&cell);
        if (!r) return false;
        dst[start + k] = *r;
      }
    }
    return true;
  }

  static std::string TypeName() {
    std::string inner = TypeTraits<T>::TypeName();
    if constexpr (N == 0) {
      return "list[" + inner + "]";
    } else {
      return "list[" + inner + "; " + std::to_string(N) + "]";
    }
  }
};

/*! The conversions shared by std::map and std::unordered_map. A dict (Map, Dict) arrives; a Map
 *  (a packedfun.Map, read like a dict) returns. */
template <typename MapT, typename K, typename V>
struct MapTraitsBase {
  static void ToOwned(const MapT& v, PFAny* out) {
    OwnedAnys kv(2 * v.size());
    for (const auto& entry : v) {
      kv.push(ToOwnedAny<K>(K(entry.first)));
      kv.push(ToOwnedAny<V>(V(entry.second)));
    }
    SetPod(out, kPFTypeNone);
    CheckCallResult(PFMapCreate(kv.data(), kv.size() / 2, out));
  }
  static std::optional<MapT> TryFromNested(const PFAny* v) {
    if (v->type_index != kPFTypeMap && v->type_index != kPFTypeDict) return std::nullopt;
    MapT out;
    if constexpr (std::is_same<MapT, std::unordered_map<K, V>>::value) {
      int64_t n = 0;
      CheckCallResult(PFMapSize(v->v_obj, &n));
      out.reserve(static_cast<size_t>(n));
    }
    // The entries are read in place, a batch of borrowed views per call: no copy of the map.
    constexpr int64_t kBatch = 32;
    PFAny kv[2 * kBatch];
    int64_t cursor = 0, got = kBatch;
    while (got == kBatch) {
      CheckCallResult(PFMapReadEntries(v->v_obj, &cursor, kv, kBatch, &got));
      for (int64_t i = 0; i < got; ++i) Insert(out, kv[2 * i], kv[2 * i + 1]);
    }
    return out;
  }
  /*! Converts one entry into `out`. */
  static void Insert(MapT& out, const PFAny& key, const PFAny& value) {
    auto value_from = [&] {
      if constexpr (std::is_arithmetic<V>::value) {  // inline: no path on success
        if (std::optional<V> r = TypeTraits<V>::TryFrom(&value)) return *r;
      }
      return ElementFrom<V>(value, [&] { return KeyPathPiece(key); });
    };
    if constexpr (std::is_same<K, std::string>::value) {
      if (AnyIsStr(key)) {  // build the key in place: no temporary string, no moves
        PFByteArray bytes = AnyBytes(key);
        out.emplace(std::piecewise_construct, std::forward_as_tuple(bytes.data, bytes.size),
                    std::forward_as_tuple(value_from()));
        return;
      }
    }
    K k = ElementFrom<K>(key, [&] { return KeyPathPiece(key) + " key"; });
    V val = value_from();
    out.emplace(std::move(k), std::move(val));
  }
  static std::optional<MapT> TryFrom(const PFAny* v) { return TryFromReported<MapT>(v); }

  /*! A map from std::string to a number or std::string reads a caller's dict in place
   *  (kPFTypeContainerView): no Map between the two. */
  static constexpr bool kReadsContainerView =
      std::is_same<K, std::string>::value &&
      (std::is_arithmetic<V>::value || std::is_same<V, std::string>::value);
  /*! The map of `view`, or nullopt unless every entry is plain and converts (the typed call then
   *  converts the view's Map as usual: same result, same errors). */
  static std::optional<MapT> TryFromContainerView(const PFContainerView* view) {
    if constexpr (kReadsContainerView) {
      if (view->kind != kPFTypeMap) return std::nullopt;
      MapT out;
      if constexpr (std::is_same<MapT, std::unordered_map<K, V>>::value) {
        out.reserve(static_cast<size_t>(view->size));
      }
      constexpr int64_t kBatch = 32;
      PFAny kv[2 * kBatch];
      PFByteArray views[2 * kBatch];
      int64_t cursor = 0, total = 0, got = kBatch;
      try {
        while (got == kBatch) {
          got = view->vtable->read_entries(view, &cursor, kv, views, kBatch);
          for (int64_t i = 0; i < got; ++i) Insert(out, kv[2 * i], kv[2 * i + 1]);
          total += got;
        }
      } catch (const ElementMismatch&) {
        return std::nullopt;
      }
      if (total != view->size) return std::nullopt;
      return out;
    }
    return std::nullopt;
  }

  static std::string TypeName() {
    return "dict[" + TypeTraits<K>::TypeName() + ", " + TypeTraits<V>::TypeName() + "]";
  }
};

}  // namespace detail

/*! std::vector<T>: any sequence; returned as an Array. */
template <typename T, typename Alloc>
struct TypeTraits<std::vector<T, Alloc>, std::enable_if_t<detail::HasTypeTraits<T>::value>>
    : detail::SeqTraitsBase<std::vector<T, Alloc>, T, 0> {};

/*! std::array<T, N>: a sequence of exactly N elements; returned as an Array. */
template <typename T, size_t N>
struct TypeTraits<std::array<T, N>, std::enable_if_t<detail::HasTypeTraits<T>::value && (N > 0)>>
    : detail::SeqTraitsBase<std::array<T, N>, T, N> {};

/*! std::map<K, V>: any dict; returned as a Map. */
template <typename K, typename V, typename Cmp, typename Alloc>
struct TypeTraits<std::map<K, V, Cmp, Alloc>, std::enable_if_t<detail::HasTypeTraits<K>::value &&
                                                               detail::HasTypeTraits<V>::value>>
    : detail::MapTraitsBase<std::map<K, V, Cmp, Alloc>, K, V> {};

/*! std::unordered_map<K, V>: any dict; returned as a Map. */
template <typename K, typename V, typename H, typename Eq, typename Alloc>
struct TypeTraits<
    std::unordered_map<K, V, H, Eq, Alloc>,
    std::enable_if_t<detail::HasTypeTraits<K>::value && detail::HasTypeTraits<V>::value>>
    : detail::MapTraitsBase<std::unordered_map<K, V, H, Eq, Alloc>, K, V> {};

/*! std::function<R(A...)>: any Function or Python callable (checked on call, as TypedFunction);
 *  returned as a Function. */
template <typename R, typename... A>
struct TypeTraits<std::function<R(A...)>> {
  static void ToOwned(std::function<R(A...)> v, PFAny* out) {
    if (!v) return detail::SetPod(out, kPFTypeNone);
    detail::SetObject(out, detail::ObjectUnsafe::MoveToPFObject(Function::FromTyped(std::move(v))));
  }
  static std::optional<std::function<R(A...)>> TryFrom(const PFAny* v) {
    if (v->type_index == kPFTypeNone) return std::function<R(A...)>();
    std::optional<TypedFunction<R(A...)>> f = TypeTraits<TypedFunction<R(A...)>>::TryFrom(v);
    if (!f) return std::nullopt;
    return std::function<R(A...)>(std::move(*f));
  }
  static std::string TypeName() { return detail::CallableTypeName<R, A...>(); }
};

}  // namespace packedfun

#endif  // PACKEDFUN_STL_H_
