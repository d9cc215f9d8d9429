// Dict entry points of c_api.h: creating and mutating the mutable hash map (kPFTypeDict).
#include <string>
#include <string_view>

#include "runtime/error.h"
#include "runtime/map.h"
#include "runtime/object.h"
#include "runtime/string.h"

namespace packedfun {
namespace detail {
namespace {

PFObject* CheckDict(PFObject* obj, const char* fn) {
  if (obj == nullptr || obj->type_index != kPFTypeDict) {
    Throw("TypeError", std::string(fn) + ": expected a packedfun.Dict object");
  }
  return obj;
}

/*! The key as shown in a KeyError: 'text' for strings, the number for ints, else its kind. */
std::string KeyText(const PFAny& key) {
  std::string_view text;
  if (AnyToStringView(key, false, &text)) return "'" + std::string(text) + "'";
  if (key.type_index == kPFTypeInt) return std::to_string(key.v_int64);
  return "of type index " + std::to_string(key.type_index);
}

}  // namespace
}  // namespace detail
}  // namespace packedfun

using namespace packedfun::detail;

extern "C" {

PACKEDFUN_API int PFDictCreate(const PFAny* kv, int64_t num_items, PFAny* out) {
  return Guard([&] {
    if (num_items < 0) return RaiseError("ValueError", "PFDictCreate: negative num_items");
    PFAny result = ObjectAny(NewMap(kPFTypeDict));
    try {
      MapReserve(result.v_obj, num_items);
      for (int64_t i = 0; i < num_items; ++i) MapSet(result.v_obj, kv[2 * i], kv[2 * i + 1]);
    } catch (...) {
      ReleaseAny(&result);
      throw;
    }
    *out = result;
    return 0;
  });
}

PACKEDFUN_API int PFDictSetItem(PFObject* dict, const PFAny* key, const PFAny* value) {
  return Guard([&] {
    MapSet(CheckDict(dict, "PFDictSetItem"), *key, *value);
    return 0;
  });
}

PACKEDFUN_API int PFDictDelItem(PFObject* dict, const PFAny* key) {
  return Guard([&] {
    if (!MapErase(CheckDict(dict, "PFDictDelItem"), *key)) {
      return RaiseError("KeyError", "PFDictDelItem: key " + KeyText(*key) + " not found");
    }
    return 0;
  });
}

PACKEDFUN_API int PFDictClear(PFObject* dict) {
  return Guard([&] {
    MapClear(CheckDict(dict, "PFDictClear"));
    return 0;
  });
}

}  // extern "C"
