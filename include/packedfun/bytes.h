// Bytes: an immutable, reference-counted byte string (inline up to 7 bytes, else an object).
#ifndef PACKEDFUN_BYTES_H_
#define PACKEDFUN_BYTES_H_

#include <packedfun/c_api.h>
#include <packedfun/detail/bytes_holder.h>
#include <packedfun/detail/type_traits.h>

#include <optional>
#include <string>
#include <string_view>

namespace packedfun {

/*!
 * Immutable raw bytes, held as the C ABI hands them over: up to 7 bytes inline
 * (kPFTypeSmallBytes), longer ones as a shared Bytes object. Python's `bytes` and `bytearray`
 * arrive as Bytes. data() is always NUL-terminated (the NUL is not counted in size()).
 */
class Bytes : public detail::BytesHolder<kPFTypeSmallBytes, kPFTypeBytes> {
  using Base = detail::BytesHolder<kPFTypeSmallBytes, kPFTypeBytes>;

 public:
  Bytes() noexcept = default;
  Bytes(const char* data, size_t size) : Base(data, size, &PFBytesCreate) {}
  explicit Bytes(const std::string& s) : Base(s.data(), s.size(), &PFBytesCreate) {}
  explicit Bytes(std::string_view s) : Base(s.data(), s.size(), &PFBytesCreate) {}
  /*! A typed Function parameter borrowing the caller's bytes (as String does, see string.h). */
  Bytes(detail::BorrowArgument tag, const PFByteArray* view, bool nul_terminated = false)
      : Base(tag, view, nul_terminated) {}
  operator std::string() const { return str(); }  // NOLINT

  /*! Bytes from a borrowed value of any bytes kind (BytesView, SmallBytes, Bytes); nullopt for
   *  other kinds. Views are copied; the small form and objects are shared. */
  static std::optional<Bytes> TryFrom(const PFAny& v) {
    if (v.type_index == kPFTypeSmallBytes || v.type_index == kPFTypeBytes) {
      Bytes b;
      b.CopyFrom(v);
      return b;
    }
    if (v.type_index == kPFTypeBytesView) {
      PFByteArray bytes = detail::AnyBytes(v);
      return Bytes(bytes.data, bytes.size);
    }
    return std::nullopt;
  }
};

/*! Bytes compare by content (lexicographically, as std::string_view does). */
inline bool operator==(const Bytes& a, const Bytes& b) noexcept { return a.view() == b.view(); }
inline bool operator!=(const Bytes& a, const Bytes& b) noexcept { return !(a == b); }
inline bool operator<(const Bytes& a, const Bytes& b) noexcept { return a.view() < b.view(); }

template <>
struct TypeTraits<Bytes> {
  static void ToView(const Bytes& v, PFAny* out, PFByteArray*) { *out = v.raw(); }
  static void ToOwned(const Bytes& v, PFAny* out) { v.CopyToOwned(out); }
  static std::optional<Bytes> TryFrom(const PFAny* v) { return Bytes::TryFrom(*v); }
  /*! Typed Function parameters: check, then build (a BytesView is borrowed, not copied). */
  static bool ArgCheck(const PFAny* v) noexcept { return detail::AnyIsBytes(*v); }
  static Bytes ArgGet(const PFAny* v) {
    if (v->type_index == kPFTypeBytesView) {
      return Bytes(detail::BorrowArgument{}, static_cast<const PFByteArray*>(v->v_ptr),
                   v->zero_padding == PACKEDFUN_VIEW_NUL_TERMINATED);
    }
    return *Bytes::TryFrom(*v);
  }
  static std::string TypeName() { return "bytes"; }
};

}  // namespace packedfun

#endif  // PACKEDFUN_BYTES_H_
