// Apache TVM FFI bridge: the metadata tvm-ffi keeps for its globals and for its types' fields and
// methods, handed as tvm-ffi wrote it to the switch's Python layer (builtin globals), which gives
// tvm-ffi's forms (`get_global_func_metadata`, `TypeField.metadata`, `TypeMethod.metadata`).
#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/error.h"
#include "runtime/object.h"
#include "runtime/registry.h"
#include "runtime/string.h"
#include "tvm_ffi/bridge.h"
#include "packedfun/signature.h"

namespace packedfun {
namespace detail {
namespace tvmffi {
namespace {

std::string_view View(const PFByteArray& a) {
  return a.size == 0 ? std::string_view() : std::string_view(a.data, a.size);
}

/*! Whether tvm-ffi's registry has a global `name` (only asked once libtvm_ffi is attached). */
bool TVMHasGlobal(const std::string& name) {
  PFByteArray key{name.data(), name.size()};
  void* handle = nullptr;
  if (GetApi().FunctionGetGlobal(&key, &handle) != 0) {
    RaiseFromTVM(name);
    throw AlreadyRaised{};
  }
  if (handle == nullptr) return false;
  GetApi().ObjectDecRef(handle);
  return true;
}

/*! (name: str) -> str | None: the metadata JSON tvm-ffi keeps for its global `name` ("" when it
 *  has none) when a lookup of `name` through packedfun finds tvm-ffi's function; None when
 *  packedfun's registry has the name itself (packedfun's own Function, whose metadata is
 *  packedfun's record), when no registry has it, or when libtvm_ffi is not in the process. */
int GlobalMetadataCall(void*, const PFAny* args, int32_t n, PFAny* result) {
  return Guard([&] {
    std::string_view view;
    if (n != 1 || !AnyToStringView(args[0], false, &view)) {
      Throw("TypeError", "packedfun.tvm_ffi_global_metadata: expected (name: str)");
    }
    *result = NoneAny();
    std::string name(view);
    if (!AttachLoadedLibrary()) return 0;
    if (PFObject* own = LookupOwnGlobal(name); own != nullptr) {
      DecRef(own);
      return 0;
    }
    if (!TVMHasGlobal(name)) return 0;
    PFAny arg = NoneAny();
    arg.type_index = kPFTypeRawStr;
    arg.v_c_str = name.c_str();
    PFAny text = NoneAny();
    CallGlobal("ffi.GetGlobalFuncMetadata", &arg, 1, &text);
    try {
      ToPF(text, result, "tvm-ffi's metadata of a global function");
    } catch (...) {
      ReleaseTVM(&text);
      throw;
    }
    ReleaseTVM(&text);
    return 0;
  });
}

/*! The JSON object {"<name>": "<metadata JSON>", ...} of `count` records (fields or methods). */
template <class Info>
std::string Records(const Info* items, int32_t count) {
  std::string out = "{";
  for (int32_t i = 0; i < count; ++i) {
    if (i != 0) out += ',';
    out += JsonString(View(items[i].name)) + ":" + JsonString(View(items[i].metadata));
  }
  return out + "}";
}

/*! (type_index: int) -> str | None: for a packedfun type that mirrors a tvm-ffi type, the
 *  metadata JSON tvm-ffi keeps for each of that type's own fields and methods, as the JSON text
 *  {"fields": {"<name>": "<metadata JSON or empty>", ...}, "methods": {...}}; None for any other
 *  type (packedfun's own types carry no such record). */
int TypeMetadataCall(void*, const PFAny* args, int32_t n, PFAny* result) {
  return Guard([&] {
    if (n != 1 || args[0].type_index != kPFTypeInt) {
      Throw("TypeError", "packedfun.tvm_ffi_type_metadata: expected (type_index: int)");
    }
    *result = NoneAny();
    if (!ApiReady()) return 0;  // no tvm-ffi type was ever mirrored
    int64_t pf_index = args[0].v_int64;
    if (pf_index < 0 || pf_index > INT32_MAX) return 0;
    int32_t tvm_index = MirroredTVMIndex(static_cast<int32_t>(pf_index));
    const TypeInfo* info = tvm_index < 0 ? nullptr : GetApi().GetTypeInfo(tvm_index);
    if (info == nullptr) return 0;
    std::string out = "{\"fields\":" + Records(info->fields, info->num_fields);
    out += ",\"methods\":" + Records(info->methods, info->num_methods) + "}";
    *result = MakeStringAny(out);
    return 0;
  });
}

const int kRegistered = [] {
  RegisterBuiltin("packedfun.tvm_ffi_global_metadata", &GlobalMetadataCall);
  RegisterBuiltin("packedfun.tvm_ffi_type_metadata", &TypeMetadataCall);
  return 0;
}();

}  // namespace
}  // namespace tvmffi
}  // namespace detail
}  // namespace packedfun
