// Private runtime helpers for tensors and data types (implemented in tensor.cc and dtype.cc).
#ifndef PACKEDFUN_SRC_INTERNAL_TENSOR_H_
#define PACKEDFUN_SRC_INTERNAL_TENSOR_H_

#include <packedfun/c_api.h>

#include <string>
#include <string_view>

namespace packedfun {
namespace detail {

/*! Parses a data type name ("float32", "int8x4", "float8_e4m3fn"). Throws a ValueError
 *  (detail::Exception) naming the text when it is not one. */
DLDataType ParseDataType(std::string_view text);

/*! The canonical name of `dtype`; ParseDataType(DataTypeName(t)) == t. Throws a ValueError for a
 *  type code DLPack does not define, a width that code cannot have, or zero bits or lanes. */
std::string DataTypeName(DLDataType dtype);

/*! Whether `obj` is a Tensor made by this runtime (NULL gives false). */
inline bool IsTensor(const PFObject* obj) noexcept {
  return obj != nullptr && obj->type_index == kPFTypeTensor;
}

/*! A Tensor (new ref) sharing the data of a promotable argument, copying its metadata, holding a
 *  reference to its keeper and keeping its read-only flag. Throws a ValueError on bad metadata. */
PFObject* TensorFromArg(const PFDLTensorArg& arg);

/*! Bytes needed by `t`'s elements in a compact layout (sub-byte types packed). Throws a ValueError
 *  when the shape or dtype is invalid or the size overflows. */
uint64_t TensorNumBytes(const DLTensor& t);

}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_SRC_INTERNAL_TENSOR_H_
