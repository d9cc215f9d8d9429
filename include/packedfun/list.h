// List<T>: a typed reference to a mutable sequence (kPFTypeList), written through the C ABI.
#ifndef PACKEDFUN_LIST_H_
#define PACKEDFUN_LIST_H_

#include <packedfun/any.h>
#include <packedfun/c_api.h>
#include <packedfun/detail/container_details.h>
#include <packedfun/detail/seq_access.h>
#include <packedfun/error.h>
#include <packedfun/object.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace packedfun {

/*!
 * A mutable sequence of T (kPFTypeList). Writes go through the C ABI (PFList*), so every language
 * sees them. Elements are checked when the List arrives and converted again when read (another
 * language may have stored something else since); the List stays the caller's object, so an int
 * stored in a List<double> stays an int there (unlike Array, which converts by copying). Never
 * null: a default List is a new empty one.
 */
template <typename T = Any>
class List : public ObjectRef, public detail::SeqAccess<T, List<T>> {
  using Access = detail::SeqAccess<T, List<T>>;

 public:
  using value_type = T;
  static constexpr const char* kKind = "List";
  static constexpr int32_t _type_static_index = kPFTypeList;

  List() : List(std::initializer_list<T>{}) {}
  List(std::initializer_list<T> items)  // NOLINT(runtime/explicit)
      : ObjectRef(Own(Access::Build(items.begin(), items.end(), &PFListCreate))) {}
  explicit List(const std::vector<T>& items)
      : ObjectRef(Own(Access::Build(items.begin(), items.end(), &PFListCreate))) {}

  void push_back(const T& value) const {
    PFAny v = detail::ToOwnedAny<T>(T(value));
    int rc = PFListAppend(get(), &v);
    PFAnyRelease(&v);
    detail::CheckCallResult(rc);
  }
  /*! Replaces element i (negative counts from the end); IndexError when out of range. */
  void Set(int64_t i, const T& value) const {
    PFAny v = detail::ToOwnedAny<T>(T(value));
    int rc = PFListSetItem(get(), i, &v);
    PFAnyRelease(&v);
    detail::CheckCallResult(rc);
  }
  /*! Inserts before i, clamped like Python's list.insert. */
  void insert(int64_t i, const T& value) const {
    PFAny v = detail::ToOwnedAny<T>(T(value));
    int rc = PFListInsert(get(), i, &v);
    PFAnyRelease(&v);
    detail::CheckCallResult(rc);
  }
  /*! Removes and returns element i (default: the last); IndexError when out of range. */
  T pop(int64_t i = -1) const {
    PFAny out;
    detail::SetPod(&out, kPFTypeNone);
    detail::CheckCallResult(PFListPop(get(), i, &out));
    Any owner = detail::AnyUnsafe::MoveFromPFAny(&out);
    return detail::ElementAs<T>(owner.raw(), Access::_type_name(), i);
  }
  void clear() const { detail::CheckCallResult(PFListClear(get())); }

  using Access::_type_name;
  static constexpr bool _type_is_nullable = false;
  static bool _type_accepts(int32_t type_index) noexcept { return type_index == kPFTypeList; }
  static List _type_try_from(PFObject* obj) {
    detail::ReportElementMismatch(&_type_name, [&] { Access::_type_check_elements(obj); });
    return List(ObjectPtr<PFObject>::FromBorrowed(obj), 0);
  }

 private:
  List(ObjectPtr<PFObject> p, int) noexcept : ObjectRef(std::move(p)) {}
  static ObjectPtr<PFObject> Own(PFObject* obj) noexcept {
    return ObjectPtr<PFObject>::FromOwned(obj);
  }
};

}  // namespace packedfun

#endif  // PACKEDFUN_LIST_H_
