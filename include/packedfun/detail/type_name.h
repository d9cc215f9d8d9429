// Internal: the type name of a PFAny as printed in error messages ("int", "str", "mylib.Point").
#ifndef PACKEDFUN_DETAIL_TYPE_NAME_H_
#define PACKEDFUN_DETAIL_TYPE_NAME_H_

#include <packedfun/c_api.h>
#include <packedfun/detail/bytes_any.h>

#include <string>

namespace packedfun {
namespace detail {

/*! The registry name of the optional hook a language binding registers to name its opaque
 *  objects: called with the Opaque object, it returns the foreign type's name as a str. */
constexpr const char* kOpaqueTypeNameHook = "packedfun.OpaqueTypeName";

/*! Drops whatever error a failed lookup left in the error slot. */
inline void DiscardRaised() noexcept {
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);
  PFObjectDecRef(err);
}

/*! The type name of `value` for messages ("int", "str", "mylib.Point"): PFAnyGetTypeName. */
__attribute__((noinline, cold)) inline std::string AnyTypeName(const PFAny& value) {
  PFAny name{};
  if (PFAnyGetTypeName(&value, &name) != 0) {
    DiscardRaised();
    return "<type index " + std::to_string(value.type_index) + ">";
  }
  PFByteArray bytes = AnyBytes(name);
  std::string out(bytes.data, bytes.size);
  PFAnyRelease(&name);
  return out;
}

}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_DETAIL_TYPE_NAME_H_
