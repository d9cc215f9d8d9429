// Enums in typed signatures: an enum (class) travels as its integer value.
#ifndef PACKEDFUN_ENUM_H_
#define PACKEDFUN_ENUM_H_

#include <packedfun/c_api.h>
#include <packedfun/detail/type_traits.h>

#include <optional>
#include <string>
#include <type_traits>

namespace packedfun {

/*!
 * Names an enum type in messages and schemas. Specialize it (or use PACKEDFUN_ENUM_NAME) to give
 * an enum the name its Python IntEnum is registered under; unspecialized enums are "int".
 */
template <typename E>
struct EnumName {
  static std::string Get() { return "int"; }
};

/*! An enum or enum class: kPFTypeInt holding its value; received from an int (an IntEnum is
 *  one) that fits the underlying type (OverflowError otherwise, like the integer it is). */
template <typename E>
struct TypeTraits<E, std::enable_if_t<std::is_enum<E>::value>> {
  using Underlying = std::underlying_type_t<E>;
  static void ToView(const E& v, PFAny* out, PFByteArray*) { ToOwned(v, out); }
  static void ToOwned(E v, PFAny* out) {
    TypeTraits<Underlying>::ToOwned(static_cast<Underlying>(v), out);
  }
  static std::optional<E> TryFrom(const PFAny* v) noexcept {
    if (v->type_index != kPFTypeInt) return std::nullopt;  // an enum is never a bool
    std::optional<Underlying> u = TypeTraits<Underlying>::TryFrom(v);
    if (!u) return std::nullopt;
    return static_cast<E>(*u);
  }
  static std::string TypeName() { return EnumName<E>::Get(); }
};

}  // namespace packedfun

/*! `PACKEDFUN_ENUM_NAME(mylib::Color, "mylib.Color");` at namespace scope names an enum. */
#define PACKEDFUN_ENUM_NAME(Enum, name)       \
  template <>                                 \
  struct packedfun::EnumName<Enum> {          \
    static std::string Get() { return name; } \
  }

#endif  // PACKEDFUN_ENUM_H_
