// A testing enum exposed to Python as an IntEnum: testing.Color and functions over it.
#include <packedfun/packedfun.h>

#include <cstdint>

namespace packedfun {
namespace testing {

enum class Color : int32_t { kRed = 0, kGreen = 1, kBlue = 7 };

}  // namespace testing
}  // namespace packedfun

PACKEDFUN_ENUM_NAME(packedfun::testing::Color, "testing.Color");

namespace packedfun {
namespace testing {

PACKEDFUN_STATIC_INIT_BLOCK() {
  reflection::EnumDef<Color>()
      .value("red", Color::kRed)
      .value("green", Color::kGreen)
      .value("blue", Color::kBlue);
  GlobalDef()
      .def(
          "testing.color_echo", [](Color c) { return c; }, "returns its Color argument")
      .def(
          "testing.color_next",
          [](Color c) { return c == Color::kRed ? Color::kGreen : Color::kBlue; },
          "the Color after c (red -> green, else blue)")
      .def(
          "testing.color_value", [](Color c) { return static_cast<int64_t>(c); },
          "the integer value of c")
      .def(
          "testing.color_raw", [](int64_t v) { return static_cast<Color>(v); },
          "casts v to Color without checking (an unnamed value comes back as an int)");
}

}  // namespace testing
}  // namespace packedfun
