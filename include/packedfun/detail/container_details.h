// Internal: element checks and conversions shared by Array, List, Map and Dict.
#ifndef PACKEDFUN_DETAIL_CONTAINER_DETAILS_H_
#define PACKEDFUN_DETAIL_CONTAINER_DETAILS_H_

#include <packedfun/any.h>
#include <packedfun/c_api.h>
#include <packedfun/detail/type_traits.h>
#include <packedfun/error.h>
#include <packedfun/object.h>

#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace packedfun {
namespace detail {

/*! Thrown (and caught) while a container's elements are checked: where, what was wanted, what
 *  was found. Containers turn it into one TypeError at the outermost level. */
struct ElementMismatch {
  ElementMismatch(std::string p, std::string e, std::string g, std::string o = std::string())
      : path(std::move(p)), expected(std::move(e)), got(std::move(g)), overflow(std::move(o)) {}
  std::string path;
  std::string expected;
  std::string got;
  std::string overflow;  // set for an int out of the element type's range: an OverflowError
};

/*! The TypeError of a container element that does not convert ("Array[int] element [3]:
 *  expected int, got str"), keeping its parts so that a typed Function can name the argument
 *  instead ("mylib.f(xs: Array[int]) -> int: argument 'xs'[3]: expected int, got str"). */
class ElementError : public Error {
 public:
  ElementError(const std::string& container, ElementMismatch m)
      : Error(m.overflow.empty() ? "TypeError" : "OverflowError",
              (m.path.empty() ? container : container + " element " + m.path) + ": " +
                  (m.overflow.empty() ? "expected " + m.expected + ", got " + m.got : m.overflow)),
        mismatch_(std::move(m)) {}
  const ElementMismatch& mismatch() const noexcept { return mismatch_; }

 private:
  ElementMismatch mismatch_;
};

template <typename T, typename = void>
struct HasCheckElements : std::false_type {};
template <typename T>
struct HasCheckElements<T, std::void_t<decltype(T::_type_check_elements(nullptr))>>
    : std::true_type {};

/*! Whether TypeTraits<T> converts nested values with `TryFromNested`: nullopt when the outer kind
 *  does not fit, ElementMismatch (with the element's path) when an element does not. */
template <typename T, typename = void>
struct HasTryFromNested : std::false_type {};
template <typename T>
struct HasTryFromNested<T, std::void_t<decltype(TypeTraits<T>::TryFromNested(nullptr))>>
    : std::true_type {};

/*! Whether elements of type T need no check at all. */
template <typename T>
constexpr bool IsAnyElement() {
  return std::is_same<T, Any>::value || std::is_same<T, AnyView>::value;
}

/*! The name of element type T in messages: "Any" for Any. */
template <typename T>
std::string ElementTypeName() {
  return TypeTraits<T>::TypeName();
}

/*! How a key shows in a path: ['k'] for strings, [3] for ints, [<type>] otherwise. */
inline std::string KeyPathPiece(const PFAny& key) {
  if (AnyIsStr(key)) {
    PFByteArray b = AnyBytes(key);
    return "['" + std::string(b.data, b.size) + "']";
  }
  if (key.type_index == kPFTypeInt) return "[" + std::to_string(key.v_int64) + "]";
  return "[<" + AnyTypeName(key) + ">]";
}

/*! The mismatch of a scalar element: an int out of T's range is an overflow, not a type error. */
template <typename T>
[[noreturn]] __attribute__((noinline, cold)) void ThrowElementMismatch(const PFAny& v,
                                                                       const std::string& piece) {
  ElementMismatch m{piece, ElementTypeName<T>(), AnyTypeName(v)};
  if constexpr (IntRangeName<T>() != nullptr) {
    if (v.type_index == kPFTypeInt) {
      m.overflow = "value " + std::to_string(v.v_int64) + " does not fit in " + IntRangeName<T>();
    } else if (v.type_index == kPFTypeUInt64) {
      m.overflow = "value " + std::to_string(v.v_uint64) + " does not fit in " + IntRangeName<T>();
    }
  }
  throw m;
}

/*! Whether a container type converts by copying when its elements are not stored as its element
 *  type stores them (Array, Map: immutable values), rather than staying a checked view of the same
 *  object (List, Dict: mutable, shared by identity). */
template <typename T, typename = void>
struct CopiesToConvert : std::false_type {};
template <typename T>
struct CopiesToConvert<T, std::enable_if_t<T::_type_copies_to_convert>> : std::true_type {};

template <typename T>
struct IsStdOptional : std::false_type {};
template <typename T>
struct IsStdOptional<std::optional<T>> : std::true_type {};

template <typename T, typename Piece>
bool CheckElement(const PFAny& v, Piece&& piece);

/*! Whether element `v`, already known to convert to T, is stored the way T stores its values, so
 *  that a container of T holding it gives back what reading it as T gives. An int or bool in an
 *  Array<float> is not (it reads as a float), nor a float that a 32-bit float rounds, nor a
 *  nested Array or Map that is not itself kept. */
template <typename T>
bool KeptAs(const PFAny& v) {
  if constexpr (std::is_same<T, bool>::value) {
    return v.type_index == kPFTypeBool;
  } else if constexpr (std::is_integral<T>::value) {
    return v.type_index != kPFTypeBool;
  } else if constexpr (std::is_floating_point<T>::value) {
    if (v.type_index != kPFTypeFloat) return false;
    if constexpr (sizeof(T) < sizeof(double)) {
      double x = v.v_float64;
      if (x != x || x == std::numeric_limits<double>::infinity() ||
          x == -std::numeric_limits<double>::infinity()) {
        return true;
      }
      if (x > std::numeric_limits<T>::max() || x < -std::numeric_limits<T>::max()) return false;
      return static_cast<double>(static_cast<T>(x)) == x;
    }
    return true;
  } else if constexpr (IsStdOptional<T>::value) {
    return v.type_index == kPFTypeNone || KeptAs<typename T::value_type>(v);
  } else if constexpr (HasCheckElements<T>::value) {
    if constexpr (CopiesToConvert<T>::value) {
      return T::_type_check_elements(v.v_obj);
    }
    return true;
  } else {
    return true;
  }
}

/*! Checks that `v` converts to T, throwing ElementMismatch with `piece()` (called only on a
 *  mismatch) prepended to the path. Returns KeptAs<T>(v): false when converting the container
 *  holding `v` to a container of T must copy it. */
template <typename T, typename Piece>
bool CheckElement(const PFAny& v, Piece&& piece) {
  if constexpr (IsAnyElement<T>()) {
    return true;
  } else if constexpr (HasCheckElements<T>::value) {
    if (T::_type_accepts(v.type_index)) {
      bool kept;
      try {
        kept = T::_type_check_elements(v.v_obj);
      } catch (ElementMismatch& e) {
        e.path = piece() + e.path;
        throw;
      }
      return kept || !CopiesToConvert<T>::value;
    }
    throw ElementMismatch{piece(), ElementTypeName<T>(), AnyTypeName(v)};
  } else if constexpr (HasTryFromNested<T>::value) {  // std containers, Tuple (nested_convert.h)
    try {
      if (TypeTraits<T>::TryFromNested(&v)) return true;
    } catch (ElementMismatch& e) {
      e.path = piece() + e.path;
      throw;
    }
    throw ElementMismatch{piece(), ElementTypeName<T>(), AnyTypeName(v)};
  } else {
    if (!TypeTraits<T>::TryFrom(&v)) ThrowElementMismatch<T>(v, piece());
    return KeptAs<T>(v);
  }
}

/*! Runs `check` (which throws ElementMismatch) and reports a mismatch as one TypeError:
 *  "Array[int] element [3]: expected int, got str". The container's name is made (by
 *  `container_name`) only then: every typed container argument passes here. */
template <typename F>
void ReportElementMismatch(std::string (*container_name)(), F&& check) {
  try {
    check();
  } catch (ElementMismatch& e) {
    throw ElementError(container_name(), std::move(e));
  }
}

/*! Element `v` (borrowed, owned by a container) as T; a TypeError names `piece` when it does
 *  not convert (possible only for mutable containers changed behind a typed reference). */
template <typename T>
T ElementAs(const PFAny& v, const std::string& container, int64_t index) {
  if constexpr (std::is_same<T, Any>::value) {
    return Any(AnyView::FromPFAny(v));
  } else {
    std::optional<T> r = TypeTraits<T>::TryFrom(&v);
    if (!r) {
      throw Error("TypeError", container + " element [" + std::to_string(index) + "]: expected " +
                                   ElementTypeName<T>() + ", got " + AnyTypeName(v));
    }
    return std::move(*r);
  }
}

/*! Owned PFAny of a C++ value (a new ref). */
template <typename T>
PFAny ToOwnedAny(T&& value) {
  using Key = TraitsKey<T>;
  PFAny out;
  SetPod(&out, kPFTypeNone);
  TypeTraits<Key>::ToOwned(Key(std::forward<T>(value)), &out);
  return out;
}

/*! Releases owned PFAny values on scope exit. */
class OwnedAnys {
 public:
  explicit OwnedAnys(size_t reserve) { items_.reserve(reserve); }
  ~OwnedAnys() {
    for (PFAny& v : items_) PFAnyRelease(&v);
  }
  OwnedAnys(const OwnedAnys&) = delete;
  OwnedAnys& operator=(const OwnedAnys&) = delete;
  void push(PFAny v) { items_.push_back(v); }
  const PFAny* data() const noexcept { return items_.data(); }
  int64_t size() const noexcept { return static_cast<int64_t>(items_.size()); }

 private:
  std::vector<PFAny> items_;
};

/*! Takes over an owned object value produced by an ABI call into a reference R. */
template <typename R>
R TakeObject(PFAny* v) {
  return ObjectUnsafe::FromOwned<R>(v->v_obj);
}

}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_DETAIL_CONTAINER_DETAILS_H_
