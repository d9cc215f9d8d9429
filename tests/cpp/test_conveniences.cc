// Tests of the C++ conveniences of issue 16: tensor accessors, dtype/device printing, Optional,
// PACKEDFUN_CHECK_KIND and GlobalDef blocks.
#include <gtest/gtest.h>
#include "catch_error.h"
#include <packedfun/packedfun.h>

#include <sstream>
#include <string>
#include <vector>

namespace {

namespace pf = packedfun;
using namespace pf::literals;  // NOLINT(build/namespaces)
using pf::Any;
using pf::Function;
using pf::Optional;
using pf::Tensor;
using pf::TensorView;

// ---- tensor accessors ---------------------------------------------------------------------------

TEST(TensorAccessors, TensorAndViewAgree) {
  Tensor t = Tensor::Empty({2, 3, 4}, pf::kFloat32);
  TensorView v = t;
  EXPECT_EQ(t.ndim(), 3);
  EXPECT_EQ(v.ndim(), 3);
  EXPECT_EQ(t.size(0), 2);
  EXPECT_EQ(t.size(-1), 4);
  EXPECT_EQ(v.size(-3), 2);
  EXPECT_EQ(t.stride(0), 12);
  EXPECT_EQ(v.stride(-1), 1);
  EXPECT_EQ(v.shape().size(), 3);
  EXPECT_EQ(v.shape()[-1], 4);
  EXPECT_EQ(t.shape().to_vector(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(t.strides(), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(t.dtype(), pf::kFloat32);
  EXPECT_EQ(v.device(), pf::CPUDevice());
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(v.data_ptr(), t->data);
  EXPECT_EQ(v.data_ptr<float>(), static_cast<float*>(t->data));
  int64_t product = 1;
  for (int64_t d : t.shape()) product *= d;
  EXPECT_EQ(product, 24);
}

TEST(TensorAccessors, AxisOutOfRangeIsIndexError) {
  Tensor t = Tensor::Empty({2, 3}, pf::kInt32);
  for (int64_t axis : {2, -3, 100}) {
    pf::Error e = Catch([&] { t.size(axis); });
    EXPECT_EQ(e.kind(), "IndexError");
    EXPECT_NE(e.message().find("axis " + std::to_string(axis)), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("2 dimensions"), std::string::npos) << e.what();
    EXPECT_EQ(Catch([&] { t.view().stride(axis); }).kind(), "IndexError");
  }
  EXPECT_EQ(Catch([&] { t.shape()[2]; }).kind(), "IndexError");
  Tensor scalar = Tensor::Empty({}, pf::kInt32);
  EXPECT_EQ(scalar.ndim(), 0);
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(Catch([&] { scalar.size(0); }).kind(), "IndexError");
}

TEST(TensorAccessors, LegacyNullStridesAreCompact) {
  float data[6] = {0};
  int64_t shape[2] = {2, 3};
  DLTensor raw{};
  raw.data = data;
  raw.device = pf::CPUDevice();
  raw.ndim = 2;
  raw.dtype = pf::kFloat32;
  raw.shape = shape;
  raw.strides = nullptr;
  raw.byte_offset = 4;
  TensorView v(&raw);
  EXPECT_EQ(v.stride(0), 3);
  EXPECT_EQ(v.stride(-1), 1);
  EXPECT_EQ(v.strides(), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(v.data_ptr(), static_cast<void*>(data + 1));  // byte offset applied
}

// ---- dtype and device printing ------------------------------------------------------------------

TEST(DataTypePrinting, StreamsAndStrings) {
  std::ostringstream out;
  out << pf::kFloat32 << " " << pf::DataTypeFromString("int8x4") << " " << pf::CUDADevice(1) << " "
      << pf::CPUDevice();
  EXPECT_EQ(out.str(), "float32 int8x4 cuda:1 cpu:0");
  using pf::to_string;
  EXPECT_EQ(to_string(pf::kBFloat16), "bfloat16");
  EXPECT_EQ(to_string(pf::CUDADevice(2)), "cuda:2");
  std::ostringstream bad;
  bad << DLDataType{200, 7, 1};  // an undefined type code prints, never throws
  EXPECT_EQ(bad.str(), "DLDataType(code=200, bits=7, lanes=1)");
  // The same values in an error message.
  pf::Error e =
      Catch([] { PACKEDFUN_THROW(TypeError) << pf::kInt64 << " on " << pf::CPUDevice(); });
  EXPECT_EQ(e.message(), "int64 on cpu:0");
}

// ---- Optional -----------------------------------------------------------------------------------

TEST(Optional, NoneIsEmptyInSignaturesAndContainers) {
  Function f = Function::FromTyped([](Optional<int64_t> x) { return x.value_or(-1); }, "t.opt");
  EXPECT_EQ(f(nullptr).cast<int64_t>(), -1);
  EXPECT_EQ(f(5).cast<int64_t>(), 5);
  pf::Error e = Catch([&] { f("x"); });
  EXPECT_EQ(e.kind(), "TypeError");
  EXPECT_EQ(e.message(), "t.opt: argument 0: expected Optional[int], got str");
  Function back = Function::FromTyped(
      [](int64_t x) { return x < 0 ? Optional<pf::String>() : Optional<pf::String>("yes"); },
      "t.back");
  EXPECT_EQ(back(-1).type_index(), kPFTypeNone);
  EXPECT_EQ(back(1).cast<std::string>(), "yes");
  pf::Array<Optional<int64_t>> xs = {1, std::nullopt, 3};
  Any held = xs;
  auto read = held.cast<pf::Array<Optional<int64_t>>>();
  EXPECT_FALSE(read[1].has_value());
  EXPECT_EQ(*read[2], 3);
  EXPECT_EQ(Catch([&] { Any(pf::Array<Any>{1, "x"}).cast<pf::Array<Optional<int64_t>>>(); }).kind(),
            "TypeError");
}

// ---- PACKEDFUN_CHECK_KIND -----------------------------------------------------------------------

TEST(CheckKind, RaisesTheNamedKind) {
  auto check = [](int64_t n) {
    PACKEDFUN_CHECK_KIND(n >= 0, ValueError) << "n must be non-negative, got " << n;
    PACKEDFUN_CHECK_KIND(n < 10, IndexError) << "n too large";
    return n;
  };
  EXPECT_EQ(check(3), 3);
  pf::Error neg = Catch([&] { check(-2); });
  EXPECT_EQ(neg.kind(), "ValueError");
  EXPECT_EQ(neg.message(), "Check failed: (n >= 0) is false: n must be non-negative, got -2");
  EXPECT_EQ(Catch([&] { check(10); }).kind(), "IndexError");
  // Dangling-else safety: the macro is one statement.
  bool reached = false;
  if (true)
    PACKEDFUN_CHECK_KIND(true, TypeError) << "never";
  else
    reached = true;  // NOLINT(readability/braces)
  EXPECT_FALSE(reached);
}

// ---- GlobalDef ----------------------------------------------------------------------------------

int64_t Add(int64_t a, int64_t b) { return a + b; }

PACKEDFUN_STATIC_INIT_BLOCK() {
  pf::GlobalDef()
      .def("test_conveniences.add", Add, "a + b", {"a", "b"_a = 1})
      .def("test_conveniences.neg", [](int64_t x) { return -x; })
      .def("test_conveniences.sub", [](int64_t a, int64_t b) { return a - b; }, {"a"})  // bad
      .def("test_conveniences.one_name", [](int64_t x) { return x; }, {"x"})
      .def(
          "test_conveniences.hold", [](int64_t x) { return x; }, "trivial")
      .gil(pf::GILPolicy::kHold)
      .def_packed(
          "test_conveniences.count", [](pf::PackedArgs args, Any* rv) { *rv = args.size(); },
          "argument count");
}

std::string Doc(const std::string& name) {
  PFByteArray n{name.data(), name.size()};
  PFAny out{};
  EXPECT_EQ(PFFunctionGetGlobalDoc(&n, &out), 0);
  Any owner = pf::detail::AnyUnsafe::MoveFromPFAny(&out);
  return owner.type_index() == kPFTypeNone ? "<None>" : owner.cast<std::string>();
}

TEST(GlobalDef, RegistersEachWithDocAndMetadata) {
  Function add = Function::GetGlobalRequired("test_conveniences.add");
  EXPECT_EQ(add(2, 3).cast<int64_t>(), 5);
  EXPECT_EQ(Doc("test_conveniences.add"), "a + b");
  std::string meta = add.GetMetadata().value_or("");
  EXPECT_NE(meta.find("\"name\": \"b\", \"type\": \"int\", \"default\": 1"), std::string::npos)
      << meta;
  EXPECT_EQ(Function::GetGlobalRequired("test_conveniences.neg")(4).cast<int64_t>(), -4);
  EXPECT_EQ(Doc("test_conveniences.neg"), "<None>");
  // A single name is a list of names, not a docstring.
  std::string one = Function::GetGlobalRequired("test_conveniences.one_name").GetMetadata().value();
  EXPECT_NE(one.find("\"name\": \"x\""), std::string::npos) << one;
  // A list that does not fit is reported, the function still registered (without names).
  Function sub = Function::GetGlobalRequired("test_conveniences.sub");
  EXPECT_EQ(sub(5, 3).cast<int64_t>(), 2);
  EXPECT_FALSE(sub.GetMetadata().has_value());
  // .gil() applies to the function defined last only.
  int32_t policy = -1;
  Function hold = Function::GetGlobalRequired("test_conveniences.hold");
  ASSERT_EQ(PFFunctionGetGILPolicy(hold.get(), &policy), 0);
  EXPECT_EQ(policy, kPFGILHold);
  ASSERT_EQ(PFFunctionGetGILPolicy(add.get(), &policy), 0);
  EXPECT_EQ(policy, kPFGILRelease);
  Function count = Function::GetGlobalRequired("test_conveniences.count");
  EXPECT_EQ(count(1, "a", 2.5).cast<int64_t>(), 3);
  EXPECT_EQ(Doc("test_conveniences.count"), "argument count");
}

}  // namespace
