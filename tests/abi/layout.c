/* Compile-only ABI layout test: pins every size, offset and type index of c_api.h (LP64). */
#include <packedfun/c_api.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define PACKEDFUN_LAYOUT_ASSERT(cond) static_assert(cond, #cond)
#define PACKEDFUN_ALIGNOF(type) alignof(type)
#else
#define PACKEDFUN_LAYOUT_ASSERT(cond) _Static_assert(cond, #cond)
#define PACKEDFUN_ALIGNOF(type) _Alignof(type)
#endif

#define PACKEDFUN_SIZE(type, size) PACKEDFUN_LAYOUT_ASSERT(sizeof(type) == (size))
#define PACKEDFUN_OFFSET(type, field, off) PACKEDFUN_LAYOUT_ASSERT(offsetof(type, field) == (off))

#if UINTPTR_MAX == 0xFFFFFFFFFFFFFFFFu

/* Values */
PACKEDFUN_SIZE(PFByteArray, 16);
PACKEDFUN_OFFSET(PFByteArray, data, 0);
PACKEDFUN_OFFSET(PFByteArray, size, 8);

PACKEDFUN_SIZE(PFAny, 16);
PACKEDFUN_LAYOUT_ASSERT(PACKEDFUN_ALIGNOF(PFAny) == 8);
PACKEDFUN_OFFSET(PFAny, type_index, 0);
PACKEDFUN_OFFSET(PFAny, small_len, 4);
PACKEDFUN_OFFSET(PFAny, zero_padding, 4);
PACKEDFUN_OFFSET(PFAny, v_int64, 8);
PACKEDFUN_OFFSET(PFAny, v_float64, 8);
PACKEDFUN_OFFSET(PFAny, v_ptr, 8);
PACKEDFUN_OFFSET(PFAny, v_c_str, 8);
PACKEDFUN_OFFSET(PFAny, v_obj, 8);
PACKEDFUN_OFFSET(PFAny, v_dtype, 8);
PACKEDFUN_OFFSET(PFAny, v_device, 8);
PACKEDFUN_OFFSET(PFAny, v_bytes, 8);
PACKEDFUN_SIZE(DLDataType, 4);
PACKEDFUN_SIZE(DLDevice, 8);

/* Objects */
PACKEDFUN_SIZE(PFObject, 24);
PACKEDFUN_OFFSET(PFObject, ref_count, 0);
PACKEDFUN_OFFSET(PFObject, type_index, 8);
PACKEDFUN_OFFSET(PFObject, flags, 12);
PACKEDFUN_OFFSET(PFObject, deleter, 16);

PACKEDFUN_SIZE(PFBytesObject, 40);
PACKEDFUN_OFFSET(PFBytesObject, header, 0);
PACKEDFUN_OFFSET(PFBytesObject, bytes, 24);

PACKEDFUN_SIZE(PFFunctionObject, 40);
PACKEDFUN_OFFSET(PFFunctionObject, header, 0);
PACKEDFUN_OFFSET(PFFunctionObject, safe_call, 24);
PACKEDFUN_OFFSET(PFFunctionObject, self, 32);

PACKEDFUN_SIZE(PFErrorObject, 64);
PACKEDFUN_OFFSET(PFErrorObject, header, 0);
PACKEDFUN_OFFSET(PFErrorObject, kind, 24);
PACKEDFUN_OFFSET(PFErrorObject, message, 40);
PACKEDFUN_OFFSET(PFErrorObject, cause, 56);

PACKEDFUN_SIZE(PFOpaqueObject, 40);
PACKEDFUN_OFFSET(PFOpaqueObject, header, 0);
PACKEDFUN_OFFSET(PFOpaqueObject, handle, 24);
PACKEDFUN_OFFSET(PFOpaqueObject, free_handle, 32);

PACKEDFUN_SIZE(PFShapeObject, 40);
PACKEDFUN_OFFSET(PFShapeObject, header, 0);
PACKEDFUN_OFFSET(PFShapeObject, data, 24);
PACKEDFUN_OFFSET(PFShapeObject, size, 32);

PACKEDFUN_SIZE(PFSeqObject, 48);
PACKEDFUN_OFFSET(PFSeqObject, header, 0);
PACKEDFUN_OFFSET(PFSeqObject, data, 24);
PACKEDFUN_OFFSET(PFSeqObject, size, 32);
PACKEDFUN_OFFSET(PFSeqObject, capacity, 40);

PACKEDFUN_SIZE(DLTensor, 48);
PACKEDFUN_SIZE(PFTensorObject, 72);
PACKEDFUN_OFFSET(PFTensorObject, header, 0);
PACKEDFUN_OFFSET(PFTensorObject, tensor, 24);

/* Reflection */
PACKEDFUN_SIZE(PFFieldInfo, 64);
PACKEDFUN_OFFSET(PFFieldInfo, name, 0);
PACKEDFUN_OFFSET(PFFieldInfo, doc, 16);
PACKEDFUN_OFFSET(PFFieldInfo, offset, 32);
PACKEDFUN_OFFSET(PFFieldInfo, flags, 40);
PACKEDFUN_OFFSET(PFFieldInfo, static_type_index, 44);
PACKEDFUN_OFFSET(PFFieldInfo, getter, 48);
PACKEDFUN_OFFSET(PFFieldInfo, setter, 56);

/* Slot types (ABI 1.5) */
PACKEDFUN_SIZE(PFSlotFieldInfo, 48);
PACKEDFUN_OFFSET(PFSlotFieldInfo, name, 0);
PACKEDFUN_OFFSET(PFSlotFieldInfo, doc, 16);
PACKEDFUN_OFFSET(PFSlotFieldInfo, flags, 32);
PACKEDFUN_OFFSET(PFSlotFieldInfo, static_type_index, 36);
PACKEDFUN_OFFSET(PFSlotFieldInfo, nullable, 40);
PACKEDFUN_OFFSET(PFSlotFieldInfo, reserved, 44);
PACKEDFUN_SIZE(PFTypeLayoutInfo, 40);
PACKEDFUN_OFFSET(PFTypeLayoutInfo, size, 0);
PACKEDFUN_OFFSET(PFTypeLayoutInfo, alignment, 8);
PACKEDFUN_OFFSET(PFTypeLayoutInfo, header_offset, 16);
PACKEDFUN_OFFSET(PFTypeLayoutInfo, construct, 24);
PACKEDFUN_OFFSET(PFTypeLayoutInfo, destroy, 32);

PACKEDFUN_SIZE(PFMethodInfo, 48);
PACKEDFUN_OFFSET(PFMethodInfo, name, 0);
PACKEDFUN_OFFSET(PFMethodInfo, doc, 16);
PACKEDFUN_OFFSET(PFMethodInfo, method, 32);
PACKEDFUN_OFFSET(PFMethodInfo, flags, 40);
PACKEDFUN_OFFSET(PFMethodInfo, reserved, 44);

PACKEDFUN_SIZE(PFTypeInfo, 72);
PACKEDFUN_OFFSET(PFTypeInfo, type_index, 0);
PACKEDFUN_OFFSET(PFTypeInfo, depth, 4);
PACKEDFUN_OFFSET(PFTypeInfo, type_key, 8);
PACKEDFUN_OFFSET(PFTypeInfo, ancestors, 24);
PACKEDFUN_OFFSET(PFTypeInfo, num_fields, 32);
PACKEDFUN_OFFSET(PFTypeInfo, num_methods, 36);
PACKEDFUN_OFFSET(PFTypeInfo, fields, 40);
PACKEDFUN_OFFSET(PFTypeInfo, methods, 48);
PACKEDFUN_OFFSET(PFTypeInfo, doc, 56);

/* ABI 1.2: promotable tensor arguments */
PACKEDFUN_SIZE(DLTensor, 48);
PACKEDFUN_SIZE(PFDLTensorArg, 64);
PACKEDFUN_OFFSET(PFDLTensorArg, tensor, 0);
PACKEDFUN_OFFSET(PFDLTensorArg, keeper, 48);
PACKEDFUN_OFFSET(PFDLTensorArg, flags, 56);
PACKEDFUN_OFFSET(PFDLTensorArg, reserved, 60);
PACKEDFUN_SIZE(PFContainerView, 32);
PACKEDFUN_OFFSET(PFContainerView, vtable, 0);
PACKEDFUN_OFFSET(PFContainerView, kind, 8);
PACKEDFUN_OFFSET(PFContainerView, reserved, 12);
PACKEDFUN_OFFSET(PFContainerView, size, 16);
PACKEDFUN_OFFSET(PFContainerView, handle, 24);
PACKEDFUN_SIZE(PFContainerViewVTable, 32);
PACKEDFUN_OFFSET(PFContainerViewVTable, read_int64, 0);
PACKEDFUN_OFFSET(PFContainerViewVTable, read_float64, 8);
PACKEDFUN_OFFSET(PFContainerViewVTable, read_entries, 16);
PACKEDFUN_OFFSET(PFContainerViewVTable, materialize, 24);

#endif /* LP64 */

/* Type indices are fixed forever within a major version. */
PACKEDFUN_LAYOUT_ASSERT(kPFTypeAny == -1);
PACKEDFUN_LAYOUT_ASSERT(kPFTypeNone == 0);
PACKEDFUN_LAYOUT_ASSERT(kPFTypeInt == 1);
PACKEDFUN_LAYOUT_ASSERT(kPFTypeBool == 2);
PACKEDFUN_LAYOUT_ASSERT(kPFTypeFloat == 3);
PACKEDFUN_LAYOUT_ASSERT(kPFTypeOpaquePtr == 4);
PACKEDFUN_LAYOUT_ASSERT(kPFTypeDataType == 5);
PACKEDFUN_LAYOUT_ASSERT(kPFTypeDevice == 6);
PACKEDFUN_LAYOUT_ASSERT(kPFTypeDLTensorPtr == 7);
PACKEDFUN_LAYOUT_ASSERT(kPFTypeRawStr == 8);
PACKEDFUN_LAYOUT_ASSERT(kPFTypeStrView == 9);
PACKEDFUN_LAYOUT_ASSERT(kPFTypeBytesView == 10);
PACKEDFUN_LAYOUT_ASSERT(kPFTypeSmallStr == 11);
PACKEDFUN_LAYOUT_ASSERT(kPFTypeSmallBytes == 12);
PACKEDFUN_LAYOUT_ASSERT(kPFTypeUInt64 == 13);
PACKEDFUN_LAYOUT_ASSERT(kPFTypeContainerView == 14);
PACKEDFUN_LAYOUT_ASSERT(kPFAccessAttr == 0);
PACKEDFUN_LAYOUT_ASSERT(kPFAccessArrayItem == 1);
PACKEDFUN_LAYOUT_ASSERT(kPFAccessMapItem == 2);
PACKEDFUN_LAYOUT_ASSERT(kPFAccessAttrMissing == 3);
PACKEDFUN_LAYOUT_ASSERT(kPFAccessArrayItemMissing == 4);
PACKEDFUN_LAYOUT_ASSERT(kPFAccessMapItemMissing == 5);
PACKEDFUN_LAYOUT_ASSERT(PACKEDFUN_FUNCTION_VIEW_ARGS_SHIFT == 8);
PACKEDFUN_LAYOUT_ASSERT(PACKEDFUN_FUNCTION_MAX_VIEW_ARGS == 24);
PACKEDFUN_LAYOUT_ASSERT(kPFTypeStaticObjectBegin == 64);
PACKEDFUN_LAYOUT_ASSERT(kPFTypeObject == 64);
PACKEDFUN_LAYOUT_ASSERT(kPFTypeString == 65);
PACKEDFUN_LAYOUT_ASSERT(kPFTypeBytes == 66);
PACKEDFUN_LAYOUT_ASSERT(kPFTypeError == 67);
PACKEDFUN_LAYOUT_ASSERT(kPFTypeFunction == 68);
PACKEDFUN_LAYOUT_ASSERT(kPFTypeOpaque == 69);
PACKEDFUN_LAYOUT_ASSERT(kPFTypeShape == 70);
PACKEDFUN_LAYOUT_ASSERT(kPFTypeTensor == 71);
PACKEDFUN_LAYOUT_ASSERT(kPFTypeArray == 72);
PACKEDFUN_LAYOUT_ASSERT(kPFTypeMap == 73);
PACKEDFUN_LAYOUT_ASSERT(kPFTypeList == 74);
PACKEDFUN_LAYOUT_ASSERT(kPFTypeDict == 75);
PACKEDFUN_LAYOUT_ASSERT(kPFTypeModule == 76);
PACKEDFUN_LAYOUT_ASSERT(kPFTypeStaticObjectEnd == 128);
PACKEDFUN_LAYOUT_ASSERT(kPFTypeDynamicBegin == 128);
PACKEDFUN_LAYOUT_ASSERT(PACKEDFUN_FIELD_READONLY == 1);
PACKEDFUN_LAYOUT_ASSERT(PACKEDFUN_METHOD_STATIC == 1);
PACKEDFUN_LAYOUT_ASSERT(PACKEDFUN_DLTENSOR_ARG_TAG == 0x50464454u);
PACKEDFUN_LAYOUT_ASSERT(PACKEDFUN_DLTENSOR_ARG_READ_ONLY == 1);

/* A translation unit must declare something besides static assertions under -pedantic. */
typedef int packedfun_layout_dummy;
