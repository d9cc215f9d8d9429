// packedfun's <tvm/ffi/dtype.h>: tvm-ffi's C++ names over packedfun
// (docs/migration-from-tvm-ffi.md).
#ifndef PACKEDFUN_COMPAT_TVM_FFI_DTYPE_H_
#define PACKEDFUN_COMPAT_TVM_FFI_DTYPE_H_
#include <packedfun/compat/tvm_ffi.h>

namespace tvm {
namespace ffi {
/*! tvm-ffi's names for packedfun's DataTypeFromString / DataTypeToString (the runtime parses and
 * prints; these only carry the text as a String). */
inline DLDataType StringToDLDataType(const String& str) {
  return ::packedfun::DataTypeFromString(std::string_view(str.data(), str.size()));
}
inline String DLDataTypeToString(DLDataType dtype) {
  return String(::packedfun::DataTypeToString(dtype));
}
}  // namespace ffi
}  // namespace tvm
#endif  // PACKEDFUN_COMPAT_TVM_FFI_DTYPE_H_
