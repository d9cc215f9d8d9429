// Internal: the owned storage shared by String and Bytes (a small inline form or a bytes object).
#ifndef PACKEDFUN_DETAIL_BYTES_HOLDER_H_
#define PACKEDFUN_DETAIL_BYTES_HOLDER_H_

#include <packedfun/c_api.h>
#include <packedfun/detail/bytes_any.h>
#include <packedfun/error.h>
#include <packedfun/object.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

namespace packedfun {
namespace detail {

/*! Tag of the borrowing constructor (typed Function parameters only, see string.h). */
struct BorrowArgument {};

/*!
 * Owns one PFAny of kind kSmall (up to 7 bytes inline) or kObject (a PFBytesObject), exactly as
 * PFStringCreate / PFBytesCreate return them. Copies share the object. The bytes are always
 * NUL-terminated; for the small form they live inside the holder itself.
 *
 * A third, borrowed form exists only for typed Function parameters (string.h tells the rules):
 * kind kView (StrView / BytesView) pointing at the caller's PFByteArray, valid for the call.
 * size()/view() read the caller's bytes in place; data() (which must be NUL-terminated) returns
 * the caller's bytes when the caller said they are NUL-terminated (PACKEDFUN_VIEW_NUL_TERMINATED),
 * else makes an owned copy once, on first use, published atomically so that concurrent readers of
 * one parameter are safe; copying, moving or assigning a borrowed holder makes an owned one.
 * In the borrowed form `small_len` is the state: 0 borrowed, 1 copy in progress, 2 copied
 * (then v_ptr points at the `bytes` of an object this holder owns), or, fixed for the call,
 * PACKEDFUN_VIEW_NUL_TERMINATED (the caller's bytes end in a NUL; raw() passes the promise on).
 */
template <int32_t kSmall, int32_t kObject>
class BytesHolder {
 public:
  /*! The bytes, NUL-terminated (a borrowed holder copies them on first use: may throw). */
  const char* data() const {
    if (data_.type_index == kSmall) return data_.v_bytes;
    if (data_.type_index == kObject) return ObjectBytes(data_)->data;
    if (LoadState() == kNulTerminated) return LoadView()->data;  // the caller's C string
    return BorrowedData();
  }
  size_t size() const noexcept {
    if (data_.type_index == kSmall) return data_.small_len;
    if (data_.type_index == kObject) return ObjectBytes(data_)->size;
    return LoadView()->size;
  }
  bool empty() const noexcept { return size() == 0; }
  std::string_view view() const noexcept {
    if (data_.type_index == kSmall) return std::string_view(data_.v_bytes, data_.small_len);
    const PFByteArray* b = data_.type_index == kObject ? ObjectBytes(data_) : LoadView();
    return std::string_view(b->data, b->size);
  }
  std::string str() const { return std::string(view()); }
  /*! The held value (borrowed): a small kind inline, the object, or (borrowed form) a view. */
  const PFAny& raw() const noexcept { return data_; }
  /*! Whether this holder borrows the caller's bytes (a typed Function parameter). */
  bool is_borrowed() const noexcept { return data_.type_index == kView; }

  /*! -1, 0 or 1 as this sorts before, equal to or after `other`, byte by byte. */
  int compare(std::string_view other) const noexcept {
    int c = view().compare(other);
    return (c > 0) - (c < 0);
  }
  int compare(const BytesHolder& other) const noexcept { return compare(other.view()); }
  int compare(const char* other) const noexcept { return compare(std::string_view(other)); }
  int compare(const std::string& other) const noexcept { return compare(std::string_view(other)); }

  /*! Stores an owned copy of the held value in `*out` (a new ref; owned forms are shared). */
  void CopyToOwned(PFAny* out) const {
    if (data_.type_index == kView) {
      BytesHolder(*this).MoveToOwned(out);
      return;
    }
    *out = data_;
    if (data_.type_index == kObject) ObjectRetain(data_.v_obj);
  }

 protected:
  using Create = int (*)(const PFByteArray*, PFAny*);
  static constexpr int32_t kView = kSmall == kPFTypeSmallStr ? kPFTypeStrView : kPFTypeBytesView;
  static constexpr uint32_t kNulTerminated = PACKEDFUN_VIEW_NUL_TERMINATED;

  BytesHolder() noexcept : data_(EmptyValue()) {}
  BytesHolder(const char* bytes, size_t size, Create /*kCreate*/) {
    Init(PFByteArray{bytes, size});
  }
  /*! Borrows `*view` (a kView PFByteArray valid for the call); short ones are copied inline.
   *  `nul_terminated`: the caller promised view->data[view->size] == 0 (data() then no copy). */
  BytesHolder(BorrowArgument, const PFByteArray* view, bool nul_terminated = false) {
    if (view->size < sizeof(data_.v_bytes)) {
      data_ = EmptyValue();
      data_.small_len = static_cast<uint32_t>(view->size);
      if (view->size != 0) std::memcpy(data_.v_bytes, view->data, view->size);
      return;
    }
    data_.type_index = kView;
    data_.small_len = nul_terminated ? kNulTerminated : 0u;
    data_.v_ptr = const_cast<PFByteArray*>(view);
  }
  BytesHolder(const BytesHolder& other) : data_(other.data_) {
    if (data_.type_index == kView) {
      InitFromBorrowed(other);
    } else {
      Retain();
    }
  }
  BytesHolder(BytesHolder&& other) : data_(other.data_) {
    if (data_.type_index == kView) {
      InitFromBorrowed(other);  // never moves a borrow out
    } else {
      other.data_ = EmptyValue();
    }
  }
  __attribute__((always_inline)) ~BytesHolder() { ReleaseObject(); }
  // Two overloads, not one by-value parameter: a derived class's implicit operator= could not
  // construct the protected by-value BytesHolder argument.
  BytesHolder& operator=(const BytesHolder& other) {
    if (this != &other) BytesHolder(other).SwapOwned(*this);
    return *this;
  }
  BytesHolder& operator=(BytesHolder&& other) {
    if (other.data_.type_index == kView) return *this = static_cast<const BytesHolder&>(other);
    if (data_.type_index == kView) {
      BytesHolder(std::move(other)).SwapOwned(*this);
      return *this;
    }
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
  static constexpr Create kCreate = kSmall == kPFTypeSmallStr ? &PFStringCreate : &PFBytesCreate;

  static PFAny EmptyValue() noexcept {
    PFAny v;
    v.type_index = kSmall;
    v.small_len = 0;
    v.v_int64 = 0;
    return v;
  }
  static const PFByteArray* ObjectBytes(const PFAny& v) noexcept {
    return &reinterpret_cast<const PFBytesObject*>(v.v_obj)->bytes;
  }
  static PFObject* ObjectOfBytes(const PFByteArray* b) noexcept {
    return reinterpret_cast<PFObject*>(reinterpret_cast<char*>(const_cast<PFByteArray*>(b)) -
                                       offsetof(PFBytesObject, bytes));
  }
  const PFByteArray* LoadView() const noexcept {
    return static_cast<const PFByteArray*>(__atomic_load_n(&data_.v_ptr, __ATOMIC_ACQUIRE));
  }
  uint32_t LoadState() const noexcept {
    return __atomic_load_n(&data_.small_len, __ATOMIC_ACQUIRE);
  }
  void Init(PFByteArray arr) {
    data_.type_index = kPFTypeNone;
    data_.zero_padding = 0;
    data_.v_int64 = 0;
    CheckCallResult(kCreate(&arr, &data_));
  }
  /*! This (a bitwise copy of the borrowed `other`) becomes an owned copy of it. */
  void InitFromBorrowed(const BytesHolder& other) {
    if (other.LoadState() == 2) {  // share the copy `other` already made
      data_.type_index = kObject;
      data_.zero_padding = 0;
      data_.v_obj = ObjectOfBytes(other.LoadView());
      ObjectRetain(data_.v_obj);
      return;
    }
    Init(*other.LoadView());
  }
  void MoveToOwned(PFAny* out) noexcept {
    *out = data_;
    data_ = EmptyValue();
  }
  /*! Swaps with `other`, where this is owned (a fresh copy). */
  void SwapOwned(BytesHolder& other) noexcept {
    PFAny tmp = data_;
    data_ = other.data_;
    other.data_ = tmp;
  }
  /*! data() of the borrowed form: the first caller makes the owned copy, the others wait. */
  __attribute__((noinline)) const char* BorrowedData() const {
    for (;;) {
      uint32_t state = 0;
      if (__atomic_compare_exchange_n(&data_.small_len, &state, 1u, false, __ATOMIC_ACQ_REL,
                                      __ATOMIC_ACQUIRE)) {
        PFAny copy;
        copy.type_index = kPFTypeNone;
        copy.zero_padding = 0;
        copy.v_int64 = 0;
        if (kCreate(LoadView(), &copy) != 0) {  // (longer than the small form: an object)
          __atomic_store_n(&data_.small_len, 0u, __ATOMIC_RELEASE);
          ThrowRaised();
        }
        const PFByteArray* owned = ObjectBytes(copy);
        __atomic_store_n(&data_.v_ptr, const_cast<PFByteArray*>(owned), __ATOMIC_RELEASE);
        __atomic_store_n(&data_.small_len, 2u, __ATOMIC_RELEASE);
        return owned->data;
      }
      if (state == 2 || state == kNulTerminated) return LoadView()->data;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
  }
  void Retain() noexcept {
    if (data_.type_index == kObject) ObjectRetain(data_.v_obj);
  }
  /*! Inline, as the destructor: GCC otherwise leaves one of them out of line, a call (through the
   *  PLT in a -fPIC library) at the end of every String parameter, whose small and borrowed forms
   *  own nothing; a borrowed holder's copy is released out of line (rare). */
  __attribute__((always_inline)) void ReleaseObject() noexcept {
    if (data_.type_index == kObject) {
      ObjectRelease(data_.v_obj);
    } else if (data_.type_index == kView && LoadState() == 2) {
      ReleaseBorrowedCopy();
    }
  }
  __attribute__((noinline)) void ReleaseBorrowedCopy() noexcept {
    ObjectRelease(ObjectOfBytes(LoadView()));
  }

  mutable PFAny data_;  // mutable: the borrowed form's lazy copy (atomic, see BorrowedData)
};

}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_DETAIL_BYTES_HOLDER_H_
