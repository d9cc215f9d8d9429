// One kernel library built for Apache TVM FFI, called through packedfun and through tvm_ffi.
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

namespace {

int64_t Add(int64_t a, int64_t b) { return a + b; }
int64_t StrLen(tvm::ffi::String s) { return static_cast<int64_t>(s.size()); }

// Seed 003's kernel: y = x + 1 on float32 vectors.
void AddOneCpu(tvm::ffi::TensorView x, tvm::ffi::TensorView y) {
  const float* xs = static_cast<const float*>(x.data_ptr());
  float* ys = static_cast<float*>(y.data_ptr());
  for (int64_t i = 0; i < x.size(0); ++i) ys[i] = xs[i] + 1.0f;
}

void Fail(int64_t code) { TVM_FFI_THROW(ValueError) << "failed with code " << code; }

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(add, Add);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(str_len, StrLen);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(add_one_cpu, AddOneCpu);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(fail, Fail);

// The same error set through the C ABI without a C++ throw or a backtrace capture, so that the
// FFI's own error path is what is timed (TVM_FFI_THROW symbolizes the stack in the kernel).
extern "C" TVM_FFI_DLL_EXPORT int __tvm_ffi_fail_fast(void*, const TVMFFIAny*, int32_t,
                                                      TVMFFIAny*) {
  TVMFFIByteArray kind{"ValueError", 10};
  TVMFFIByteArray message{"failed fast", 11};
  TVMFFIByteArray backtrace{"", 0};
  TVMFFIObjectHandle error = nullptr;
  if (TVMFFIErrorCreate(&kind, &message, &backtrace, &error) != 0) return -1;
  TVMFFIErrorSetRaised(error);
  TVMFFIObjectDecRef(error);
  return -1;
}
