// Typed echo functions over containers, so property tests can drive each converter.
#include <packedfun/packedfun.h>

#include <optional>

namespace packedfun {
namespace testing {

// Each returns its argument: what arrives is exactly what the typed conversion produced.
PACKEDFUN_REGISTER_GLOBAL("testing.echo_array_int").set_body_typed([](Array<int64_t> x) {
  return x;
});
PACKEDFUN_REGISTER_GLOBAL("testing.echo_array_array_float")
    .set_body_typed([](Array<Array<double>> x) { return x; });
PACKEDFUN_REGISTER_GLOBAL("testing.echo_map_str_int").set_body_typed([](Map<String, int64_t> x) {
  return x;
});
PACKEDFUN_REGISTER_GLOBAL("testing.echo_list_str").set_body_typed([](List<String> x) { return x; });
PACKEDFUN_REGISTER_GLOBAL("testing.echo_map_str_array_int")
    .set_body_typed([](Map<String, Array<int64_t>> x) { return x; });

}  // namespace testing
}  // namespace packedfun
