// "testing.*" functions declared with parameter names and defaults (keyword calls, signatures).
#include <packedfun/packedfun.h>

#include <cstdint>
#include <string>

namespace packedfun {
namespace testing {
namespace {
using namespace ::packedfun::literals;  // NOLINT(build/namespaces): "b"_a in argument lists

int64_t AddKw(int64_t a, int64_t b) { return a + b; }

String Greet(String name, String greeting, int64_t times, double scale, bool loud) {
  std::string out;
  for (int64_t i = 0; i < times; ++i) out += greeting.str() + " " + name.str() + "!";
  if (loud) out += " (" + std::to_string(scale) + ")";
  return String(out);
}

Array<int64_t> Head(Array<int64_t> xs, std::optional<int64_t> n) {
  if (!n) return xs;
  std::vector<int64_t> out;
  for (int64_t i = 0; i < *n && i < static_cast<int64_t>(xs.size()); ++i) out.push_back(xs[i]);
  return Array<int64_t>(out.begin(), out.end());
}

uint64_t EchoUint64(uint64_t x) { return x; }
uint64_t MaskUint64(uint64_t x, uint64_t mask) { return x & mask; }
uint64_t MaxUint64(Array<uint64_t> xs) {
  uint64_t out = 0;
  for (uint64_t x : xs) out = x > out ? x : out;
  return out;
}

}  // namespace

PACKEDFUN_REGISTER_GLOBAL("testing.add_kw")
    .set_body_typed(AddKw, {"a", "b"_a = 2})
    .gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.greet")
    .set_body_typed(Greet, {"name", "greeting"_a = "hello", "times"_a = 1, "scale"_a = 0.5,
                            "loud"_a = false})
    .describe("greet(name, greeting='hello', times=1, scale=0.5, loud=False): a greeting.");
PACKEDFUN_REGISTER_GLOBAL("testing.head").set_body_typed(Head, {"xs", "n"_a = nullptr});
PACKEDFUN_REGISTER_GLOBAL("testing.packed_kw")
    .set_body_packed([](PackedArgs args, Any* rv) { *rv = args[0]; }, {"x", "y"_a = 7});
PACKEDFUN_REGISTER_GLOBAL("testing.echo_uint64").set_body_typed(EchoUint64, {"x"});
PACKEDFUN_REGISTER_GLOBAL("testing.mask_uint64")
    .set_body_typed(MaskUint64, {"x", "mask"_a = UINT64_MAX});
PACKEDFUN_REGISTER_GLOBAL("testing.max_uint64").set_body_typed(MaxUint64, {"xs"});

}  // namespace testing
}  // namespace packedfun
