// nanobind peer of the tensor benchmark: a function reading ndim of an nb::ndarray argument.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

namespace nb = nanobind;

NB_MODULE(pf_bench_nb_tensor, m) {
  m.def("ndim", [](nb::ndarray<> x) { return static_cast<int64_t>(x.ndim()); });
}
