// Apache TVM FFI bridge: each field's flags and default as tvm-ffi's reflection keeps them (init,
// keyword-only, default value or factory, ...), for the switch's constructors and dataclass fields.
#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/error.h"
#include "runtime/object.h"
#include "runtime/registry.h"
#include "runtime/seq.h"
#include "runtime/string.h"
#include "tvm_ffi/bridge.h"

namespace packedfun {
namespace detail {
namespace tvmffi {
namespace {

/*! The global "packedfun.tvm_ffi_field_flags": type index -> None when the type mirrors no tvm-ffi
 *  type, else one [name, flags, default] per field the type itself declares (not its ancestors'),
 *  in declaration order: flags is tvm-ffi's TVMFFIFieldFlagBitMask, default the value or factory
 *  Function when flags has HasDefault (None otherwise). */
int FieldFlagsCall(void*, const PFAny* args, int32_t n, PFAny* result) {
  if (n != 1 || args[0].type_index != kPFTypeInt) {
    return RaiseError("TypeError", "packedfun.tvm_ffi_field_flags: expected one int");
  }
  return Guard([&] {
    *result = NoneAny();
    int64_t pf_index = args[0].v_int64;
    if (!ApiReady() || pf_index < 0 || pf_index > INT32_MAX) return 0;
    int32_t tvm_index = MirroredTVMIndex(static_cast<int32_t>(pf_index));
    const TypeInfo* info = tvm_index < 0 ? nullptr : GetApi().GetTypeInfo(tvm_index);
    if (info == nullptr) return 0;
    PFSeqObject* out = NewSeq(kPFTypeArray, info->num_fields);
    *result = ObjectAny(&out->header);
    for (int32_t i = 0; i < info->num_fields; ++i) {
      const FieldInfo& f = info->fields[i];
      PFSeqObject* rec = NewSeq(kPFTypeArray, 3);
      SeqPush(out, ObjectAny(&rec->header));
      SeqPush(rec, MakeStringAny(std::string_view(f.name.data, f.name.size)));
      SeqPush(rec, PFAny{kPFTypeInt, 0, {f.flags}});
      PFAny value = NoneAny();
      if (f.flags & kFieldHasDefault) ToPF(f.default_value_or_factory, &value, "field default");
      SeqPush(rec, value);
    }
    return 0;
  });
}

[[maybe_unused]] const bool kRegistered =
    (RegisterBuiltin("packedfun.tvm_ffi_field_flags", &FieldFlagsCall), true);

}  // namespace
}  // namespace tvmffi
}  // namespace detail
}  // namespace packedfun
