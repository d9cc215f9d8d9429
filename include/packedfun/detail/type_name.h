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

/*! Python-facing names of the built-in type indices; NULL where the runtime's table decides. */
inline const char* BuiltinTypeName(int32_t type_index) noexcept {
  static const char* const kPod[] = {"None",      "int", "bool", "float", "ptr", "dtype", "Device",
                                     "DLTensor*", "str", "str",  "bytes", "str", "bytes", "int"};
  static const char* const kObject[] = {"Object", "str",   "bytes",  "Error", "Function",
                                        "Opaque", "Shape", "Tensor", "Array", "Map",
                                        "List",   "Dict",  "Module"};
  if (type_index >= 0 && type_index < static_cast<int32_t>(sizeof(kPod) / sizeof(kPod[0]))) {
    return kPod[type_index];
  }
  int32_t i = type_index - kPFTypeStaticObjectBegin;
  if (i >= 0 && i < static_cast<int32_t>(sizeof(kObject) / sizeof(kObject[0]))) return kObject[i];
  return nullptr;
}

/*! Drops whatever error a failed lookup left in the error slot. */
inline void DiscardRaised() noexcept {
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);
  PFObjectDecRef(err);
}

/*! Asks the binding's hook for the name of a foreign (opaque) object; empty when it cannot. */
inline std::string OpaqueTypeName(const PFAny& value) {
  PFByteArray name{kOpaqueTypeNameHook, std::char_traits<char>::length(kOpaqueTypeNameHook)};
  PFObject* hook = nullptr;
  if (PFFunctionGetGlobal(&name, &hook) != 0) {
    DiscardRaised();
    return std::string();
  }
  if (hook == nullptr) return std::string();
  PFAny result{};
  std::string out;
  if (PFFunctionCall(hook, &value, 1, &result) == 0) {
    if (AnyIsStr(result)) {
      PFByteArray bytes = AnyBytes(result);
      out.assign(bytes.data, bytes.size);
    }
    PFAnyRelease(&result);
  } else {
    DiscardRaised();
  }
  PFObjectDecRef(hook);
  return out;
}

/*! The type name of `value` for messages: built-in names, then the runtime's type key. */
inline std::string AnyTypeName(const PFAny& value) {
  int32_t t = value.type_index;
  if (t == kPFTypeOpaque) {
    std::string foreign = OpaqueTypeName(value);
    if (!foreign.empty()) return foreign;
  }
  if (const char* builtin = BuiltinTypeName(t)) return builtin;
  const PFTypeInfo* info = nullptr;
  if (PFTypeGetInfo(t, &info) == 0 && info != nullptr) {
    return std::string(info->type_key.data, info->type_key.size);
  }
  DiscardRaised();
  return "<type index " + std::to_string(t) + ">";
}

}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_DETAIL_TYPE_NAME_H_
