// packedfun's <tvm/ffi/container/tensor.h>: tvm-ffi's C++ names over packedfun
// (docs/migration-from-tvm-ffi.md).
#ifndef PACKEDFUN_COMPAT_TVM_FFI_CONTAINER_TENSOR_H_
#define PACKEDFUN_COMPAT_TVM_FFI_CONTAINER_TENSOR_H_
#include <packedfun/compat/tvm_ffi.h>

namespace tvm {
namespace ffi {
/*! tvm-ffi's GetDataSize: the bytes `numel` elements take, sub-byte types packed (so 3 int4
 * elements take 2 bytes, where packedfun's per-element DataTypeBytes rounds each element up). */
inline size_t GetDataSize(size_t numel, DLDataType dtype) {
  return static_cast<size_t>((static_cast<uint64_t>(numel) * dtype.bits * dtype.lanes + 7) / 8);
}
inline size_t GetDataSize(const DLTensor& arr) {
  size_t numel = 1;
  for (int32_t i = 0; i < arr.ndim; ++i) numel *= static_cast<size_t>(arr.shape[i]);
  return GetDataSize(numel, arr.dtype);
}
inline size_t GetDataSize(const Tensor& tensor) {
  return GetDataSize(static_cast<size_t>(tensor.numel()), tensor.dtype());
}
inline size_t GetDataSize(const TensorView& tensor) {
  return GetDataSize(static_cast<size_t>(tensor.numel()), tensor.dtype());
}
}  // namespace ffi
}  // namespace tvm
#endif  // PACKEDFUN_COMPAT_TVM_FFI_CONTAINER_TENSOR_H_
