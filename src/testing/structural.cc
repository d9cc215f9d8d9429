// The "testing.Tagged" type: a reflected object with a field left out of structural comparison.
#include <packedfun/packedfun.h>

#include <utility>

namespace packedfun {
namespace testing {
namespace {

class TaggedObj : public Object {
 public:
  String name;
  Any body;
  int64_t cache = 0;  // PACKEDFUN_FIELD_NO_COMPARE: ignored by structural equality and hash
  PACKEDFUN_DECLARE_OBJECT_INFO_FINAL("testing.Tagged", TaggedObj, Object);
};

class Tagged : public ObjectRef {
 public:
  PACKEDFUN_DEFINE_OBJECT_REF_METHODS_NULLABLE(Tagged, ObjectRef, TaggedObj);
};

PACKEDFUN_STATIC_INIT_BLOCK() {
  reflection::ObjectDef<TaggedObj>("A named value with an uncompared cache field.")
      .def_ro("name", &TaggedObj::name, "the name")
      .def_rw("body", &TaggedObj::body, "any value")
      .def_ro("cache", &TaggedObj::cache, "not compared", PACKEDFUN_FIELD_NO_COMPARE)
      .def_static(
          "__create__",
          [](String name, Any body, int64_t cache) {
            ObjectPtr<TaggedObj> p = make_object<TaggedObj>();
            p->name = std::move(name);
            p->body = std::move(body);
            p->cache = cache;
            return Tagged(std::move(p));
          },
          "Tagged(name, body, cache)");
}

}  // namespace
}  // namespace testing
}  // namespace packedfun
