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
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string>
#include <type_traits>
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
  /*! An Array of numbers (T an integer type but bool, or double) taken as a typed Function
   *  parameter reads the caller's list in place (kPFTypeContainerView): the Array is filled
   *  straight from the list's items, with no Array made by the caller to be checked, shared and
   *  released. */
  static constexpr bool _type_reads_container_view =
      (std::is_integral<T>::value && !std::is_same<T, bool>::value) ||
      std::is_same<T, double>::value;
  /*! The Array of `view`'s items, or nullopt unless every item is plain and fits T (the typed call
   *  then converts the Array the caller would have passed: same result, same errors). */
  static std::optional<Array> _type_from_container_view(const PFContainerView* view) {
    if (view->kind != kPFTypeArray) return std::nullopt;
    PFAny made;
    detail::SetPod(&made, kPFTypeNone);
    detail::CheckCallResult(PFArrayCreate(nullptr, view->size, &made));  // room, size 0
    Array out(Own(made.v_obj), 0);
    if (!FillFromView(view, out.seq())) return std::nullopt;
    return out;
  }

 private:
  Array(ObjectPtr<PFObject> p, int) noexcept : ObjectRef(std::move(p)) {}
  static ObjectPtr<PFObject> Own(PFObject* obj) noexcept {
    return ObjectPtr<PFObject>::FromOwned(obj);
  }
  /*! Fills the new, unshared `seq` (room for `view->size` cells, size 0) with `view`'s items as T
   *  stores them (int cells, or float cells for double, as the checked Array would hold them);
   *  false at the first item that is not a plain number fitting T. The numbers are read straight
   *  into the upper half of the cells' room and widened in place, front to back: cell k (bytes
   *  [16k, 16k + 16)) ends where number k + 1 begins (8n + 8(k + 1)), so each number is read
   *  before anything overwrites it, and no buffer or chunking is needed. The reads are memcpy
   *  (byte accesses), so the compiler cannot move a cell's store above the read it overlaps. */
  static bool FillFromView(const PFContainerView* view, PFSeqObject* seq) {
    const int64_t n = view->size;
    if (n == 0) return true;
    char* room = reinterpret_cast<char*>(seq->data);
    char* numbers = room + sizeof(int64_t) * static_cast<size_t>(n);
    constexpr bool kDouble = std::is_same<T, double>::value;
    if constexpr (kDouble) {
      if (view->vtable->read_float64(view, 0, reinterpret_cast<double*>(numbers), n) != n) {
        return false;
      }
    } else if (view->vtable->read_int64(view, 0, reinterpret_cast<int64_t*>(numbers), n) != n) {
      return false;
    }
    PFAny* cells = seq->data;
    for (int64_t k = 0; k < n; ++k) {
      uint64_t bits;
      std::memcpy(&bits, numbers + sizeof(bits) * static_cast<size_t>(k), sizeof(bits));
      detail::SetPod(&cells[k], kDouble ? kPFTypeFloat : kPFTypeInt);
      cells[k].v_uint64 = bits;
      if constexpr (!kDouble && !std::is_same<T, int64_t>::value) {  // a narrower type's range
        if (!TypeTraits<T>::TryFrom(&cells[k])) return false;
      }
    }
    seq->size = n;
    return true;
  }
};

}  // namespace packedfun

#endif  // PACKEDFUN_ARRAY_H_
