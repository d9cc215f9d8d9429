// Private runtime helpers for strings and bytes held in PFAny values.
#ifndef PACKEDFUN_SRC_INTERNAL_STRING_H_
#define PACKEDFUN_SRC_INTERNAL_STRING_H_

#include <packedfun/c_api.h>

#include <string_view>

namespace packedfun {
namespace detail {

/*! A new String (kPFTypeString) or Bytes (kPFTypeBytes) object copying `text`; header and bytes
 *  share one allocation and the bytes are NUL-terminated. Throws std::bad_alloc. */
PFObject* NewBytesObject(int32_t type_index, std::string_view text);

/*! An owned PFAny holding `text` as a string (small form up to 7 bytes, else a String object).
 *  Throws std::bad_alloc. */
PFAny MakeStringAny(std::string_view text);

/*! As MakeStringAny, for bytes (kPFTypeSmallBytes or a Bytes object). */
PFAny MakeBytesAny(std::string_view text);

/*! The text of a string-like PFAny: SmallStr, RawStr, StrView, String object; with
 *  `allow_bytes` also SmallBytes, BytesView, Bytes object. Returns false for any other type. */
bool AnyToStringView(const PFAny& value, bool allow_bytes, std::string_view* out) noexcept;

/*! Whether `value` holds a string (any form), and whether it holds bytes (any form). */
bool AnyIsString(const PFAny& value) noexcept;
bool AnyIsBytes(const PFAny& value) noexcept;

}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_SRC_INTERNAL_STRING_H_
