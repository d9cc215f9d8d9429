// Tests of StructuralEqual / StructuralHash / StructuralFirstDifference from C++.
#include <gtest/gtest.h>
#include <packedfun/packedfun.h>
#include <packedfun/structural.h>

#include <cstdint>
#include <vector>

namespace {

using packedfun::Any;
using packedfun::Array;
using packedfun::List;
using packedfun::Map;
using packedfun::String;

TEST(Structural, ArraysByContent) {
  Array<int64_t> a(std::vector<int64_t>{1, 2});
  Array<int64_t> b(std::vector<int64_t>{1, 2});
  Array<int64_t> c(std::vector<int64_t>{1, 3});
  EXPECT_TRUE(packedfun::StructuralEqual(a, b));
  EXPECT_EQ(packedfun::StructuralHash(a), packedfun::StructuralHash(b));
  EXPECT_FALSE(packedfun::StructuralEqual(a, c));
  EXPECT_EQ(packedfun::StructuralFirstDifference(a, c).value(), "root[1]");
  EXPECT_FALSE(packedfun::StructuralFirstDifference(a, b).has_value());
}

TEST(Structural, DeepNestingIsIterative) {
  Any a = Array<Any>(std::vector<Any>{});
  Any b = Array<Any>(std::vector<Any>{});
  for (int i = 0; i < 20000; ++i) {  // the walks are iterative; destruction is not (ASan runs)
    a = Array<Any>(std::vector<Any>{a});
    b = Array<Any>(std::vector<Any>{b});
  }
  EXPECT_EQ(packedfun::StructuralHash(a), packedfun::StructuralHash(b));
  EXPECT_TRUE(packedfun::StructuralEqual(a, b));
}

TEST(Structural, LeavesKeepTheirKind) {
  EXPECT_FALSE(packedfun::StructuralEqual(Any(int64_t{1}), Any(true)));
  EXPECT_FALSE(packedfun::StructuralEqual(Any(int64_t{1}), Any(1.0)));
  EXPECT_TRUE(
      packedfun::StructuralEqual(Any(String("a longer string")), Any(String("a longer string"))));
}

}  // namespace
