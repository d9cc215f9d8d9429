// C++ object system: type keys and indices, IsInstance, typed references, checked downcasts.
#include <gtest/gtest.h>
#include <packedfun/packedfun.h>

#include <string>

namespace pf = packedfun;

namespace {

int g_live = 0;

class AnimalObj : public pf::Object {
 public:
  int64_t legs;
  explicit AnimalObj(int64_t legs) : legs(legs) { ++g_live; }
  ~AnimalObj() { --g_live; }
  PACKEDFUN_DECLARE_OBJECT_INFO("test_object.Animal", AnimalObj, pf::Object);
};

class DogObj : public AnimalObj {
 public:
  DogObj() : AnimalObj(4) {}
  PACKEDFUN_DECLARE_OBJECT_INFO("test_object.Dog", DogObj, AnimalObj);
};

class PuppyObj : public DogObj {
 public:
  PACKEDFUN_DECLARE_OBJECT_INFO_FINAL("test_object.Puppy", PuppyObj, DogObj);
};

class BirdObj : public AnimalObj {
 public:
  BirdObj() : AnimalObj(2) {}
  PACKEDFUN_DECLARE_OBJECT_INFO_FINAL("test_object.Bird", BirdObj, AnimalObj);
};

class Animal : public pf::ObjectRef {
 public:
  explicit Animal(int64_t legs) { data_ = pf::make_object<AnimalObj>(legs); }
  PACKEDFUN_DEFINE_OBJECT_REF_METHODS_NULLABLE(Animal, pf::ObjectRef, AnimalObj);
};

class Dog : public Animal {
 public:
  PACKEDFUN_DEFINE_OBJECT_REF_METHODS(Dog, Animal, DogObj);
};

class Bird : public Animal {
 public:
  PACKEDFUN_DEFINE_OBJECT_REF_METHODS_NULLABLE(Bird, Animal, BirdObj);
};

std::string KeyOf(int32_t index) {
  const PFTypeInfo* info = nullptr;
  EXPECT_EQ(PFTypeGetInfo(index, &info), 0);
  return std::string(info->type_key.data, info->type_key.size);
}

TEST(Object, TypeIndexAllocatedOnFirstUseAndStable) {
  int32_t dog = DogObj::RuntimeTypeIndex();
  EXPECT_GE(dog, kPFTypeDynamicBegin);
  EXPECT_EQ(DogObj::RuntimeTypeIndex(), dog);
  EXPECT_EQ(KeyOf(dog), "test_object.Dog");
  PFByteArray key{"test_object.Dog", 15};
  int32_t looked_up = -1;
  ASSERT_EQ(PFTypeKeyToIndex(&key, &looked_up), 0);
  EXPECT_EQ(looked_up, dog);
  const PFTypeInfo* info = nullptr;
  ASSERT_EQ(PFTypeGetInfo(PuppyObj::RuntimeTypeIndex(), &info), 0);
  ASSERT_EQ(info->depth, 3);
  EXPECT_EQ(info->ancestors[0], kPFTypeObject);
  EXPECT_EQ(info->ancestors[1], AnimalObj::RuntimeTypeIndex());
  EXPECT_EQ(info->ancestors[2], dog);
  EXPECT_EQ(info->ancestors[3], PuppyObj::RuntimeTypeIndex());
}

TEST(Object, MakeObjectSetsHeader) {
  pf::ObjectPtr<DogObj> p = pf::make_object<DogObj>();
  EXPECT_EQ(p->type_index, DogObj::RuntimeTypeIndex());
  EXPECT_EQ(p.use_count(), 1u);
  EXPECT_EQ(p->legs, 4);
}

TEST(Object, IsInstanceFollowsTheHierarchy) {
  pf::ObjectPtr<PuppyObj> puppy = pf::make_object<PuppyObj>();
  EXPECT_TRUE(pf::IsInstance<PuppyObj>(puppy.get()));
  EXPECT_TRUE(pf::IsInstance<DogObj>(puppy.get()));
  EXPECT_TRUE(pf::IsInstance<AnimalObj>(puppy.get()));
  EXPECT_TRUE(pf::IsInstance<pf::Object>(puppy.get()));
  EXPECT_FALSE(pf::IsInstance<BirdObj>(puppy.get()));
  pf::ObjectPtr<AnimalObj> animal = pf::make_object<AnimalObj>(3);
  EXPECT_FALSE(pf::IsInstance<DogObj>(animal.get()));
  EXPECT_FALSE(pf::IsInstance<DogObj>(nullptr));
  EXPECT_EQ(PFTypeIsInstance(PuppyObj::RuntimeTypeIndex(), AnimalObj::RuntimeTypeIndex()), 1);
  EXPECT_EQ(PFTypeIsInstance(AnimalObj::RuntimeTypeIndex(), DogObj::RuntimeTypeIndex()), 0);
  EXPECT_EQ(PFTypeIsInstance(kPFTypeArray, kPFTypeObject), 1);
  EXPECT_EQ(PFTypeIsInstance(-5, kPFTypeObject), 0);
}

// Object as the second base (tvm-ffi's tests do this): the header is found by a static cast, so
// reference counts land on the object, not on the first base's bytes.
struct PadFirst {
  int64_t pad[4] = {0, 0, 0, 0};
};
int g_padded_live = 0;
class PaddedObj : public PadFirst, public pf::Object {
 public:
  explicit PaddedObj(int64_t v) : value(v) { ++g_padded_live; }
  ~PaddedObj() { --g_padded_live; }
  int64_t value;
  PACKEDFUN_DECLARE_OBJECT_INFO_FINAL("test_object.Padded", PaddedObj, pf::Object);
};
class Padded : public pf::ObjectRef {
 public:
  explicit Padded(int64_t v) { data_ = pf::make_object<PaddedObj>(v); }
  PACKEDFUN_DEFINE_OBJECT_REF_METHODS(Padded, pf::ObjectRef, PaddedObj);
};

TEST(Object, ObjectAsASecondBaseIsCountedOnItsHeader) {
  {
    auto p = pf::make_object<PaddedObj>(7);
    EXPECT_EQ(p.use_count(), 1u);
    Padded r(5);
    EXPECT_EQ(r.use_count(), 1u);
    Padded copy = r;
    EXPECT_EQ(r.use_count(), 2u);
    EXPECT_EQ(copy->value, 5);
    pf::Array<Padded> arr{r, copy};
    EXPECT_EQ(arr[1]->value, 5);
    EXPECT_EQ(p->pad[0], 0);  // the first base's bytes are untouched
    EXPECT_EQ(g_padded_live, 2);
  }
  EXPECT_EQ(g_padded_live, 0);
}

TEST(Object, IsInstanceMemberAndTypeKey) {
  pf::ObjectPtr<PuppyObj> puppy = pf::make_object<PuppyObj>();
  const pf::Object* obj = puppy.get();
  EXPECT_TRUE(obj->IsInstance<PuppyObj>());
  EXPECT_TRUE(obj->IsInstance<AnimalObj>());
  EXPECT_TRUE(obj->IsInstance<pf::Object>());
  EXPECT_FALSE(obj->IsInstance<BirdObj>());
  pf::ObjectPtr<AnimalObj> animal = pf::make_object<AnimalObj>(3);
  EXPECT_FALSE(animal->IsInstance<DogObj>());
  EXPECT_EQ(obj->GetTypeKey(), "test_object.Puppy");
  EXPECT_EQ(animal->GetTypeKey(), "test_object.Animal");
}

TEST(Object, RefAccessAndAs) {
  Animal a(6);
  EXPECT_EQ(a->legs, 6);
  EXPECT_EQ(a.as<DogObj>(), nullptr);
  EXPECT_NE(a.as<AnimalObj>(), nullptr);
  EXPECT_FALSE(a.as<Dog>().has_value());
  Animal d(pf::make_object<DogObj>());
  std::optional<Dog> dog = d.as<Dog>();
  ASSERT_TRUE(dog.has_value());
  EXPECT_EQ((*dog)->legs, 4);
  EXPECT_TRUE(dog->same_as(d));
}

TEST(Object, DowncastNamesBothKeys) {
  Animal bird(pf::make_object<BirdObj>());
  try {
    pf::Downcast<Dog>(bird);
    FAIL() << "expected a TypeError";
  } catch (const pf::Error& e) {
    EXPECT_EQ(e.kind(), "TypeError");
    EXPECT_EQ(e.message(),
              "cannot downcast an object of type 'test_object.Bird' to 'test_object.Dog'");
  }
  Bird b = pf::Downcast<Bird>(bird);
  EXPECT_EQ(b->legs, 2);
  EXPECT_FALSE(pf::Downcast<Bird>(Animal()).defined());  // nullable: null stays null
  EXPECT_THROW(pf::Downcast<Dog>(Animal()), pf::Error);  // not nullable
}

TEST(Object, AnyConversionChecksTheType) {
  pf::Any any = Animal(pf::make_object<BirdObj>());
  EXPECT_EQ(any.type_name(), "test_object.Bird");
  EXPECT_TRUE(any.as<Animal>().has_value());
  EXPECT_TRUE(any.as<Bird>().has_value());
  EXPECT_FALSE(any.as<Dog>().has_value());
  try {
    any.cast<Dog>();
    FAIL() << "expected a TypeError";
  } catch (const pf::Error& e) {
    EXPECT_EQ(e.kind(), "TypeError");
    EXPECT_EQ(e.message(), "expected test_object.Dog, got test_object.Bird");
  }
  pf::Any none;
  EXPECT_TRUE(none.as<Bird>().has_value());  // nullable accepts None
  EXPECT_FALSE(none.as<Dog>().has_value());  // non-nullable does not
  pf::Any number = 3;
  EXPECT_FALSE(number.as<Animal>().has_value());
}

TEST(Object, TypedFunctionArgumentErrors) {
  pf::Function f = pf::Function::FromTyped([](Dog d) { return d->legs; }, "test.legs");
  EXPECT_EQ(f(Dog(pf::make_object<DogObj>())).cast<int64_t>(), 4);
  try {
    f(Animal(pf::make_object<BirdObj>()));
    FAIL() << "expected a TypeError";
  } catch (const pf::Error& e) {
    EXPECT_EQ(e.message(), "test.legs: argument 0: expected test_object.Dog, got test_object.Bird");
  }
}

TEST(Object, LifetimeIsExact) {
  g_live = 0;
  {
    Animal a(1);
    EXPECT_EQ(g_live, 1);
    pf::Any held = a;
    EXPECT_EQ(a.use_count(), 2u);
    Animal b = a;
    EXPECT_EQ(a.use_count(), 3u);
  }
  EXPECT_EQ(g_live, 0);
}

TEST(Object, RegisteringAKeyWithAnotherParentFails) {
  PFByteArray key{"test_object.Dog", 15};
  int32_t out = 0;
  EXPECT_NE(PFTypeRegister(&key, kPFTypeObject, &out), 0);
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);
  ASSERT_NE(err, nullptr);
  const PFErrorObject* e = reinterpret_cast<const PFErrorObject*>(err);
  EXPECT_EQ(std::string(e->kind.data, e->kind.size), "TypeError");
  PFObjectDecRef(err);
}

TEST(Object, TypeListKeysCoversEveryIndex) {
  int32_t dog = DogObj::RuntimeTypeIndex();
  PFAny out;
  int32_t n = 0;
  ASSERT_EQ(PFTypeListKeys(&out, &n), 0);
  pf::Any owner = pf::detail::AnyUnsafe::MoveFromPFAny(&out);
  pf::Array<pf::String> keys = owner.cast<pf::Array<pf::String>>();
  EXPECT_EQ(keys.size(), n);
  EXPECT_GT(n, dog);
  EXPECT_EQ(keys[dog], "test_object.Dog");
  EXPECT_EQ(keys[kPFTypeArray], "packedfun.Array");
  EXPECT_EQ(keys[kPFTypeInt], "int");
  EXPECT_EQ(keys[100], "");  // unused index in the static block
}

}  // namespace
