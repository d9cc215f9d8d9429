// Expected<T>: a T or an Error, so that failing is a value instead of a throw.
#ifndef PACKEDFUN_EXPECTED_H_
#define PACKEDFUN_EXPECTED_H_

#include <packedfun/c_api.h>
#include <packedfun/detail/type_traits.h>
#include <packedfun/error.h>

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace packedfun {

/*!
 * Either a value or an Error. Returned from a typed Function, an error becomes the call's raised
 * error (the Python caller gets the exception of its kind); received (from TypedFunction calls or
 * an Error object argument), a failure is held instead of thrown.
 *
 *   Expected<double> SafeSqrt(double x) {
 *     if (x < 0) return Error("ValueError", "SafeSqrt: negative input");
 *     return std::sqrt(x);
 *   }
 */
template <typename T>
class Expected {
 public:
  Expected(T value) : data_(std::in_place_index<0>, std::move(value)) {}      // NOLINT
  Expected(Error error) : data_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool has_value() const noexcept { return data_.index() == 0; }
  /*! `has_value()` and its negation, under the result-type names (ok / err). */
  bool is_ok() const noexcept { return has_value(); }
  bool is_err() const noexcept { return !has_value(); }
  explicit operator bool() const noexcept { return has_value(); }
  /*! The value; throws the held Error when there is none. */
  const T& value() const& {
    if (!has_value()) throw std::get<1>(data_);
    return std::get<0>(data_);
  }
  T value() && {
    if (!has_value()) throw std::get<1>(data_);
    return std::move(std::get<0>(data_));
  }
  /*! The value, or `fallback` when this holds an error. */
  T value_or(T fallback) const { return has_value() ? std::get<0>(data_) : std::move(fallback); }
  /*! The error; std::bad_variant_access when this holds a value. */
  const Error& error() const { return std::get<1>(data_); }

 private:
  std::variant<T, Error> data_;
};

/*! Expected<T>: a T, or an Error object; a held error is raised when returned. */
template <typename T>
struct TypeTraits<Expected<T>, std::enable_if_t<detail::HasTypeTraits<T>::value>> {
  static void ToOwned(Expected<T> v, PFAny* out) {
    if (!v.has_value()) throw v.error();
    TypeTraits<T>::ToOwned(std::move(v).value(), out);
  }
  static std::optional<Expected<T>> TryFrom(const PFAny* v) {
    // Built in place, not moved into the optional: a moved std::variant<T, Error> makes GCC's
    // -Wmaybe-uninitialized misfire under the sanitizers.
    if (v->type_index == kPFTypeError) {
      return std::optional<Expected<T>>(
          std::in_place, Error::FromObject(ObjectPtr<PFObject>::FromBorrowed(v->v_obj)));
    }
    std::optional<T> r = TypeTraits<T>::TryFrom(v);
    if (!r) return std::nullopt;
    return std::optional<Expected<T>>(std::in_place, std::move(*r));
  }
  static std::string TypeName() { return "Expected[" + TypeTraits<T>::TypeName() + "]"; }
};

}  // namespace packedfun

#endif  // PACKEDFUN_EXPECTED_H_
