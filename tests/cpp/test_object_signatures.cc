// Tests of objects in typed signatures (issue 16): ObjectPtr<T> and ObjectRef subclasses as
// parameters and results of typed functions, reflected methods and constructors; init<...>.
#include <gtest/gtest.h>
#include "catch_error.h"
#include <packedfun/packedfun.h>

#include <string>

namespace {

namespace pf = packedfun;
using namespace pf::literals;  // NOLINT(build/namespaces)
using pf::Any;
using pf::Function;
using pf::ObjectPtr;

class PairObj : public pf::Object {
 public:
  int64_t a, b;
  PairObj(int64_t a, int64_t b) : a(a), b(b) {}
  ObjectPtr<PairObj> Swapped() const { return pf::make_object<PairObj>(b, a); }
  PACKEDFUN_DECLARE_OBJECT_INFO_FINAL("test_object_signatures.Pair", PairObj, pf::Object);
};

class Pair : public pf::ObjectRef {
 public:
  Pair(int64_t a, int64_t b) { data_ = pf::make_object<PairObj>(a, b); }
  PACKEDFUN_DEFINE_OBJECT_REF_METHODS(Pair, pf::ObjectRef, PairObj);
};

class OtherObj : public pf::Object {
 public:
  PACKEDFUN_DECLARE_OBJECT_INFO_FINAL("test_object_signatures.Other", OtherObj, pf::Object);
};

class BoxObj : public pf::Object {
 public:
  std::string label;
  int64_t size;
  BoxObj(std::string label, int64_t size) : label(std::move(label)), size(size) {}
  PACKEDFUN_DECLARE_OBJECT_INFO_FINAL("test_object_signatures.Box", BoxObj, pf::Object);
};

PACKEDFUN_STATIC_INIT_BLOCK() {
  pf::reflection::ObjectDef<PairObj>()
      .def(pf::reflection::init<int64_t, int64_t>(), {"a", "b"_a = 7}, "Pair(a, b=7)")
      .def("swapped", &PairObj::Swapped)
      .def("with_a", [](ObjectPtr<PairObj> self, int64_t a) { return Pair(a, self->b); }, {"a"})
      .def_static("diag", [](int64_t x) { return Pair(x, x); }, {"x"})
      .def("plus", [](Pair self, ObjectPtr<PairObj> other) {
        return pf::make_object<PairObj>(self->a + other->a, self->b + other->b);
      });
  pf::reflection::ObjectDef<BoxObj>().def(pf::reflection::init<std::string, int64_t>());
}

/*! The method or constructor `name` of type `type_index`. */
Function Method(int32_t type_index, const std::string& name) {
  const PFTypeInfo* info = nullptr;
  EXPECT_EQ(PFTypeGetInfo(type_index, &info), 0);
  for (int32_t i = 0; i < info->num_methods; ++i) {
    const PFMethodInfo& m = info->methods[i];
    if (std::string(m.name.data, m.name.size) == name) {
      return pf::detail::ObjectUnsafe::FromBorrowed<Function>(m.method);
    }
  }
  ADD_FAILURE() << "no method " << name;
  return Function();
}

TEST(ObjectSignatures, ObjectPtrParameterAndResult) {
  Function make = Function::FromTyped(
      [](int64_t a, int64_t b) { return pf::make_object<PairObj>(a, b); }, "t.make");
  Any made = make(1, 2);
  EXPECT_EQ(made.type_index(), PairObj::RuntimeTypeIndex());
  Function sum = Function::FromTyped([](ObjectPtr<PairObj> p) { return p->a + p->b; }, "t.sum");
  EXPECT_EQ(sum(made).cast<int64_t>(), 3);
  ObjectPtr<PairObj> back = made.cast<ObjectPtr<PairObj>>();
  EXPECT_EQ(back->b, 2);
  EXPECT_EQ(back.use_count(), 2);  // `made` and `back`
  pf::Error e = Catch([&] { sum(pf::make_object<OtherObj>()); });
  EXPECT_EQ(e.kind(), "TypeError");
  EXPECT_EQ(
      e.message(),
      "t.sum: argument 0: expected test_object_signatures.Pair, got test_object_signatures.Other");
  EXPECT_EQ(Catch([&] { sum(1); }).message(),
            "t.sum: argument 0: expected test_object_signatures.Pair, got int");
  // None is a null pointer (ObjectPtr is nullable); passing one on gives None.
  Function is_null = Function::FromTyped([](ObjectPtr<PairObj> p) { return p == nullptr; }, "t.n");
  EXPECT_TRUE(is_null(nullptr).cast<bool>());
  Function null = Function::FromTyped([]() { return ObjectPtr<PairObj>(); }, "t.null");
  EXPECT_EQ(null().type_index(), kPFTypeNone);
  // ObjectPtr<Object> takes any object.
  Function key = Function::FromTyped([](ObjectPtr<pf::Object> o) { return o->type_index; }, "t.k");
  EXPECT_EQ(key(made).cast<int32_t>(), PairObj::RuntimeTypeIndex());
}

TEST(ObjectSignatures, ObjectRefSubclassParameterAndResult) {
  Function swap = Function::FromTyped([](Pair p) { return Pair(p->b, p->a); }, "t.swap");
  Any out = swap(Pair(1, 2));
  EXPECT_EQ(out.cast<Pair>()->a, 2);
  EXPECT_EQ(Catch([&] { swap(nullptr); }).message(),
            "t.swap: argument 0: expected test_object_signatures.Pair, got None");
  // The metadata record names the type.
  Function typed = Function::FromTyped([](Pair p, ObjectPtr<PairObj> q) { return p->a + q->a; },
                                       "t.typed", {"p", "q"});
  EXPECT_NE(typed.GetMetadata()->find("\"type\": \"test_object_signatures.Pair\""),
            std::string::npos);
}

TEST(ObjectSignatures, InitDeclaresTheConstructorWithKeywords) {
  Function create = Method(PairObj::RuntimeTypeIndex(), "__create__");
  ObjectPtr<PairObj> p = create(3, 4).cast<ObjectPtr<PairObj>>();
  EXPECT_EQ(p->a, 3);
  EXPECT_EQ(p->b, 4);
  // Defaults are the binding's to apply (from the metadata, below): a packed call is positional.
  EXPECT_EQ(Catch([&] { create(3); }).kind(), "TypeError");
  std::string meta = create.GetMetadata().value();
  EXPECT_NE(meta.find("\"name\": \"b\", \"type\": \"int\", \"default\": 7"), std::string::npos)
      << meta;
  EXPECT_NE(meta.find("\"return\": \"test_object_signatures.Pair\""), std::string::npos) << meta;
  EXPECT_EQ(
      Catch([&] { create("x", 1); }).message(),
      "test_object_signatures.Pair.__create__(a: int, b: int) -> test_object_signatures.Pair: "
      "argument 'a': expected int, got str");
  Function box = Method(BoxObj::RuntimeTypeIndex(), "__create__");
  ObjectPtr<BoxObj> b = box("cube", 3).cast<ObjectPtr<BoxObj>>();
  EXPECT_EQ(b->label, "cube");
  EXPECT_EQ(b->size, 3);
}

TEST(ObjectSignatures, OneNameListIsNamesNotADocstring) {
  std::string with_a = Method(PairObj::RuntimeTypeIndex(), "with_a").GetMetadata().value();
  EXPECT_NE(with_a.find("[{\"name\": \"self\""), std::string::npos) << with_a;
  EXPECT_NE(with_a.find("{\"name\": \"a\", \"type\": \"int\"}"), std::string::npos) << with_a;
  std::string diag = Method(PairObj::RuntimeTypeIndex(), "diag").GetMetadata().value();
  EXPECT_NE(diag.find("{\"name\": \"x\", \"type\": \"int\"}"), std::string::npos) << diag;
}

TEST(ObjectSignatures, MethodsTakeAndReturnObjects) {
  Pair p(1, 2);
  Function swapped = Method(PairObj::RuntimeTypeIndex(), "swapped");
  EXPECT_EQ(swapped(p).cast<Pair>()->a, 2);
  Function with_a = Method(PairObj::RuntimeTypeIndex(), "with_a");
  EXPECT_EQ(with_a(p, 9).cast<Pair>()->a, 9);
  Function plus = Method(PairObj::RuntimeTypeIndex(), "plus");
  Pair q = plus(p, Pair(10, 20)).cast<Pair>();
  EXPECT_EQ(q->a, 11);
  EXPECT_EQ(q->b, 22);
  EXPECT_EQ(Catch([&] { plus(p, 1); }).kind(), "TypeError");
}

}  // namespace
