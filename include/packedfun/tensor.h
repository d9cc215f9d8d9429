// Tensor (an owning reference to a DLPack tensor object) and TensorView (a borrowed DLTensor).
#ifndef PACKEDFUN_TENSOR_H_
#define PACKEDFUN_TENSOR_H_

#include <packedfun/c_api.h>
#include <packedfun/detail/type_traits.h>
#include <packedfun/dtype.h>
#include <packedfun/error.h>
#include <packedfun/object.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace packedfun {

namespace detail {

/*! Number of elements of `t` (1 for a 0-d tensor). */
inline int64_t TensorNumel(const DLTensor& t) noexcept {
  int64_t n = 1;
  for (int32_t i = 0; i < t.ndim; ++i) n *= t.shape[i];
  return n;
}

/*! Whether `t` is compact row-major; axes of extent 1 may have any stride. NULL strides count
 *  as compact (legacy DLPack). */
inline bool TensorIsContiguous(const DLTensor& t) noexcept {
  if (t.strides == nullptr) return true;
  int64_t expected = 1;
  for (int32_t i = t.ndim - 1; i >= 0; --i) {
    if (t.shape[i] == 1) continue;
    if (t.strides[i] != expected) return false;
    expected *= t.shape[i];
  }
  return true;
}

}  // namespace detail

class Tensor;

/*!
 * A borrowed tensor: a pointer to a DLTensor someone else owns, for function parameters. No
 * reference counting, no allocation; valid for the duration of the call that handed it over.
 * Read the DLPack fields through `->`: `x->ndim`, `x->dtype`, `x->shape[0]`, `x->data`.
 *
 * A view remembers where it came from (a Tensor object, a promotable argument such as a NumPy
 * array passed from Python, or a plain DLTensor*), so that passing it on or keeping it (Any,
 * Tensor) keeps the producer alive, and so that IsReadOnly() knows the producer's flag. Writing
 * through the view of a read-only array is a bug of the kernel: check IsReadOnly() first.
 */
class TensorView {
 public:
  explicit TensorView(const DLTensor* tensor) noexcept : tensor_(tensor) {}
  /*! A view of a promotable argument (kept as an owning Tensor when passed on or stored). */
  explicit TensorView(const PFDLTensorArg* arg) noexcept : tensor_(&arg->tensor), arg_(arg) {}
  TensorView(const Tensor& tensor) noexcept;  // NOLINT(runtime/explicit)
  /*! A view of `tensor` (borrowed; must be a kPFTypeTensor object). */
  static TensorView FromObject(PFObject* tensor) noexcept {
    TensorView v(&reinterpret_cast<PFTensorObject*>(tensor)->tensor);
    v.object_ = tensor;
    return v;
  }

  const DLTensor* operator->() const noexcept { return tensor_; }
  const DLTensor& operator*() const noexcept { return *tensor_; }
  const DLTensor* get() const noexcept { return tensor_; }

  int64_t numel() const noexcept { return detail::TensorNumel(*tensor_); }
  bool IsContiguous() const noexcept { return detail::TensorIsContiguous(*tensor_); }
  /*! Whether the producer exported the memory read-only (false for a plain DLTensor*). */
  bool IsReadOnly() const {
    if (object_ != nullptr) {
      int out = 0;
      detail::CheckCallResult(PFTensorIsReadOnly(object_, &out));
      return out != 0;
    }
    return arg_ != nullptr && (arg_->flags & PACKEDFUN_DLTENSOR_ARG_READ_ONLY) != 0;
  }
  /*! The data as T*, byte offset applied. */
  template <typename T>
  T* data_ptr() const noexcept {
    return reinterpret_cast<T*>(static_cast<char*>(tensor_->data) + tensor_->byte_offset);
  }

  /*! The view as a borrowed argument: the Tensor object, the promotable argument, or a plain
   *  DLTensor*, whichever it came from. */
  void ToAny(PFAny* out) const noexcept {
    if (object_ != nullptr) {
      detail::SetObject(out, object_);
    } else {
      detail::SetPod(out, kPFTypeDLTensorPtr);
      out->v_ptr = const_cast<DLTensor*>(tensor_);
      if (arg_ != nullptr) out->zero_padding = PACKEDFUN_DLTENSOR_ARG_TAG;
    }
  }

 private:
  const DLTensor* tensor_;
  const PFDLTensorArg* arg_ = nullptr;  // set for a promotable argument
  PFObject* object_ = nullptr;          // set for a view of a Tensor object (borrowed)
};

/*!
 * An owning reference to a Tensor object (kPFTypeTensor): DLTensor metadata plus whatever keeps
 * the data alive (a DLPack producer, or memory from Tensor::Empty). Strides are always filled.
 */
class Tensor : public ObjectRef {
 public:
  Tensor() noexcept = default;

  /*! A new contiguous tensor (CPU memory aligned to 64 bytes). Throws on a bad shape or device. */
  static Tensor Empty(const std::vector<int64_t>& shape, DLDataType dtype,
                      DLDevice device = CPUDevice()) {
    PFObject* out = nullptr;
    detail::CheckCallResult(
        PFTensorEmpty(shape.data(), static_cast<int32_t>(shape.size()), dtype, device, &out));
    return detail::ObjectUnsafe::FromOwned<Tensor>(out);
  }
  static Tensor Empty(std::initializer_list<int64_t> shape, DLDataType dtype,
                      DLDevice device = CPUDevice()) {
    return Empty(std::vector<int64_t>(shape), dtype, device);
  }
  /*! A new contiguous tensor from the calling framework's allocator (PFEnvTensorAlloc: torch's
   *  caching allocator when called with torch tensors, NumPy on CPU when called with NumPy
   *  arrays, else as Empty), so the caller's framework owns and frees the output. */
  static Tensor FromEnvAlloc(const std::vector<int64_t>& shape, DLDataType dtype,
                             DLDevice device = CPUDevice()) {
    PFObject* out = nullptr;
    detail::CheckCallResult(
        PFEnvTensorAlloc(shape.data(), static_cast<int32_t>(shape.size()), dtype, device, &out));
    return detail::ObjectUnsafe::FromOwned<Tensor>(out);
  }
  /*! A Tensor to keep beyond the call from a view: the Tensor object it views, or a promoted
   *  argument owning its producer (a NumPy array, a torch tensor); a view of a plain DLTensor*
   *  gives a Tensor borrowing the data, which must outlive it. Throws on bad metadata. */
  static Tensor FromView(const TensorView& view) {
    PFAny borrowed;
    view.ToAny(&borrowed);
    PFAny owned;
    detail::SetPod(&owned, kPFTypeNone);
    detail::CheckCallResult(PFAnyViewToOwned(&borrowed, &owned));
    return detail::ObjectUnsafe::FromOwned<Tensor>(owned.v_obj);
  }
  /*! Adopts a legacy DLPack tensor (stolen: its deleter runs exactly once, even on failure). */
  static Tensor FromDLPack(DLManagedTensor* managed) {
    PFObject* out = nullptr;
    detail::CheckCallResult(PFTensorFromDLPack(managed, &out));
    return detail::ObjectUnsafe::FromOwned<Tensor>(out);
  }
  /*! Adopts a versioned DLPack tensor (stolen), keeping its read-only flag. */
  static Tensor FromDLPackVersioned(DLManagedTensorVersioned* managed) {
    PFObject* out = nullptr;
    detail::CheckCallResult(PFTensorFromDLPackVersioned(managed, &out));
    return detail::ObjectUnsafe::FromOwned<Tensor>(out);
  }
  /*! Exports as a legacy DLPack tensor holding a reference; the caller calls its deleter. */
  DLManagedTensor* ToDLPack() const {
    DLManagedTensor* out = nullptr;
    detail::CheckCallResult(PFTensorToDLPack(get(), &out));
    return out;
  }
  /*! Exports as a versioned DLPack tensor holding a reference; the caller calls its deleter. */
  DLManagedTensorVersioned* ToDLPackVersioned() const {
    DLManagedTensorVersioned* out = nullptr;
    detail::CheckCallResult(PFTensorToDLPackVersioned(get(), &out));
    return out;
  }

  const DLTensor* operator->() const noexcept { return &raw()->tensor; }
  const DLTensor& operator*() const noexcept { return raw()->tensor; }
  /*! A view that passes on as this Tensor object (keeping it shares it, no copy). */
  TensorView view() const noexcept { return TensorView(*this); }
  int64_t numel() const noexcept { return detail::TensorNumel(raw()->tensor); }
  bool IsContiguous() const noexcept { return detail::TensorIsContiguous(raw()->tensor); }
  /*! Whether the producer exported the memory read-only. */
  bool IsReadOnly() const {
    int out = 0;
    detail::CheckCallResult(PFTensorIsReadOnly(get(), &out));
    return out != 0;
  }
  template <typename T>
  T* data_ptr() const noexcept {
    return view().data_ptr<T>();
  }

  static constexpr bool _type_is_nullable = false;
  static bool _type_accepts(int32_t type_index) noexcept { return type_index == kPFTypeTensor; }
  static const char* _type_name() noexcept { return "Tensor"; }

 private:
  PFTensorObject* raw() const noexcept { return reinterpret_cast<PFTensorObject*>(get()); }
};

inline TensorView::TensorView(const Tensor& tensor) noexcept
    : tensor_(tensor.operator->()), object_(tensor.get()) {}

/*! TensorView: passed on as what it came from (TensorView::ToAny); received from a DLTensor*
 *  (promotable or plain) or a Tensor object. */
template <>
struct TypeTraits<TensorView> {
  static void ToView(const TensorView& v, PFAny* out, PFByteArray*) { v.ToAny(out); }
  /*! A Tensor: the object itself, a promoted argument owning its producer, or (plain DLTensor*
   *  only) a Tensor borrowing the data, which must then outlive it. */
  static void ToOwned(const TensorView& v, PFAny* out) {
    PFAny view;
    v.ToAny(&view);
    detail::CheckCallResult(PFAnyViewToOwned(&view, out));
  }
  static std::optional<TensorView> TryFrom(const PFAny* v) noexcept {
    if (v->type_index == kPFTypeDLTensorPtr) {
      if (v->zero_padding == PACKEDFUN_DLTENSOR_ARG_TAG) {
        return TensorView(static_cast<const PFDLTensorArg*>(v->v_ptr));
      }
      return TensorView(static_cast<DLTensor*>(v->v_ptr));
    }
    if (v->type_index == kPFTypeTensor) return TensorView::FromObject(v->v_obj);
    return std::nullopt;
  }
  static std::string TypeName() { return "Tensor"; }
};

/*! Tensor: an object; also received from a borrowed DLTensor* through PFAnyViewToOwned: a
 *  promotable argument (what the Python bindings pass for NumPy arrays and torch tensors) becomes
 *  a Tensor owning a reference to its producer; a plain DLTensor* becomes a Tensor that copies the
 *  metadata and borrows the data (valid only while the caller's data lives). */
template <>
struct TypeTraits<Tensor> {
  static void ToView(const Tensor& v, PFAny* out, PFByteArray*) { detail::SetObject(out, v.get()); }
  static void ToOwned(Tensor v, PFAny* out) {
    detail::SetObject(out, detail::ObjectUnsafe::MoveToPFObject(std::move(v)));
  }
  static std::optional<Tensor> TryFrom(const PFAny* v) {
    if (v->type_index == kPFTypeTensor) return detail::ObjectUnsafe::FromBorrowed<Tensor>(v->v_obj);
    if (v->type_index != kPFTypeDLTensorPtr) return std::nullopt;
    PFAny owned{};
    detail::CheckCallResult(PFAnyViewToOwned(v, &owned));
    return detail::ObjectUnsafe::FromOwned<Tensor>(owned.v_obj);
  }
  static std::string TypeName() { return "Tensor"; }
};

}  // namespace packedfun

#endif  // PACKEDFUN_TENSOR_H_
