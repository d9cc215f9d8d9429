// Internal: element-by-element conversion of nested C++ values (std containers, Tuple, Variant).
#ifndef PACKEDFUN_DETAIL_NESTED_CONVERT_H_
#define PACKEDFUN_DETAIL_NESTED_CONVERT_H_

#include <packedfun/c_api.h>
#include <packedfun/detail/container_details.h>
#include <packedfun/detail/type_traits.h>
#include <packedfun/error.h>

#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace packedfun {
namespace detail {

/*! Converts element `v` to T. A mismatch, here or deeper, throws ElementMismatch whose path
 *  starts with `piece()` (called only on failure, so the happy path builds no strings). */
template <typename T, typename Piece>
T ElementFrom(const PFAny& v, Piece&& piece) {
  std::optional<T> r;
  if constexpr (HasTryFromNested<T>::value) {
    try {
      r = TypeTraits<T>::TryFromNested(&v);
    } catch (ElementMismatch& e) {
      e.path = piece() + e.path;
      throw;
    }
  } else if constexpr (HasCheckElements<T>::value) {
    CheckElement<T>(v, piece);  // Array<...>, Map<...>: their element path joins ours
    r = TypeTraits<T>::TryFrom(&v);
  } else {
    r = TypeTraits<T>::TryFrom(&v);
  }
  if (!r) ThrowElementMismatch<T>(v, piece());
  return std::move(*r);
}

/*! "<type> element <path>: expected X, got Y" (no " element" for an empty path). */
[[noreturn]] __attribute__((noinline, cold)) inline void ThrowNestedMismatch(
    const std::string& type_name, const ElementMismatch& e) {
  throw ElementError(type_name, e);
}

/*! The public TryFrom of a nested type: TryFromNested with a mismatch reported as a TypeError. */
template <typename T>
std::optional<T> TryFromReported(const PFAny* v) {
  try {
    return TypeTraits<T>::TryFromNested(v);
  } catch (const ElementMismatch& e) {
    ThrowNestedMismatch(TypeTraits<T>::TypeName(), e);
  }
}

/*! "[i]", the path piece of a sequence element. */
inline std::string IndexPiece(size_t i) { return "[" + std::to_string(i) + "]"; }

/*! The sequence object (Array or List) in `v`, or NULL when `v` holds something else. */
inline const PFSeqObject* AsSeq(const PFAny* v) noexcept {
  if (v->type_index != kPFTypeArray && v->type_index != kPFTypeList) return nullptr;
  return reinterpret_cast<const PFSeqObject*>(v->v_obj);
}

/*! A new Array (owned, into `out`) from owned items, which are released. */
inline void MakeArrayFromOwned(OwnedAnys& items, PFAny* out) {
  SetPod(out, kPFTypeNone);
  CheckCallResult(PFArrayCreate(items.data(), items.size(), out));
}

/*! The comma-separated type names of Ts ("int, str"). */
template <typename... Ts>
std::string JoinTypeNames() {
  std::string out;
  ((out += (out.empty() ? "" : ", ") + TypeTraits<Ts>::TypeName()), ...);
  return out;
}

}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_DETAIL_NESTED_CONVERT_H_
