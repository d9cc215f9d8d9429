// Internal: reading the bytes held by a string- or bytes-kind PFAny, in any of its forms.
#ifndef PACKEDFUN_DETAIL_BYTES_ANY_H_
#define PACKEDFUN_DETAIL_BYTES_ANY_H_

#include <packedfun/c_api.h>

#include <cstring>

namespace packedfun {
namespace detail {

/*! Whether `v` holds a string in any form (RawStr, StrView, SmallStr, String object). */
inline bool AnyIsStr(const PFAny& v) noexcept {
  int32_t t = v.type_index;
  return t == kPFTypeRawStr || t == kPFTypeStrView || t == kPFTypeSmallStr || t == kPFTypeString;
}

/*! Whether `v` holds bytes in any form (BytesView, SmallBytes, Bytes object). */
inline bool AnyIsBytes(const PFAny& v) noexcept {
  int32_t t = v.type_index;
  return t == kPFTypeBytesView || t == kPFTypeSmallBytes || t == kPFTypeBytes;
}

/*! The bytes of a string/bytes-kind `v` (pointing into `v` itself for the small forms, so `v`
 *  must stay where it is while the result is used). Other kinds give an empty array. */
inline PFByteArray AnyBytes(const PFAny& v) noexcept {
  switch (v.type_index) {
    case kPFTypeRawStr:
      return PFByteArray{v.v_c_str, v.v_c_str ? std::strlen(v.v_c_str) : 0};
    case kPFTypeStrView:
    case kPFTypeBytesView:
      return *static_cast<const PFByteArray*>(v.v_ptr);
    case kPFTypeSmallStr:
    case kPFTypeSmallBytes:
      return PFByteArray{v.v_bytes, v.small_len};
    case kPFTypeString:
    case kPFTypeBytes:
      return reinterpret_cast<const PFBytesObject*>(v.v_obj)->bytes;
    default:
      return PFByteArray{nullptr, 0};
  }
}

}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_DETAIL_BYTES_ANY_H_
