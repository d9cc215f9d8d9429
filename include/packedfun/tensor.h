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
#include <type_traits>
#include <vector>

namespace packedfun {

/*!
 * A borrowed run of int64 (a tensor's extents): size(), operator[] (negative counts from the
 * end; IndexError when out of range), begin()/end(), to_vector(). Valid while the tensor lives.
 */
class ShapeView {
 public:
  ShapeView(const int64_t* data, int64_t size) noexcept : data_(data), size_(size) {}
  int64_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  /*! Product of the extents (1 for a 0-d shape). */
  int64_t Product() const noexcept {
    int64_t n = 1;
    for (int64_t i = 0; i < size_; ++i) n *= data_[i];
    return n;
  }
  const int64_t* data() const noexcept { return data_; }
  const int64_t* begin() const noexcept { return data_; }
  const int64_t* end() const noexcept { return data_ + size_; }
  int64_t operator[](int64_t i) const {
    int64_t j = i < 0 ? i + size_ : i;
    if (j < 0 || j >= size_) {
      throw Error("IndexError", "shape index " + std::to_string(i) + " out of range for size " +
                                    std::to_string(size_));
    }
    return data_[j];
  }
  std::vector<int64_t> to_vector() const { return std::vector<int64_t>(begin(), end()); }

 private:
  const int64_t* data_;
  int64_t size_;
};

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

/*! Throws the IndexError of an axis outside [-ndim, ndim). */
[[noreturn]] __attribute__((noinline, cold)) inline void ThrowAxisError(const char* what,
                                                                        int64_t axis,
                                                                        int32_t ndim) {
  PFErrorSetRaisedAxis(what, axis, ndim);
  ThrowRaised();
}

/*! `axis` (negative counts from the end) as an index in [0, ndim); IndexError otherwise. */
inline int32_t TensorAxis(const DLTensor& t, int64_t axis, const char* what) {
  int64_t j = axis < 0 ? axis + t.ndim : axis;
  if (j < 0 || j >= t.ndim) ThrowAxisError(what, axis, t.ndim);
  return static_cast<int32_t>(j);
}

/*! The stride of axis `j` in elements; computed as compact row-major when `t.strides` is NULL. */
inline int64_t TensorStride(const DLTensor& t, int32_t j) noexcept {
  if (t.strides != nullptr) return t.strides[j];
  int64_t s = 1;
  for (int32_t k = j + 1; k < t.ndim; ++k) s *= t.shape[k];
  return s;
}

/*!
 * The accessors TensorView and Tensor share, read from `*self` (a DLTensor): ndim(), size(i),
 * stride(i), shape(), strides(), dtype(), device(), data_ptr(), numel(), IsContiguous().
 */
template <typename Self>
class TensorAccess {
 public:
  int32_t ndim() const noexcept { return t().ndim; }
  /*! Extent of `axis` (negative counts from the end); IndexError when out of range. */
  int64_t size(int64_t axis) const { return t().shape[TensorAxis(t(), axis, "size")]; }
  /*! Stride of `axis` in elements (negative counts from the end); IndexError when out of range. */
  int64_t stride(int64_t axis) const { return TensorStride(t(), TensorAxis(t(), axis, "stride")); }
  /*! The extents, borrowed from the tensor (no copy). */
  ShapeView shape() const noexcept { return ShapeView(t().shape, t().ndim); }
  /*! The strides in elements (computed as compact when a legacy DLTensor has none). */
  std::vector<int64_t> strides() const {
    std::vector<int64_t> out(static_cast<size_t>(t().ndim));
    for (int32_t j = 0; j < t().ndim; ++j) out[static_cast<size_t>(j)] = TensorStride(t(), j);
    return out;
  }
  DLDataType dtype() const noexcept { return t().dtype; }
  DLDevice device() const noexcept { return t().device; }
  /*! The data, byte offset applied. */
  void* data_ptr() const noexcept { return static_cast<char*>(t().data) + t().byte_offset; }
  /*! The data as T*, byte offset applied. */
  template <typename T>
  T* data_ptr() const noexcept {
    return static_cast<T*>(data_ptr());
  }
  /*! Number of elements (1 for a 0-d tensor). */
  int64_t numel() const noexcept { return TensorNumel(t()); }
  bool IsContiguous() const noexcept { return TensorIsContiguous(t()); }

 private:
  const DLTensor& t() const noexcept { return *static_cast<const Self&>(*this); }
};

}  // namespace detail

class Tensor;

/*!
 * A borrowed tensor: a pointer to a DLTensor someone else owns, for function parameters. No
 * reference counting, no allocation; valid for the duration of the call that handed it over.
 * Read it through the accessors (`x.ndim()`, `x.size(-1)`, `x.stride(0)`, `x.shape()`, `x.dtype()`,
 * `x.device()`, `x.data_ptr<float>()`, `x.numel()`) or the DLPack fields through `->`.
 *
 * A view remembers where it came from (a Tensor object, a promotable argument such as a NumPy
 * array passed from Python, or a plain DLTensor*), so that passing it on or keeping it (Any,
 * Tensor) keeps the producer alive, and so that IsReadOnly() knows the producer's flag. Writing
 * through the view of a read-only array is a bug of the kernel: check IsReadOnly() first.
 */
class TensorView : public detail::TensorAccess<TensorView> {
 public:
  explicit TensorView(const DLTensor* tensor) noexcept : tensor_(tensor) {}
  /*! A view of a promotable argument (kept as an owning Tensor when passed on or stored). */
  explicit TensorView(const PFDLTensorArg* arg) noexcept
      : tensor_(&arg->tensor), source_(reinterpret_cast<uintptr_t>(arg)) {}
  TensorView(const Tensor& tensor) noexcept;  // NOLINT(runtime/explicit)
  /*! A view of `tensor` (borrowed; must be a kPFTypeTensor object). */
  static TensorView FromObject(PFObject* tensor) noexcept {
    TensorView v(&reinterpret_cast<PFTensorObject*>(tensor)->tensor);
    v.source_ = reinterpret_cast<uintptr_t>(tensor) | kObjectTag;
    return v;
  }

  const DLTensor* operator->() const noexcept { return tensor_; }
  const DLTensor& operator*() const noexcept { return *tensor_; }
  const DLTensor* get() const noexcept { return tensor_; }

  /*! Whether the producer exported the memory read-only (false for a plain DLTensor*). */
  bool IsReadOnly() const {
    if (PFObject* object = source_object()) {
      int out = 0;
      detail::CheckCallResult(PFTensorIsReadOnly(object, &out));
      return out != 0;
    }
    const PFDLTensorArg* arg = source_arg();
    return arg != nullptr && (arg->flags & PACKEDFUN_DLTENSOR_ARG_READ_ONLY) != 0;
  }
  /*! The view as a borrowed argument: the Tensor object, the promotable argument, or a plain
   *  DLTensor*, whichever it came from. */
  void ToAny(PFAny* out) const noexcept {
    if (PFObject* object = source_object()) {
      detail::SetObject(out, object);
    } else {
      detail::SetPod(out, kPFTypeDLTensorPtr);
      out->v_ptr = const_cast<DLTensor*>(tensor_);
      if (source_ != 0) out->zero_padding = PACKEDFUN_DLTENSOR_ARG_TAG;
    }
  }

 private:
  // Two words, trivially copyable: the SysV x86-64 ABI passes a TensorView parameter in two
  // registers. At three words it went through the stack, where GCC's piecewise stores followed by
  // a 16-byte load stalled store-to-load forwarding on every call (about 8 ns measured per call).
  // `source_` says where the view came from: 0 for a plain DLTensor*, a PFDLTensorArg* (promotable
  // argument), or a Tensor object's PFObject* with kObjectTag set (both are at least 8-aligned).
  static constexpr uintptr_t kObjectTag = 1;
  PFObject* source_object() const noexcept {
    return (source_ & kObjectTag) != 0 ? reinterpret_cast<PFObject*>(source_ & ~kObjectTag)
                                       : nullptr;
  }
  const PFDLTensorArg* source_arg() const noexcept {
    return (source_ & kObjectTag) == 0 ? reinterpret_cast<const PFDLTensorArg*>(source_) : nullptr;
  }

  const DLTensor* tensor_;
  uintptr_t source_ = 0;
};

static_assert(sizeof(TensorView) == 2 * sizeof(void*) && std::is_trivially_copyable_v<TensorView>,
              "TensorView must stay two words and trivially copyable: it is passed in registers");

/*!
 * An owning reference to a Tensor object (kPFTypeTensor): DLTensor metadata plus whatever keeps
 * the data alive (a DLPack producer, or memory from Tensor::Empty). Strides are always filled.
 */
class Tensor : public ObjectRef, public detail::TensorAccess<Tensor> {
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
  /*! Whether the producer exported the memory read-only. */
  bool IsReadOnly() const {
    int out = 0;
    detail::CheckCallResult(PFTensorIsReadOnly(get(), &out));
    return out != 0;
  }
  static constexpr bool _type_is_nullable = false;
  static bool _type_accepts(int32_t type_index) noexcept { return type_index == kPFTypeTensor; }
  static const char* _type_name() noexcept { return "Tensor"; }

 private:
  PFTensorObject* raw() const noexcept { return reinterpret_cast<PFTensorObject*>(get()); }
};

inline TensorView::TensorView(const Tensor& tensor) noexcept
    : tensor_(tensor.operator->()),
      source_(tensor.get() != nullptr ? reinterpret_cast<uintptr_t>(tensor.get()) | kObjectTag
                                      : 0) {}

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
