// nanobind's side of the parameter-form matrix (benchmarks/param_forms.py): the natural nanobind
// equivalent of each packedfun form, as nanobind's documentation teaches it.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace nb = nanobind;

struct Pair {
  int64_t a = 0, b = 0;
};

int64_t raise_value_error(int64_t x) {
  if (x >= 0) throw nb::value_error("benchmark error");
  return x;
}

NB_MODULE(pf_bench_nb_forms, m) {
  nb::class_<Pair>(m, "Pair").def(nb::init<int64_t, int64_t>());
  // Strings: nanobind hands a borrowed view (std::string_view, const char*) or a copy.
  m.def("str_size", [](std::string_view s) { return static_cast<int64_t>(s.size()); });
  m.def("str_cstr", [](const char* s) { return static_cast<int64_t>(std::strlen(s)); });
  m.def("str_copy", [](std::string_view s) { return static_cast<int64_t>(std::string(s).size()); });
  m.def("std_str_size", [](std::string s) { return static_cast<int64_t>(s.size()); });
  m.def("std_str_cref_cstr",
        [](const std::string& s) { return static_cast<int64_t>(std::strlen(s.c_str())); });
  m.def("sv_size", [](std::string_view s) { return static_cast<int64_t>(s.size()); });
  // Callables: nb::callable (by value or const&), std::function for the typed form.
  m.def("fn0", [](nb::callable f) { return nb::cast<int64_t>(f()); });
  m.def("fn1", [](nb::callable f, int64_t x) { return nb::cast<int64_t>(f(x)); });
  m.def("fn3", [](nb::callable f, int64_t x) { return nb::cast<int64_t>(f(x, x, x)); });
  m.def("fn1_cref", [](const nb::callable& f, int64_t x) { return nb::cast<int64_t>(f(x)); });
  m.def("typed1", [](const std::function<int64_t(int64_t)>& f, int64_t x) { return f(x); });
  m.def("typed3", [](const std::function<int64_t(int64_t, int64_t, int64_t)>& f, int64_t x) {
    return f(x, x, x);
  });
  // Tensors: nb::ndarray<> (any framework through DLPack / the buffer protocol).
  m.def("tview",
        [](nb::ndarray<> t) { return static_cast<int64_t>(t.shape(0)) + (t.data() != nullptr); });
  m.def("tensor_cref", [](const nb::ndarray<>& t) {
    return static_cast<int64_t>(t.shape(0)) + (t.data() != nullptr);
  });
  // Objects: a bound class by reference.
  m.def("obj", [](const Pair& p) { return p.a; });
  m.def("make_pair", [](int64_t a, int64_t b) { return Pair{a, b}; });
  // Containers: std::vector (nanobind converts a list element by element).
  m.def("vec_sum", [](const std::vector<int64_t>& v) {
    int64_t s = 0;
    for (int64_t x : v) s += x;
    return s;
  });
  // Errors: the body as a named function bound by pointer, and as a lambda.
  m.def("raise_value_error", &raise_value_error);
  m.def("raise_value_error_lambda", [](int64_t x) -> int64_t {
    if (x >= 0) throw nb::value_error("benchmark error");
    return x;
  });
  m.def("call_raiser", [](nb::callable f) { return nb::cast<int64_t>(f()); });
}
