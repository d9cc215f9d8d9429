// Variant<T...>: one of several C++ types, the first alternative that accepts the value; and
// std::variant.
#ifndef PACKEDFUN_VARIANT_H_
#define PACKEDFUN_VARIANT_H_

#include <packedfun/c_api.h>
#include <packedfun/detail/nested_convert.h>
#include <packedfun/detail/type_traits.h>
#include <packedfun/error.h>

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace packedfun {

/*!
 * A value of one of the types T..., received as the FIRST alternative, in declaration order, that
 * accepts it (so `Variant<int64_t, double>` keeps 3 an int and `Variant<double, int64_t>` makes it
 * 3.0); when none does, the TypeError lists them all ("expected Variant[int, str], got float").
 * It is a std::variant, so std::visit (on `std::variant` base), std::get and index() work on it.
 */
template <typename... T>
class Variant : public std::variant<T...> {
 public:
  using std::variant<T...>::variant;
  Variant() = default;
  Variant(const std::variant<T...>& v) : std::variant<T...>(v) {}        // NOLINT(runtime/explicit)
  Variant(std::variant<T...>&& v) : std::variant<T...>(std::move(v)) {}  // NOLINT
  /*! Whether the active alternative is U. */
  template <typename U>
  bool is() const noexcept {
    return std::holds_alternative<U>(base());
  }
  /*! The active alternative as U; a TypeError naming the alternative held if it is not a U. */
  template <typename U>
  const U& as() const {
    if (const U* p = std::get_if<U>(&base())) return *p;
    WrongAlternative("as");
  }
  /*! tvm-ffi's spelling: the active alternative as a U (a copy); TypeError if not a U. */
  template <typename U>
  U get() const {
    if (const U* p = std::get_if<U>(&base())) return *p;
    WrongAlternative("get");
  }
  const std::variant<T...>& base() const noexcept { return *this; }

 private:
  [[noreturn]] __attribute__((noinline, cold)) void WrongAlternative(const char* method) const {
    throw Error("TypeError", std::string("Variant::") + method +
                                 ": the variant holds alternative " +
                                 std::to_string(this->index()) + ", not the type asked for");
  }
};

namespace detail {

/*! Tries one alternative: a nested mismatch means "does not accept", not an error. */
template <typename U>
std::optional<U> TryAlternative(const PFAny* v) {
  try {
    if constexpr (HasTryFromNested<U>::value) {
      return TypeTraits<U>::TryFromNested(v);
    } else {
      return TypeTraits<U>::TryFrom(v);
    }
  } catch (const ElementMismatch&) {
    return std::nullopt;
  } catch (const Error& e) {
    if (e.kind() == "TypeError" || e.kind() == "OverflowError") return std::nullopt;
    throw;
  }
}

/*! The conversions shared by Variant and std::variant (`VariantT`, of alternatives T...). */
template <typename VariantT, typename... T>
struct VariantTraitsBase {
  static void ToOwned(VariantT v, PFAny* out) {
    std::visit([&](auto& x) { OwnedOne(std::move(x), out); }, static_cast<std::variant<T...>&>(v));
  }
  static std::optional<VariantT> TryFrom(const PFAny* v) {
    std::optional<VariantT> out;
    (void)((TryOne<T>(v, &out)) || ...);
    return out;
  }
  static std::string TypeName() { return "Variant[" + JoinTypeNames<T...>() + "]"; }

 private:
  template <typename U>
  static void OwnedOne(U&& x, PFAny* out) {
    using Key = TraitsKey<U>;
    SetPod(out, kPFTypeNone);
    TypeTraits<Key>::ToOwned(Key(std::forward<U>(x)), out);
  }
  template <typename U>
  static bool TryOne(const PFAny* v, std::optional<VariantT>* out) {
    std::optional<U> r = TryAlternative<U>(v);
    if (!r) return false;
    out->emplace(std::in_place_type<U>, std::move(*r));
    return true;
  }
};

}  // namespace detail

/*! Variant<T...>: the first alternative that accepts the value. */
template <typename... T>
struct TypeTraits<Variant<T...>> : detail::VariantTraitsBase<Variant<T...>, T...> {};

/*! std::variant<T...>: as Variant. */
template <typename... T>
struct TypeTraits<std::variant<T...>> : detail::VariantTraitsBase<std::variant<T...>, T...> {};

}  // namespace packedfun

#endif  // PACKEDFUN_VARIANT_H_
