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

TEST(Structural, FirstMismatchGivesAnAccessPathPerSide) {
  using packedfun::AccessPath;
  Array<int64_t> a(std::vector<int64_t>{1, 2});
  Array<int64_t> b(std::vector<int64_t>{1, 2, 3});
  auto paths = packedfun::StructuralFirstMismatch(a, b);
  ASSERT_TRUE(paths.has_value());
  EXPECT_EQ(paths->first.ToString(), "root[<missing:2>]");  // the left side lacks item 2
  EXPECT_EQ(paths->second.ToString(), "root[2]");
  EXPECT_EQ(paths->first, AccessPath().ArrayItem(2, /*missing=*/true));
  EXPECT_NE(paths->first, paths->second);
  EXPECT_FALSE(packedfun::StructuralFirstMismatch(a, a).has_value());

  Map<String, Any> m1{{"k", Array<int64_t>(std::vector<int64_t>{1})}};
  Map<String, Any> m2{{"k", Array<int64_t>(std::vector<int64_t>{2})}};
  auto deep = packedfun::StructuralFirstMismatch(m1, m2);
  ASSERT_TRUE(deep.has_value());
  EXPECT_EQ(deep->first.ToString(), "root[\"k\"][0]");
  EXPECT_EQ(deep->first, deep->second);
  AccessPath parent = AccessPath().MapItem(Any(String("k")));
  EXPECT_TRUE(parent.IsPrefixOf(deep->first) && !deep->first.IsPrefixOf(parent));
  EXPECT_EQ(AccessPath().Attr("body").Attr("x", true).ToString(), "root.body.<missing:x>");
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
