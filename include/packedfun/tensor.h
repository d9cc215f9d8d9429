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
 */
class TensorView {
 public:
  explicit TensorView(const DLTensor* tensor) noexcept : tensor_(tensor) {}
  TensorView(const Tensor& tensor) noexcept;  // NOLINT(runtime/explicit)

  const DLTensor* operator->() const noexcept { return tensor_; }
  const DLTensor& operator*() const noexcept { return *tensor_; }
  const DLTensor* get() const noexcept { return tensor_; }

  int64_t numel() const noexcept { return detail::TensorNumel(*tensor_); }
  bool IsContiguous() const noexcept { return detail::TensorIsContiguous(*tensor_); }
  /*! The data as T*, byte offset applied. */
  template <typename T>
  T* data_ptr() const noexcept {
    return reinterpret_cast<T*>(static_cast<char*>(tensor_->data) + tensor_->byte_offset);
  }

 private:
  const DLTensor* tensor_;
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
    detail::CheckCallResult(PFTensorEmpty(shape.data(), static_cast<int32_t>(shape.size()),
                                          dtype, device, &out));
    return detail::ObjectUnsafe::FromOwned<Tensor>(out);
  }
  static Tensor Empty(std::initializer_list<int64_t> shape, DLDataType dtype,
                      DLDevice device = CPUDevice()) {
    return Empty(std::vector<int64_t>(shape), dtype, device);
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
  TensorView view() const noexcept { return TensorView(&raw()->tensor); }
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

inline TensorView::TensorView(const Tensor& tensor) noexcept : tensor_(tensor.operator->()) {}

/*! TensorView: passed as a borrowed DLTensor*; received from a DLTensor* or a Tensor object. */
template <>
struct TypeTraits<TensorView> {
  static void ToView(const TensorView& v, PFAny* out, PFByteArray*) {
    detail::SetPod(out, kPFTypeDLTensorPtr);
    out->v_ptr = const_cast<DLTensor*>(v.get());
  }
  /*! A Tensor object borrowing the data (PFAnyViewToOwned): the data must outlive it. */
  static void ToOwned(const TensorView& v, PFAny* out) {
    PFAny view;
    ToView(v, &view, nullptr);
    detail::CheckCallResult(PFAnyViewToOwned(&view, out));
  }
  static std::optional<TensorView> TryFrom(const PFAny* v) noexcept {
    if (v->type_index == kPFTypeDLTensorPtr) return TensorView(static_cast<DLTensor*>(v->v_ptr));
    if (v->type_index == kPFTypeTensor) {
      return TensorView(&reinterpret_cast<PFTensorObject*>(v->v_obj)->tensor);
    }
    return std::nullopt;
  }
  static std::string TypeName() { return "Tensor"; }
};

/*! Tensor: an object; also received from a borrowed DLTensor*, as a Tensor that copies the
 *  metadata and borrows the data (valid only while the caller's data lives: to keep a tensor
 *  beyond the call, the caller passes a Tensor object, e.g. packedfun.from_dlpack(x)). */
template <>
struct TypeTraits<Tensor> {
  static void ToView(const Tensor& v, PFAny* out, PFByteArray*) {
    detail::SetObject(out, v.get());
  }
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
