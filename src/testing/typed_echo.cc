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

// Element values stored otherwise than the element type stores them (an int in an Array<double>):
// Array and Map come back as converted copies, List and Dict as the caller's own object.
PACKEDFUN_REGISTER_GLOBAL("testing.echo_array_float").set_body_typed([](Array<double> x) {
  return x;
});
PACKEDFUN_REGISTER_GLOBAL("testing.echo_array_float32").set_body_typed([](Array<float> x) {
  return x;
});
PACKEDFUN_REGISTER_GLOBAL("testing.echo_array_bool").set_body_typed([](Array<bool> x) {
  return x;
});
PACKEDFUN_REGISTER_GLOBAL("testing.echo_array_optional_float")
    .set_body_typed([](Array<std::optional<double>> x) { return x; });
PACKEDFUN_REGISTER_GLOBAL("testing.echo_map_str_float").set_body_typed([](Map<String, double> x) {
  return x;
});
PACKEDFUN_REGISTER_GLOBAL("testing.echo_map_float_str").set_body_typed([](Map<double, String> x) {
  return x;
});
PACKEDFUN_REGISTER_GLOBAL("testing.echo_list_float").set_body_typed([](List<double> x) {
  return x;
});
PACKEDFUN_REGISTER_GLOBAL("testing.echo_array_list_float")
    .set_body_typed([](Array<List<double>> x) { return x; });
PACKEDFUN_REGISTER_GLOBAL("testing.echo_map_str_array_float")
    .set_body_typed([](Map<String, Array<double>> x) { return x; });
// Re-typing an Array<Any> as Array<double> in C++ (the explicit constructor).
PACKEDFUN_REGISTER_GLOBAL("testing.retype_array_float").set_body_typed([](Array<Any> x) {
  return Array<double>(x);
});

}  // namespace testing
}  // namespace packedfun
