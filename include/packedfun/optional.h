// Optional<T>: a value or nothing, None on the other side of the ABI.
#ifndef PACKEDFUN_OPTIONAL_H_
#define PACKEDFUN_OPTIONAL_H_

#include <packedfun/detail/type_traits.h>

#include <optional>

namespace packedfun {

/*!
 * A T or nothing: std::optional<T> itself, so `has_value()`, `value()`, `value_or()`, `*x` and
 * `std::nullopt` work as usual and a std::optional converts for free. In a typed signature, a
 * container (`Array<Optional<int64_t>>`, `Map<String, Optional<Tensor>>`) or a reflected field,
 * None converts to an empty Optional and an empty Optional to None; anything else converts as T
 * does ("Optional[int]" in messages and type schemas).
 */
template <typename T>
using Optional = std::optional<T>;

}  // namespace packedfun

#endif  // PACKEDFUN_OPTIONAL_H_
