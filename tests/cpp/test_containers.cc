// Containers in C++: Array, List, Map, Dict, Shape; element checks at the boundary; refcounts.
#include <gtest/gtest.h>
#include <packedfun/packedfun.h>

#include <functional>
#include <string>
#include <vector>

namespace pf = packedfun;

namespace {

int g_live = 0;

class CellObj : public pf::Object {
 public:
  CellObj() { ++g_live; }
  ~CellObj() { --g_live; }
  PACKEDFUN_DECLARE_OBJECT_INFO_FINAL("test_containers.Cell", CellObj, pf::Object);
};

class Cell : public pf::ObjectRef {
 public:
  static Cell New() { return Cell(pf::make_object<CellObj>()); }
  PACKEDFUN_DEFINE_OBJECT_REF_METHODS(Cell, pf::ObjectRef, CellObj);
};

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const pf::Error& e) {
    return e.kind() + ": " + e.message();
  }
  return "<no error>";
}

TEST(Containers, ArrayBasics) {
  pf::Array<int64_t> a{1, 2, 3};
  EXPECT_EQ(a.type_index(), kPFTypeArray);
  EXPECT_EQ(a.size(), 3);
  EXPECT_EQ(a[0], 1);
  EXPECT_EQ(a[-1], 3);
  int64_t total = 0;
  for (int64_t x : a) total += x;
  EXPECT_EQ(total, 6);
  EXPECT_EQ(ErrorOf([&] { a[3]; }), "IndexError: Array[int] index 3 out of range for size 3");
  EXPECT_TRUE(pf::Array<int64_t>().empty());
  pf::Array<pf::String> s{"a", "long string beyond seven bytes"};
  EXPECT_EQ(s[1], "long string beyond seven bytes");
  EXPECT_EQ(pf::Array<int64_t>::_type_name(), "Array[int]");
  EXPECT_EQ(pf::Array<>::_type_name(), "Array");
}

TEST(Containers, ElementTypesAreCheckedAtTheBoundary) {
  pf::Array<pf::Any> mixed{pf::Any(1), pf::Any(2), pf::Any(pf::String("three"))};
  pf::Any any = mixed;
  EXPECT_EQ(ErrorOf([&] { any.cast<pf::Array<int64_t>>(); }),
            "TypeError: Array[int] element [2]: expected int, got str");
  EXPECT_EQ(ErrorOf([&] { pf::Array<int64_t> x(mixed); }),
            "TypeError: Array[int] element [2]: expected int, got str");
  pf::Array<pf::Any> ints{pf::Any(1), pf::Any(2)};
  pf::Array<int64_t> typed(ints);
  EXPECT_EQ(typed[1], 2);
  // Nested: the path names every level.
  pf::Array<pf::Any> nested{pf::Any(pf::Array<int64_t>{1}), pf::Any(mixed)};
  pf::Any nested_any = nested;
  EXPECT_EQ(ErrorOf([&] { nested_any.cast<pf::Array<pf::Array<int64_t>>>(); }),
            "TypeError: Array[Array[int]] element [1][2]: expected int, got str");
}

TEST(Containers, ElementsStoredOtherwiseAreConvertedByCopy) {
  // An int in an Array<double> reads as a double; the typed Array holds the double, so handing it
  // on gives what reading it gave. Kept elements: the same object.
  pf::Array<pf::Any> ints{pf::Any(1), pf::Any(2.5)};
  pf::Array<double> doubles(ints);
  EXPECT_FALSE(doubles.same_as(ints));
  EXPECT_EQ(pf::Any(doubles).cast<pf::Array<pf::Any>>()[0].type_index(), kPFTypeFloat);
  pf::Array<double> again(doubles);
  EXPECT_TRUE(again.same_as(doubles));
  pf::Array<pf::Any> nested{pf::Any(pf::Array<double>{1.5}), pf::Any(ints)};
  auto outer = pf::Any(nested).cast<pf::Array<pf::Array<double>>>();
  EXPECT_FALSE(outer.same_as(nested));
  EXPECT_TRUE(outer[0].same_as(nested[0].cast<pf::ObjectRef>()));
  EXPECT_EQ(pf::Any(outer[1]).cast<pf::Array<pf::Any>>()[0].type_index(), kPFTypeFloat);
  using AnyMap = pf::Map<pf::String, pf::Any>;
  using DoubleMap = pf::Map<pf::String, double>;
  AnyMap m{{"a", pf::Any(1)}};
  auto typed = pf::Any(m).cast<DoubleMap>();
  EXPECT_FALSE(typed.same_as(m));
  EXPECT_EQ(pf::Any(typed).cast<AnyMap>()["a"].type_index(), kPFTypeFloat);
  // A List stays the caller's object: it is converted on each read instead.
  pf::List<pf::Any> list{pf::Any(1)};
  auto typed_list = pf::Any(list).cast<pf::List<double>>();
  EXPECT_TRUE(typed_list.same_as(list));
  EXPECT_EQ(typed_list[0], 1.0);
}

TEST(Containers, TypedFunctionReceivesCheckedArray) {
  pf::Function sum = pf::Function::FromTyped(
      [](pf::Array<int64_t> a) {
        int64_t t = 0;
        for (int64_t x : a) t += x;
        return t;
      },
      "test.sum");
  EXPECT_EQ(sum(pf::Array<int64_t>{1, 2, 3}).cast<int64_t>(), 6);
  EXPECT_EQ(ErrorOf([&] { sum(pf::Array<pf::Any>{pf::Any(1), pf::Any(2.5)}); }),
            "TypeError: test.sum: argument 0[1]: expected int, got float");
  EXPECT_EQ(ErrorOf([&] { sum(5); }),
            "TypeError: test.sum: argument 0: expected Array[int], got int");
}

TEST(Containers, ListMutation) {
  pf::List<int64_t> l;
  EXPECT_EQ(l.type_index(), kPFTypeList);
  for (int64_t i = 0; i < 10; ++i) l.push_back(i);
  EXPECT_EQ(l.size(), 10);
  l.Set(-1, 100);
  EXPECT_EQ(l[9], 100);
  l.insert(0, -1);
  EXPECT_EQ(l[0], -1);
  EXPECT_EQ(l.size(), 11);
  EXPECT_EQ(l.pop(), 100);
  EXPECT_EQ(l.pop(0), -1);
  EXPECT_EQ(l.size(), 9);
  EXPECT_EQ(ErrorOf([&] { l.Set(9, 1); }),
            "IndexError: PFListSetItem: index 9 out of range for a List of size 9");
  l.clear();
  EXPECT_TRUE(l.empty());
  EXPECT_EQ(ErrorOf([&] { l.pop(); }),
            "IndexError: PFListPop: index -1 out of range for a List of size 0");
  // A List is not an Array.
  pf::Any any = l;
  EXPECT_FALSE(any.as<pf::Array<int64_t>>().has_value());
  PFAny one;
  one.type_index = kPFTypeInt;
  one.zero_padding = 0;
  one.v_int64 = 1;
  EXPECT_NE(PFListAppend(pf::Array<int64_t>{1}.get(), &one), 0);
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);
  PFObjectDecRef(err);
}

TEST(Containers, ContainersOwnTheirElementsExactly) {
  g_live = 0;
  {
    Cell c = Cell::New();
    pf::List<Cell> l;
    l.push_back(c);
    l.push_back(c);
    EXPECT_EQ(c.use_count(), 3u);
    l.pop();
    EXPECT_EQ(c.use_count(), 2u);
    pf::Array<Cell> a{c};
    EXPECT_EQ(c.use_count(), 3u);
    pf::Dict<pf::String, Cell> d{{"k", c}};
    EXPECT_EQ(c.use_count(), 4u);
    d.Erase("k");
    EXPECT_EQ(c.use_count(), 3u);
    l.clear();
    EXPECT_EQ(c.use_count(), 2u);
    EXPECT_EQ(g_live, 1);
  }
  EXPECT_EQ(g_live, 0);
}

TEST(Containers, MapLookupAndChecks) {
  pf::Map<pf::String, int64_t> m{{"a", 1}, {"b", 2}};
  EXPECT_EQ(m.type_index(), kPFTypeMap);
  EXPECT_EQ(m.size(), 2);
  EXPECT_EQ(m["a"], 1);
  EXPECT_EQ(m.Get("zzz"), std::nullopt);
  EXPECT_TRUE(m.count("b"));
  EXPECT_EQ(ErrorOf([&] { m.at("zzz"); }), "KeyError: Map[str, int]: key ['zzz'] not found");
  auto items = m.items();
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].first, "a");
  EXPECT_EQ(items[1].second, 2);
  pf::Map<pf::String, pf::Any> loose{{"a", pf::Any(1)}, {"b", pf::Any(pf::String("x"))}};
  pf::Any any = loose;
  EXPECT_EQ(ErrorOf([&] { any.cast<pf::Map<pf::String, int64_t>>(); }),
            "TypeError: Map[str, int] element ['b']: expected int, got str");
  pf::Map<pf::Any, pf::Any> int_keys{{pf::Any(1), pf::Any(2)}};
  pf::Any any2 = int_keys;
  EXPECT_EQ(ErrorOf([&] { any2.cast<pf::Map<pf::String, int64_t>>(); }),
            "TypeError: Map[str, int] element [1] key: expected str, got int");
}

TEST(Containers, DictMutation) {
  pf::Dict<pf::String, pf::Any> d;
  EXPECT_EQ(d.type_index(), kPFTypeDict);
  d.Set("x", pf::Any(1));
  d.Set("y", pf::Any(pf::String("why")));
  d.Set("x", pf::Any(2));
  EXPECT_EQ(d.size(), 2);
  EXPECT_EQ(d["x"].cast<int64_t>(), 2);
  EXPECT_EQ(d.items()[0].first, "x");  // replacing keeps the place
  EXPECT_EQ(ErrorOf([&] { d.Erase("nope"); }), "KeyError: PFDictDelItem: key 'nope' not found");
  d.Erase("x");
  EXPECT_EQ(d.size(), 1);
  d.Clear();
  EXPECT_TRUE(d.empty());
  // The standard spellings: erase of an absent key does nothing, as std::map's.
  d.Set("a", pf::Any(1));
  d.Set("b", pf::Any(2));
  d.erase("nope");
  d.erase("a");
  EXPECT_EQ(d.size(), 1);
  EXPECT_EQ(d.count("a"), 0);
  d.clear();
  EXPECT_TRUE(d.empty());
  // A Map cannot be mutated through the Dict entry points.
  pf::Map<pf::String, int64_t> m{{"a", 1}};
  pf::Any key = pf::String("a");
  EXPECT_NE(PFDictDelItem(m.get(), &key.raw()), 0);
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);
  PFObjectDecRef(err);
}

TEST(Containers, ShapeFromShapeOrArrayOfInts) {
  pf::Shape s{2, 3, 4};
  EXPECT_EQ(s.size(), 3);
  EXPECT_EQ(s.numel(), 24);
  EXPECT_EQ(s[-1], 4);
  pf::Any arr = pf::Array<int64_t>{5, 6};
  pf::Shape from_arr = arr.cast<pf::Shape>();
  EXPECT_EQ(from_arr.type_index(), kPFTypeShape);
  EXPECT_EQ(from_arr.to_vector(), (std::vector<int64_t>{5, 6}));
  pf::Any bad = pf::Array<pf::Any>{pf::Any(1), pf::Any(pf::String("x"))};
  EXPECT_EQ(ErrorOf([&] { bad.cast<pf::Shape>(); }),
            "TypeError: Shape element [1]: expected int, got str");
  EXPECT_EQ(pf::Shape().size(), 0);
}

}  // namespace
