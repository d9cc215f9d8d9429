// Declaring object types: type keys, run-time type indices, typed references, IsInstance, Downcast.
//
//   class PointObj : public packedfun::Object {
//    public:
//     int64_t x = 0;
//     PACKEDFUN_DECLARE_OBJECT_INFO_FINAL("mylib.Point", PointObj, packedfun::Object);
//   };
//   class Point : public packedfun::ObjectRef {
//    public:
//     explicit Point(int64_t x) { data_ = packedfun::make_object<PointObj>(); get_mutable()->x = x;
//     } PACKEDFUN_DEFINE_OBJECT_REF_METHODS(Point, packedfun::ObjectRef, PointObj);
//   };
//
// The type index is allocated (PFTypeRegister) the first time it is needed, so a type costs
// nothing until it is used, and two libraries declaring the same key with the same parent share
// one index. IsInstance reads the ancestors array of the type table: O(1), no walk.
#ifndef PACKEDFUN_OBJECT_TYPE_H_
#define PACKEDFUN_OBJECT_TYPE_H_

#include <packedfun/c_api.h>
#include <packedfun/detail/type_name.h>
#include <packedfun/detail/type_traits.h>
#include <packedfun/error.h>
#include <packedfun/object.h>

#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace packedfun {
namespace detail {

/*! Registers `key` under `parent_index` (or finds it); throws TypeError on a parent clash. */
inline int32_t RegisterObjectType(const char* key, int32_t parent_index) {
  PFByteArray k{key, std::strlen(key)};
  int32_t index = 0;
  CheckCallResult(PFTypeRegister(&k, parent_index, &index));
  return index;
}

/*! The type key of `type_index` ("<type index N>" when unknown). */
inline std::string TypeKeyOf(int32_t type_index) {
  const PFTypeInfo* info = nullptr;
  if (PFTypeGetInfo(type_index, &info) != 0 || info == nullptr) {
    DiscardRaised();
    return "<type index " + std::to_string(type_index) + ">";
  }
  return std::string(info->type_key.data, info->type_key.size);
}

template <typename T, typename = void>
struct IsObjectClass : std::false_type {};
template <typename T>
struct IsObjectClass<T, std::enable_if_t<std::is_base_of<Object, T>::value>> : std::true_type {};

}  // namespace detail

/*! Whether an object of type index `type_index` is a T (an object class); O(1). */
template <typename T>
inline bool IsInstanceIndex(int32_t type_index) {
  static_assert(std::is_base_of<Object, T>::value, "IsInstanceIndex<T>: T must derive from Object");
  if (type_index < kPFTypeStaticObjectBegin) return false;  // POD kinds are never objects
  if constexpr (std::is_same<T, Object>::value) {
    return true;
  } else {
    int32_t want = T::RuntimeTypeIndex();
    if (type_index == want) return true;
    if constexpr (T::_type_final) {
      return false;
    } else {
      const PFTypeInfo* info = nullptr;
      if (PFTypeGetInfo(type_index, &info) != 0) {
        detail::DiscardRaised();
        return false;
      }
      return info->depth > T::_type_depth && info->ancestors[T::_type_depth] == want;
    }
  }
}

/*! Whether `obj` (may be NULL: false) is a T (an object class). */
template <typename T>
inline bool IsInstance(const PFObject* obj) {
  return obj != nullptr && IsInstanceIndex<T>(obj->type_index);
}

template <typename T>
inline bool Object::IsInstance() const {
  return IsInstanceIndex<T>(PFObject::type_index);
}
inline std::string Object::GetTypeKey() const { return detail::TypeKeyOf(PFObject::type_index); }

/*! Downcasts `ref` to the reference class SubRef: a null reference gives a null SubRef when
 *  SubRef is nullable; anything that is not a SubRef::ContainerType throws TypeError naming both
 *  type keys ("cannot downcast an object of type 'a.Base' to 'a.Derived'"). */
template <typename SubRef, typename BaseRef>
inline SubRef Downcast(const BaseRef& ref) {
  static_assert(std::is_base_of<ObjectRef, SubRef>::value, "Downcast<T>: T must be a reference");
  using Obj = typename SubRef::ContainerType;
  if (!ref.defined()) {
    if constexpr (SubRef::_type_is_nullable) {
      return detail::ObjectUnsafe::FromBorrowed<SubRef>(nullptr);
    } else {
      throw Error("TypeError",
                  std::string("cannot downcast None to non-nullable '") + Obj::_type_key + "'");
    }
  }
  if (!IsInstance<Obj>(ref.get())) {
    throw Error("TypeError", "cannot downcast an object of type '" +
                                 detail::TypeKeyOf(ref.type_index()) + "' to '" + Obj::_type_key +
                                 "'");
  }
  return detail::ObjectUnsafe::FromBorrowed<SubRef>(ref.get());
}

template <typename T>
auto ObjectRef::as() const {
  if constexpr (detail::IsObjectClass<T>::value) {
    return IsInstance<T>(get()) ? static_cast<const T*>(get()) : static_cast<const T*>(nullptr);
  } else {
    static_assert(std::is_base_of<ObjectRef, T>::value,
                  "ObjectRef::as<T>: T must be an object class or a reference class");
    using Obj = typename T::ContainerType;
    if (!IsInstance<Obj>(get())) return std::optional<T>();
    return std::optional<T>(detail::ObjectUnsafe::FromBorrowed<T>(get()));
  }
}

/*! ObjectPtr<T> of an object class T: received from a T (or a subclass), None gives a null
 *  pointer; named by T's type key in messages. `make_object<T>(...)` can be returned directly. */
template <typename T>
struct TypeTraits<ObjectPtr<T>, std::enable_if_t<std::is_base_of<Object, T>::value>> {
  static void ToView(const ObjectPtr<T>& v, PFAny* out, PFByteArray*) {
    detail::SetObject(out, v.get());
  }
  static void ToOwned(ObjectPtr<T> v, PFAny* out) { detail::SetObject(out, v.release()); }
  static std::optional<ObjectPtr<T>> TryFrom(const PFAny* v) {
    if (v->type_index == kPFTypeNone) return ObjectPtr<T>();
    if (!IsInstanceIndex<T>(v->type_index)) return std::nullopt;
    return ObjectPtr<T>::FromBorrowed(static_cast<T*>(v->v_obj));
  }
  static std::string TypeName() {
    if constexpr (std::is_same<T, Object>::value) {
      return "Object";
    } else {
      return T::_type_key;
    }
  }
};

namespace detail {

/*! The registration behind AllocateTypeIndex, out of line: it runs once per class. */
template <typename T, typename Parent>
__attribute__((noinline, cold)) int32_t RegisterTypeIndex() {
  return RegisterObjectType(T::_type_key, Parent::RuntimeTypeIndex());
}

/*! Allocates the run-time index of object class T on first use (thread-safe static). Small
 *  enough to inline: every typed parameter check of an object reference reads it. */
template <typename T, typename Parent>
inline int32_t AllocateTypeIndex() {
  static const int32_t index = RegisterTypeIndex<T, Parent>();
  return index;
}

}  // namespace detail
}  // namespace packedfun

#define PACKEDFUN_DECLARE_OBJECT_INFO_IMPL_(TypeKey, TypeName, ParentType, IsFinal) \
 public:                                                                            \
  using _type_parent = ParentType;                                                  \
  static constexpr const char* _type_key = TypeKey;                                 \
  static constexpr int32_t _type_depth = ParentType::_type_depth + 1;               \
  static constexpr bool _type_final = IsFinal;                                      \
  static int32_t RuntimeTypeIndex() {                                               \
    return ::packedfun::detail::AllocateTypeIndex<TypeName, ParentType>();          \
  }

/*! Inside an object class: its type key and parent (an object class, ultimately Object). */
#define PACKEDFUN_DECLARE_OBJECT_INFO(TypeKey, TypeName, ParentType) \
  PACKEDFUN_DECLARE_OBJECT_INFO_IMPL_(TypeKey, TypeName, ParentType, false)

/*! As PACKEDFUN_DECLARE_OBJECT_INFO for a class nothing derives from (IsInstance is one compare).
 */
#define PACKEDFUN_DECLARE_OBJECT_INFO_FINAL(TypeKey, TypeName, ParentType) \
  PACKEDFUN_DECLARE_OBJECT_INFO_IMPL_(TypeKey, TypeName, ParentType, true)

#define PACKEDFUN_DEFINE_OBJECT_REF_COMMON_(TypeName, ParentType, ObjectName)                \
 public:                                                                                     \
  using ContainerType = ObjectName;                                                          \
  explicit TypeName(::packedfun::ObjectPtr<ObjectName> ptr) noexcept {                       \
    this->data_ = ::packedfun::ObjectPtr<PFObject>(std::move(ptr));                          \
  }                                                                                          \
  const ObjectName* operator->() const noexcept {                                            \
    return static_cast<const ObjectName*>(this->get());                                      \
  }                                                                                          \
  const ObjectName& operator*() const noexcept {                                             \
    return *static_cast<const ObjectName*>(this->get());                                     \
  }                                                                                          \
  /*! The object, for mutation (the caller knows no one else relies on its old state). */    \
  ObjectName* get_mutable() const noexcept { return static_cast<ObjectName*>(this->get()); } \
  static bool _type_accepts(int32_t type_index) {                                            \
    return ::packedfun::IsInstanceIndex<ObjectName>(type_index);                             \
  }                                                                                          \
  static const char* _type_name() noexcept { return ObjectName::_type_key; }

/*! Inside a reference class (deriving ParentType) that never holds null: no public default
 *  constructor, None does not convert to it. */
#define PACKEDFUN_DEFINE_OBJECT_REF_METHODS(TypeName, ParentType, ObjectName) \
  PACKEDFUN_DEFINE_OBJECT_REF_COMMON_(TypeName, ParentType, ObjectName)       \
  static constexpr bool _type_is_nullable = false;                            \
                                                                              \
 protected:                                                                   \
  TypeName() noexcept = default;                                              \
  friend struct ::packedfun::detail::ObjectUnsafe;                            \
                                                                              \
 public:

/*! Inside a reference class that may be null (default-constructed, or converted from None). */
#define PACKEDFUN_DEFINE_OBJECT_REF_METHODS_NULLABLE(TypeName, ParentType, ObjectName) \
  PACKEDFUN_DEFINE_OBJECT_REF_COMMON_(TypeName, ParentType, ObjectName)                \
  static constexpr bool _type_is_nullable = true;                                      \
  TypeName() noexcept = default;

#endif  // PACKEDFUN_OBJECT_TYPE_H_
