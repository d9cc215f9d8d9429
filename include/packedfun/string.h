// String: an immutable, reference-counted UTF-8 string (inline up to 7 bytes, else an object).
#ifndef PACKEDFUN_STRING_H_
#define PACKEDFUN_STRING_H_

#include <packedfun/c_api.h>
#include <packedfun/detail/bytes_holder.h>
#include <packedfun/detail/type_traits.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace packedfun {

/*!
 * An immutable UTF-8 string (embedded NULs allowed), held exactly as the C ABI hands strings
 * over: up to 7 bytes inline (kPFTypeSmallStr), longer ones as a shared String object. Copying
 * never copies the bytes. data() is always NUL-terminated. UTF-8 validity is not checked.
 *
 * Borrowed parameters. A `String` (or `const String&`) parameter of a typed Function that
 * receives a borrowed string view (Python's `str` arrives as one) does not copy it: it points at
 * the caller's bytes, which stay valid for the whole call, so `int64_t f(const String& s)` never
 * allocates. It behaves as any String with these guarantees:
 *   - size(), view(), str(), comparisons read the caller's bytes in place;
 *   - data()/c_str() return the caller's bytes, no copy, when the caller promised they end in a
 *     NUL (PACKEDFUN_VIEW_NUL_TERMINATED: both Python backends do for str and bytes, C++ callers
 *     for std::string); otherwise they make one owned copy on first use (they must return
 *     NUL-terminated bytes, which a plain view does not promise); concurrent first uses from
 *     several threads are safe;
 *   - copying, moving or assigning it (storing it in a member, a container, an Any, returning
 *     it) makes an owned String, so nothing that outlives the call can point at the caller's
 *     bytes. The parameter object itself dies with the call.
 * is_borrowed() tells the form; raw() of a borrowed String is a view valid during the call.
 * Only typed-Function parameters borrow: String::TryFrom, Any::cast and AnyView::as copy views.
 * A `std::string_view` parameter is the plain form of the same borrow: it points at the caller's
 * bytes (or at the argument itself for short strings) and is valid only during the call; keep a
 * String or std::string to store it.
 */
class String : public detail::BytesHolder<kPFTypeSmallStr, kPFTypeString> {
  using Base = detail::BytesHolder<kPFTypeSmallStr, kPFTypeString>;

 public:
  String() noexcept = default;
  String(const char* s) : Base(s, std::strlen(s), &PFStringCreate) {}  // NOLINT
  String(const char* s, size_t size) : Base(s, size, &PFStringCreate) {}
  String(const std::string& s) : Base(s.data(), s.size(), &PFStringCreate) {}  // NOLINT
  explicit String(std::string_view s) : Base(s.data(), s.size(), &PFStringCreate) {}

  /*! A typed Function parameter borrowing the caller's string (see "Borrowed parameters"). */
  String(detail::BorrowArgument tag, const PFByteArray* view, bool nul_terminated = false)
      : Base(tag, view, nul_terminated) {}

  /*! The bytes, NUL-terminated (a borrowed parameter copies them on first use: may throw). */
  const char* c_str() const { return data(); }
  operator std::string() const { return str(); }  // NOLINT

  // STL-style search and slicing, as std::string_view (and tvm-ffi's String) spell them.
  static constexpr size_t npos = std::string_view::npos;
  /*! Position of the first match of `s` at or after `pos`, or npos. */
  size_t find(const String& s, size_t pos = 0) const { return view().find(s.view(), pos); }
  size_t find(const char* s, size_t pos = 0) const { return view().find(s, pos); }
  size_t find(const char* s, size_t pos, size_t count) const { return view().find(s, pos, count); }
  /*! The bytes [pos, pos + count), clamped to the end; std::out_of_range when pos > size(). */
  String substr(size_t pos = 0, size_t count = npos) const {
    if (pos > size()) throw std::out_of_range("String::substr: position past the end");
    return String(data() + pos, std::min(count, size() - pos));
  }
  bool starts_with(std::string_view p) const { return view().substr(0, p.size()) == p; }
  bool starts_with(const String& p) const { return starts_with(p.view()); }
  bool starts_with(const char* p) const { return starts_with(std::string_view(p)); }
  bool starts_with(const char* p, size_t n) const { return starts_with(std::string_view(p, n)); }
  bool ends_with(std::string_view x) const {
    return size() >= x.size() && view().substr(size() - x.size()) == x;
  }
  bool ends_with(const String& x) const { return ends_with(x.view()); }
  bool ends_with(const char* x) const { return ends_with(std::string_view(x)); }
  bool ends_with(const char* x, size_t n) const { return ends_with(std::string_view(x, n)); }

  /*! A String from a borrowed value of any string kind (RawStr, StrView, SmallStr, String);
   *  nullopt for other kinds. Views are copied; the small form and objects are shared. */
  static std::optional<String> TryFrom(const PFAny& v) {
    if (v.type_index == kPFTypeSmallStr || v.type_index == kPFTypeString) {
      String s;
      s.CopyFrom(v);
      return s;
    }
    if (v.type_index == kPFTypeRawStr || v.type_index == kPFTypeStrView) {
      PFByteArray bytes = detail::AnyBytes(v);
      return String(bytes.data, bytes.size);
    }
    return std::nullopt;
  }
};

/*! Strings compare by content, with each other and with C and std strings. */
inline bool operator==(const String& a, const String& b) noexcept { return a.view() == b.view(); }
inline bool operator!=(const String& a, const String& b) noexcept { return !(a == b); }
inline bool operator<(const String& a, const String& b) noexcept { return a.view() < b.view(); }
inline bool operator==(const String& a, const char* b) noexcept { return a.view() == b; }
inline bool operator!=(const String& a, const char* b) noexcept { return !(a == b); }
inline bool operator==(const char* a, const String& b) noexcept { return b == a; }
inline bool operator!=(const char* a, const String& b) noexcept { return !(b == a); }
inline bool operator==(const String& a, const std::string& b) noexcept { return a.view() == b; }
inline bool operator!=(const String& a, const std::string& b) noexcept { return !(a == b); }
inline bool operator==(const std::string& a, const String& b) noexcept { return b == a; }
inline bool operator!=(const std::string& a, const String& b) noexcept { return !(b == a); }
// The orderings, by bytes, with a String on either side.
#define PACKEDFUN_STRING_ORDER_(OP)                                         \
  inline bool operator OP(const String& a, const String& b) noexcept {      \
    return a.view() OP b.view();                                            \
  }                                                                         \
  inline bool operator OP(const String& a, const char* b) noexcept {        \
    return a.view() OP std::string_view(b);                                 \
  }                                                                         \
  inline bool operator OP(const char* a, const String& b) noexcept {        \
    return std::string_view(a) OP b.view();                                 \
  }                                                                         \
  inline bool operator OP(const String& a, const std::string& b) noexcept { \
    return a.view() OP std::string_view(b);                                 \
  }                                                                         \
  inline bool operator OP(const std::string& a, const String& b) noexcept { \
    return std::string_view(a) OP b.view();                                 \
  }
PACKEDFUN_STRING_ORDER_(>)
PACKEDFUN_STRING_ORDER_(<=)
PACKEDFUN_STRING_ORDER_(>=)
#undef PACKEDFUN_STRING_ORDER_
/*! Concatenation, a new String (tvm-ffi's String does the same). */
inline String operator+(const String& a, std::string_view b) {
  std::string r;
  r.reserve(a.size() + b.size());
  r.append(a.view()).append(b);
  return String(r);
}
inline String operator+(std::string_view a, const String& b) {
  std::string r;
  r.reserve(a.size() + b.size());
  r.append(a).append(b.view());
  return String(r);
}
inline String operator+(const String& a, const String& b) { return a + b.view(); }
inline String operator+(const String& a, const char* b) { return a + std::string_view(b); }
inline String operator+(const char* a, const String& b) { return std::string_view(a) + b; }
inline String operator+(const String& a, const std::string& b) { return a + std::string_view(b); }
inline String operator+(const std::string& a, const String& b) { return std::string_view(a) + b; }
inline bool operator<(const String& a, const char* b) noexcept { return a.view() < b; }
inline bool operator<(const char* a, const String& b) noexcept { return a < b.view(); }
inline bool operator<(const String& a, const std::string& b) noexcept { return a.view() < b; }
inline bool operator<(const std::string& a, const String& b) noexcept { return a < b.view(); }

namespace detail {
/*! Lets String be streamed into error messages. */
inline ErrorBuilder& operator<<(ErrorBuilder& b, const String& s) { return b << s.view(); }
}  // namespace detail

namespace detail {

/*! Shared by the std::string / const char* / String traits: creates an owned string value. */
inline void MakeOwnedString(const char* data, size_t size, PFAny* out) {
  PFByteArray bytes{data, size};
  SetPod(out, kPFTypeNone);
  CheckCallResult(PFStringCreate(&bytes, out));
}

}  // namespace detail

template <>
struct TypeTraits<String> {
  static void ToView(const String& v, PFAny* out, PFByteArray*) { *out = v.raw(); }
  static void ToOwned(const String& v, PFAny* out) { v.CopyToOwned(out); }
  static std::optional<String> TryFrom(const PFAny* v) { return String::TryFrom(*v); }
  /*! Typed Function parameters: check, then build (a StrView is borrowed, not copied). */
  static bool ArgCheck(const PFAny* v) noexcept { return detail::AnyIsStr(*v); }
  static String ArgGet(const PFAny* v) {
    const auto* view = static_cast<const PFByteArray*>(v->v_ptr);
    if (v->type_index == kPFTypeStrView && view->size >= sizeof(v->v_bytes)) {
      // The common argument (a Python str of 8 bytes or more) inline: a borrow is three stores.
      return String(detail::BorrowArgument{}, view,
                    v->zero_padding == PACKEDFUN_VIEW_NUL_TERMINATED);
    }
    return ArgGetOther(v);
  }
  static std::string TypeName() { return "str"; }

 private:
  /*! ArgGet's other forms: a short view copied inline, the small form, an object, a C string. */
  __attribute__((noinline)) static String ArgGetOther(const PFAny* v) {
    if (v->type_index == kPFTypeStrView) {
      return String(detail::BorrowArgument{}, static_cast<const PFByteArray*>(v->v_ptr),
                    v->zero_padding == PACKEDFUN_VIEW_NUL_TERMINATED);
    }
    return *String::TryFrom(*v);
  }
};

template <>
struct TypeTraits<std::string> {
  static void ToView(const std::string& v, PFAny* out, PFByteArray* scratch) {
    *scratch = PFByteArray{v.data(), v.size()};
    detail::SetPod(out, kPFTypeStrView);
    out->zero_padding = PACKEDFUN_VIEW_NUL_TERMINATED;  // std::string's data()[size()] is NUL
    out->v_ptr = scratch;
  }
  static void ToOwned(const std::string& v, PFAny* out) {
    detail::MakeOwnedString(v.data(), v.size(), out);
  }
  static std::optional<std::string> TryFrom(const PFAny* v) {
    if (!detail::AnyIsStr(*v)) return std::nullopt;
    PFByteArray bytes = detail::AnyBytes(*v);
    return std::string(bytes.data, bytes.size);
  }
  /*! Typed Function parameters: check, then build the string in the parameter itself (no
   *  std::optional and no move of it on the way). */
  static bool ArgCheck(const PFAny* v) noexcept { return detail::AnyIsStr(*v); }
  static std::string ArgGet(const PFAny* v) {
    PFByteArray bytes = detail::AnyBytes(*v);
    return std::string(bytes.data, bytes.size);
  }
  static std::string TypeName() { return "str"; }
};

/*! std::string_view: a str, borrowed from the caller for the duration of the call only (as a
 *  parameter: no copy, strings of every form accepted, as for String); returned as an owned str.
 *  Taken out of an Any it views that Any's bytes: keep the Any alive, or use String. */
template <>
struct TypeTraits<std::string_view> {
  static void ToView(const std::string_view& v, PFAny* out, PFByteArray* scratch) {
    *scratch = PFByteArray{v.data(), v.size()};
    detail::SetPod(out, kPFTypeStrView);
    out->v_ptr = scratch;
  }
  static void ToOwned(std::string_view v, PFAny* out) {
    detail::MakeOwnedString(v.data(), v.size(), out);
  }
  static std::optional<std::string_view> TryFrom(const PFAny* v) noexcept {
    if (!detail::AnyIsStr(*v)) return std::nullopt;
    PFByteArray bytes = detail::AnyBytes(*v);
    return std::string_view(bytes.data, bytes.size);
  }
  static std::string TypeName() { return "str"; }
};

/*! const char*: passed as a borrowed kPFTypeRawStr; can be sent but not received. */
template <>
struct TypeTraits<const char*> {
  static void ToView(const char* const& v, PFAny* out, PFByteArray*) {
    detail::SetPod(out, kPFTypeRawStr);
    out->v_c_str = v;
  }
  static void ToOwned(const char* v, PFAny* out) {
    detail::MakeOwnedString(v, std::strlen(v), out);
  }
  static std::string TypeName() { return "str"; }
};

}  // namespace packedfun

#endif  // PACKEDFUN_STRING_H_
