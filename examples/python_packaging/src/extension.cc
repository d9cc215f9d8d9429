// The C++ side of my_ffi_extension: global functions and a reflected object, built into
// libmy_ffi_extension.so by CMake (packedfun_add_extension) and loaded by the package's __init__.
#include <packedfun/packedfun.h>

#include <cstdint>
#include <string>

namespace my_ffi_extension {
namespace {
using namespace ::packedfun::literals;  // NOLINT(build/namespaces): "b"_a in argument lists

int64_t AddOne(int64_t x) { return x + 1; }

std::string Greet(const std::string& name, int64_t times) {
  std::string out;
  for (int64_t i = 0; i < times; ++i) out += "Hello, " + name + "! ";
  if (!out.empty()) out.pop_back();
  return out;
}

/*! Raises a ValueError from a named function: the traceback points at this file and line. */
__attribute__((noinline)) int64_t RaiseError(const std::string& message) {
  PACKEDFUN_THROW(ValueError) << message;
}

/*! A reflected object: fields, a method and a constructor, all visible from Python. */
class IntPairObj : public packedfun::Object {
 public:
  int64_t a;
  int64_t b;
  IntPairObj(int64_t a, int64_t b) : a(a), b(b) {}
  int64_t Sum() const { return a + b; }
  PACKEDFUN_DECLARE_OBJECT_INFO_FINAL("my_ffi_extension.IntPair", IntPairObj, packedfun::Object);
};

PACKEDFUN_STATIC_INIT_BLOCK() {
  packedfun::GlobalDef()
      .def("my_ffi_extension.add_one", AddOne, "x + 1", {"x"})
      .def("my_ffi_extension.greet", Greet, "'Hello, <name>!' repeated", {"name", "times"_a = 1})
      .def("my_ffi_extension.raise_error", RaiseError, "raises ValueError(message)", {"message"});
  packedfun::reflection::ObjectDef<IntPairObj>("A pair of integers.")
      .def(packedfun::reflection::init<int64_t, int64_t>(), {"a", "b"_a = 0}, "IntPair(a, b=0)")
      .def_ro("a", &IntPairObj::a, "the first integer")
      .def_ro("b", &IntPairObj::b, "the second integer")
      .def("sum", &IntPairObj::Sum, "a + b");
}

}  // namespace
}  // namespace my_ffi_extension
