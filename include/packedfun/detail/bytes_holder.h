// Internal: the owned storage shared by String and Bytes (a small inline form or a bytes object).
#ifndef PACKEDFUN_DETAIL_BYTES_HOLDER_H_
#define PACKEDFUN_DETAIL_BYTES_HOLDER_H_

#include <packedfun/c_api.h>
#include <packedfun/detail/bytes_any.h>
#include <packedfun/error.h>
#include <packedfun/object.h>

#include <cstring>
#include <string>
#include <string_view>

namespace packedfun {
namespace detail {

/*!
 * Owns one PFAny of kind kSmall (up to 7 bytes inline) or kObject (a PFBytesObject), exactly as
 * PFStringCreate / PFBytesCreate return them. Copies share the object. The bytes are always
 * NUL-terminated; for the small form they live inside the holder itself.
 */
template <int32_t kSmall, int32_t kObject>
class BytesHolder {
 public:
  const char* data() const noexcept {
    return data_.type_index == kSmall
               ? data_.v_bytes
               : reinterpret_cast<const PFBytesObject*>(data_.v_obj)->bytes.data;
  }
  size_t size() const noexcept {
    return data_.type_index == kSmall
               ? data_.small_len
               : reinterpret_cast<const PFBytesObject*>(data_.v_obj)->bytes.size;
  }
  bool empty() const noexcept { return size() == 0; }
  std::string_view view() const noexcept { return std::string_view(data(), size()); }
  std::string str() const { return std::string(data(), size()); }
  /*! The held value (borrowed): a small kind inline or the object. */
  const PFAny& raw() const noexcept { return data_; }

  int compare(std::string_view other) const noexcept { return view().compare(other); }

 protected:
  using Create = int (*)(const PFByteArray*, PFAny*);

  BytesHolder() noexcept : data_(EmptyValue()) {}
  BytesHolder(const char* bytes, size_t size, Create create) {
    PFByteArray arr{bytes, size};
    data_.type_index = kPFTypeNone;
    data_.zero_padding = 0;
    data_.v_int64 = 0;
    CheckCallResult(create(&arr, &data_));
  }
  BytesHolder(const BytesHolder& other) noexcept : data_(other.data_) { Retain(); }
  BytesHolder(BytesHolder&& other) noexcept : data_(other.data_) { other.data_ = EmptyValue(); }
  ~BytesHolder() { ReleaseObject(); }
  // Two overloads, not one by-value parameter: a derived class's implicit operator= could not
  // construct the protected by-value BytesHolder argument.
  BytesHolder& operator=(const BytesHolder& other) noexcept {
    CopyFrom(other.data_);
    return *this;
  }
  BytesHolder& operator=(BytesHolder&& other) noexcept {
    PFAny tmp = data_;
    data_ = other.data_;
    other.data_ = tmp;
    return *this;
  }

  /*! Takes over an owned PFAny that is already of kind kSmall or kObject. */
  void AdoptOwned(const PFAny& owned) noexcept {
    ReleaseObject();
    data_ = owned;
  }
  /*! Copies a borrowed PFAny of kind kSmall or kObject (adding a reference). */
  void CopyFrom(const PFAny& borrowed) noexcept {
    PFAny old = data_;
    data_ = borrowed;
    Retain();
    if (old.type_index == kObject) ObjectRelease(old.v_obj);
  }

 private:
  static PFAny EmptyValue() noexcept {
    PFAny v;
    v.type_index = kSmall;
    v.small_len = 0;
    v.v_int64 = 0;
    return v;
  }
  void Retain() noexcept {
    if (data_.type_index == kObject) ObjectRetain(data_.v_obj);
  }
  void ReleaseObject() noexcept {
    if (data_.type_index == kObject) ObjectRelease(data_.v_obj);
  }

  PFAny data_;
};

}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_DETAIL_BYTES_HOLDER_H_
