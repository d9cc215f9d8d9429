// Tuple<T...>: a fixed-size heterogeneous value (a Python tuple), and std::tuple / std::pair.
#ifndef PACKEDFUN_TUPLE_H_
#define PACKEDFUN_TUPLE_H_

#include <packedfun/c_api.h>
#include <packedfun/detail/nested_convert.h>
#include <packedfun/detail/type_traits.h>

#include <cstddef>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace packedfun {

/*!
 * A tuple of C++ values that travels as a packedfun Array of exactly sizeof...(T) elements:
 * a Python tuple or list of that length arrives (each element converted in order, a mismatch
 * naming its index), and a returned Tuple reaches Python as a packedfun.Array. It is a
 * std::tuple, so std::get, structured bindings and std::apply work on it.
 *
 *   Tuple<int64_t, std::string> Split(Tuple<int64_t, std::string> t) { return t; }
 */
template <typename... T>
class Tuple : public std::tuple<T...> {
 public:
  using std::tuple<T...>::tuple;
  Tuple() = default;
  Tuple(const std::tuple<T...>& t) : std::tuple<T...>(t) {}        // NOLINT(runtime/explicit)
  Tuple(std::tuple<T...>&& t) : std::tuple<T...>(std::move(t)) {}  // NOLINT(runtime/explicit)

  /*! tvm-ffi's spellings: element I (a copy), and assigning element I. */
  template <size_t I>
  std::tuple_element_t<I, std::tuple<T...>> get() const {
    return std::get<I>(static_cast<const std::tuple<T...>&>(*this));
  }
  template <size_t I, typename U>
  void Set(U&& value) {
    std::get<I>(static_cast<std::tuple<T...>&>(*this)) = std::forward<U>(value);
  }
};

}  // namespace packedfun

// Structured bindings and std::get see Tuple as the std::tuple it is.
template <typename... T>
struct std::tuple_size<packedfun::Tuple<T...>> : std::tuple_size<std::tuple<T...>> {};
template <size_t I, typename... T>
struct std::tuple_element<I, packedfun::Tuple<T...>> : std::tuple_element<I, std::tuple<T...>> {};

namespace packedfun {
namespace detail {

template <typename T>
struct IsStdPair : std::false_type {};
template <typename A, typename B>
struct IsStdPair<std::pair<A, B>> : std::true_type {};

/*! The conversions shared by Tuple, std::tuple and std::pair (`TupleT`, of elements T...). */
template <typename TupleT, typename... T>
struct TupleTraitsBase {
  static constexpr size_t kSize = sizeof...(T);

  static void ToOwned(TupleT v, PFAny* out) {
    OwnedAnys items(kSize);
    std::tuple<T...> t = AsStd(v);
    PushAll(t, items, std::index_sequence_for<T...>());
    MakeArrayFromOwned(items, out);
  }
  static std::optional<TupleT> TryFromNested(const PFAny* v) {
    const PFSeqObject* s = AsSeq(v);
    if (s == nullptr) return std::nullopt;
    if (s->size != static_cast<int64_t>(kSize)) {
      throw ElementMismatch{"", std::to_string(kSize) + " items",
                            std::to_string(s->size) + " items"};
    }
    return Build(s, std::index_sequence_for<T...>());
  }
  static std::optional<TupleT> TryFrom(const PFAny* v) { return TryFromReported<TupleT>(v); }
  static std::string TypeName() { return "Tuple[" + JoinTypeNames<T...>() + "]"; }

 private:
  template <size_t... I>
  static void PushAll(std::tuple<T...>& t, OwnedAnys& items, std::index_sequence<I...>) {
    (items.push(ToOwnedAny<std::tuple_element_t<I, std::tuple<T...>>>(std::move(std::get<I>(t)))),
     ...);
  }
  template <size_t... I>
  static TupleT Build(const PFSeqObject* s, std::index_sequence<I...>) {
    // Braced initialization converts the elements left to right: the first bad one is reported.
    return TupleT{ElementFrom<T>(s->data[I], [] { return IndexPiece(I); })...};
  }
  static std::tuple<T...> AsStd(TupleT& v) {
    if constexpr (IsStdPair<TupleT>::value) {
      return std::tuple<T...>(std::move(v.first), std::move(v.second));
    } else {
      return std::move(static_cast<std::tuple<T...>&>(v));
    }
  }
};

}  // namespace detail

/*! Tuple<T...>: a sequence of exactly sizeof...(T) elements; returned as an Array. */
template <typename... T>
struct TypeTraits<Tuple<T...>> : detail::TupleTraitsBase<Tuple<T...>, T...> {};

/*! std::tuple<T...>: as Tuple. */
template <typename... T>
struct TypeTraits<std::tuple<T...>> : detail::TupleTraitsBase<std::tuple<T...>, T...> {};

/*! std::pair<A, B>: as Tuple<A, B>. */
template <typename A, typename B>
struct TypeTraits<std::pair<A, B>> : detail::TupleTraitsBase<std::pair<A, B>, A, B> {};

}  // namespace packedfun

#endif  // PACKEDFUN_TUPLE_H_
