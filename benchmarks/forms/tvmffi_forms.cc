// apache-tvm-ffi's side of the parameter-form matrix (benchmarks/param_forms.py): the forms
// tvm-ffi has, as its documentation writes them; compiled by tvm_ffi.cpp.load_inline.
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <cstring>
#include <string>

namespace ffi = tvm::ffi;

int64_t str_size(ffi::String s) { return static_cast<int64_t>(s.size()); }
int64_t str_cref_size(const ffi::String& s) { return static_cast<int64_t>(s.size()); }
int64_t str_cstr(ffi::String s) { return static_cast<int64_t>(std::strlen(s.c_str())); }
int64_t str_copy(const ffi::String& s) { return static_cast<int64_t>(std::string(s).size()); }
int64_t std_str_size(std::string s) { return static_cast<int64_t>(s.size()); }
int64_t std_str_cref_cstr(const std::string& s) {
  return static_cast<int64_t>(std::strlen(s.c_str()));
}
int64_t fn0(ffi::Function f) { return f().cast<int64_t>(); }
int64_t fn1(ffi::Function f, int64_t x) { return f(x).cast<int64_t>(); }
int64_t fn3(ffi::Function f, int64_t x) { return f(x, x, x).cast<int64_t>(); }
int64_t fn1_cref(const ffi::Function& f, int64_t x) { return f(x).cast<int64_t>(); }
int64_t typed1(ffi::TypedFunction<int64_t(int64_t)> f, int64_t x) { return f(x); }
int64_t typed3(ffi::TypedFunction<int64_t(int64_t, int64_t, int64_t)> f, int64_t x) {
  return f(x, x, x);
}
int64_t tview(ffi::TensorView t) { return t.size(0) + (t.data_ptr() != nullptr); }
int64_t tensor(ffi::Tensor t) { return t.size(0) + (t.data_ptr() != nullptr); }
int64_t tensor_cref(const ffi::Tensor& t) { return t.size(0) + (t.data_ptr() != nullptr); }
int64_t arr_sum(ffi::Array<int64_t> v) {
  int64_t s = 0;
  for (int64_t x : v) s += x;
  return s;
}
int64_t raise_value_error(int64_t x) {
  if (x >= 0) TVM_FFI_THROW(ValueError) << "benchmark error";
  return x;
}
int64_t call_raiser(ffi::Function f) { return f().cast<int64_t>(); }
