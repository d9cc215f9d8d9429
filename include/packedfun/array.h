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
  /*! Appends `view`'s items to the new, unshared `seq` as T stores them (int cells, or float cells
   *  for double, as the checked Array would hold them), read in chunks; false at the first item
   *  that is not a plain number fitting T. */
  static bool FillFromView(const PFContainerView* view, PFSeqObject* seq) {
    constexpr int64_t kChunk = 64;
    for (int64_t start = 0; start < view->size; start += kChunk) {
      const int64_t m = view->size - start < kChunk ? view->size - start : kChunk;
      PFAny* cells = seq->data + start;
      if constexpr (std::is_same<T, double>::value) {
        double buf[kChunk];
        if (view->vtable->read_float64(view, start, buf, m) != m) return false;
        for (int64_t k = 0; k < m; ++k) {
          detail::SetPod(&cells[k], kPFTypeFloat);
          cells[k].v_float64 = buf[k];
        }
      } else {
        int64_t buf[kChunk];
        if (view->vtable->read_int64(view, start, buf, m) != m) return false;
        for (int64_t k = 0; k < m; ++k) {
          detail::SetPod(&cells[k], kPFTypeInt);
          cells[k].v_int64 = buf[k];
          if constexpr (!std::is_same<T, int64_t>::value) {  // a narrower type: its range check
            if (!TypeTraits<T>::TryFrom(&cells[k])) return false;
          }
        }
      }
      seq->size = start + m;
    }
    return true;
  }
};

}  // namespace packedfun

#endif  // PACKEDFUN_ARRAY_H_
