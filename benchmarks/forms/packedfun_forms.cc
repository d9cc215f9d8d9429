// packedfun's side of the parameter-form matrix (benchmarks/param_forms.py): each form as a
// packedfun user writes it, registered as a global and exported for load_inline alike.
#include <packedfun/packedfun.h>
#include <packedfun/stl.h>

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace pf = packedfun;

class PairObj : public pf::Object {
 public:
  int64_t a = 0, b = 0;
  PairObj(int64_t a, int64_t b) : a(a), b(b) {}
  PACKEDFUN_DECLARE_OBJECT_INFO_FINAL("bench_forms.Pair", PairObj, pf::Object);
};
class Pair : public pf::ObjectRef {
 public:
  PACKEDFUN_DEFINE_OBJECT_REF_METHODS(Pair, pf::ObjectRef, PairObj);
};

// Strings: read the size, read the bytes as a C string, copy.
int64_t str_size(pf::String s) { return static_cast<int64_t>(s.size()); }
int64_t str_cref_size(const pf::String& s) { return static_cast<int64_t>(s.size()); }
int64_t str_cstr(pf::String s) { return static_cast<int64_t>(std::strlen(s.c_str())); }
int64_t str_copy(const pf::String& s) { return static_cast<int64_t>(std::string(s).size()); }
int64_t std_str_size(std::string s) { return static_cast<int64_t>(s.size()); }
int64_t std_str_cref_cstr(const std::string& s) { return static_cast<int64_t>(std::strlen(s.c_str())); }
int64_t sv_size(std::string_view s) { return static_cast<int64_t>(s.size()); }
// (`const char*` is not a parameter type packedfun receives: `String` gives the same NUL-terminated
// bytes without a copy.)

// Callables: called with 0, 1 and 3 arguments.
int64_t fn0(pf::Function f) { return f().cast<int64_t>(); }
int64_t fn1(pf::Function f, int64_t x) { return f(x).cast<int64_t>(); }
int64_t fn3(pf::Function f, int64_t x) { return f(x, x, x).cast<int64_t>(); }
int64_t fn1_cref(const pf::Function& f, int64_t x) { return f(x).cast<int64_t>(); }
int64_t view0(pf::FunctionView f) { return f().cast<int64_t>(); }
int64_t view1(pf::FunctionView f, int64_t x) { return f(x).cast<int64_t>(); }
int64_t view3(pf::FunctionView f, int64_t x) { return f(x, x, x).cast<int64_t>(); }
int64_t typed1(pf::TypedFunction<int64_t(int64_t)> f, int64_t x) { return f(x); }
int64_t typed3(pf::TypedFunction<int64_t(int64_t, int64_t, int64_t)> f, int64_t x) {
  return f(x, x, x);
}

// Tensors: read the first extent and the data pointer.
int64_t tview(pf::TensorView t) { return t.size(0) + (t.data_ptr() != nullptr); }
int64_t tensor(pf::Tensor t) { return t.size(0) + (t.data_ptr() != nullptr); }
int64_t tensor_cref(const pf::Tensor& t) { return t.size(0) + (t.data_ptr() != nullptr); }

// Objects: read a field.
int64_t obj(Pair p) { return p->a; }
int64_t obj_cref(const Pair& p) { return p->a; }
Pair make_pair(int64_t a, int64_t b) { return Pair(pf::make_object<PairObj>(a, b)); }

// Containers: sum the elements.
int64_t arr_sum(pf::Array<int64_t> v) {
  int64_t s = 0;
  for (int64_t x : v) s += x;
  return s;
}
int64_t vec_sum(const std::vector<int64_t>& v) {
  int64_t s = 0;
  for (int64_t x : v) s += x;
  return s;
}

// Errors: a C++ exception of a registered kind.
int64_t raise_value_error(int64_t x) {
  if (x >= 0) throw pf::Error("ValueError", "benchmark error");
  return x;
}
// A Python callable that raises, called from C++: the error reaches the outer Python caller.
int64_t call_raiser(pf::Function f) { return f().cast<int64_t>(); }

#define BENCH_FORMS(X)                                                                       \
  X(str_size) X(str_cref_size) X(str_cstr) X(str_copy) X(std_str_size) X(std_str_cref_cstr) \
  X(sv_size) X(fn0) X(fn1) X(fn3) X(fn1_cref) X(view0) X(view1) X(view3)    \
  X(typed1) X(typed3) X(tview) X(tensor) X(tensor_cref) X(obj) X(obj_cref) X(make_pair)     \
  X(arr_sum) X(vec_sum) X(raise_value_error) X(call_raiser)

// The same bodies as globals, declared GIL-`hold` as nanobind's are (docs/threads.md).
#define BENCH_GLOBAL(name) \
  PACKEDFUN_REGISTER_GLOBAL("bench_forms." #name).set_body_typed(name).gil(pf::GILPolicy::kHold);
BENCH_FORMS(BENCH_GLOBAL)
