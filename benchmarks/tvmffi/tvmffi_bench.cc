// The apache-tvm-ffi peer: the shared benchmark bodies exported with tvm-ffi's typed-function
// macro.
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <cstdint>

extern "C" {
#include "../native/bodies.h"
}

namespace {

void Nop() { bench_nop(); }
int64_t AddInt(int64_t a, int64_t b) { return bench_add_int(a, b); }
int64_t Add3Int(int64_t a, int64_t b, int64_t c) { return bench_add3_int(a, b, c); }
double EchoFloat(double x) { return bench_echo_float(x); }
int64_t StrLen(tvm::ffi::String s) { return bench_str_len(s.data(), s.size()); }
tvm::ffi::Any Apply(tvm::ffi::Function f) { return f(); }
tvm::ffi::Any CallGlobal(tvm::ffi::String name) {
  return tvm::ffi::Function::GetGlobalRequired(name)();
}
void RaiseError(tvm::ffi::String kind, tvm::ffi::String message) {
  (void)kind;
  TVM_FFI_THROW(ValueError) << message;
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(nop, Nop);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(add_int, AddInt);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(add3_int, Add3Int);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(echo_float, EchoFloat);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(str_len, StrLen);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(apply, Apply);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(call_global, CallGlobal);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(raise_error, RaiseError);
