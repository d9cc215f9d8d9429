// Reflection: ObjectDef fills the C ABI's type table (fields, methods, docs); getters and setters.
#include <gtest/gtest.h>
#include <packedfun/packedfun.h>

#include <string>

namespace pf = packedfun;

namespace {

class PointObj : public pf::Object {
 public:
  int64_t x = 0;
  double y = 0;
  pf::String label;
  int32_t small = 0;
  int64_t Sum(int64_t extra) const { return x + static_cast<int64_t>(y) + extra; }
  PACKEDFUN_DECLARE_OBJECT_INFO_FINAL("test_reflection.Point", PointObj, pf::Object);
};

class Point : public pf::ObjectRef {
 public:
  Point(int64_t x, double y) {
    data_ = pf::make_object<PointObj>();
    get_mutable()->x = x;
    get_mutable()->y = y;
  }
  PACKEDFUN_DEFINE_OBJECT_REF_METHODS(Point, pf::ObjectRef, PointObj);
};

PACKEDFUN_STATIC_INIT_BLOCK() {
  pf::reflection::ObjectDef<PointObj>("A 2-d point.")
      .def_ro("x", &PointObj::x, "x coordinate")
      .def_rw("y", &PointObj::y, "y coordinate")
      .def_rw("label", &PointObj::label)
      .def_rw("small", &PointObj::small)
      .def("sum", &PointObj::Sum, "x + y + extra")
      .gil(pf::GILPolicy::kHold)
      .def("scaled", [](Point p, int64_t k) { return Point(p->x * k, p->y * k); })
      .def_static("__create__", [](int64_t x, double y) { return Point(x, y); }, "Point(x, y)");
}

const PFTypeInfo* Info() {
  const PFTypeInfo* info = nullptr;
  EXPECT_EQ(PFTypeGetInfo(PointObj::RuntimeTypeIndex(), &info), 0);
  return info;
}

std::string Str(const PFByteArray& a) { return std::string(a.data, a.size); }

const PFFieldInfo* Field(const std::string& name) {
  const PFTypeInfo* info = Info();
  for (int32_t i = 0; i < info->num_fields; ++i) {
    if (Str(info->fields[i].name) == name) return &info->fields[i];
  }
  return nullptr;
}

const PFMethodInfo* Method(const std::string& name) {
  const PFTypeInfo* info = Info();
  for (int32_t i = 0; i < info->num_methods; ++i) {
    if (Str(info->methods[i].name) == name) return &info->methods[i];
  }
  return nullptr;
}

std::string LastErrorMessage() {
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);
  if (err == nullptr) return "<none>";
  const PFErrorObject* e = reinterpret_cast<const PFErrorObject*>(err);
  std::string out = Str(e->kind) + ": " + Str(e->message);
  PFObjectDecRef(err);
  return out;
}

TEST(Reflection, TableHoldsFieldsMethodsAndDocs) {
  const PFTypeInfo* info = Info();
  EXPECT_EQ(Str(info->type_key), "test_reflection.Point");
  EXPECT_EQ(Str(info->doc), "A 2-d point.");
  ASSERT_EQ(info->num_fields, 4);
  ASSERT_EQ(info->num_methods, 3);
  const PFFieldInfo* x = Field("x");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->flags & PACKEDFUN_FIELD_READONLY, PACKEDFUN_FIELD_READONLY);
  EXPECT_EQ(x->setter, nullptr);
  EXPECT_EQ(x->static_type_index, kPFTypeInt);
  EXPECT_EQ(Str(x->doc), "x coordinate");
  PointObj probe;
  EXPECT_EQ(x->offset, reinterpret_cast<char*>(&probe.x) -
                           reinterpret_cast<char*>(static_cast<PFObject*>(&probe)));
  EXPECT_EQ(Field("y")->static_type_index, kPFTypeFloat);
  EXPECT_NE(Field("y")->setter, nullptr);
  EXPECT_EQ(Field("label")->static_type_index, kPFTypeString);
  EXPECT_EQ(Method("__create__")->flags, PACKEDFUN_METHOD_STATIC);
  EXPECT_EQ(Method("sum")->flags, 0);
  EXPECT_EQ(Str(Method("sum")->doc), "x + y + extra");
}

TEST(Reflection, GetterReadsTheFieldAtItsOffset) {
  Point p(3, 4.5);
  PFAny out;
  out.type_index = kPFTypeNone;
  const PFFieldInfo* x = Field("x");
  char* base = reinterpret_cast<char*>(p.get());
  ASSERT_EQ(x->getter(base + x->offset, &out), 0);
  EXPECT_EQ(out.type_index, kPFTypeInt);
  EXPECT_EQ(out.v_int64, 3);
  const PFFieldInfo* y = Field("y");
  ASSERT_EQ(y->getter(base + y->offset, &out), 0);
  EXPECT_EQ(out.v_float64, 4.5);
}

TEST(Reflection, SetterChecksTheType) {
  Point p(1, 2);
  char* base = reinterpret_cast<char*>(p.get());
  const PFFieldInfo* y = Field("y");
  pf::Any seven = 7;  // ints convert to float
  ASSERT_EQ(y->setter(base + y->offset, &seven.raw()), 0);
  EXPECT_EQ(p->y, 7.0);
  pf::Any text = pf::String("not a number");
  EXPECT_NE(y->setter(base + y->offset, &text.raw()), 0);
  EXPECT_EQ(LastErrorMessage(), "TypeError: expected float, got str");
  EXPECT_EQ(p->y, 7.0);
  const PFFieldInfo* label = Field("label");
  pf::Any long_label = pf::String("a label longer than seven bytes");
  ASSERT_EQ(label->setter(base + label->offset, &long_label.raw()), 0);
  EXPECT_EQ(p->label, "a label longer than seven bytes");
  const PFFieldInfo* small = Field("small");
  pf::Any big = int64_t(1) << 40;
  EXPECT_NE(small->setter(base + small->offset, &big.raw()), 0);
  EXPECT_EQ(LastErrorMessage(), "OverflowError: value 1099511627776 does not fit in int32");
}

TEST(Reflection, MethodsAreFunctionsTakingSelfFirst) {
  Point p(1, 2);
  pf::Function sum = pf::detail::ObjectUnsafe::FromBorrowed<pf::Function>(Method("sum")->method);
  EXPECT_EQ(sum(p, 10).cast<int64_t>(), 13);
  try {
    sum(pf::Array<int64_t>{1}, 10);
    FAIL() << "expected a TypeError";
  } catch (const pf::Error& e) {
    EXPECT_EQ(e.message(),
              "test_reflection.Point.sum: argument 0: expected test_reflection.Point, got Array");
  }
  pf::Function scaled =
      pf::detail::ObjectUnsafe::FromBorrowed<pf::Function>(Method("scaled")->method);
  Point q = scaled(p, 3).cast<Point>();
  EXPECT_EQ(q->x, 3);
  pf::Function create =
      pf::detail::ObjectUnsafe::FromBorrowed<pf::Function>(Method("__create__")->method);
  Point r = create(5, 6.0).cast<Point>();
  EXPECT_EQ(r->x, 5);
  EXPECT_EQ(r.use_count(), 1u);
}

TEST(Reflection, DuplicateFieldIsRefused) {
  EXPECT_THROW(pf::reflection::ObjectDef<PointObj>().def_ro("x", &PointObj::x), pf::Error);
}

TEST(Reflection, MethodDeclaresItsGILPolicy) {
  auto policy = [](const char* name) {
    return pf::detail::ObjectUnsafe::FromBorrowed<pf::Function>(Method(name)->method)
        .GetGILPolicy();
  };
  EXPECT_EQ(policy("sum"), pf::GILPolicy::kHold);        // declared with .gil()
  EXPECT_EQ(policy("scaled"), pf::GILPolicy::kRelease);  // the default
}

}  // namespace
