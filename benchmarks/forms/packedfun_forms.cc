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
int64_t std_str_cref_cstr(const std::string& s) {
  return static_cast<int64_t>(std::strlen(s.c_str()));
}
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

// Errors: a C++ exception of a registered kind, in a named function (registered by pointer, as
// nanobind's row binds it) and in a lambda (the global below; load_inline exports the named twin).
int64_t raise_value_error(int64_t x) {
  if (x >= 0) throw pf::Error("ValueError", "benchmark error");
  return x;
}
int64_t raise_value_error_lambda(int64_t x) {
  if (x >= 0) throw pf::Error("ValueError", "benchmark error");
  return x;
}
// A Python callable that raises, called from C++: the error reaches the outer Python caller.
int64_t call_raiser(pf::Function f) { return f().cast<int64_t>(); }

// The same bodies as globals, declared GIL-`hold` as nanobind's are (docs/threads.md).
#define BENCH_GLOBAL(name) \
  PACKEDFUN_REGISTER_GLOBAL("bench_forms." #name).set_body_typed(name).gil(pf::GILPolicy::kHold)
BENCH_GLOBAL(str_size);
BENCH_GLOBAL(str_cref_size);
BENCH_GLOBAL(str_cstr);
BENCH_GLOBAL(str_copy);
BENCH_GLOBAL(std_str_size);
BENCH_GLOBAL(std_str_cref_cstr);
BENCH_GLOBAL(sv_size);
BENCH_GLOBAL(fn0);
BENCH_GLOBAL(fn1);
BENCH_GLOBAL(fn3);
BENCH_GLOBAL(fn1_cref);
BENCH_GLOBAL(view0);
BENCH_GLOBAL(view1);
BENCH_GLOBAL(view3);
BENCH_GLOBAL(typed1);
BENCH_GLOBAL(typed3);
BENCH_GLOBAL(tview);
BENCH_GLOBAL(tensor);
BENCH_GLOBAL(tensor_cref);
BENCH_GLOBAL(obj);
BENCH_GLOBAL(obj_cref);
BENCH_GLOBAL(make_pair);
BENCH_GLOBAL(arr_sum);
BENCH_GLOBAL(vec_sum);
BENCH_GLOBAL(raise_value_error);
PACKEDFUN_REGISTER_GLOBAL("bench_forms.raise_value_error_lambda")
    .set_body_typed([](int64_t x) -> int64_t {
      if (x >= 0) throw pf::Error("ValueError", "benchmark error");
      return x;
    })
    .gil(pf::GILPolicy::kHold);
BENCH_GLOBAL(call_raiser);
