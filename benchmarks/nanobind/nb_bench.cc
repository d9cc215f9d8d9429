// The nanobind peer: the shared benchmark bodies bound with nanobind's typed signatures.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <string>
#include <string_view>
#include <unordered_map>

extern "C" {
#include "../native/bodies.h"
}

namespace nb = nanobind;

namespace {

// Looked up by the std::string_view nanobind hands the body (nanobind's documented form for a
// borrowed string argument), without making a std::string per call: packedfun's body borrows the
// name the same way (PackedArgs::str_view). Heterogeneous lookup needs C++20 (CMakeLists.txt).
struct NameHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
using NameTable = std::unordered_map<std::string, nb::object, NameHash, std::equal_to<>>;

// Leaked on purpose: Python objects must not be released after the interpreter is gone.
NameTable& Registry() {
  static auto* registry = new NameTable();
  return *registry;
}

}  // namespace

NB_MODULE(pf_bench_nb, m) {
  m.def("nop", [] { bench_nop(); });
  m.def("add_int", [](int64_t a, int64_t b) { return bench_add_int(a, b); });
  // The keyword rows (cases_kwargs.py): names and a default, as nanobind declares them.
  m.def(
      "add_kw", [](int64_t a, int64_t b) { return bench_add_int(a, b); }, nb::arg("a"),
      nb::arg("b") = 2);
  m.def("add3_int", [](int64_t a, int64_t b, int64_t c) { return bench_add3_int(a, b, c); });
  m.def("echo_float", [](double x) { return bench_echo_float(x); });
  m.def("str_len", [](std::string_view s) { return bench_str_len(s.data(), s.size()); });
  m.def("apply", [](nb::callable f) { return f(); });
  m.def("register_global", [](std::string name, nb::object f) { Registry()[name] = f; });
  m.def("call_global", [](std::string_view name) {
    auto it = Registry().find(name);
    if (it == Registry().end()) throw nb::key_error(std::string(name).c_str());
    return it->second();
  });
  m.def("raise_error", [](std::string_view kind, std::string_view message) {
    (void)kind;
    throw nb::value_error(std::string(message).c_str());
  });
}
