// Any (owns a PFAny) and AnyView (borrows one): the type-erased values every call passes.
#ifndef PACKEDFUN_ANY_H_
#define PACKEDFUN_ANY_H_

#include <packedfun/bytes.h>
#include <packedfun/c_api.h>
#include <packedfun/detail/type_traits.h>
#include <packedfun/error.h>
#include <packedfun/object.h>
#include <packedfun/string.h>

#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace packedfun {

class Any;
class AnyView;

namespace detail {

/*! Enables the value constructors/conversions of Any and AnyView for T (not Any/AnyView
 *  themselves, which are checked first so that their incomplete traits are never looked at). */
template <typename T>
using EnableIfValue =
    std::enable_if_t<std::conjunction<std::negation<std::is_same<TraitsKey<T>, Any>>,
                                      std::negation<std::is_same<TraitsKey<T>, AnyView>>,
                                      HasTypeTraits<TraitsKey<T>>>::value>;

/*! Whether a kind is borrowed (only valid during a call) and so must be copied to be kept. */
inline bool IsBorrowedKind(int32_t t) noexcept {
  return t == kPFTypeRawStr || t == kPFTypeStrView || t == kPFTypeBytesView ||
         t == kPFTypeDLTensorPtr;
}

/*! Copies borrowed `view` into owned `*out` (which must hold nothing): POD and objects inline,
 *  borrowed kinds through PFAnyViewToOwned. */
inline void CopyViewToOwned(const PFAny& view, PFAny* out) {
  if (IsBorrowedKind(view.type_index)) {
    SetPod(out, kPFTypeNone);
    CheckCallResult(PFAnyViewToOwned(&view, out));
    return;
  }
  *out = view;
  if (view.type_index >= kPFTypeStaticObjectBegin) ObjectRetain(view.v_obj);
}

/*! The conversion shared by Any::as and AnyView::as. */
template <typename T>
std::optional<T> AnyTryAs(const PFAny* v) {
  static_assert(HasTryFrom<T>::value, "this type can be passed into a Function but not received");
  return TypeTraits<T>::TryFrom(v);
}

/*! The TypeError of a failed cast to T; out of line, so that casts inline their success path. */
template <typename T>
[[noreturn]] __attribute__((noinline, cold)) void ThrowCastError(const PFAny* v) {
  ThrowConversionError("", TypeTraits<T>::TypeName(), IntRangeName<T>(), *v);
}

template <typename T>
T AnyCast(const PFAny* v) {
  std::optional<T> r = AnyTryAs<T>(v);
  if (!r) ThrowCastError<T>(v);
  return std::move(*r);
}

struct AnyUnsafe;

}  // namespace detail

/*!
 * A borrowed value: 16 bytes copied freely, owning nothing. Valid only while whatever it was
 * taken from (a call's arguments, an Any) is alive. `args[i]` in a packed function is an AnyView.
 */
class AnyView {
 public:
  AnyView() noexcept { detail::SetPod(&data_, kPFTypeNone); }
  AnyView(const Any& any) noexcept;  // NOLINT(runtime/explicit)
  /*! Views a borrowed PFAny. */
  static AnyView FromPFAny(const PFAny& v) noexcept {
    AnyView r;
    r.data_ = v;
    return r;
  }

  int32_t type_index() const noexcept { return data_.type_index; }
  bool is_none() const noexcept { return data_.type_index == kPFTypeNone; }
  /*! The type name used in messages: "int", "str", "mylib.Point", ... */
  std::string type_name() const { return detail::AnyTypeName(data_); }
  const PFAny& raw() const noexcept { return data_; }

  /*! The value as T, or nullopt when its kind does not convert. */
  template <typename T>
  std::optional<T> as() const {
    return detail::AnyTryAs<T>(&data_);
  }
  /*! tvm-ffi's spelling of as(): the value as T with conversions, or nullopt. */
  template <typename T>
  std::optional<T> try_cast() const {
    return detail::AnyTryAs<T>(&data_);
  }
  /*! The value as T; throws TypeError "expected T, got X" when it does not convert. */
  template <typename T>
  T cast() const {
    return detail::AnyCast<T>(&data_);
  }
  /*! Implicit conversion, as in `int64_t a = args[0];` (throws like cast). */
  template <typename T, typename = detail::EnableIfValue<T>>
  operator T() const {  // NOLINT(runtime/explicit)
    return cast<T>();
  }

 private:
  PFAny data_;
};

/*!
 * An owned value: a POD, a small string, or one strong reference to an object. Borrowed kinds
 * given to it (a RawStr, a StrView, ...) are copied, so an Any never dangles.
 */
class Any {
 public:
  Any() noexcept { detail::SetPod(&data_, kPFTypeNone); }
  Any(std::nullptr_t) noexcept { detail::SetPod(&data_, kPFTypeNone); }  // NOLINT
  Any(const Any& other) noexcept : data_(other.data_) { Retain(); }
  Any(Any&& other) noexcept : data_(other.data_) { detail::SetPod(&other.data_, kPFTypeNone); }
  Any(const AnyView& view) { detail::CopyViewToOwned(view.raw(), &data_); }  // NOLINT
  template <typename T, typename = detail::EnableIfValue<T>>
  Any(T&& value) {  // NOLINT(runtime/explicit)
    using Key = detail::TraitsKey<T>;
    TypeTraits<Key>::ToOwned(Key(std::forward<T>(value)), &data_);
  }
  ~Any() { Release(); }

  Any& operator=(const Any& other) noexcept {
    Any(other).swap(*this);
    return *this;
  }
  Any& operator=(Any&& other) noexcept {
    // Not move-and-swap: the swap goes through a temporary the compiler does not elide (results
    // of calls are assigned this way on the call path).
    if (this != &other) {
      PFAny old = data_;
      data_ = other.data_;
      detail::SetPod(&other.data_, kPFTypeNone);
      if (old.type_index >= kPFTypeStaticObjectBegin) detail::ObjectRelease(old.v_obj);
    }
    return *this;
  }
  template <typename T, typename = std::enable_if_t<!std::is_same<std::decay_t<T>, Any>::value>>
  Any& operator=(T&& value) {
    Any(std::forward<T>(value)).swap(*this);
    return *this;
  }
  void swap(Any& other) noexcept { std::swap(data_, other.data_); }
  void reset() noexcept { Any().swap(*this); }

  int32_t type_index() const noexcept { return data_.type_index; }
  bool is_none() const noexcept { return data_.type_index == kPFTypeNone; }
  std::string type_name() const { return detail::AnyTypeName(data_); }
  const PFAny& raw() const noexcept { return data_; }
  AnyView view() const noexcept { return AnyView(*this); }

  template <typename T>
  std::optional<T> as() const {
    return detail::AnyTryAs<T>(&data_);
  }
  template <typename T>
  std::optional<T> try_cast() const {
    return detail::AnyTryAs<T>(&data_);
  }
  template <typename T>
  T cast() const {
    return detail::AnyCast<T>(&data_);
  }
  template <typename T, typename = detail::EnableIfValue<T>>
  operator T() const {  // NOLINT(runtime/explicit)
    return cast<T>();
  }

  bool operator==(std::nullptr_t) const noexcept { return is_none(); }
  bool operator!=(std::nullptr_t) const noexcept { return !is_none(); }

 private:
  void Retain() noexcept {
    if (data_.type_index >= kPFTypeStaticObjectBegin) detail::ObjectRetain(data_.v_obj);
  }
  void Release() noexcept {
    if (data_.type_index >= kPFTypeStaticObjectBegin) detail::ObjectRelease(data_.v_obj);
  }

  PFAny data_;
  friend struct detail::AnyUnsafe;
};

inline AnyView::AnyView(const Any& any) noexcept : data_(any.raw()) {}

namespace detail {

/*! Moves owned PFAny values into and out of Any; for the library only. */
struct AnyUnsafe {
  /*! An Any taking over the owned `*v`; `*v` is reset to None. */
  static Any MoveFromPFAny(PFAny* v) noexcept {
    Any r;
    CopyPFAny(&r.data_, v);
    SetPod(v, kPFTypeNone);
    return r;
  }
  /*! Hands the Any's value (a new ref) to `*out`; the Any becomes None. */
  static void MoveToPFAny(Any&& any, PFAny* out) noexcept {
    CopyPFAny(out, &any.data_);
    SetPod(&any.data_, kPFTypeNone);
  }
};

}  // namespace detail

template <>
struct TypeTraits<AnyView> {
  static void ToView(const AnyView& v, PFAny* out, PFByteArray*) { *out = v.raw(); }
  static void ToOwned(const AnyView& v, PFAny* out) { detail::CopyViewToOwned(v.raw(), out); }
  static std::optional<AnyView> TryFrom(const PFAny* v) noexcept { return AnyView::FromPFAny(*v); }
  static std::string TypeName() { return "Any"; }
};

template <>
struct TypeTraits<Any> {
  static void ToView(const Any& v, PFAny* out, PFByteArray*) { *out = v.raw(); }
  static void ToOwned(Any v, PFAny* out) { detail::AnyUnsafe::MoveToPFAny(std::move(v), out); }
  static std::optional<Any> TryFrom(const PFAny* v) { return Any(AnyView::FromPFAny(*v)); }
  static std::string TypeName() { return "Any"; }
};

}  // namespace packedfun

#endif  // PACKEDFUN_ANY_H_
