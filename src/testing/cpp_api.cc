// The "testing.cppapi_*" functions and the testing.CppApiPair type: the C++ conveniences
// (init<>, ObjectPtr in signatures, Optional, GlobalDef, PACKEDFUN_CHECK_KIND, tensor
// accessors, dtype/device printing) as Python sees them.
#include <packedfun/packedfun.h>

#include <sstream>
#include <string>

namespace packedfun {
namespace testing {
namespace {
using namespace ::packedfun::literals;  // NOLINT(build/namespaces): "b"_a in argument lists

class CppApiPairObj : public Object {
 public:
  int64_t a;
  int64_t b;
  Optional<int64_t> tag;  // None until set
  CppApiPairObj(int64_t a, int64_t b) : a(a), b(b) {}
  /*! A new pair with the two swapped: an ObjectPtr result of a reflected method. */
  ObjectPtr<CppApiPairObj> Swapped() const { return make_object<CppApiPairObj>(b, a); }
  PACKEDFUN_DECLARE_OBJECT_INFO_FINAL("testing.CppApiPair", CppApiPairObj, Object);
};

PACKEDFUN_STATIC_INIT_BLOCK() {
  reflection::ObjectDef<CppApiPairObj>("A pair built from its C++ constructor.")
      .def(reflection::init<int64_t, int64_t>(), {"a", "b"_a = 10}, "CppApiPair(a, b=10)")
      .def_ro("a", &CppApiPairObj::a)
      .def_ro("b", &CppApiPairObj::b)
      .def_rw("tag", &CppApiPairObj::tag, "an optional int")
      .def("swapped", &CppApiPairObj::Swapped, "the pair (b, a)")
      // An ObjectPtr receiver and parameter in a method taking the receiver first.
      .def("plus", [](ObjectPtr<CppApiPairObj> self, ObjectPtr<CppApiPairObj> other) {
        return make_object<CppApiPairObj>(self->a + other->a, self->b + other->b);
      });
}

/*! "dtype=float32 device=cpu:0 ndim=2 shape=[2, 3] strides=[3, 1] numel=6 size(-1)=3". */
std::string TensorInfo(TensorView x) {
  std::ostringstream out;
  out << "dtype=" << x.dtype() << " device=" << x.device() << " ndim=" << x.ndim() << " shape=[";
  for (int64_t i = 0; i < x.ndim(); ++i) out << (i ? ", " : "") << x.shape()[i];
  out << "] strides=[";
  std::vector<int64_t> strides = x.strides();
  for (size_t i = 0; i < strides.size(); ++i) out << (i ? ", " : "") << strides[i];
  out << "] numel=" << x.numel();
  if (x.ndim() > 0) out << " size(-1)=" << x.size(-1) << " stride(-1)=" << x.stride(-1);
  return out.str();
}

int64_t TensorSize(TensorView x, int64_t axis) { return x.size(axis); }

/*! Raises a ValueError through PACKEDFUN_CHECK_KIND when n is negative. */
int64_t CheckedSqrtFloor(int64_t n) {
  PACKEDFUN_CHECK_KIND(n >= 0, ValueError) << "n must be non-negative, got " << n;
  int64_t r = 0;
  while ((r + 1) * (r + 1) <= n) ++r;
  return r;
}

/*! The Optional round trip: None -> -1, x -> x + 1; and back: negative -> None. */
int64_t OptionalIn(Optional<int64_t> x) { return x ? *x + 1 : -1; }
Optional<int64_t> OptionalOut(int64_t x) {
  if (x < 0) return std::nullopt;
  return x;
}
/*! Counts the empty entries of an Array of Optional. */
int64_t CountNone(Array<Optional<int64_t>> xs) {
  int64_t n = 0;
  for (Optional<int64_t> x : xs) n += x.has_value() ? 0 : 1;
  return n;
}

PACKEDFUN_STATIC_INIT_BLOCK() {
  GlobalDef()
      .def("testing.cppapi_add", [](int64_t a, int64_t b) { return a + b; }, "a + b",
           {"a", "b"_a = 1})
      .def("testing.cppapi_tensor_info", TensorInfo, "describes a tensor through its accessors")
      .def("testing.cppapi_tensor_size", TensorSize, {"x", "axis"})
      .def("testing.cppapi_check_sqrt", CheckedSqrtFloor, "floor(sqrt(n)); ValueError when n < 0")
      .def("testing.cppapi_optional_in", OptionalIn, {"x"_a = nullptr})
      .def("testing.cppapi_optional_out", OptionalOut)
      .def("testing.cppapi_count_none", CountNone)
      .def(
          "testing.cppapi_make_pair",
          [](int64_t a, int64_t b) { return make_object<CppApiPairObj>(a, b); },
          "an ObjectPtr result")
      .def("testing.cppapi_pair_sum", [](ObjectPtr<CppApiPairObj> p) { return p->a + p->b; })
      .def_packed(
          "testing.cppapi_count_args", [](PackedArgs args, Any* rv) { *rv = args.size(); },
          "the number of arguments");
}

}  // namespace
}  // namespace testing
}  // namespace packedfun
