// Array<T>: a typed reference to an immutable sequence (the runtime's PFSeqObject).
#ifndef PACKEDFUN_ARRAY_H_
#define PACKEDFUN_ARRAY_H_

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
 * An immutable sequence of T (kPFTypeArray). `Array<Any>` holds anything; any other T is checked
 * when the Array arrives (a TypeError names the first bad element: "Array[int] element [3]:
 * expected int, got str"), and converted when an element is stored otherwise than T stores it
 * (an int arriving in an Array<double>: the Array is then a converted copy). Never null: a default
 * Array is empty.
 */
template <typename T = Any>
class Array : public ObjectRef, public detail::SeqAccess<T, Array<T>> {
  using Access = detail::SeqAccess<T, Array<T>>;

 public:
  using value_type = T;
  static constexpr const char* kKind = "Array";
  static constexpr int32_t _type_static_index = kPFTypeArray;

  Array() : Array(std::initializer_list<T>{}) {}
  Array(std::initializer_list<T> items)  // NOLINT(runtime/explicit)
      : ObjectRef(Own(Access::Build(items.begin(), items.end(), &PFArrayCreate))) {}
  explicit Array(const std::vector<T>& items)
      : ObjectRef(Own(Access::Build(items.begin(), items.end(), &PFArrayCreate))) {}
  template <typename It>
  Array(It first, It last) : ObjectRef(Own(Access::Build(first, last, &PFArrayCreate))) {}
  /*! Re-types another Array, checking every element (TypeError naming the first bad one); the
   *  same object when its elements are stored as T stores them, else a converted copy. */
  template <typename U>
  explicit Array(const Array<U>& other) : Array(_type_try_from(other.get())) {}

  using Access::_type_name;
  static constexpr bool _type_is_nullable = false;
  static bool _type_accepts(int32_t type_index) noexcept { return type_index == kPFTypeArray; }
  static constexpr bool _type_copies_to_convert = true;
  /*! `obj` itself when its elements are stored as T stores them; else a copy of the elements
   *  converted to T (an int in an Array<float> becomes a float), so that returning the Array gives
   *  back what reading it gives. */
  static Array _type_try_from(PFObject* obj) {
    bool kept = true;
    detail::ReportElementMismatch(&_type_name, [&] { kept = Access::_type_check_elements(obj); });
    if (kept) return Array(ObjectPtr<PFObject>::FromBorrowed(obj), 0);
    return Array(Own(Access::Converted(obj, &PFArrayCreate)), 0);
  }

 private:
  Array(ObjectPtr<PFObject> p, int) noexcept : ObjectRef(std::move(p)) {}
  static ObjectPtr<PFObject> Own(PFObject* obj) noexcept {
    return ObjectPtr<PFObject>::FromOwned(obj);
  }
};

}  // namespace packedfun

#endif  // PACKEDFUN_ARRAY_H_
