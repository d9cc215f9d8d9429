// Internal: TypeTraits<T>, how each C++ type travels in a PFAny (POD kinds, objects, optionals).
#ifndef PACKEDFUN_DETAIL_TYPE_TRAITS_H_
#define PACKEDFUN_DETAIL_TYPE_TRAITS_H_

#include <packedfun/c_api.h>
#include <packedfun/detail/type_name.h>
#include <packedfun/error.h>
#include <packedfun/object.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace packedfun {

/*!
 * How a C++ type T converts to and from a PFAny. A specialization provides:
 *   static void ToView(const T& v, PFAny* out, PFByteArray* scratch)
 *       the borrowed form used for call arguments; `scratch` lives as long as `*out` and may back
 *       a StrView/BytesView. Never throws for POD.
 *   static void ToOwned(T v, PFAny* out)
 *       the owned form (a new ref) used for results and Any; may throw Error.
 *   static std::optional<T> TryFrom(const PFAny* v)
 *       converts a borrowed value, nullopt when its kind does not fit (optional member: types
 *       without it can be passed but not received).
 *   static std::string TypeName()
 *       the name printed in messages ("int", "str", "Function").
 * Adding a type (Tensor, Array, ...) is adding a specialization in that type's header.
 */
template <typename T, typename = void>
struct TypeTraits {};

namespace detail {

/*! The key type TypeTraits is looked up with: decayed, with char* read as const char*. */
template <typename T>
using TraitsKey =
    std::conditional_t<std::is_same<std::decay_t<T>, char*>::value, const char*, std::decay_t<T>>;

template <typename T, typename = void>
struct HasTypeTraits : std::false_type {};
template <typename T>
struct HasTypeTraits<T, std::void_t<decltype(TypeTraits<T>::TypeName())>> : std::true_type {};

template <typename T, typename = void>
struct HasTryFrom : std::false_type {};
template <typename T>
struct HasTryFrom<T, std::void_t<decltype(TypeTraits<T>::TryFrom(nullptr))>> : std::true_type {};

inline void SetPod(PFAny* out, int32_t type_index) noexcept {
  out->type_index = type_index;
  out->zero_padding = 0;
  out->v_int64 = 0;
}
/*! Copies a PFAny as two 8-byte words, never as one 16-byte load. A callee writes its result as
 *  two 8-byte stores (as C code does), and the processor cannot forward two stores to one wider
 *  load: a 16-byte copy of a result just written waits until both stores reach the cache. On a
 *  C++-to-Python callback that wait was most of the typed trampoline's sampled time. The empty asm
 *  keeps the words in registers, so that the compiler does not merge the two copies back into one
 *  vector move. */
inline void CopyPFAny(PFAny* dst, const PFAny* src) noexcept {
  uint64_t head;
  uint64_t value;
  std::memcpy(&head, src, sizeof(head));
  std::memcpy(&value, reinterpret_cast<const char*>(src) + sizeof(head), sizeof(value));
#if defined(__GNUC__)
  __asm__("" : "+r"(head), "+r"(value));
#endif
  std::memcpy(dst, &head, sizeof(head));
  std::memcpy(reinterpret_cast<char*>(dst) + sizeof(head), &value, sizeof(value));
}
inline void SetInt(PFAny* out, int32_t type_index, int64_t v) noexcept {
  SetPod(out, type_index);
  out->v_int64 = v;
}
inline void SetObject(PFAny* out, PFObject* obj) noexcept {
  if (obj == nullptr) return SetPod(out, kPFTypeNone);
  out->type_index = obj->type_index;
  out->zero_padding = 0;
  out->v_obj = obj;
}

/*! For integer types, the name used in overflow messages ("int32"); NULL otherwise. int64 is
 *  named too: it refuses the integers beyond it (kPFTypeUInt64). */
template <typename T>
constexpr const char* IntRangeName() noexcept {
  if constexpr (std::is_enum<T>::value) {
    return IntRangeName<std::underlying_type_t<T>>();
  } else if constexpr (!std::is_integral<T>::value || std::is_same<T, bool>::value) {
    return nullptr;
  } else if constexpr (std::is_signed<T>::value) {
    return sizeof(T) == 1 ? "int8" : sizeof(T) == 2 ? "int16" : sizeof(T) == 4 ? "int32" : "int64";
  } else {
    return sizeof(T) == 1   ? "uint8"
           : sizeof(T) == 2 ? "uint16"
           : sizeof(T) == 4 ? "uint32"
                            : "uint64";
  }
}

namespace detail {
constexpr bool SameName(const char* a, const char* b) noexcept {
  while (*a != '\0' && *a == *b) ++a, ++b;
  return *a == *b;
}

/*! The one integer range among `names` (NULLs ignored); NULL when there is none or two differ. */
template <size_t N>
constexpr const char* CommonRange(const char* const (&names)[N]) noexcept {
  const char* found = nullptr;
  for (const char* name : names) {
    if (name == nullptr) continue;
    if (found != nullptr && !SameName(found, name)) return nullptr;
    found = name;
  }
  return found;
}

template <typename T, typename = void>
struct HasValueType : std::false_type {};
template <typename T>
struct HasValueType<T, std::void_t<typename T::value_type>> : std::true_type {};
template <typename T, typename = void>
struct HasMappedType : std::false_type {};
template <typename T>
struct HasMappedType<T, std::void_t<typename T::key_type, typename T::mapped_type>>
    : std::true_type {};
template <typename T>
constexpr bool kIsText = std::is_convertible<const T&, std::string_view>::value;
}  // namespace detail

/*! The integer range an overflow message names for a value reaching a parameter of type T:
 *  T's own for an integer, the integer leaves' for a container or optional whose leaves share
 *  one integer type (`list[int32]` → "int32"), NULL otherwise. */
template <typename T>
constexpr const char* IntLeafRange() noexcept {
  if constexpr (IntRangeName<T>() != nullptr) {
    return IntRangeName<T>();
  } else if constexpr (detail::HasMappedType<T>::value) {
    const char* const names[] = {IntLeafRange<typename T::key_type>(),
                                 IntLeafRange<typename T::mapped_type>()};
    return detail::CommonRange(names);
  } else if constexpr (detail::HasValueType<T>::value && !detail::kIsText<T>) {
    return IntLeafRange<typename T::value_type>();
  } else {
    return nullptr;
  }
}

/*! Throws the error for a value that did not convert: an OverflowError when an int is out of
 *  `range_name`'s range, else a TypeError "<prefix>expected <expected>, got <actual>". */
[[noreturn]] __attribute__((noinline, cold)) inline void ThrowConversionError(
    const std::string& prefix, const std::string& expected, const char* range_name,
    const PFAny& value) {
  PFErrorSetRaisedConversion(prefix.c_str(), expected.c_str(), range_name, &value);
  ThrowRaised();
}

}  // namespace detail

/*! Integers (not bool): kPFTypeInt, or kPFTypeUInt64 for a 64-bit unsigned value beyond int64;
 *  received from Int or Bool, range-checked, and unsigned 64-bit types from UInt64 too. */
template <typename T>
struct TypeTraits<T,
                  std::enable_if_t<std::is_integral<T>::value && !std::is_same<T, bool>::value>> {
  static constexpr bool kUnsigned64 = std::is_unsigned<T>::value && sizeof(T) == 8;
  static void ToView(const T& v, PFAny* out, PFByteArray*) { ToOwned(v, out); }
  static void ToOwned(T v, PFAny* out) noexcept {
    if constexpr (kUnsigned64) {
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        detail::SetPod(out, kPFTypeUInt64);
        out->v_uint64 = v;
        return;
      }
    }
    detail::SetInt(out, kPFTypeInt, static_cast<int64_t>(v));
  }
  static std::optional<T> TryFrom(const PFAny* v) noexcept {
    if constexpr (kUnsigned64) {
      if (v->type_index == kPFTypeUInt64) return static_cast<T>(v->v_uint64);
    }
    if (v->type_index != kPFTypeInt && v->type_index != kPFTypeBool) return std::nullopt;
    int64_t x = v->v_int64;
    if constexpr (!(std::is_signed<T>::value && sizeof(T) == 8)) {
      if constexpr (std::is_signed<T>::value) {
        if (x < std::numeric_limits<T>::min() || x > std::numeric_limits<T>::max()) {
          return std::nullopt;
        }
      } else {
        if (x < 0 || static_cast<uint64_t>(x) > std::numeric_limits<T>::max()) return std::nullopt;
      }
    }
    return static_cast<T>(x);
  }
  static std::string TypeName() { return "int"; }
};

/*! bool: kPFTypeBool; received from Bool or Int. */
template <>
struct TypeTraits<bool> {
  static void ToView(const bool& v, PFAny* out, PFByteArray*) { ToOwned(v, out); }
  static void ToOwned(bool v, PFAny* out) { detail::SetInt(out, kPFTypeBool, v ? 1 : 0); }
  static std::optional<bool> TryFrom(const PFAny* v) noexcept {
    if (v->type_index == kPFTypeUInt64) return true;  // never zero
    if (v->type_index != kPFTypeBool && v->type_index != kPFTypeInt) return std::nullopt;
    return v->v_int64 != 0;
  }
  static std::string TypeName() { return "bool"; }
};

/*! float and double: kPFTypeFloat; received from Float, Int or Bool. */
template <typename T>
struct TypeTraits<T, std::enable_if_t<std::is_floating_point<T>::value>> {
  static void ToView(const T& v, PFAny* out, PFByteArray*) { ToOwned(v, out); }
  static void ToOwned(T v, PFAny* out) {
    detail::SetPod(out, kPFTypeFloat);
    out->v_float64 = static_cast<double>(v);
  }
  static std::optional<T> TryFrom(const PFAny* v) noexcept {
    if (v->type_index == kPFTypeFloat) return static_cast<T>(v->v_float64);
    if (v->type_index == kPFTypeInt || v->type_index == kPFTypeBool) {
      return static_cast<T>(v->v_int64);
    }
    if (v->type_index == kPFTypeUInt64) return static_cast<T>(v->v_uint64);
    return std::nullopt;
  }
  static std::string TypeName() { return "float"; }
};

/*! nullptr: None. */
template <>
struct TypeTraits<std::nullptr_t> {
  static void ToView(const std::nullptr_t&, PFAny* out, PFByteArray*) { ToOwned(nullptr, out); }
  static void ToOwned(std::nullptr_t, PFAny* out) { detail::SetPod(out, kPFTypeNone); }
  static std::optional<std::nullptr_t> TryFrom(const PFAny* v) noexcept {
    if (v->type_index != kPFTypeNone) return std::nullopt;
    return nullptr;
  }
  static std::string TypeName() { return "None"; }
};

/*! void*: kPFTypeOpaquePtr; received from OpaquePtr or None (NULL). */
template <>
struct TypeTraits<void*> {
  static void ToView(void* const& v, PFAny* out, PFByteArray*) { ToOwned(v, out); }
  static void ToOwned(void* v, PFAny* out) {
    detail::SetPod(out, kPFTypeOpaquePtr);
    out->v_ptr = v;
  }
  static std::optional<void*> TryFrom(const PFAny* v) noexcept {
    if (v->type_index == kPFTypeOpaquePtr) return v->v_ptr;
    if (v->type_index == kPFTypeNone) return static_cast<void*>(nullptr);
    return std::nullopt;
  }
  static std::string TypeName() { return "ptr"; }
};

/*! DLDataType: kPFTypeDataType; also parsed from a string ("float32"). */
template <>
struct TypeTraits<DLDataType> {
  static void ToView(const DLDataType& v, PFAny* out, PFByteArray*) { ToOwned(v, out); }
  static void ToOwned(DLDataType v, PFAny* out) {
    detail::SetPod(out, kPFTypeDataType);
    out->v_dtype = v;
  }
  static std::optional<DLDataType> TryFrom(const PFAny* v) {
    if (v->type_index == kPFTypeDataType) return v->v_dtype;
    if (!detail::AnyIsStr(*v)) return std::nullopt;
    PFByteArray text = detail::AnyBytes(*v);
    DLDataType out;
    detail::CheckCallResult(PFDataTypeFromString(&text, &out));
    return out;
  }
  static std::string TypeName() { return "dtype"; }
};

/*! DLDevice: kPFTypeDevice. */
template <>
struct TypeTraits<DLDevice> {
  static void ToView(const DLDevice& v, PFAny* out, PFByteArray*) { ToOwned(v, out); }
  static void ToOwned(DLDevice v, PFAny* out) {
    detail::SetPod(out, kPFTypeDevice);
    out->v_device = v;
  }
  static std::optional<DLDevice> TryFrom(const PFAny* v) noexcept {
    if (v->type_index != kPFTypeDevice) return std::nullopt;
    return v->v_device;
  }
  static std::string TypeName() { return "Device"; }
};

/*! DLTensor*: passed as a borrowed kPFTypeDLTensorPtr; received from that or a Tensor object. */
template <>
struct TypeTraits<DLTensor*> {
  static void ToView(DLTensor* const& v, PFAny* out, PFByteArray*) {
    detail::SetPod(out, kPFTypeDLTensorPtr);
    out->v_ptr = v;
  }
  /*! A Tensor object borrowing the data (PFAnyViewToOwned): the data must outlive it. */
  static void ToOwned(DLTensor* v, PFAny* out) {
    PFAny view;
    ToView(v, &view, nullptr);
    detail::CheckCallResult(PFAnyViewToOwned(&view, out));
  }
  static std::optional<DLTensor*> TryFrom(const PFAny* v) noexcept {
    if (v->type_index == kPFTypeDLTensorPtr) return static_cast<DLTensor*>(v->v_ptr);
    if (v->type_index == kPFTypeTensor) {
      return &reinterpret_cast<PFTensorObject*>(v->v_obj)->tensor;
    }
    return std::nullopt;
  }
  static std::string TypeName() { return "Tensor"; }
};

namespace detail {
/*! Whether a reference type converts from an accepted object itself (`_type_try_from`). */
template <typename T, typename = void>
struct HasTypeTryFrom : std::false_type {};
template <typename T>
struct HasTypeTryFrom<T, std::void_t<decltype(T::_type_try_from(nullptr))>> : std::true_type {};
/*! Whether a reference type reads a caller's container in place (`_type_reads_container_view`). */
template <typename T, typename = void>
struct RefReadsContainerView : std::false_type {};
template <typename T>
struct RefReadsContainerView<T, std::void_t<decltype(T::_type_reads_container_view)>>
    : std::integral_constant<bool, T::_type_reads_container_view> {};
}  // namespace detail

/*! ObjectRef and every typed reference, through the reference's _type_* hooks. */
template <typename T>
struct TypeTraits<T, std::enable_if_t<std::is_base_of<ObjectRef, T>::value>> {
  static void ToView(const T& v, PFAny* out, PFByteArray*) { detail::SetObject(out, v.get()); }
  static void ToOwned(T v, PFAny* out) {
    detail::SetObject(out, detail::ObjectUnsafe::MoveToPFObject(std::move(v)));
  }
  static std::optional<T> TryFrom(const PFAny* v) {
    if (v->type_index == kPFTypeNone) {
      if constexpr (T::_type_is_nullable) return T();
      return std::nullopt;
    }
    if (!T::_type_accepts(v->type_index)) return std::nullopt;
    // Containers check their elements (and may throw a TypeError naming the bad one).
    if constexpr (detail::HasTypeTryFrom<T>::value) return T::_type_try_from(v->v_obj);
    return detail::ObjectUnsafe::FromBorrowed<T>(v->v_obj);
  }
  static std::string TypeName() { return T::_type_name(); }
  /*! A reference that reads a caller's container in place (an Array of numbers) as a typed
   *  Function parameter: built from the view, nullopt to convert as usual. */
  static constexpr bool kReadsContainerView = detail::RefReadsContainerView<T>::value;
  static std::optional<T> TryFromContainerView(const PFContainerView* view) {
    return T::_type_from_container_view(view);
  }

  /*! Whether T holds an accepted object as it is (no `_type_try_from` re-checking or re-making
   *  it): a `const T&` parameter then borrows the caller's object (function_details.h). */
  static constexpr bool kHoldsObjectAsIs = !detail::HasTypeTryFrom<T>::value;
  /*! Typed Function parameters of such a T: check, then build (no std::optional on the way). */
  template <typename U = T, typename = std::enable_if_t<!detail::HasTypeTryFrom<U>::value>>
  static bool ArgCheck(const PFAny* v) {
    if (v->type_index == kPFTypeNone) return T::_type_is_nullable;
    return T::_type_accepts(v->type_index);
  }
  template <typename U = T, typename = std::enable_if_t<!detail::HasTypeTryFrom<U>::value>>
  static T ArgGet(const PFAny* v) noexcept {
    return detail::ObjectUnsafe::FromBorrowed<T>(ArgObject(v));
  }
  /*! The object of an argument ArgCheck accepted: None only where T is nullable. */
  static PFObject* ArgObject(const PFAny* v) noexcept {
    if constexpr (T::_type_is_nullable) {
      if (v->type_index == kPFTypeNone) return nullptr;
    }
    return v->v_obj;
  }
};

/*! std::optional<T>: None or a T. */
template <typename T>
struct TypeTraits<std::optional<T>, std::enable_if_t<detail::HasTypeTraits<T>::value>> {
  static void ToView(const std::optional<T>& v, PFAny* out, PFByteArray* scratch) {
    if (v) return TypeTraits<T>::ToView(*v, out, scratch);
    detail::SetPod(out, kPFTypeNone);
  }
  static void ToOwned(std::optional<T> v, PFAny* out) {
    if (v) return TypeTraits<T>::ToOwned(std::move(*v), out);
    detail::SetPod(out, kPFTypeNone);
  }
  static std::optional<std::optional<T>> TryFrom(const PFAny* v) {
    if (v->type_index == kPFTypeNone) return std::optional<T>();
    std::optional<T> inner = TypeTraits<T>::TryFrom(v);
    if (!inner) return std::nullopt;
    return inner;
  }
  static std::string TypeName() { return "Optional[" + TypeTraits<T>::TypeName() + "]"; }
};

}  // namespace packedfun

#endif  // PACKEDFUN_DETAIL_TYPE_TRAITS_H_
