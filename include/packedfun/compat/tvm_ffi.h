// apache-tvm-ffi source compatibility: tvm::ffi names and TVM_FFI_ macros mapped onto packedfun.
/*!
 * \file packedfun/compat/tvm_ffi.h
 * \brief Lets kernel sources written for apache-tvm-ffi compile against packedfun unchanged.
 *
 * `tvm::ffi::X` names packedfun's `X` (TensorView, Tensor, Function, Any, String, Array, ...) and
 * the common macros (TVM_FFI_ICHECK*, TVM_FFI_CHECK*, TVM_FFI_THROW,
 * TVM_FFI_DLL_EXPORT_TYPED_FUNC, TVM_FFI_STATIC_INIT_BLOCK, the object-declaration macros) expand
 * to their PACKEDFUN_ counterparts. It is a source-level bridge only: the library it builds links
 * libpackedfun and speaks packedfun's ABI, not tvm-ffi's. See docs/migration-from-tvm-ffi.md.
 */
#ifndef PACKEDFUN_COMPAT_TVM_FFI_H_
#define PACKEDFUN_COMPAT_TVM_FFI_H_

#include <packedfun/packedfun.h>

namespace tvm {
namespace ffi {
// Qualified lookup of tvm::ffi::X finds packedfun::X through this directive.
using namespace ::packedfun;  // NOLINT(build/namespaces)

/*! tvm-ffi's tag for a constructor that leaves the fields to be set afterwards (its readers'
 * pattern). Objects written for tvm-ffi declare such constructors; packedfun never calls them. */
struct UnsafeInit {};

/*! tvm-ffi's type-index names, each with packedfun's number for the same kind (compare them with
 * `type_index()`; the numbers themselves differ from tvm-ffi's from Shape on). Kinds packedfun
 * does not have (ByteArrayPtr, ObjectRValueRef, Unchanged, VisitInterrupt, BigInt) are absent, so
 * a source that names them fails to compile instead of comparing against a wrong number. */
struct TypeIndex {
  enum : int32_t {
    kTVMFFIAny = kPFTypeAny,
    kTVMFFINone = kPFTypeNone,
    kTVMFFIInt = kPFTypeInt,
    kTVMFFIBool = kPFTypeBool,
    kTVMFFIFloat = kPFTypeFloat,
    kTVMFFIOpaquePtr = kPFTypeOpaquePtr,
    kTVMFFIDataType = kPFTypeDataType,
    kTVMFFIDevice = kPFTypeDevice,
    kTVMFFIDLTensorPtr = kPFTypeDLTensorPtr,
    kTVMFFIRawStr = kPFTypeRawStr,
    kTVMFFISmallStr = kPFTypeSmallStr,
    kTVMFFISmallBytes = kPFTypeSmallBytes,
    kTVMFFIStaticObjectBegin = kPFTypeStaticObjectBegin,
    kTVMFFIObject = kPFTypeObject,
    kTVMFFIStr = kPFTypeString,
    kTVMFFIBytes = kPFTypeBytes,
    kTVMFFIError = kPFTypeError,
    kTVMFFIFunction = kPFTypeFunction,
    kTVMFFIShape = kPFTypeShape,
    kTVMFFITensor = kPFTypeTensor,
    kTVMFFIArray = kPFTypeArray,
    kTVMFFIMap = kPFTypeMap,
    kTVMFFIModule = kPFTypeModule,
    kTVMFFIOpaquePyObject = kPFTypeOpaque,
    kTVMFFIList = kPFTypeList,
    kTVMFFIDict = kPFTypeDict,
    kTVMFFIStaticObjectEnd = kPFTypeStaticObjectEnd,
    kTVMFFIDynObjectBegin = kPFTypeDynamicBegin,
  };
};
}  // namespace ffi
}  // namespace tvm

namespace std {
/*! String and Bytes hash by content (equal values hash equal), as tvm-ffi's do. */
template <>
struct hash<::packedfun::String> {
  size_t operator()(const ::packedfun::String& s) const noexcept {
    return hash<string_view>()(s.view());
  }
};
template <>
struct hash<::packedfun::Bytes> {
  size_t operator()(const ::packedfun::Bytes& b) const noexcept {
    return hash<string_view>()(b.view());
  }
};
}  // namespace std

/*! How tvm-ffi's structural equality treats an object type (`_type_s_eq_hash_kind`). packedfun
 * compares every reflected object field by field, as tvm-ffi's TreeNode does, whatever the class
 * declares: the declaration compiles, the other kinds are not honoured (see the migration page). */
enum TVMFFISEqHashKind : int32_t {
  kTVMFFISEqHashKindUnsupported = 0,
  kTVMFFISEqHashKindTreeNode = 1,
  kTVMFFISEqHashKindFreeVar = 2,
  kTVMFFISEqHashKindDAGNode = 3,
  kTVMFFISEqHashKindConstTreeNode = 4,
  kTVMFFISEqHashKindUniqueInstance = 5,
};

#define TVM_FFI_INLINE inline

#define TVM_FFI_ICHECK(x) PACKEDFUN_ICHECK(x)
#define TVM_FFI_ICHECK_EQ(x, y) PACKEDFUN_ICHECK_EQ(x, y)
#define TVM_FFI_ICHECK_NE(x, y) PACKEDFUN_ICHECK_NE(x, y)
#define TVM_FFI_ICHECK_LT(x, y) PACKEDFUN_ICHECK_LT(x, y)
#define TVM_FFI_ICHECK_LE(x, y) PACKEDFUN_ICHECK_LE(x, y)
#define TVM_FFI_ICHECK_GT(x, y) PACKEDFUN_ICHECK_GT(x, y)
#define TVM_FFI_ICHECK_GE(x, y) PACKEDFUN_ICHECK_GE(x, y)
#define TVM_FFI_ICHECK_NOTNULL(x) TVM_FFI_CHECK_NOTNULL(x, InternalError)

// Checked in debug builds only, as in tvm-ffi; compiled (never run) under NDEBUG.
#ifndef NDEBUG
#define TVM_FFI_DCHECK(x) TVM_FFI_ICHECK(x)
#define TVM_FFI_DCHECK_EQ(x, y) TVM_FFI_ICHECK_EQ(x, y)
#define TVM_FFI_DCHECK_NE(x, y) TVM_FFI_ICHECK_NE(x, y)
#define TVM_FFI_DCHECK_LT(x, y) TVM_FFI_ICHECK_LT(x, y)
#define TVM_FFI_DCHECK_LE(x, y) TVM_FFI_ICHECK_LE(x, y)
#define TVM_FFI_DCHECK_GT(x, y) TVM_FFI_ICHECK_GT(x, y)
#define TVM_FFI_DCHECK_GE(x, y) TVM_FFI_ICHECK_GE(x, y)
#define TVM_FFI_DCHECK_NOTNULL(x) TVM_FFI_ICHECK_NOTNULL(x)
#else
#define TVM_FFI_DCHECK(x) \
  while (false) TVM_FFI_ICHECK(x)
#define TVM_FFI_DCHECK_EQ(x, y) \
  while (false) TVM_FFI_ICHECK_EQ(x, y)
#define TVM_FFI_DCHECK_NE(x, y) \
  while (false) TVM_FFI_ICHECK_NE(x, y)
#define TVM_FFI_DCHECK_LT(x, y) \
  while (false) TVM_FFI_ICHECK_LT(x, y)
#define TVM_FFI_DCHECK_LE(x, y) \
  while (false) TVM_FFI_ICHECK_LE(x, y)
#define TVM_FFI_DCHECK_GT(x, y) \
  while (false) TVM_FFI_ICHECK_GT(x, y)
#define TVM_FFI_DCHECK_GE(x, y) \
  while (false) TVM_FFI_ICHECK_GE(x, y)
#define TVM_FFI_DCHECK_NOTNULL(x) \
  while (false) TVM_FFI_ICHECK_NOTNULL(x)
#endif

// tvm-ffi's CHECK macros name the error kind as their last argument.
#define TVM_FFI_CHECK(cond, ErrorKind) PACKEDFUN_CHECK_IMPL_(#ErrorKind, cond)
#define TVM_FFI_CHECK_EQ(x, y, ErrorKind) PACKEDFUN_CHECK_OP_IMPL_(#ErrorKind, CheckOpEq, ==, x, y)
#define TVM_FFI_CHECK_NE(x, y, ErrorKind) PACKEDFUN_CHECK_OP_IMPL_(#ErrorKind, CheckOpNe, !=, x, y)
#define TVM_FFI_CHECK_LT(x, y, ErrorKind) PACKEDFUN_CHECK_OP_IMPL_(#ErrorKind, CheckOpLt, <, x, y)
#define TVM_FFI_CHECK_LE(x, y, ErrorKind) PACKEDFUN_CHECK_OP_IMPL_(#ErrorKind, CheckOpLe, <=, x, y)
#define TVM_FFI_CHECK_GT(x, y, ErrorKind) PACKEDFUN_CHECK_OP_IMPL_(#ErrorKind, CheckOpGt, >, x, y)
#define TVM_FFI_CHECK_GE(x, y, ErrorKind) PACKEDFUN_CHECK_OP_IMPL_(#ErrorKind, CheckOpGe, >=, x, y)
// An expression, as in tvm-ffi: the checked value, or the error thrown.
#define TVM_FFI_CHECK_NOTNULL(x, ErrorKind) \
  ((x) == nullptr ? (PACKEDFUN_THROW(ErrorKind) << "Check not null: " #x << ' ', (x)) : (x))

#define TVM_FFI_THROW(ErrorKind) PACKEDFUN_THROW(ErrorKind)
#define TVM_FFI_DLL_EXPORT_TYPED_FUNC(ExportName, Function) \
  PACKEDFUN_DLL_EXPORT_TYPED_FUNC(ExportName, Function)
#define TVM_FFI_STATIC_INIT_BLOCK() PACKEDFUN_STATIC_INIT_BLOCK()
#define TVM_FFI_DECLARE_OBJECT_INFO(TypeKey, TypeName, ParentType) \
  PACKEDFUN_DECLARE_OBJECT_INFO(TypeKey, TypeName, ParentType)
#define TVM_FFI_DECLARE_OBJECT_INFO_FINAL(TypeKey, TypeName, ParentType) \
  PACKEDFUN_DECLARE_OBJECT_INFO_FINAL(TypeKey, TypeName, ParentType)
// The reference classes also get tvm-ffi's UnsafeInit constructor (a null reference that the
// derived class's constructor then fills).
#define TVM_FFI_DEFINE_OBJECT_REF_METHODS_NULLABLE(TypeName, ParentType, ObjectName) \
  PACKEDFUN_DEFINE_OBJECT_REF_METHODS_NULLABLE(TypeName, ParentType, ObjectName)     \
  explicit TypeName(::tvm::ffi::UnsafeInit) noexcept {}
#define TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(TypeName, ParentType, ObjectName) \
  PACKEDFUN_DEFINE_OBJECT_REF_METHODS(TypeName, ParentType, ObjectName)                 \
  explicit TypeName(::tvm::ffi::UnsafeInit) noexcept {}

#endif  // PACKEDFUN_COMPAT_TVM_FFI_H_
