// Reflection: registering an object type's fields, methods and constructor in the type table.
//
//   PACKEDFUN_STATIC_INIT_BLOCK() {
//     namespace refl = packedfun::reflection;
//     refl::ObjectDef<PointObj>("A point.")
//         .def_ro("x", &PointObj::x, "the x coordinate")
//         .def_rw("label", &PointObj::label)
//         .def("norm", &PointObj::Norm, "distance to the origin").gil(packedfun::GILPolicy::kHold)
//         .def_static("__create__", [](int64_t x) { return Point(x); }, "make a point");
//   }
//
// Everything lands in the C ABI's type table (PFTypeRegisterField / PFTypeRegisterMethod), so any
// language reads it with PFTypeGetInfo. Names and docstrings must be string literals (the table
// keeps the pointers).
#ifndef PACKEDFUN_REFLECTION_H_
#define PACKEDFUN_REFLECTION_H_

#include <packedfun/any.h>
#include <packedfun/array.h>
#include <packedfun/c_api.h>
#include <packedfun/enum.h>
#include <packedfun/error.h>
#include <packedfun/function.h>
#include <packedfun/object.h>
#include <packedfun/object_type.h>
#include <packedfun/registry.h>
#include <packedfun/string.h>

#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace packedfun {
namespace detail {

template <typename T, typename = void>
struct HasContainerType : std::false_type {};
template <typename T>
struct HasContainerType<T, std::void_t<typename T::ContainerType>> : std::true_type {};
template <typename T, typename = void>
struct HasStaticTypeIndex : std::false_type {};
template <typename T>
struct HasStaticTypeIndex<T, std::void_t<decltype(T::_type_static_index)>> : std::true_type {};

/*! The static type index recorded for a field of C++ type F (kPFTypeAny when it varies). */
template <typename F>
int32_t FieldStaticTypeIndex() {
  if constexpr (std::is_same<F, bool>::value) {
    return kPFTypeBool;
  } else if constexpr (std::is_integral<F>::value) {
    return kPFTypeInt;
  } else if constexpr (std::is_floating_point<F>::value) {
    return kPFTypeFloat;
  } else if constexpr (std::is_same<F, DLDataType>::value) {
    return kPFTypeDataType;
  } else if constexpr (std::is_same<F, DLDevice>::value) {
    return kPFTypeDevice;
  } else if constexpr (std::is_same<F, String>::value || std::is_same<F, std::string>::value) {
    return kPFTypeString;
  } else if constexpr (std::is_same<F, Function>::value) {
    return kPFTypeFunction;
  } else if constexpr (HasStaticTypeIndex<F>::value) {
    return F::_type_static_index;
  } else if constexpr (HasContainerType<F>::value) {
    return F::ContainerType::RuntimeTypeIndex();
  } else {
    return kPFTypeAny;
  }
}

/*! Reads a field of type F into an owned value. */
template <typename F>
int FieldGetter(void* field, PFAny* result) noexcept {
  try {
    TypeTraits<F>::ToOwned(F(*static_cast<const F*>(field)), result);
    return 0;
  } catch (...) {
    return SetRaisedFromCurrentException();
  }
}

/*! Writes a field of type F from a borrowed value: TypeError "expected T, got X" on mismatch. */
template <typename F>
int FieldSetter(void* field, const PFAny* value) noexcept {
  try {
    std::optional<F> v = TypeTraits<F>::TryFrom(value);
    if (!v) ThrowConversionError("", TypeTraits<F>::TypeName(), IntRangeName<F>(), *value);
    *static_cast<F*>(field) = std::move(*v);
    return 0;
  } catch (...) {
    return SetRaisedFromCurrentException();
  }
}

/*! PFTypeLayoutInfo hooks of T: default construction in place and destruction, so that a
 *  Python-defined class can derive from T (its instances are a T followed by value slots). */
template <typename T>
PFObject* LayoutConstruct(void* memory) noexcept {
  try {
    return static_cast<PFObject*>(new (memory) T());
  } catch (...) {
    SetRaisedFromCurrentException();
    return nullptr;
  }
}
template <typename T>
void LayoutDestroy(PFObject* obj) noexcept {
  static_cast<T*>(obj)->~T();
}
template <typename T>
void RegisterLayout(int32_t type_index) {
  if constexpr (std::is_default_constructible<T>::value && alignof(T) <= 16) {
    alignas(alignof(T)) static char probe[sizeof(T)];
    T* p = reinterpret_cast<T*>(probe);  // pointer arithmetic only: nothing is constructed
    PFTypeLayoutInfo info;
    info.size = static_cast<int64_t>(sizeof(T));
    info.alignment = static_cast<int64_t>(alignof(T));
    info.header_offset =
        reinterpret_cast<const char*>(static_cast<PFObject*>(p)) - reinterpret_cast<char*>(p);
    info.construct = &LayoutConstruct<T>;
    info.destroy = &LayoutDestroy<T>;
    if (PFTypeRegisterLayout(type_index, &info) != 0) {  // not extendable then; never fatal
      PFObject* err = nullptr;
      PFErrorMoveFromRaised(&err);
      if (err != nullptr) PFObjectDecRef(err);
    }
  }
}

/*! The receiver of an instance method, borrowed: the caller keeps the object alive for the
 *  call, so taking it costs no reference count traffic. */
template <typename T>
struct MethodSelf {
  T* ptr;
};

}  // namespace detail

/*! Checked like a non-null T reference ("expected <type key>, got X"), read without a copy. */
template <typename T>
struct TypeTraits<detail::MethodSelf<T>> {
  static bool ArgCheck(const PFAny* v) noexcept {
    return v->type_index != kPFTypeNone && IsInstanceIndex<T>(v->type_index);
  }
  static detail::MethodSelf<T> ArgGet(const PFAny* v) noexcept {
    return detail::MethodSelf<T>{static_cast<T*>(v->v_obj)};
  }
  static std::optional<detail::MethodSelf<T>> TryFrom(const PFAny* v) noexcept {
    if (!ArgCheck(v)) return std::nullopt;
    return ArgGet(v);
  }
  static std::string TypeName() { return T::_type_key; }
};

namespace detail {

/*! Binds a member function pointer as a callable taking the receiver first. */
template <typename T, typename M>
struct MemberMethod;
template <typename T, typename C, typename R, typename... A>
struct MemberMethod<T, R (C::*)(A...)> {
  R (C::*m)(A...);
  R operator()(MethodSelf<T> self, A... a) const { return (self.ptr->*m)(a...); }
};
template <typename T, typename C, typename R, typename... A>
struct MemberMethod<T, R (C::*)(A...) const> {
  R (C::*m)(A...) const;
  R operator()(MethodSelf<T> self, A... a) const { return (self.ptr->*m)(a...); }
};

/*! Byte offset of `member` from the PFObject header of a T. */
template <typename T, typename F, typename C>
int64_t FieldOffset(F C::* member) noexcept {
  // Pointer arithmetic on a fake, suitably aligned address: nothing is dereferenced.
  alignas(alignof(T)) static char probe[sizeof(T)];
  T* p = reinterpret_cast<T*>(probe);
  return reinterpret_cast<const char*>(&(p->*member)) -
         reinterpret_cast<const char*>(static_cast<PFObject*>(p));
}

}  // namespace detail

namespace reflection {

/*!
 * The constructor of T taking `A...`, for ObjectDef::def: `.def(init<int64_t, int64_t>())`
 * registers `__create__` as `make_object<T>(a...)`, so Python writes `Pair(1, 2)`; with names
 * and defaults, `.def(init<int64_t, int64_t>(), {"a", "b"_a = 0})` lets it write `Pair(a=1)`.
 */
template <typename... A>
struct init {};

/*!
 * Registers the reflection of object class T (declared with PACKEDFUN_DECLARE_OBJECT_INFO).
 * Each def_* throws packedfun::Error when the type table refuses it (a duplicate name).
 */
template <typename T>
class ObjectDef {
 public:
  explicit ObjectDef(const char* doc = nullptr) : type_index_(T::RuntimeTypeIndex()) {
    static_assert(std::is_base_of<Object, T>::value, "ObjectDef<T>: T must derive from Object");
    if (doc != nullptr) {
      PFByteArray d{doc, std::strlen(doc)};
      detail::CheckCallResult(PFTypeSetDoc(type_index_, &d));
    }
    detail::RegisterLayout<T>(type_index_);
  }

  /*! A read-only field: readable from every language, never writable through reflection.
   *  `flags` may add PACKEDFUN_FIELD_NO_COMPARE (left out of structural equality and hash). */
  template <typename F, typename C>
  ObjectDef& def_ro(const char* name, F C::* member, const char* doc = "", int32_t flags = 0) {
    return AddField(name, member, doc, flags | PACKEDFUN_FIELD_READONLY, nullptr);
  }
  /*! A read-write field; writes are type-checked (TypeError "expected T, got X"). */
  template <typename F, typename C>
  ObjectDef& def_rw(const char* name, F C::* member, const char* doc = "", int32_t flags = 0) {
    return AddField(name, member, doc, flags & ~PACKEDFUN_FIELD_READONLY, &detail::FieldSetter<F>);
  }
  /*! An instance method: a member function pointer, or a callable taking the receiver (a
   *  reference to T, or ObjectPtr<T>) first. The docstring is a string literal, so that a
   *  single-name list `{"x"}` always means the parameter names (overload below). */
  template <typename Fn>
  ObjectDef& def(const char* name, Fn fn) {
    return AddMethod(name, AsCallable(std::move(fn)), "", 0);
  }
  template <typename Fn, size_t N>
  ObjectDef& def(const char* name, Fn fn, const char (&doc)[N]) {
    return AddMethod(name, AsCallable(std::move(fn)), doc, 0);
  }
  /*! A static method; one named "__create__" is the type's constructor. */
  template <typename Fn>
  ObjectDef& def_static(const char* name, Fn fn) {
    return AddMethod(name, std::move(fn), "", PACKEDFUN_METHOD_STATIC);
  }
  template <typename Fn, size_t N>
  ObjectDef& def_static(const char* name, Fn fn, const char (&doc)[N]) {
    return AddMethod(name, std::move(fn), doc, PACKEDFUN_METHOD_STATIC);
  }

  /*! As def_static(name, fn, doc), naming the parameters and their defaults:
   *  `def_static("__create__", Make, {"a", "b"_a = 0})` lets Python write `Pair(a=1)`. */
  template <typename Fn>
  ObjectDef& def_static(const char* name, Fn fn, const ArgList& args, const char* doc = "") {
    return AddMethod(name, std::move(fn), doc, PACKEDFUN_METHOD_STATIC, args);
  }
  /*! As def(name, fn, doc), naming the parameters after the receiver and their defaults. */
  template <typename Fn>
  ObjectDef& def(const char* name, Fn fn, const ArgList& args, const char* doc = "") {
    ArgList all{"self"};
    all.insert(all.end(), args.begin(), args.end());
    return AddMethod(name, AsCallable(std::move(fn)), doc, 0, all);
  }

  /*! The constructor taking `A...` (a C++ constructor of T) as `__create__`. */
  template <typename... A>
  ObjectDef& def(init<A...>) {
    return AddMethod("__create__", Constructor<A...>(), "", PACKEDFUN_METHOD_STATIC);
  }
  template <typename... A, size_t N>
  ObjectDef& def(init<A...>, const char (&doc)[N]) {
    return AddMethod("__create__", Constructor<A...>(), doc, PACKEDFUN_METHOD_STATIC);
  }
  /*! As def(init<A...>()), naming the parameters and their defaults: `{"a", "b"_a = 0}`. */
  template <typename... A>
  ObjectDef& def(init<A...>, const ArgList& args, const char* doc = "") {
    return AddMethod("__create__", Constructor<A...>(), doc, PACKEDFUN_METHOD_STATIC, args);
  }

  /*! Declares the GIL policy of the method defined last: `.def("norm", &P::Norm).gil(
   *  GILPolicy::kHold)` for a trivial method that never blocks nor calls back. */
  ObjectDef& gil(GILPolicy policy) {
    if (last_method_.get() != nullptr) last_method_.SetGILPolicy(policy);
    return *this;
  }

  int32_t type_index() const noexcept { return type_index_; }

 private:
  /*! A member function pointer as a callable taking the receiver first; others as they are. */
  template <typename Fn>
  static auto AsCallable(Fn fn) {
    if constexpr (std::is_member_function_pointer<Fn>::value) {
      return detail::MemberMethod<T, Fn>{fn};
    } else {
      return fn;
    }
  }

  template <typename... A>
  static auto Constructor() {
    return [](A... a) { return make_object<T>(std::move(a)...); };
  }

  template <typename F, typename C>
  ObjectDef& AddField(const char* name, F C::* member, const char* doc, int32_t flags,
                      PFFieldSetter setter) {
    static_assert(std::is_base_of<C, T>::value, "the member must belong to T or a base");
    static_assert(detail::HasTryFrom<F>::value, "a reflected field needs TypeTraits with TryFrom");
    PFFieldInfo info;
    info.name = PFByteArray{name, std::strlen(name)};
    info.doc = PFByteArray{doc, std::strlen(doc)};
    info.offset = detail::FieldOffset<T>(member);
    info.flags = flags;
    info.static_type_index = detail::FieldStaticTypeIndex<F>();
    info.getter = &detail::FieldGetter<F>;
    info.setter = setter;
    detail::CheckCallResult(PFTypeRegisterField(type_index_, &info));
    return *this;
  }

  // Two overloads rather than an optional ArgList*: a method without names then never
  // instantiates the metadata code (it would be compiled whenever AddMethod is not inlined).
  template <typename Fn>
  ObjectDef& AddMethod(const char* name, Fn fn, const char* doc, int32_t flags) {
    return RegisterMethod(name, Function::FromTyped(std::move(fn), FullName(name)), doc, flags);
  }
  template <typename Fn>
  ObjectDef& AddMethod(const char* name, Fn fn, const char* doc, int32_t flags,
                       const ArgList& args) {
    return RegisterMethod(name, Function::FromTyped(std::move(fn), FullName(name), args), doc,
                          flags);
  }
  static std::string FullName(const char* name) { return std::string(T::_type_key) + "." + name; }
  ObjectDef& RegisterMethod(const char* name, const Function& f, const char* doc, int32_t flags) {
    PFMethodInfo info;
    info.name = PFByteArray{name, std::strlen(name)};
    info.doc = PFByteArray{doc, std::strlen(doc)};
    info.method = f.get();
    info.flags = flags;
    info.reserved = 0;
    detail::CheckCallResult(PFTypeRegisterMethod(type_index_, &info));
    last_method_ = std::move(f);
    return *this;
  }

  int32_t type_index_;
  Function last_method_;  // what .gil() applies to
};

/*!
 * Exposes enum E to Python as an `enum.IntEnum` subclass with the names given here:
 *
 *   PACKEDFUN_ENUM_NAME(mylib::Color, "mylib.Color");
 *   PACKEDFUN_STATIC_INIT_BLOCK() {
 *     packedfun::reflection::EnumDef<mylib::Color>()
 *         .value("red", mylib::Color::kRed)
 *         .value("green", mylib::Color::kGreen);
 *   }
 *
 * The key defaults to the PACKEDFUN_ENUM_NAME of E; a typed function whose result is E has that
 * key as its metadata return type, which is what makes Python return the IntEnum member. The
 * definition lives in the runtime as the global function "__enum__.<key>" returning the flat
 * Array [name0, value0, name1, value1, ...]; `packedfun.enum_class(key)` builds the class from it
 * on either backend. Each `.value` re-registers that record (override), so the last call wins.
 */
template <typename E>
class EnumDef {
  static_assert(std::is_enum<E>::value, "EnumDef<E>: E must be an enum");

 public:
  explicit EnumDef(std::string key = EnumName<E>::Get()) : key_(std::move(key)) {}

  /*! Adds member `name` with value `v`. */
  EnumDef& value(const char* name, E v) {
    items_.push_back(Any(String(name)));
    items_.push_back(Any(static_cast<int64_t>(v)));
    Array<Any> members(items_);
    Function f = Function::FromTyped([members]() { return members; }, "__enum__." + key_);
    std::string reg = "__enum__." + key_;
    PFByteArray n{reg.data(), reg.size()};
    detail::CheckCallResult(PFFunctionSetGlobal(&n, f.get(), 1, nullptr));
    return *this;
  }

 private:
  std::string key_;
  std::vector<Any> items_;
};

/* ---- reading reflected objects by name (any type: C++-defined, or defined in Python) ---------
 * These look a member up through the type table on every call: the object's own type first, then
 * its ancestors. For a hot loop, look the PFFieldInfo up once with FindField and call its getter.
 */

/*! The reflected field `name` of type `type_index` or an ancestor, or NULL. */
inline const PFFieldInfo* FindField(int32_t type_index, std::string_view name) {
  const PFTypeInfo* info = nullptr;
  ::packedfun::detail::CheckCallResult(PFTypeGetInfo(type_index, &info));
  for (int32_t d = info->depth; d >= 0; --d) {
    const PFTypeInfo* level = info;
    if (d != info->depth)
      ::packedfun::detail::CheckCallResult(PFTypeGetInfo(info->ancestors[d], &level));
    for (int32_t i = 0; i < level->num_fields; ++i) {
      const PFFieldInfo& f = level->fields[i];
      if (std::string_view(f.name.data, f.name.size) == name) return &f;
    }
  }
  return nullptr;
}

namespace access_detail {
[[noreturn]] inline void ThrowNoMember(const ObjectRef& obj, const char* what,
                                       std::string_view name) {
  const PFTypeInfo* info = nullptr;
  std::string key = "None";
  if (obj.defined() && PFTypeGetInfo(obj.type_index(), &info) == 0) {
    key.assign(info->type_key.data, info->type_key.size);
  }
  PACKEDFUN_THROW(AttributeError) << "'" << key << "' has no " << what << " '" << name << "'";
}
}  // namespace access_detail

/*! The value of field `name` of `obj`. Throws AttributeError when it has none. */
inline Any GetField(const ObjectRef& obj, std::string_view name) {
  const PFFieldInfo* f = obj.defined() ? FindField(obj.type_index(), name) : nullptr;
  if (f == nullptr) access_detail::ThrowNoMember(obj, "field", name);
  PFAny v;
  v.type_index = kPFTypeNone;
  v.zero_padding = 0;
  v.v_int64 = 0;
  ::packedfun::detail::CheckCallResult(
      f->getter(reinterpret_cast<char*>(obj.get()) + f->offset, &v));
  return ::packedfun::detail::AnyUnsafe::MoveFromPFAny(&v);
}

/*! Sets field `name` of `obj` to `value`. Throws AttributeError when it has no such field or the
 *  field is read-only (a frozen class), TypeError when the value does not fit its declared type. */
inline void SetField(const ObjectRef& obj, std::string_view name, AnyView value) {
  const PFFieldInfo* f = obj.defined() ? FindField(obj.type_index(), name) : nullptr;
  if (f == nullptr) access_detail::ThrowNoMember(obj, "field", name);
  if (f->setter == nullptr) access_detail::ThrowNoMember(obj, "writable field", name);
  ::packedfun::detail::CheckCallResult(
      f->setter(reinterpret_cast<char*>(obj.get()) + f->offset, &value.raw()));
}

/*! The method `name` of type `type_index` or an ancestor (instance methods take self first; the
 *  static "__create__" is the constructor), or a null Function. */
inline Function FindMethod(int32_t type_index, std::string_view name) {
  const PFTypeInfo* info = nullptr;
  ::packedfun::detail::CheckCallResult(PFTypeGetInfo(type_index, &info));
  for (int32_t d = info->depth; d >= 0; --d) {
    const PFTypeInfo* level = info;
    if (d != info->depth)
      ::packedfun::detail::CheckCallResult(PFTypeGetInfo(info->ancestors[d], &level));
    for (int32_t i = 0; i < level->num_methods; ++i) {
      const PFMethodInfo& m = level->methods[i];
      if (std::string_view(m.name.data, m.name.size) == name) {
        return ::packedfun::detail::ObjectUnsafe::FromBorrowed<Function>(m.method);
      }
    }
  }
  return Function();
}

/*! Calls the instance method `name` of `obj` with `args`. Throws AttributeError when none. */
template <typename... Args>
Any CallMethod(const ObjectRef& obj, std::string_view name, Args&&... args) {
  Function f = obj.defined() ? FindMethod(obj.type_index(), name) : Function();
  if (!f.defined()) access_detail::ThrowNoMember(obj, "method", name);
  return f(obj, std::forward<Args>(args)...);
}

/*! The index of `type_key`; throws KeyError when no type has that key. */
inline int32_t TypeIndexOf(std::string_view type_key) {
  PFByteArray k{type_key.data(), type_key.size()};
  int32_t index = 0;
  ::packedfun::detail::CheckCallResult(PFTypeKeyToIndex(&k, &index));
  return index;
}

/*! Whether `obj` is an instance of the type registered as `type_key` (or of a type derived from
 *  it). False for a null reference or a key nobody registered. */
inline bool IsInstance(const ObjectRef& obj, std::string_view type_key) {
  PFByteArray k{type_key.data(), type_key.size()};
  int32_t index = 0;
  if (!obj.defined()) return false;
  if (PFTypeKeyToIndex(&k, &index) != 0) {
    PFObject* err = nullptr;
    PFErrorMoveFromRaised(&err);
    PFObjectDecRef(err);
    return false;
  }
  return PFTypeIsInstance(obj.type_index(), index) != 0;
}

/*! Builds an object of `type_key` through its registered constructor ("__create__"). */
template <typename... Args>
Any Construct(std::string_view type_key, Args&&... args) {
  Function ctor = FindMethod(TypeIndexOf(type_key), "__create__");
  if (!ctor.defined()) {
    PACKEDFUN_THROW(TypeError) << "'" << type_key << "' has no registered constructor";
  }
  return ctor(std::forward<Args>(args)...);
}

}  // namespace reflection
}  // namespace packedfun

#endif  // PACKEDFUN_REFLECTION_H_
