// Reference-counted objects in C++: ObjectPtr<T> (intrusive pointer), ObjectRef and the Object
// base.
#ifndef PACKEDFUN_OBJECT_H_
#define PACKEDFUN_OBJECT_H_

#include <packedfun/c_api.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

namespace packedfun {
namespace detail {

/*! The PFObject header of `p`: T is PFObject or derives from it (a static cast, which finds the
 *  header also when Object is not T's first base, `class X : public Pad, public Object`), or T is
 *  a C struct whose first member is the header (PFBytesObject, PFFunctionObject, ...). */
template <typename T>
inline PFObject* HeaderOf(T* p) noexcept {
  if constexpr (std::is_base_of<PFObject, T>::value) {
    return static_cast<PFObject*>(p);
  } else {
    return reinterpret_cast<PFObject*>(p);
  }
}

/*! Adds a strong reference; identical to PFObjectIncRef, inlined for the hot path. Forced
 *  inline: at -O2 GCC may leave these out of line, and in a -fPIC library built without hidden
 *  visibility every such call then goes through the PLT (two per by-value object parameter). */
__attribute__((always_inline)) inline void ObjectRetain(PFObject* obj) noexcept {
  if (obj != nullptr) __atomic_fetch_add(&obj->ref_count, 1, __ATOMIC_RELAXED);
}

/*! Runs the deleter of an object whose count reached zero: out of line, it is rare. */
__attribute__((noinline)) inline void ObjectDestroy(PFObject* obj) noexcept {
  if (obj->deleter != nullptr) obj->deleter(obj);
}

/*! Drops a strong reference and runs the deleter at zero; identical to PFObjectDecRef. */
__attribute__((always_inline)) inline void ObjectRelease(PFObject* obj) noexcept {
  if (obj != nullptr && __atomic_sub_fetch(&obj->ref_count, 1, __ATOMIC_ACQ_REL) == 0) {
    ObjectDestroy(obj);
  }
}

struct ObjectUnsafe;

}  // namespace detail

/*!
 * An intrusive strong pointer to an object of C++ type T (PFObject, a C object struct, or a class
 * derived from Object). Copying adds a reference, destruction drops one.
 */
template <typename T>
class ObjectPtr {
 public:
  ObjectPtr() noexcept = default;
  ObjectPtr(std::nullptr_t) noexcept {}  // NOLINT(runtime/explicit)
  ObjectPtr(const ObjectPtr& other) noexcept : ptr_(other.ptr_) { detail::ObjectRetain(header()); }
  ObjectPtr(ObjectPtr&& other) noexcept : ptr_(other.ptr_) { other.ptr_ = nullptr; }
  template <typename U, typename = std::enable_if_t<std::is_convertible<U*, T*>::value>>
  ObjectPtr(const ObjectPtr<U>& other) noexcept : ptr_(other.get()) {  // NOLINT
    detail::ObjectRetain(header());
  }
  ~ObjectPtr() { detail::ObjectRelease(header()); }

  ObjectPtr& operator=(ObjectPtr other) noexcept {
    std::swap(ptr_, other.ptr_);
    return *this;
  }

  /*! Wraps `p` and adds a reference (the caller keeps its own). */
  static ObjectPtr FromBorrowed(T* p) noexcept {
    ObjectPtr r;
    r.ptr_ = p;
    detail::ObjectRetain(r.header());
    return r;
  }
  /*! Wraps `p`, taking over a reference the caller owned. */
  static ObjectPtr FromOwned(T* p) noexcept {
    ObjectPtr r;
    r.ptr_ = p;
    return r;
  }

  T* get() const noexcept { return ptr_; }
  T* operator->() const noexcept { return ptr_; }
  T& operator*() const noexcept { return *ptr_; }
  explicit operator bool() const noexcept { return ptr_ != nullptr; }
  bool operator==(const ObjectPtr& other) const noexcept { return ptr_ == other.ptr_; }
  bool operator!=(const ObjectPtr& other) const noexcept { return ptr_ != other.ptr_; }
  bool operator==(std::nullptr_t) const noexcept { return ptr_ == nullptr; }
  bool operator!=(std::nullptr_t) const noexcept { return ptr_ != nullptr; }

  /*! Number of strong references (0 for a null pointer). */
  uint64_t use_count() const noexcept {
    return ptr_ ? __atomic_load_n(&header()->ref_count, __ATOMIC_RELAXED) : 0;
  }
  void reset() noexcept { ObjectPtr().swap(*this); }
  void swap(ObjectPtr& other) noexcept { std::swap(ptr_, other.ptr_); }
  /*! Gives up the reference without dropping it; the caller now owns it. */
  T* release() noexcept {
    T* p = ptr_;
    ptr_ = nullptr;
    return p;
  }

 private:
  PFObject* header() const noexcept { return detail::HeaderOf(ptr_); }
  T* ptr_ = nullptr;
  friend struct detail::ObjectUnsafe;
};

/*!
 * Base class of C++ object types. It *is* a PFObject (the header comes first), so
 * `static_cast<PFObject*>(obj)` is the pointer the C ABI sees. Make instances with make_object.
 */
class Object : public PFObject {
 public:
  Object() noexcept : PFObject{0, kPFTypeObject, 0, nullptr} {}
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;

  // Type information of the root; derived classes declare theirs with
  // PACKEDFUN_DECLARE_OBJECT_INFO (object_type.h).
  static constexpr const char* _type_key = "packedfun.Object";
  static constexpr int32_t _type_depth = 0;
  static constexpr bool _type_final = false;
  static int32_t RuntimeTypeIndex() noexcept { return kPFTypeObject; }

  /*! Whether this object is a T (an object class), as IsInstance<T>(obj); defined in
   *  object_type.h. */
  template <typename T>
  bool IsInstance() const;
  /*! The type key of this object's most derived type (reads the type table). */
  std::string GetTypeKey() const;
};

namespace detail {

template <typename T, typename = void>
struct HasRuntimeTypeIndex : std::false_type {};
template <typename T>
struct HasRuntimeTypeIndex<T, std::void_t<decltype(T::RuntimeTypeIndex())>> : std::true_type {};

template <typename T>
void DeleteCxxObject(PFObject* obj) noexcept {
  delete static_cast<T*>(obj);
}

}  // namespace detail

/*! Allocates a T (derived from Object) with one reference owned by the returned pointer. The type
 *  index is T::RuntimeTypeIndex() when T declares one, else kPFTypeObject. */
template <typename T, typename... Args>
ObjectPtr<T> make_object(Args&&... args) {
  static_assert(std::is_base_of<Object, T>::value, "make_object<T>: T must derive from Object");
  T* p = new T(std::forward<Args>(args)...);
  p->ref_count = 1;
  if constexpr (detail::HasRuntimeTypeIndex<T>::value) {
    p->type_index = T::RuntimeTypeIndex();
  }
  p->deleter = &detail::DeleteCxxObject<T>;
  return ObjectPtr<T>::FromOwned(p);
}

/*!
 * A nullable reference to any object: the base of every typed reference (Function, ...).
 * Typed references declare three static hooks used by conversions from Any:
 *   _type_accepts(type_index)  whether an object of that index can be held,
 *   _type_name()               the name printed in TypeError messages,
 *   _type_is_nullable          whether None converts to a null reference.
 */
class ObjectRef {
 public:
  ObjectRef() noexcept = default;
  explicit ObjectRef(ObjectPtr<PFObject> ptr) noexcept : data_(std::move(ptr)) {}

  /*! The object (borrowed), or NULL. */
  PFObject* get() const noexcept { return data_.get(); }
  bool defined() const noexcept { return data_ != nullptr; }
  /*! The object's most derived type index, or kPFTypeNone for a null reference. */
  int32_t type_index() const noexcept { return data_ ? data_->type_index : kPFTypeNone; }
  bool same_as(const ObjectRef& other) const noexcept { return data_ == other.data_; }
  uint64_t use_count() const noexcept { return data_.use_count(); }
  bool operator==(std::nullptr_t) const noexcept { return data_ == nullptr; }
  bool operator!=(std::nullptr_t) const noexcept { return data_ != nullptr; }

  /*! Checked downcast (defined in object_type.h): for an object class T, a `const T*` or NULL;
   *  for a reference class T, a `std::optional<T>`, empty when the object is not a T. */
  template <typename T>
  auto as() const;

  static constexpr bool _type_is_nullable = true;
  static bool _type_accepts(int32_t type_index) noexcept {
    return type_index >= kPFTypeStaticObjectBegin;
  }
  static const char* _type_name() noexcept { return "Object"; }

 protected:
  ObjectPtr<PFObject> data_;
  friend struct detail::ObjectUnsafe;
};

namespace detail {

/*! Unchecked conversions between raw PFObject pointers and references; for the library only. */
struct ObjectUnsafe {
  /*! A Ref holding `obj`, adding a reference. */
  template <typename Ref>
  static Ref FromBorrowed(PFObject* obj) noexcept {
    ObjectRetain(obj);
    return FromOwned<Ref>(obj);
  }
  /*! A Ref taking over the caller's reference to `obj`. Stored in place: an assignment would
   *  release the empty pointer it replaces, a call the optimizer does not always see through. */
  template <typename Ref>
  static Ref FromOwned(PFObject* obj) noexcept {
    Ref r;
    static_cast<ObjectRef&>(r).data_.ptr_ = obj;
    return r;
  }
  /*! Gives up `ref`'s reference; the caller now owns it. */
  static PFObject* MoveToPFObject(ObjectRef&& ref) noexcept { return ref.data_.release(); }
};

}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_OBJECT_H_
