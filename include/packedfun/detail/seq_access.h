// Internal: SeqAccess, the read side (size, indexing, iteration) shared by Array and List.
#ifndef PACKEDFUN_DETAIL_SEQ_ACCESS_H_
#define PACKEDFUN_DETAIL_SEQ_ACCESS_H_

#include <packedfun/any.h>
#include <packedfun/c_api.h>
#include <packedfun/detail/container_details.h>
#include <packedfun/error.h>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace packedfun {
namespace detail {

/*! Read access shared by Array and List. Elements are converted to T when read. A List's iterator
 *  walks by index, so it stays valid while the List grows (but not past a shrink); an Array's
 *  walks its cells by pointer (an Array never changes). */
template <typename T, typename Self>
class SeqAccess {
  /*! Elements whose check is their noexcept TryFrom (numbers, bool): tried first, inline. */
  static constexpr bool kPlainElement = std::is_arithmetic<T>::value;
  /*! Whether the cells stay where they are for the object's life (an Array: immutable), so an
   *  iterator reads them through a pointer taken once; a List's move when it grows. */
  static constexpr bool kFixedCells() { return Self::_type_static_index == kPFTypeArray; }

 public:
  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = T;
    iterator(const Self* self, int64_t i) noexcept : self_(self), i_(i) {
      if constexpr (kFixedCells()) cell_ = self->seq()->data + i;
    }
    T operator*() const {
      if constexpr (kFixedCells()) {  // in range by construction: no size read, no index
        if constexpr (kPlainElement) {
          if (std::optional<T> r = TypeTraits<T>::TryFrom(cell_)) return *r;
        }
        return static_cast<const SeqAccess*>(self_)->At(cell_ - self_->seq()->data);
      } else {
        return (*self_)[i_];
      }
    }
    iterator& operator++() noexcept {
      if constexpr (kFixedCells()) {
        ++cell_;
      } else {
        ++i_;
      }
      return *this;
    }
    bool operator==(const iterator& o) const noexcept {
      if constexpr (kFixedCells()) return cell_ == o.cell_;
      return i_ == o.i_;
    }
    bool operator!=(const iterator& o) const noexcept { return !(*this == o); }

   private:
    const Self* self_;
    int64_t i_;                    // a List's position
    const PFAny* cell_ = nullptr;  // an Array's (its cells never move): the cell itself
  };

  /*! The runtime object (borrowed). */
  PFSeqObject* seq() const noexcept { return reinterpret_cast<PFSeqObject*>(self().get()); }
  int64_t size() const noexcept { return seq()->size; }
  bool empty() const noexcept { return size() == 0; }
  /*! Element i (negative counts from the end); IndexError when out of range. */
  T operator[](int64_t i) const {
    if constexpr (kPlainElement) {  // the common case inline: no string built, no call
      int64_t n = size();
      int64_t j = i < 0 ? i + n : i;
      if (j >= 0 && j < n) {
        if (std::optional<T> r = TypeTraits<T>::TryFrom(&seq()->data[j])) return *r;
      }
    }
    return At(i);
  }
  T front() const { return (*this)[0]; }
  T back() const { return (*this)[-1]; }
  iterator begin() const noexcept { return iterator(&self(), 0); }
  iterator end() const noexcept { return iterator(&self(), size()); }
  /*! The elements as a std::vector<T>. */
  std::vector<T> to_vector() const {
    std::vector<T> out;
    out.reserve(static_cast<size_t>(size()));
    for (int64_t i = 0; i < size(); ++i) out.push_back((*this)[i]);
    return out;
  }

  /*! Throws ElementMismatch unless every element of `obj` (a sequence) converts to T. Returns
   *  whether every element is also stored as T stores it (detail::KeptAs): when not, an Array<T>
   *  made from `obj` is a converted copy (Converted), so that it holds what reading gives. */
  static bool _type_check_elements(PFObject* obj) {
    bool kept = true;
    if constexpr (!IsAnyElement<T>()) {
      const PFSeqObject* s = reinterpret_cast<const PFSeqObject*>(obj);
      for (int64_t i = 0; i < s->size; ++i) {
        if constexpr (kPlainElement) {  // the path piece only for the element that fails
          if (TypeTraits<T>::TryFrom(&s->data[i])) {
            kept = kept && KeptAs<T>(s->data[i]);
            continue;
          }
        }
        bool k = CheckElement<T>(s->data[i], [i] { return "[" + std::to_string(i) + "]"; });
        kept = kept && k;
      }
    }
    return kept;
  }
  static std::string _type_name() {
    if constexpr (IsAnyElement<T>()) {
      return Self::kKind;
    } else {
      return std::string(Self::kKind) + "[" + ElementTypeName<T>() + "]";
    }
  }

 protected:
  const Self& self() const noexcept { return static_cast<const Self&>(*this); }
  /*! operator[]'s full path: IndexError, and the element error naming the container. */
  __attribute__((noinline)) T At(int64_t i) const {
    int64_t n = size();
    int64_t j = i < 0 ? i + n : i;
    if (j < 0 || j >= n) {
      throw Error("IndexError", Self::_type_name() + " index " + std::to_string(i) +
                                    " out of range for size " + std::to_string(n));
    }
    return ElementAs<T>(seq()->data[j], Self::_type_name(), j);
  }
  /*! A new sequence (by `create`) of the elements of `obj` converted to T, for elements that
   *  _type_check_elements accepted but did not keep. */
  static PFObject* Converted(PFObject* obj, int (*create)(const PFAny*, int64_t, PFAny*)) {
    const PFSeqObject* s = reinterpret_cast<const PFSeqObject*>(obj);
    OwnedAnys items(static_cast<size_t>(s->size));
    for (int64_t i = 0; i < s->size; ++i) {
      std::optional<T> v = TypeTraits<T>::TryFrom(&s->data[i]);
      // checked already: only a List element changed meanwhile by another thread can fail here
      if (!v) v = ElementAs<T>(s->data[i], Self::_type_name(), i);
      items.push(ToOwnedAny<T>(std::move(*v)));
    }
    PFAny out;
    SetPod(&out, kPFTypeNone);
    CheckCallResult(create(items.data(), items.size(), &out));
    return out.v_obj;
  }
  /*! A new sequence from C++ values, made by `create` (PFArrayCreate or PFListCreate). */
  template <typename It>
  static PFObject* Build(It first, It last, int (*create)(const PFAny*, int64_t, PFAny*)) {
    OwnedAnys items(0);
    for (; first != last; ++first) items.push(ToOwnedAny<T>(T(*first)));
    PFAny out;
    SetPod(&out, kPFTypeNone);
    CheckCallResult(create(items.data(), items.size(), &out));
    return out.v_obj;
  }
};

}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_DETAIL_SEQ_ACCESS_H_
