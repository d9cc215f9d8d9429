// TypedFunction<R(Args...)>: a Function with a C++ signature, its arguments and result checked on
// call.
#ifndef PACKEDFUN_TYPED_FUNCTION_H_
#define PACKEDFUN_TYPED_FUNCTION_H_

#include <packedfun/any.h>
#include <packedfun/c_api.h>
#include <packedfun/detail/nested_convert.h>
#include <packedfun/detail/type_traits.h>
#include <packedfun/error.h>
#include <packedfun/expected.h>
#include <packedfun/function.h>

#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace packedfun {
namespace detail {

template <typename T, typename = void>
struct HasToView : std::false_type {};
template <typename T>
struct HasToView<
    T, std::void_t<decltype(TypeTraits<T>::ToView(std::declval<const T&>(), nullptr, nullptr))>>
    : std::true_type {};

template <typename T>
struct IsExpected : std::false_type {};
template <typename T>
struct IsExpected<Expected<T>> : std::true_type {};

/*! Packed arguments of a TypedFunction call: views where the type has them, owned values
 *  (released at the end of the call) for the rest (std containers, Tuple, ...). */
template <size_t N>
struct CallPack {
  PFAny args[N ? N : 1];
  PFByteArray scratch[N ? N : 1];
  bool owned[N ? N : 1] = {};
  ~CallPack() {
    for (size_t i = 0; i < N; ++i) {
      if (owned[i]) PFAnyRelease(&args[i]);
    }
  }
  template <typename T>
  void Set(size_t i, const T& v) {
    if constexpr (HasToView<T>::value) {
      TypeTraits<T>::ToView(v, &args[i], &scratch[i]);
    } else {
      SetPod(&args[i], kPFTypeNone);
      TypeTraits<T>::ToOwned(T(v), &args[i]);
      owned[i] = true;
    }
  }
};

/*! "Callable[[int, str], float]", the name of a signature in messages. */
template <typename R, typename... A>
std::string CallableTypeName() {
  std::string result;
  if constexpr (std::is_void<R>::value) {
    result = "None";
  } else {
    result = TypeTraits<TraitsKey<R>>::TypeName();
  }
  return "Callable[[" + JoinTypeNames<TraitsKey<A>...>() + "], " + result + "]";
}

}  // namespace detail

template <typename Signature>
class TypedFunction;

/*!
 * A Function whose C++ signature is known: a Python callable or any Function arrives as one (its
 * signature is checked when it is called: a result of the wrong type raises a TypeError naming
 * the expected one), and a C++ callable becomes one.
 *
 *   int64_t ApplyTwice(TypedFunction<int64_t(int64_t)> f, int64_t x) { return f(f(x)); }
 *
 * With R = Expected<U>, a failing call returns the error instead of throwing it.
 */
template <typename R, typename... A>
class TypedFunction<R(A...)> : public Function {
 public:
  TypedFunction() noexcept = default;
  TypedFunction(Function f) noexcept : Function(std::move(f)) {}  // NOLINT(runtime/explicit)
  /*! Wraps a C++ callable taking A... and returning R. */
  template <typename F,
            typename = std::enable_if_t<!std::is_base_of<ObjectRef, std::decay_t<F>>::value &&
                                        std::is_invocable_r<R, F&, A...>::value>>
  TypedFunction(F f, std::string name = "<anonymous>")  // NOLINT(runtime/explicit)
      : Function(Function::FromTyped(
            [f = std::move(f)](A... a) mutable -> R { return f(std::forward<A>(a)...); },
            std::move(name))) {}

  /*! Calls the function; throws its Error (unless R is Expected) or a TypeError for a result
   *  that is not an R. */
  R operator()(const std::decay_t<A>&... args) const {
    detail::CallPack<sizeof...(A)> pack;
    size_t i = 0;
    ((pack.template Set<detail::TraitsKey<A>>(i, args), ++i), ...);
    const PFFunctionObject* f = reinterpret_cast<const PFFunctionObject*>(get());
    if (f == nullptr) throw Error("ValueError", "cannot call a null TypedFunction");
    PFAny rv;
    detail::SetPod(&rv, kPFTypeNone);
    if (f->safe_call(f->self, pack.args, static_cast<int32_t>(sizeof...(A)), &rv) != 0) {
      if constexpr (detail::IsExpected<R>::value) {
        PFObject* err = nullptr;
        PFErrorMoveFromRaised(&err);
        return R(Error::FromObject(ObjectPtr<PFObject>::FromOwned(err)));
      } else {
        detail::ThrowRaised();
      }
    }
    Any result = detail::AnyUnsafe::MoveFromPFAny(&rv);
    if constexpr (!std::is_void<R>::value) return ResultAs(result.raw());
  }

  static std::string _type_name() { return detail::CallableTypeName<R, A...>(); }

 private:
  static R ResultAs(const PFAny& v) {
    using Key = detail::TraitsKey<R>;
    std::optional<Key> r = TypeTraits<Key>::TryFrom(&v);
    if (!r) {
      detail::ThrowConversionError(_type_name() + " result: ", TypeTraits<Key>::TypeName(),
                                   detail::IntRangeName<Key>(), v);
    }
    return std::move(*r);
  }
};

}  // namespace packedfun

#endif  // PACKEDFUN_TYPED_FUNCTION_H_
