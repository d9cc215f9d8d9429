// nanobind peer of cases_stl.py: the same sums over std containers, through nanobind's stl casters.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unordered_map.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace nb = nanobind;

NB_MODULE(pf_bench_nb_stl, m) {
  m.def("vec_sum", [](const std::vector<int64_t>& v) {
    int64_t s = 0;
    for (int64_t x : v) s += x;
    return s;
  });
  m.def("map_sum", [](const std::map<std::string, double>& d) {
    double s = 0;
    for (const auto& kv : d) s += kv.second;
    return s;
  });
  m.def("umap_sum", [](const std::unordered_map<std::string, double>& d) {
    double s = 0;
    for (const auto& kv : d) s += kv.second;
    return s;
  });
}
