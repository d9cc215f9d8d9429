/* packedfun C ABI: the one contract between the runtime, extension libraries and language bindings.
 */
/*
 * ABI version rules
 * -----------------
 * PACKEDFUN_ABI_VERSION_MAJOR changes only when an existing struct layout, type index, symbol or
 * documented ownership rule changes; a library built against major N refuses to run on major M !=
 * N. PACKEDFUN_ABI_VERSION_MINOR changes when something is *added*: new entry points, new type
 * indices inside the reserved ranges, new flag bits. A library built against minor m runs on any
 * runtime with minor >= m. Nothing in this file is ever removed or re-purposed within one major
 * version.
 *
 * Ownership vocabulary used on every declaration
 * ----------------------------------------------
 *  borrowed   the callee only reads; the caller keeps its reference and the value must stay valid
 *             for the duration of the call.
 *  new ref    the callee hands the caller one reference that the caller must release
 *             (PFObjectDecRef for PFObject*, PFAnyRelease for PFAny).
 *  stolen     the callee takes over the caller's reference.
 *
 * Error convention
 * ----------------
 * Every entry point returning `int` returns 0 on success and non-zero on failure. On failure an
 * error object has been stored in the calling thread's error slot (see PFErrorMoveFromRaised);
 * output parameters are then left untouched. Entry points never throw C++ exceptions and never
 * longjmp.
 *
 * This header compiles as C11 and as C++17 and includes nothing but <stdint.h>, <stddef.h> and
 * DLPack.
 */
#ifndef PACKEDFUN_C_API_H_
#define PACKEDFUN_C_API_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#define PACKEDFUN_ABI_VERSION_MAJOR 1
#define PACKEDFUN_ABI_VERSION_MINOR 5

#if defined(_WIN32)
#define PACKEDFUN_EXPORT __declspec(dllexport)
#else
#define PACKEDFUN_EXPORT __attribute__((visibility("default")))
#endif

#ifdef PACKEDFUN_BUILDING_RUNTIME
#define PACKEDFUN_API PACKEDFUN_EXPORT
#else
#define PACKEDFUN_API
#endif

/* Symbols a shared library exports so that PFModuleLoadFromFile finds functions without any
 * registry: `int __packedfun_<name>(void* self, const PFAny* args, int32_t n, PFAny* result)`
 * (a PFSafeCall; it is called with self == NULL) and, optionally, a NUL-terminated docstring
 * `const char* __packedfun_doc__<name>`. The entry function of a module is named by the
 * NUL-terminated string symbol `__packedfun_main__`. */
#define PACKEDFUN_SYMBOL_PREFIX "__packedfun_"
#define PACKEDFUN_DOC_SYMBOL_PREFIX "__packedfun_doc__"
#define PACKEDFUN_MAIN_SYMBOL "__packedfun_main__"
/* Added in ABI 1.3: a library may also export `const char* __packedfun_meta__<name>(void)`, which
 * returns the function's metadata record (see PFFunctionSetMetadata) or NULL; PFModuleGetFunction
 * attaches it to the Function it returns. */
#define PACKEDFUN_META_SYMBOL_PREFIX "__packedfun_meta__"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------------
 * Type indices
 * ------------------------------------------------------------------------------------------------
 */

/*! The type-index space. [0, 64): values stored inline in a PFAny (no object). [64, 128): built-in
 *  object types, fixed forever. [128, ...): object types allocated at run time by type key. */
typedef enum {
  kPFTypeAny = -1,        /*!< only as a "static type" in reflection: any value accepted */
  kPFTypeNone = 0,        /*!< None / null; payload is zero */
  kPFTypeInt = 1,         /*!< v_int64 */
  kPFTypeBool = 2,        /*!< v_int64, 0 or 1 */
  kPFTypeFloat = 3,       /*!< v_float64 */
  kPFTypeOpaquePtr = 4,   /*!< v_ptr, an untyped address (never dereferenced by the runtime) */
  kPFTypeDataType = 5,    /*!< v_dtype */
  kPFTypeDevice = 6,      /*!< v_device */
  kPFTypeDLTensorPtr = 7, /*!< v_ptr: borrowed DLTensor*, valid for the duration of the call */
  kPFTypeRawStr = 8,      /*!< v_c_str: borrowed NUL-terminated UTF-8 string */
  kPFTypeStrView = 9,     /*!< v_ptr: borrowed const PFByteArray* holding UTF-8 (NULs allowed) */
  kPFTypeBytesView = 10,  /*!< v_ptr: borrowed const PFByteArray* holding raw bytes */
  kPFTypeSmallStr = 11,   /*!< v_bytes[0, small_len): UTF-8 of at most 7 bytes, NUL-terminated */
  kPFTypeSmallBytes = 12, /*!< v_bytes[0, small_len): at most 7 bytes, NUL-terminated */
  kPFTypeUInt64 = 13,     /*!< v_uint64 (ABI 1.4): an integer in [2**63, 2**64), beyond int64;
                               every smaller integer travels as kPFTypeInt, so each value has
                               one form. A library older than 1.4 sees an unknown POD index. */
  kPFTypeContainerView =
      14, /*!< v_ptr: borrowed const PFContainerView* (ABI 1.4): a caller's
               sequence or mapping, read in place during the call; passed only
               where the callee asked for it (PACKEDFUN_FUNCTION_VIEW_ARGS_SHIFT) */
  kPFTypeStaticObjectBegin = 64,
  kPFTypeObject = 64,   /*!< root of all object types */
  kPFTypeString = 65,   /*!< PFBytesObject holding UTF-8 */
  kPFTypeBytes = 66,    /*!< PFBytesObject holding raw bytes */
  kPFTypeError = 67,    /*!< PFErrorObject */
  kPFTypeFunction = 68, /*!< PFFunctionObject */
  kPFTypeOpaque = 69,   /*!< PFOpaqueObject: a foreign handle (e.g. a Python object) */
  kPFTypeShape = 70,    /*!< PFShapeObject */
  kPFTypeTensor = 71,   /*!< PFTensorObject */
  kPFTypeArray = 72,    /*!< PFSeqObject, immutable */
  kPFTypeMap = 73,      /*!< immutable hash map; accessed through the PFMap* entry points */
  kPFTypeList = 74,     /*!< PFSeqObject, mutable */
  kPFTypeDict = 75,     /*!< mutable hash map; accessed through the PFMap* entry points */
  kPFTypeModule = 76,   /*!< a loaded shared library; accessed through PFModule* */
  kPFTypeStaticObjectEnd = 128,
  kPFTypeDynamicBegin = 128 /*!< first index handed out by PFTypeRegister */
} PFTypeIndex;

/* ------------------------------------------------------------------------------------------------
 * Values
 * ------------------------------------------------------------------------------------------------
 */

struct PFObject;

/*! A borrowed run of bytes. Never owns `data`. */
typedef struct PFByteArray {
  const char* data; /*!< first byte; may be NULL when size == 0 */
  size_t size;      /*!< number of bytes, not counting any terminating NUL */
} PFByteArray;

/*! The 16-byte tagged value every argument and result travels as.
 *  For type_index >= kPFTypeStaticObjectBegin, v_obj points to an object; whether the PFAny owns a
 *  reference is stated by whoever hands it over (arguments: borrowed; results: new ref). */
typedef struct PFAny {
  int32_t type_index; /*!< a PFTypeIndex or a run-time allocated type index */
  union {
    uint32_t small_len;    /*!< byte count, for kPFTypeSmallStr / kPFTypeSmallBytes */
    uint32_t zero_padding; /*!< zero for every other type, except PACKEDFUN_DLTENSOR_ARG_TAG on a
                                promotable kPFTypeDLTensorPtr (ABI 1.2, see PFDLTensorArg) and
                                PACKEDFUN_VIEW_NUL_TERMINATED on a StrView/BytesView (ABI 1.5) */
  };
  union {
    int64_t v_int64;        /*!< kPFTypeInt, kPFTypeBool */
    uint64_t v_uint64;      /*!< kPFTypeUInt64 (ABI 1.4) */
    double v_float64;       /*!< kPFTypeFloat */
    void* v_ptr;            /*!< kPFTypeOpaquePtr, kPFTypeDLTensorPtr, kPFTypeStrView/BytesView */
    const char* v_c_str;    /*!< kPFTypeRawStr */
    struct PFObject* v_obj; /*!< object types */
    DLDataType v_dtype;     /*!< kPFTypeDataType */
    DLDevice v_device;      /*!< kPFTypeDevice */
    char v_bytes[8];        /*!< kPFTypeSmallStr, kPFTypeSmallBytes */
  };
} PFAny;

/*! The packed calling convention. `args` are borrowed for the duration of the call; `*result` is
 *  pre-set to None by the caller and, on success, holds a new ref that the caller owns. On failure
 *  (non-zero return) the error is in the thread's error slot and `*result` is still None. */
typedef int (*PFSafeCall)(void* self, const PFAny* args, int32_t num_args, PFAny* result);

/* Added in ABI 1.4: container views (appended; nothing above changed). */

struct PFContainerView;

/*! What a callee can read from a container view. A binding passes views only to a call that keeps
 *  its lock (the GIL) held, so every entry runs on the calling thread, under that lock, during the
 *  call; none of them runs the caller's code or keeps anything past its return. */
typedef struct PFContainerViewVTable {
  /*! Stores items [start, start + n) of a sequence view in out[0, n) while they are plain ints
   *  (exact ints of the caller's language that fit int64); returns how many it stored, fewer than
   *  `n` when item start + result is not one (or the view is a mapping). Never fails. */
  int64_t (*read_int64)(const struct PFContainerView* view, int64_t start, int64_t* out, int64_t n);
  /*! As read_int64 for plain floats, and plain ints converted to double (what a float parameter
   *  makes of an int). */
  int64_t (*read_float64)(const struct PFContainerView* view, int64_t start, double* out,
                          int64_t n);
  /*! Reads up to `max_items` entries of a mapping view, from `*cursor` (0 at first; advanced past
   *  what was read), into kv[2i] (key) and kv[2i + 1] (value): borrowed cells of the plain kinds
   *  (int, float, SmallStr, or StrView over views[2i] / views[2i + 1], caller-provided room for
   *  2 * max_items). Returns how many entries it stored: fewer than `max_items` at the end, or
   *  when the next entry is not plain (the callee compares its count with `size`). Never fails. */
  int64_t (*read_entries)(const struct PFContainerView* view, int64_t* cursor, PFAny* kv,
                          PFByteArray* views, int64_t max_items);
  /*! Converts the whole container into `*out` (new ref): the Array (kind kPFTypeArray) or Map
   *  (kPFTypeMap) the caller passes when it passes no view, with that conversion's errors. Returns
   *  0, or non-zero with the error in the slot. */
  int (*materialize)(const struct PFContainerView* view, PFAny* out);
} PFContainerViewVTable;

/*! A caller's container lent to one call (kPFTypeContainerView). The caller owns it and may embed
 *  it at the start of a larger record of its own. */
typedef struct PFContainerView {
  const PFContainerViewVTable* vtable; /*!< the readers; borrowed */
  int32_t kind;     /*!< kPFTypeArray (a sequence: list, tuple) or kPFTypeMap (a mapping: dict) */
  int32_t reserved; /*!< zero */
  int64_t size;     /*!< items of a sequence, entries of a mapping, when the call began */
  void* handle;     /*!< the caller's container (e.g. a PyObject*); opaque to the callee */
} PFContainerView;

/* ------------------------------------------------------------------------------------------------
 * Objects
 * ------------------------------------------------------------------------------------------------
 */

/*! Header at the start of every object. */
typedef struct PFObject {
  uint64_t ref_count; /*!< strong references; only touched atomically (PFObjectIncRef/DecRef) */
  int32_t type_index; /*!< the object's most derived type */
  uint32_t flags;     /*!< reserved, zero */
  void (*deleter)(struct PFObject* self); /*!< destroys and frees the object at ref_count 0 */
} PFObject;

/*! kPFTypeString and kPFTypeBytes: the bytes follow the object and are always NUL-terminated. */
typedef struct PFBytesObject {
  PFObject header;   /*!< object header */
  PFByteArray bytes; /*!< contents, owned by the object */
} PFBytesObject;

/*! kPFTypeFunction. Call as `f->safe_call(f->self, args, n, result)`; that is exactly what
 *  PFFunctionCall does, so bindings may inline it on their hot path. */
typedef struct PFFunctionObject {
  PFObject header;      /*!< object header */
  PFSafeCall safe_call; /*!< the body */
  void* self;           /*!< first argument of safe_call; owned by the function object */
} PFFunctionObject;

/*! kPFTypeError. Kind and message are UTF-8; the backtrace is read with PFErrorGetBacktrace. */
typedef struct PFErrorObject {
  PFObject header;     /*!< object header */
  PFByteArray kind;    /*!< e.g. "ValueError"; owned by the object */
  PFByteArray message; /*!< owned by the object */
  PFObject* cause;     /*!< owned; optional foreign payload (NULL or an object such as a
                            PFOpaqueObject holding the original Python exception) */
} PFErrorObject;

/*! kPFTypeOpaque: an object owning a foreign handle. */
typedef struct PFOpaqueObject {
  PFObject header;                   /*!< object header */
  void* handle;                      /*!< the foreign handle (e.g. PyObject*) */
  void (*free_handle)(void* handle); /*!< releases handle when the object dies; may be NULL */
} PFOpaqueObject;

/*! kPFTypeShape: an immutable run of int64. */
typedef struct PFShapeObject {
  PFObject header;     /*!< object header */
  const int64_t* data; /*!< owned by the object */
  int64_t size;        /*!< number of dimensions */
} PFShapeObject;

/*! kPFTypeArray (immutable) and kPFTypeList (mutable). Elements are owned PFAny values that never
 *  hold borrowed kinds (no RawStr/StrView/BytesView/DLTensorPtr). For a List, `data` may move on
 *  mutation: re-read it after any call that can mutate. */
typedef struct PFSeqObject {
  PFObject header;  /*!< object header */
  PFAny* data;      /*!< owned elements */
  int64_t size;     /*!< number of elements */
  int64_t capacity; /*!< allocated slots */
} PFSeqObject;

/*! kPFTypeTensor: the DLTensor is embedded so C kernels read `t->tensor.ndim` directly. */
typedef struct PFTensorObject {
  PFObject header; /*!< object header */
  DLTensor tensor; /*!< shape and strides always non-NULL for ndim > 0; strides always filled */
} PFTensorObject;

/*! Increments the reference count of `obj` (borrowed; NULL is ignored). */
PACKEDFUN_API void PFObjectIncRef(PFObject* obj);

/*! Decrements the reference count of `obj` (stolen reference; NULL is ignored); runs the deleter
 *  when it reaches zero. Never fails. */
PACKEDFUN_API void PFObjectDecRef(PFObject* obj);

/*! Creates a kPFTypeOpaque object owning `handle` from the call on. `free_handle(handle)` runs
 *  when the object dies (on whatever thread drops the last reference) and, should the create fail,
 *  before this call returns. `*out` receives a new ref. */
PACKEDFUN_API int PFOpaqueObjectCreate(void* handle, void (*free_handle)(void* handle),
                                       PFObject** out);

/*! Called by PFObjectVisitChildren with each child (borrowed) and the caller's `ctx`; a non-zero
 *  return stops the visit. */
typedef int (*PFObjectVisitor)(PFObject* child, void* ctx);

/*! Calls `visit(child, ctx)` for each object that `obj` (borrowed) holds a reference to itself:
 *  Array/List elements, Map/Dict keys and values, an Error's cause, and the fields of a reflected
 *  object whose declared type is an object type or Any (read through their getters, which must
 *  hand out the stored object itself). Functions, Opaque objects, tensors, modules and strings
 *  report none: their payload is foreign. Each child is borrowed for the duration of its visit
 *  (its ref_count is what the holders own, the visit adds nothing). Returns the first non-zero
 *  result of `visit`, else 0; never raises. `visit` must not mutate `obj` nor run code that can.
 *  Meant for the garbage collector of a language binding: a wrapper that solely owns `obj`
 *  (ref_count 1) also solely owns, through it, each child whose ref_count is 1. (ABI 1.4) */
PACKEDFUN_API int PFObjectVisitChildren(PFObject* obj, PFObjectVisitor visit, void* ctx);

/* ------------------------------------------------------------------------------------------------
 * Any helpers
 * ------------------------------------------------------------------------------------------------
 */

/*! Makes an owned copy of `*view` (borrowed) in `*out` (new ref): objects gain a reference,
 *  RawStr/StrView become strings, BytesView becomes bytes (small or object form), POD is copied,
 *  a container view (ABI 1.4) becomes its Array or Map (PFContainerViewVTable.materialize).
 *  kPFTypeDLTensorPtr becomes a Tensor object that copies the DLTensor metadata; for a promotable
 *  argument (PFDLTensorArg, ABI 1.2) it owns a reference to the producer's keeper, otherwise it
 *  borrows the data (the C producer guarantees the data outlives it). */
PACKEDFUN_API int PFAnyViewToOwned(const PFAny* view, PFAny* out);

/*! Releases an owned PFAny (decref if it holds an object) and resets it to None. */
PACKEDFUN_API void PFAnyRelease(PFAny* value);

/* Added in ABI 1.5 (appended; nothing above changed). */

/*! The type name of `value` (borrowed) as messages print it: "int", "str", "Array", ..., the type
 *  key of a registered object type, for an Opaque object the name that the global function
 *  "packedfun.OpaqueTypeName" (a language binding's hook, given the object) returns, and
 *  "<type index N>" for an unknown index. `*out` receives a new ref to a string. */
PACKEDFUN_API int PFAnyGetTypeName(const PFAny* value, PFAny* out);

/* ------------------------------------------------------------------------------------------------
 * Types and reflection
 * ------------------------------------------------------------------------------------------------
 */

/*! Field flags. */
#define PACKEDFUN_FIELD_READONLY 1
/*! Field flag (ABI 1.3): the field is left out of structural equality and hashing. */
#define PACKEDFUN_FIELD_NO_COMPARE 2
/*! Field flag (ABI 1.5): the field defines the variables it holds (a function's parameters, a
 *  let's bound name): objects of a kPFStructuralFreeVar type met below it are bound, one to one,
 *  to the variables at the same place on the other side (see PFStructuralEqualEx). */
#define PACKEDFUN_FIELD_STRUCTURAL_DEF 4
/*! Method flags. */
#define PACKEDFUN_METHOD_STATIC 1

/*! Reads a field: `field` points at the field inside the object; `*result` receives a new ref. */
typedef int (*PFFieldGetter)(void* field, PFAny* result);
/*! Writes a field from a borrowed value; fails with TypeError when the value does not fit. */
typedef int (*PFFieldSetter)(void* field, const PFAny* value);

/*! One reflected field. All byte arrays are owned by the type table (static storage). */
typedef struct PFFieldInfo {
  PFByteArray name;          /*!< field name */
  PFByteArray doc;           /*!< docstring, may be empty */
  int64_t offset;            /*!< byte offset of the field from the start of the object */
  int32_t flags;             /*!< PACKEDFUN_FIELD_* bits */
  int32_t static_type_index; /*!< declared type of the field, or kPFTypeAny */
  PFFieldGetter getter;      /*!< never NULL */
  PFFieldSetter setter;      /*!< NULL for read-only fields */
} PFFieldInfo;

/*! One reflected method. A static method named "__create__" is the type's constructor. */
typedef struct PFMethodInfo {
  PFByteArray name; /*!< method name */
  PFByteArray doc;  /*!< docstring, may be empty */
  PFObject* method; /*!< a Function owned by the type table; instance methods take self first */
  int32_t flags;    /*!< PACKEDFUN_METHOD_* bits */
  int32_t reserved; /*!< zero */
} PFMethodInfo;

/*! Everything the runtime knows of one type. Owned by the type table; the pointer stays valid for
 *  the life of the process, but `fields`/`methods` may move when members are registered on this
 *  type, so re-read them after registering. IsInstance(t, base) is
 *  `info(t)->depth >= info(base)->depth && info(t)->ancestors[info(base)->depth] == base`. */
typedef struct PFTypeInfo {
  int32_t type_index;          /*!< this type */
  int32_t depth;               /*!< 0 for Object, 1 for its direct children, ... */
  PFByteArray type_key;        /*!< e.g. "mylib.Point" */
  const int32_t* ancestors;    /*!< depth + 1 entries: ancestors[d] is the ancestor at depth d and
                                    ancestors[depth] is type_index itself */
  int32_t num_fields;          /*!< entries in `fields` */
  int32_t num_methods;         /*!< entries in `methods` */
  const PFFieldInfo* fields;   /*!< the type's own fields (not its parents') */
  const PFMethodInfo* methods; /*!< the type's own methods (not its parents') */
  PFByteArray doc;             /*!< docstring, may be empty */
} PFTypeInfo;

/*! Looks up the index of `type_key` (borrowed). Fails with KeyError when it is unknown. */
PACKEDFUN_API int PFTypeKeyToIndex(const PFByteArray* type_key, int32_t* out);

/*! Gets the (borrowed, process-lifetime) info of `type_index`. Fails with IndexError when unknown.
 *  POD type indices have infos too (depth 0, no ancestors beyond themselves). */
PACKEDFUN_API int PFTypeGetInfo(int32_t type_index, const PFTypeInfo** out);

/*! Registers an object type `type_key` (borrowed) deriving from `parent_index`, or returns the
 *  existing index when the key is already registered with the same parent (fails with TypeError
 *  when registered with a different one). Thread-safe. */
PACKEDFUN_API int PFTypeRegister(const PFByteArray* type_key, int32_t parent_index, int32_t* out);

/*! Adds a field (copied; its strings must be of static storage duration) to `type_index`. Fails
 *  with ValueError when the type already has a field of that name. */
PACKEDFUN_API int PFTypeRegisterField(int32_t type_index, const PFFieldInfo* info);

/*! Adds a method (copied; `info->method` is borrowed and gains a reference; strings static). */
PACKEDFUN_API int PFTypeRegisterMethod(int32_t type_index, const PFMethodInfo* info);

/*! Sets the docstring of a type (static storage). */
PACKEDFUN_API int PFTypeSetDoc(int32_t type_index, const PFByteArray* doc);

/* Added in ABI 1.1 (appended; nothing above changed). */

/*! Whether `type_index` is `base_index` or derives from it, in O(1) through the ancestors array:
 *  1 or 0. Unknown indices give 0. Never fails, never raises. */
PACKEDFUN_API int PFTypeIsInstance(int32_t type_index, int32_t base_index);

/*! `*out` receives a new ref to an Array of Strings: the type key of every registered type index
 *  in [0, num_types) (an empty string where the index is unused), so that a binding can walk the
 *  whole type table. `*num_types` (may be NULL) receives one past the highest index in use. The
 *  parent of a type is `info->ancestors[info->depth - 1]` (none at depth 0). */
PACKEDFUN_API int PFTypeListKeys(PFAny* out, int32_t* num_types);

/* Added in ABI 1.5: slot types (appended; nothing above changed). A slot type is an object type
 * whose instances the runtime allocates: the PFObject header, then one PFAny per field (its
 * ancestors' first), each at a fixed offset. Its fields are reflected like any other (getters and
 * setters are the runtime's; a setter checks the value against the field's declared type), so C++
 * code reads, writes, compares, hashes and serializes them by name. Language bindings define
 * their classes this way (Python's packedfun.dataclasses.py_class). */

/*! One field of a slot type. Strings are copied. */
typedef struct PFSlotFieldInfo {
  PFByteArray name;          /*!< field name, unique in the type and its ancestors */
  PFByteArray doc;           /*!< docstring, may be empty */
  int32_t flags;             /*!< PACKEDFUN_FIELD_* bits (READONLY: no setter) */
  int32_t static_type_index; /*!< declared type: kPFTypeAny, kPFTypeInt, kPFTypeBool,
                                  kPFTypeFloat or an object type index; every write is checked */
  int32_t nullable;          /*!< 1: None is accepted as well (Optional[T]) */
  int32_t reserved;          /*!< zero */
} PFSlotFieldInfo;

/*! Registers (or finds) the slot type `type_key` (borrowed) deriving from `parent_index`, which
 *  must be kPFTypeObject, a slot type or a type with a registered layout (PFTypeRegisterLayout,
 *  whose object then comes first in each instance), with `num_fields` own fields (borrowed).
 *  Idempotent for the same parent and fields; `*out` receives the type index. Nothing is
 *  registered on failure: TypeError for a native parent without a layout, an unknown declared
 *  type or a nullable Any;
 *  ValueError for a key taken by a different layout, an empty or repeated field name. */
PACKEDFUN_API int PFTypeRegisterSlotType(const PFByteArray* type_key, int32_t parent_index,
                                         const PFSlotFieldInfo* fields, int32_t num_fields,
                                         int32_t* out);

/*! The number of PFAny slots (all fields, ancestors' included) of slot type `type_index` in
 *  `*out`; fails with TypeError when `type_index` is not a slot type. */
PACKEDFUN_API int PFTypeGetNumSlots(int32_t type_index, int32_t* out);

/*! Creates an instance of slot type `type_index` from `num_values` values (borrowed), one per
 *  slot in layout order, each checked and converted as its field's setter would. `*out` receives
 *  a new ref. Fails with TypeError naming the type and field. Also registered as the global
 *  function "packedfun.slot_object_create" (arguments: type index, then the values). */
PACKEDFUN_API int PFObjectCreateSlots(int32_t type_index, const PFAny* values, int32_t num_values,
                                      PFObject** out);

/*! The binding reference of `obj` (borrowed): an opaque pointer that the language binding which
 *  defined the slot type stored with PFObjectExchangeBindingRef (Python: the wrapper of this
 *  instance, so that an instance coming back from native code is the same Python object), or NULL
 *  when none is stored or `obj` is neither a slot-type instance nor an object of a tvm-ffi type
 *  (which keeps one too, for any binding). Never fails, never raises. */
PACKEDFUN_API void* PFObjectGetBindingRef(const PFObject* obj);

/*! Atomically replaces the binding reference of slot-type instance `obj` (borrowed) with `desired`
 *  when it is `expected`: 1 when replaced, else 0 (also for an object that keeps none, see
 *  PFObjectGetBindingRef). The runtime never dereferences nor owns the pointer: a binding keeps
 *  it a weak reference, clearing it before what it points to dies. Never fails, never raises. */
PACKEDFUN_API int PFObjectExchangeBindingRef(PFObject* obj, void* expected, void* desired);

/*! How to make and destroy the native part of an object type in memory the runtime allocates, so
 *  that a slot type (a Python-defined class) can derive from it: its instances are this type's
 *  object, default-constructed, followed by the slots. Registered by the C++ headers
 *  (reflection::ObjectDef<T>) for a default-constructible T aligned to at most 16 bytes. */
typedef struct PFTypeLayoutInfo {
  int64_t size;          /*!< bytes of the native object (sizeof) */
  int64_t alignment;     /*!< its alignment, at most 16 */
  int64_t header_offset; /*!< bytes from the start of the native object to its PFObject header */
  /*! Default-constructs the native object at `memory` (size bytes, suitably aligned) and returns
   *  its header, whose count, type index and deleter the runtime then sets; NULL with an error
   *  raised when the constructor fails. */
  PFObject* (*construct)(void* memory);
  /*! Runs the destructor of the native object whose header is `obj`; frees nothing. */
  void (*destroy)(PFObject* obj);
} PFTypeLayoutInfo;

/*! Records the layout (copied) of object type `type_index`; the first registration stays. Fails
 *  with ValueError for an alignment above 16 or a missing function. */
PACKEDFUN_API int PFTypeRegisterLayout(int32_t type_index, const PFTypeLayoutInfo* info);

/* ------------------------------------------------------------------------------------------------
 * Functions and the global registry
 * ------------------------------------------------------------------------------------------------
 */

/*! Creates a Function that calls `safe_call(self, ...)`. The function owns `self` from the call
 *  on: `deleter(self)` runs when the function dies (deleter may be NULL) and, should the create
 *  fail, before this call returns. `*out` receives a new ref. */
PACKEDFUN_API int PFFunctionCreate(void* self, PFSafeCall safe_call, void (*deleter)(void* self),
                                   PFObject** out);

/*! Calls `func` (borrowed Function) with borrowed `args`; `*result` must be None on entry and
 *  receives a new ref. Identical to `func->safe_call(func->self, args, num_args, result)`. */
PACKEDFUN_API int PFFunctionCall(PFObject* func, const PFAny* args, int32_t num_args,
                                 PFAny* result);

/*! Registers `func` (borrowed; the registry takes its own reference) under `name` (borrowed).
 *  With override == 0 an existing name fails with a ValueError naming the function. `doc`
 *  (borrowed, may be NULL) is copied. Thread-safe. */
PACKEDFUN_API int PFFunctionSetGlobal(const PFByteArray* name, PFObject* func, int override,
                                      const PFByteArray* doc);

/*! Looks up `name` (borrowed). `*out` receives a new ref, or NULL when no such function exists
 *  (that is not an error). */
PACKEDFUN_API int PFFunctionGetGlobal(const PFByteArray* name, PFObject** out);

/*! Gets the docstring registered with `name` into `*out`: a new ref to a String, or None. */
PACKEDFUN_API int PFFunctionGetGlobalDoc(const PFByteArray* name, PFAny* out);

/*! `*out` receives a new ref to an Array of Strings: every registered name, sorted. */
PACKEDFUN_API int PFFunctionListGlobalNames(PFAny* out);

/*! Removes `name` (borrowed). `*removed` is set to 1 when it existed, else 0. */
PACKEDFUN_API int PFFunctionRemoveGlobal(const PFByteArray* name, int* removed);

/* Added in ABI 1.3: function metadata (appended; nothing above changed). */

/*! Bit of PFObject.flags that the runtime sets on a Function once metadata was attached to it, so
 *  that a binding can tell with one load whether a Function describes itself. */
#define PACKEDFUN_FUNCTION_FLAG_HAS_METADATA 1u

/*! Attaches metadata to `func` (borrowed Function): `json` (borrowed, copied) is a UTF-8 JSON
 *  object describing the function, replacing any earlier record. Its keys (all optional):
 *  "name" (str), "params" (list of {"name": str, "type": type schema, "default": value}; a
 *  parameter without "default" is required), "return" (type schema), "doc" (str), "ranges"
 *  (one per parameter: its C integer type such as "int32", or null; C++ typed wrappers write
 *  it). A type schema is a str in Python's annotation syntax: "int", "float", "bool", "str",
 *  "bytes", "None", "Any", "Optional[int]", "Array[Tensor]", "Map[str, int]", or an object type
 *  key. Unknown keys are kept, so that producers and readers may grow the record. Fails with
 *  TypeError when `func` is not a Function. Thread-safe. */
PACKEDFUN_API int PFFunctionSetMetadata(PFObject* func, const PFByteArray* json);

/*! Gets the metadata of `func` (borrowed Function) into `*out`: a new ref to the JSON String set
 *  by PFFunctionSetMetadata, or None when the function has none (not an error). Thread-safe. */
PACKEDFUN_API int PFFunctionGetMetadata(PFObject* func, PFAny* out);

/*! As PFFunctionGetMetadata for the global function `name` (borrowed): None when the name is not
 *  registered or its function carries no metadata. */
PACKEDFUN_API int PFFunctionGetGlobalMetadata(const PFByteArray* name, PFAny* out);

/* Added in ABI 1.4: the GIL policy (appended; nothing above changed). */

/*! Bit of PFObject.flags of a Function whose author declared it trivial: it neither blocks nor
 *  calls back, so a binding keeps its lock (the GIL) held across the call. Without the bit the
 *  binding releases its lock for the call (the default, kPFGILRelease). Read it with one load. */
#define PACKEDFUN_FUNCTION_FLAG_GIL_HOLD 2u

/*! Bit of PFObject.flags that PFFunctionSetMetadata sets when the record's "return" type schema
 *  is a bare type key (e.g. "mylib.Color": not a builtin such as "int", "str", "Tensor", "Any", nor
 *  a generic such as "list[int]"), and clears otherwise. A binding that maps such results (a C++
 *  enum to its IntEnum member) reads the metadata of those Functions only; for every other
 *  Function the decision is this one load. Added in ABI 1.4. */
#define PACKEDFUN_FUNCTION_FLAG_NAMED_RESULT 4u

/*! Bits [8, 32) of PFObject.flags of a Function (ABI 1.4): bit PACKEDFUN_FUNCTION_VIEW_ARGS_SHIFT
 *  + i set means that argument i (i < PACKEDFUN_FUNCTION_MAX_VIEW_ARGS) may arrive as a
 *  kPFTypeContainerView instead of the Array or Map a list, tuple or dict becomes. A binding may
 *  pass such a view only to a call that keeps its lock held (PACKEDFUN_FUNCTION_FLAG_GIL_HOLD).
 *  The creator sets the bits before it shares the Function: the C++ typed wrappers set them for
 *  the parameters that read views (std::vector of integers or double, std::map and
 *  std::unordered_map with std::string keys), PFModuleGetFunction from the library's
 *  `const uint32_t __packedfun_view_args__<name>` (these bits, unshifted). A Function without
 *  them, such as every one built against an older ABI, receives Arrays and Maps as before. */
#define PACKEDFUN_FUNCTION_VIEW_ARGS_SHIFT 8
#define PACKEDFUN_FUNCTION_MAX_VIEW_ARGS 24

/*! GIL policies: what a language binding does with its caller's lock while the function runs. */
#define kPFGILRelease 0 /*!< release it for the call (the default) */
#define kPFGILHold 1    /*!< keep holding it: trivial functions that never block or call back */

/*! Sets the GIL policy of `func` (borrowed Function) to kPFGILRelease or kPFGILHold; every holder
 *  of the Function sees it. Fails with TypeError when `func` is not a Function, ValueError for an
 *  unknown policy. Thread-safe (one atomic update of the flags). */
PACKEDFUN_API int PFFunctionSetGILPolicy(PFObject* func, int32_t policy);

/*! `*out` receives the GIL policy of `func` (borrowed Function). Fails with TypeError when `func`
 *  is not a Function. */
PACKEDFUN_API int PFFunctionGetGILPolicy(PFObject* func, int32_t* out);

/* Added in ABI 1.5: the metadata record and the argument-error label of a typed function, built by
 * the runtime for the C++ headers' registration and export macros (appended; nothing above
 * changed). In both, `types` (borrowed, `num_types` NUL-terminated strings) holds the type schema
 * of the result first, then one per parameter; `arg_names` (borrowed, `num_args` strings; NULL
 * when num_args is 0) names the parameters. */

/*! Builds the JSON metadata record (the format PFFunctionSetMetadata takes) of function `name`.
 *  num_types == 0 describes an untyped packed function with `num_args` parameters of type "Any".
 *  `arg_defaults` (borrowed, may be NULL) gives each parameter's default as JSON text ("" or NULL:
 *  required); without names the parameters are "arg0", "arg1", .... `doc` (may be NULL) is the
 *  docstring. `*out` receives a new ref to the record (a string). Fails with ValueError when
 *  num_args is neither 0 nor the number of parameters, or when a parameter without a default
 *  follows one with a default. */
PACKEDFUN_API int PFFunctionBuildMetadata(const char* name, const char* const* types,
                                          int32_t num_types, const char* const* arg_names,
                                          const char* const* arg_defaults, int32_t num_args,
                                          const char* doc, PFAny* out);

/*! Builds the label by which argument errors name a typed function with named parameters,
 *  "name(a: int, b: int) -> int". `*out` receives a new ref to a string, or None when num_args is
 *  0 or not num_types - 1. */
PACKEDFUN_API int PFFunctionBuildLabel(const char* name, const char* const* types,
                                       int32_t num_types, const char* const* arg_names,
                                       int32_t num_args, PFAny* out);

/*! As PFFunctionBuildMetadata, with the record's "ranges" key: `int_ranges` (borrowed,
 *  `num_ranges` entries, one per parameter) names each integer parameter's C type ("int32") and is
 *  NULL for the others; the key is left out when every entry is NULL (or num_ranges is 0). */
PACKEDFUN_API int PFFunctionBuildMetadataRanges(const char* name, const char* const* types,
                                                int32_t num_types, const char* const* arg_names,
                                                const char* const* arg_defaults, int32_t num_args,
                                                const char* doc, const char* const* int_ranges,
                                                int32_t num_ranges, PFAny* out);

/* ------------------------------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------------------------------
 */

/*! Creates an Error. `kind` and `message` are borrowed and copied. `backtrace` (borrowed, may be
 *  NULL) is the producer's text; NULL captures the current native stack (symbolized lazily).
 *  `cause` (borrowed, may be NULL) gains a reference. `*out` receives a new ref. */
PACKEDFUN_API int PFErrorCreate(const PFByteArray* kind, const PFByteArray* message,
                                const PFByteArray* backtrace, PFObject* cause, PFObject** out);

/*! Stores `error` (borrowed; the slot takes its own reference) in the calling thread's error slot,
 *  replacing (and releasing) anything already there. */
PACKEDFUN_API void PFErrorSetRaised(PFObject* error);

/*! Convenience for C producers: creates an Error of `kind` with `message` (both NUL-terminated,
 *  borrowed), capturing the native stack, and stores it in the error slot. Always returns -1 so
 *  that a C function can `return PFErrorSetRaisedFromCStr(...)`. */
PACKEDFUN_API int PFErrorSetRaisedFromCStr(const char* kind, const char* message);

/*! Moves the calling thread's pending error into `*out` (new ref; NULL when none) and clears the
 *  slot. */
PACKEDFUN_API void PFErrorMoveFromRaised(PFObject** out);

/*! Gets the backtrace text of `error` (borrowed): symbolized on the first request and cached in
 *  the error; `*out` stays valid while the error lives. Frames are "\n"-separated, most recent
 *  call last, as Python prints them. A captured stack lists the frames of the user's code only
 *  (not the runtime's, packedfun's header machinery, a language binding or an interpreter), each
 *  as `File "<library path>", offset 0x<address in that file>, in <short function name>`. */
PACKEDFUN_API int PFErrorGetBacktrace(PFObject* error, PFByteArray* out);

/*! Appends `frames` (borrowed text) to the backtrace of `error`; used by bindings to record the
 *  frames of their own language as an error passes through them. */
PACKEDFUN_API int PFErrorAppendBacktrace(PFObject* error, const PFByteArray* frames);

/* Added in ABI 1.5: the argument errors of typed calls, worded by the runtime (appended; nothing
 * above changed). Each stores the error in the calling thread's error slot (native stack
 * captured) and returns -1; strings are NUL-terminated and borrowed. */

/*! TypeError "<function>: expected N arguments, got M" ("1 argument" for N == 1). */
PACKEDFUN_API int PFErrorSetRaisedArity(const char* function, int32_t expected, int32_t got);

/*! The error for `value` (borrowed), which did not convert to the type named `expected`: when
 *  `int_range` names an integer type ("int32", may be NULL) and the value is an int,
 *  OverflowError "<prefix>value V does not fit in int32"; else TypeError "<prefix>expected
 *  <expected>, got <type name of value (PFAnyGetTypeName)>". `prefix` may be NULL. */
PACKEDFUN_API int PFErrorSetRaisedConversion(const char* prefix, const char* expected,
                                             const char* int_range, const PFAny* value);

/*! As PFErrorSetRaisedConversion for argument `index` of a typed call, with the prefix
 *  "<label>: argument '<param>': " when both `label` (PFFunctionBuildLabel's) and `param` (the
 *  parameter's name) are given, else "<function>: argument <index>: ". */
PACKEDFUN_API int PFErrorSetRaisedArgument(const char* function, const char* label,
                                           const char* param, int64_t index, const char* expected,
                                           const char* int_range, const PFAny* value);

/*! IndexError "<what>: axis A is out of range for a tensor with N dimensions" ("1 dimension"). */
PACKEDFUN_API int PFErrorSetRaisedAxis(const char* what, int64_t axis, int32_t ndim);

/* Added in ABI 1.5: what the C++ Error class needs, built by the runtime (appended). */

/*! A new Error (new ref) of `kind` with `message` (borrowed, copied); `backtrace` (borrowed, may
 *  be NULL) is the producer's text, NULL captures the current native stack (symbolized lazily).
 *  Never fails: when the error cannot be allocated, returns a (shared) MemoryError instead. */
PACKEDFUN_API PFObject* PFErrorNew(const PFByteArray* kind, const PFByteArray* message,
                                   const PFByteArray* backtrace);

/*! "<kind>: <message>" of `error` (borrowed), NUL-terminated: built on the first request and kept
 *  by the error, so valid while the error lives; safe from several threads at once. Never NULL:
 *  a fixed text when `error` is NULL or not an Error, or when the text cannot be allocated. */
PACKEDFUN_API const char* PFErrorGetWhat(PFObject* error);

/*! As PFErrorSetRaised, taking over the caller's reference to `error` (stolen): for a producer
 *  that is done with its error, e.g. a C++ exception object about to be destroyed. */
PACKEDFUN_API void PFErrorMoveToRaised(PFObject* error);

/* ------------------------------------------------------------------------------------------------
 * Strings, bytes and sequences
 * ------------------------------------------------------------------------------------------------
 */

/*! Copies `bytes` (borrowed; need not be NUL-terminated; must be UTF-8, which is not checked) into
 *  a string: `*out` receives kPFTypeSmallStr for up to 7 bytes, else a new ref to a String. */
PACKEDFUN_API int PFStringCreate(const PFByteArray* bytes, PFAny* out);

/*! As PFStringCreate, producing kPFTypeSmallBytes or a Bytes object. */
PACKEDFUN_API int PFBytesCreate(const PFByteArray* bytes, PFAny* out);

/*! Creates an Array holding owned copies (PFAnyViewToOwned) of `items` (borrowed).
 *  `*out` receives a new ref. Added in ABI 1.4: with `items` NULL the Array is empty (size 0)
 *  with room for `num_items` cells, and its creator, before sharing it, appends owned values
 *  (never borrowed kinds) in place: `data[size++] = value`, up to `num_items`; a binding converts
 *  its own list straight into the cells. Only cells below `size` are released with the Array. */
PACKEDFUN_API int PFArrayCreate(const PFAny* items, int64_t num_items, PFAny* out);

/*! Creates a Shape copying `dims` (borrowed). `*out` receives a new ref. */
PACKEDFUN_API int PFShapeCreate(const int64_t* dims, int64_t ndim, PFObject** out);

/* Added in ABI 1.1: Lists (kPFTypeList), the mutable PFSeqObject (appended; nothing above
 * changed). Every entry point below fails with TypeError when `list` is not a List. Mutation is
 * not synchronized: callers serialize writers of one List (readers of `data` re-read it after any
 * call that can mutate, since it may move). Values stored are owned copies (PFAnyViewToOwned);
 * a replaced or removed element is released only after the List is consistent again, so its
 * deleter may re-enter the List. */

/*! Creates a List holding owned copies of `items` (borrowed). `*out` receives a new ref. */
PACKEDFUN_API int PFListCreate(const PFAny* items, int64_t num_items, PFAny* out);

/*! Appends an owned copy of `value` (borrowed) to `list` (borrowed). */
PACKEDFUN_API int PFListAppend(PFObject* list, const PFAny* value);

/*! Replaces element `index` (negative counts from the end) with an owned copy of `value`
 *  (borrowed). Fails with IndexError when `index` is out of range. */
PACKEDFUN_API int PFListSetItem(PFObject* list, int64_t index, const PFAny* value);

/*! Inserts an owned copy of `value` (borrowed) before `index`, clamped like Python's
 *  list.insert (negative counts from the end; past the end appends). */
PACKEDFUN_API int PFListInsert(PFObject* list, int64_t index, const PFAny* value);

/*! Removes element `index` (negative counts from the end). With `out` non-NULL, `*out` receives
 *  the removed element (new ref); with NULL it is released. Fails with IndexError when `index`
 *  is out of range (an empty List included). */
PACKEDFUN_API int PFListPop(PFObject* list, int64_t index, PFAny* out);

/*! Removes every element of `list`, releasing them. */
PACKEDFUN_API int PFListClear(PFObject* list);

/* Added in ABI 1.5: NUL-terminated views (appended; nothing above changed). A caller passing a
 * kPFTypeStrView or kPFTypeBytesView whose bytes are followed by a NUL (data[size] == 0, as in a
 * Python str's UTF-8 buffer, a bytes object or a std::string) may say so by setting the PFAny's
 * zero_padding to PACKEDFUN_VIEW_NUL_TERMINATED; a callee may then use `data` as a C string for
 * the duration of the call without copying it. Any other zero_padding promises nothing (a callee
 * that needs a C string copies), so libraries and callers older than 1.5 keep working. */

/*! The zero_padding value marking a kPFTypeStrView / kPFTypeBytesView whose data[size] is NUL. */
#define PACKEDFUN_VIEW_NUL_TERMINATED 0x50464e54u

/* ------------------------------------------------------------------------------------------------
 * Maps (kPFTypeMap and kPFTypeDict)
 * ------------------------------------------------------------------------------------------------
 */

/*! Creates a Map (kPFTypeMap) from `num_items` key/value pairs laid out as
 *  [k0, v0, k1, v1, ...] (borrowed, copied as owned). Later duplicates win. Keys hash by value for
 *  strings, bytes, ints, bools, floats and by identity for other objects. */
PACKEDFUN_API int PFMapCreate(const PFAny* kv, int64_t num_items, PFAny* out);

/*! Number of entries of a Map or Dict (borrowed). */
PACKEDFUN_API int PFMapSize(PFObject* map, int64_t* out);

/*! Looks `key` (borrowed) up. `*found` is set to 0 or 1; when found `*out` receives a new ref. */
PACKEDFUN_API int PFMapGetItem(PFObject* map, const PFAny* key, PFAny* out, int* found);

/*! `*out` receives a new ref to an Array laid out as [k0, v0, k1, v1, ...] in iteration order. */
PACKEDFUN_API int PFMapItems(PFObject* map, PFAny* out);

/* Added in ABI 1.1: Dicts (kPFTypeDict), the mutable maps (appended; nothing above changed).
 * They are read with the PFMap* entry points above. Every entry point below fails with TypeError
 * when `dict` is not a Dict (a Map is immutable). Mutation is not synchronized: callers serialize
 * writers of one Dict. Removed keys and values are released only after the Dict is consistent. */

/*! Creates a Dict from `num_items` pairs laid out as [k0, v0, k1, v1, ...] (borrowed, copied as
 *  owned; later duplicates win). `*out` receives a new ref. */
PACKEDFUN_API int PFDictCreate(const PFAny* kv, int64_t num_items, PFAny* out);

/*! Inserts or replaces `key` -> `value` (both borrowed, stored as owned copies). A new key goes
 *  last in iteration order; replacing a value keeps the key's place. */
PACKEDFUN_API int PFDictSetItem(PFObject* dict, const PFAny* key, const PFAny* value);

/*! Removes `key` (borrowed). Fails with KeyError when it is absent. */
PACKEDFUN_API int PFDictDelItem(PFObject* dict, const PFAny* key);

/*! Removes every entry of `dict`, releasing keys and values. */
PACKEDFUN_API int PFDictClear(PFObject* dict);

/* Added in ABI 1.4: iteration over a Map or Dict without copying it, in bulk, and Maps of distinct
 * keys built without hashing. */

/*! Steps an iteration over `map` (a Map or Dict, borrowed). `*cursor` starts at 0 and is only
 *  ever written by this function. Each call finds the next entry in iteration order, stores its
 *  key and value into `*key` and `*value` as borrowed views (valid until the map is next changed
 *  or released; either pointer may be NULL), moves `*cursor` past it and sets `*found` to 1; past
 *  the last entry `*found` is 0. A Dict changed during an iteration never yields a dangling view,
 *  but may skip or repeat entries: callers that must notice compare PFMapSize between steps. */
PACKEDFUN_API int PFMapIterNext(PFObject* map, int64_t* cursor, PFAny* key, PFAny* value,
                                int* found);

/*! As PFMapIterNext for up to `max_items` entries at once: stores the next entries in iteration
 *  order into `kv` (caller's buffer of 2 * max_items, laid out [k0, v0, k1, v1, ...]) as borrowed
 *  views (valid until the map is next changed or released), their count into `*num_read` and
 *  moves `*cursor` past them; fewer than `max_items` means the end was reached. */
PACKEDFUN_API int PFMapReadEntries(PFObject* map, int64_t* cursor, PFAny* kv, int64_t max_items,
                                   int64_t* num_read);

/*! As PFMapCreate (`kv` borrowed, copied as owned; `*out` a new ref), for keys the caller knows
 *  to be pairwise distinct as a Map compares them (e.g. a binding converting its own language's
 *  dict of exact str or int keys); with repeated keys the Map's lookups are unspecified. Entries
 *  are stored in order and hashed only by the Map's first lookup, so a Map that is only iterated
 *  (a dict argument headed for std::map) is never hashed. */
PACKEDFUN_API int PFMapCreateDistinct(const PFAny* kv, int64_t num_items, PFAny* out);

/* ------------------------------------------------------------------------------------------------
 * Tensors (DLPack)
 * ------------------------------------------------------------------------------------------------
 */

/*! Wraps a legacy DLPack tensor. Takes ownership of `managed` (stolen) on success and on failure
 *  alike: its deleter runs exactly once, when the Tensor dies or before this call fails. Strides
 *  are computed when the producer gave none. `*out` receives a new ref. */
PACKEDFUN_API int PFTensorFromDLPack(DLManagedTensor* managed, PFObject** out);

/*! As PFTensorFromDLPack for a versioned (DLPack >= 1.0) tensor. Fails with BufferError when the
 *  major version is not 1 (the deleter still runs). The read-only flag is kept on the Tensor. */
PACKEDFUN_API int PFTensorFromDLPackVersioned(DLManagedTensorVersioned* managed, PFObject** out);

/*! Exports `tensor` (borrowed) as a legacy DLPack tensor that holds a reference to it.
 *  `*out` is owned by the caller, who calls its deleter. */
PACKEDFUN_API int PFTensorToDLPack(PFObject* tensor, DLManagedTensor** out);

/*! Exports `tensor` (borrowed) as a versioned DLPack tensor (version 1.x, read-only flag kept). */
PACKEDFUN_API int PFTensorToDLPackVersioned(PFObject* tensor, DLManagedTensorVersioned** out);

/*! Allocates a contiguous tensor (CPU memory aligned to 64 bytes; CUDA when the runtime was built
 *  with CUDA). `shape` is borrowed. `*out` receives a new ref. */
PACKEDFUN_API int PFTensorEmpty(const int64_t* shape, int32_t ndim, DLDataType dtype,
                                DLDevice device, PFObject** out);

/*! Whether the tensor was exported read-only by its producer (`*out` 0 or 1). */
PACKEDFUN_API int PFTensorIsReadOnly(PFObject* tensor, int* out);

/*! Parses "float32", "int8x4", "bfloat16", "bool", "float8_e4m3fn", ... into `*out`. */
PACKEDFUN_API int PFDataTypeFromString(const PFByteArray* text, DLDataType* out);

/*! Prints `dtype` into `*out` (a new ref to a string). */
PACKEDFUN_API int PFDataTypeToString(DLDataType dtype, PFAny* out);

/* Added in ABI 1.2: promotable tensor arguments (appended; nothing above changed).
 * A binding passing a producer's array (a NumPy array, a torch tensor) as a kPFTypeDLTensorPtr
 * argument may make it promotable: it points v_ptr at the `tensor` member of a PFDLTensorArg (its
 * first member, so every reader of a plain DLTensor* works unchanged) and sets the PFAny's
 * zero_padding to PACKEDFUN_DLTENSOR_ARG_TAG (any other value: a plain DLTensor*).
 * PFAnyViewToOwned then makes a Tensor that shares the data, copies the metadata and owns a
 * reference to `keeper` (instead of one borrowing the data), so whatever keeps the argument (a
 * C++ `Tensor` parameter, an Any, a container element, a callback's argument) keeps the producer
 * alive, and keeps the read-only flag. The hot path (a TensorView parameter) costs nothing more
 * than a plain DLTensor*. */

/*! The zero_padding value marking a kPFTypeDLTensorPtr that points into a PFDLTensorArg. */
#define PACKEDFUN_DLTENSOR_ARG_TAG 0x50464454u
/*! PFDLTensorArg flag: the producer exported the memory read-only (kept by promotion). */
#define PACKEDFUN_DLTENSOR_ARG_READ_ONLY 1u

/*! A borrowed tensor argument that can be promoted to an owning Tensor. Valid, like any argument,
 *  for the duration of the call; the binding owns it. */
typedef struct PFDLTensorArg {
  DLTensor tensor;   /*!< the borrowed tensor; first, so the PFAny's v_ptr points at both */
  PFObject* keeper;  /*!< never NULL; borrowed: one reference to it keeps `tensor.data` valid
                          after the call. A promoted Tensor holds one and drops it when it dies,
                          on whatever thread that is (the keeper's deleter must allow that) */
  uint32_t flags;    /*!< PACKEDFUN_DLTENSOR_ARG_* bits */
  uint32_t reserved; /*!< zero */
} PFDLTensorArg;

/* ------------------------------------------------------------------------------------------------
 * Modules
 * ------------------------------------------------------------------------------------------------
 */

/*! Loads the shared library at `path` (borrowed), running its static initializers (and so its
 *  global registrations). Fails with OSError carrying the loader's message and the path, and
 *  with RuntimeError when the library's reflection redefines an object type that an earlier
 *  registration defined differently (the library stays loaded; the first definition is kept).
 *  `*out` receives a new ref to a Module. */
PACKEDFUN_API int PFModuleLoadFromFile(const PFByteArray* path, PFObject** out);

/*! A Module over the running program and everything loaded with it (the "system library").
 *  `*out` receives a new ref. */
PACKEDFUN_API int PFModuleGetSystemLib(PFObject** out);

/*! Looks `name` (borrowed) up in `module` (borrowed) and, with query_imports != 0, in its imports.
 *  `*out` receives a new ref to a Function that keeps the module loaded, or NULL when missing. */
PACKEDFUN_API int PFModuleGetFunction(PFObject* module, const PFByteArray* name, int query_imports,
                                      PFObject** out);

/*! Makes `module` (borrowed) import `dependency` (borrowed; gains a reference). */
PACKEDFUN_API int PFModuleImport(PFObject* module, PFObject* dependency);

/*! `*out` receives a new ref to an Array of the modules `module` imports. */
PACKEDFUN_API int PFModuleGetImports(PFObject* module, PFAny* out);

/*! `*out` receives a new ref to a string: the library path ("" for the system library). */
PACKEDFUN_API int PFModuleGetPath(PFObject* module, PFAny* out);

/* Added in ABI 1.0 by the module loader (appended; nothing above changed). */

/*! Gets the docstring of the function `name` (borrowed) of `module` (borrowed), searched exactly
 *  as PFModuleGetFunction searches (imports too with query_imports != 0). The docstring is the
 *  `const char*` variable PACKEDFUN_DOC_SYMBOL_PREFIX + name exported by the library where the
 *  function was found. `*out` receives a new ref to a string, or None when the function or its
 *  docstring is missing (that is not an error). Costs one or two symbol lookups; no registry. */
PACKEDFUN_API int PFModuleGetFunctionDoc(PFObject* module, const PFByteArray* name,
                                         int query_imports, PFAny* out);

/*! Gets the name of the entry function of `module` (borrowed): the text of the `const char*`
 *  variable PACKEDFUN_MAIN_SYMBOL exported by the library (`const char* __packedfun_main__ =
 *  "add_one";`), to be looked up with PFModuleGetFunction. `*out` receives a new ref to a string,
 *  or None when the library names no entry function (not an error). Imports are not searched. */
PACKEDFUN_API int PFModuleGetEntryName(PFObject* module, PFAny* out);

/* Added in ABI 1.3: libraries built for Apache TVM FFI (appended; nothing above changed).
 * PFModuleLoadFromFile also loads libraries that export functions as `__tvm_ffi_<name>` (tvm-ffi's
 * TVM_FFI_DLL_EXPORT_TYPED_FUNC) and PFModuleGetFunction finds them when no `__packedfun_<name>`
 * exists; PFModuleGetFunctionDoc reads their `__tvm_ffi__doc_<name>`. Such a Function is an
 * ordinary packedfun Function whose body translates arguments, results and errors between the
 * two ABIs. packedfun does not link libtvm_ffi: when a library needs it and the loader cannot
 * find it, the runtime loads it once, with global symbols, from (in this order) the path in the
 * environment variable PACKEDFUN_TVM_FFI_LIBRARY, the path set here, then the plain name
 * "libtvm_ffi.so"; it resolves tvm-ffi's entry points by name. Libraries with a tvm-ffi library
 * context or embedded binaries are loaded through tvm-ffi's own module loader. A runtime built
 * without this interop (CMake option PACKEDFUN_WITH_TVM_FFI=OFF) loads such a library as a plain
 * one: its tvm-ffi functions are not found; PFModuleSetTVMFFILibrary succeeds without effect. */

/*! Sets where libtvm_ffi is (a file path, borrowed and copied; NULL or empty clears it), for a
 *  binding that located the installed apache-tvm-ffi package. Takes effect at the next load that
 *  needs libtvm_ffi; a libtvm_ffi already loaded stays. Fails with ValueError on a NUL byte. */
PACKEDFUN_API int PFModuleSetTVMFFILibrary(const PFByteArray* path);

/* Also added in ABI 1.3: listing a module's exports. */

/*! Lists the functions `module` (borrowed) exports: the names of its defined function symbols
 *  PACKEDFUN_SYMBOL_PREFIX + name, read from the loaded library's dynamic symbol table, and with
 *  query_imports != 0 those of its imports too. `*out` receives a new ref to an Array of strings,
 *  sorted and unique, or None when the list cannot be known (the system library, a platform
 *  without ELF dynamic sections): then look names up one by one with PFModuleGetFunction. */
PACKEDFUN_API int PFModuleListFunctions(PFObject* module, int query_imports, PFAny* out);

/* ------------------------------------------------------------------------------------------------
 * Version
 * ------------------------------------------------------------------------------------------------
 */

/*! The runtime's ABI version, (PACKEDFUN_ABI_VERSION_MAJOR << 16) | PACKEDFUN_ABI_VERSION_MINOR of
 *  the runtime that is actually loaded (compare with the macros you compiled against). */
PACKEDFUN_API uint32_t PFGetABIVersion(void);

/* ------------------------------------------------------------------------------------------------
 * Structural equality and hashing (added in ABI 1.3)
 * ------------------------------------------------------------------------------------------------
 * Leaves compare by value (strings/bytes by content in any form; NaN equals NaN); Array, List,
 * Map, Dict and Shape by content (the container type must match); reflected objects of the same
 * type field by field, skipping PACKEDFUN_FIELD_NO_COMPARE fields; all other objects (Functions,
 * Tensors, Modules, Errors) by identity. Walks are iterative (no C stack growth with depth) and
 * terminate on cycles. Equal values hash equally (for cyclic values: when their cycles have the
 * same shape). Also registered as the global functions "packedfun.structural_equal",
 * "packedfun.structural_hash" and "packedfun.structural_first_difference".
 */

/*! `*out` = 1 when `a` and `b` (borrowed) are structurally equal, else 0. */
PACKEDFUN_API int PFStructuralEqual(const PFAny* a, const PFAny* b, int* out);

/*! `*out` receives the structural hash of `value` (borrowed). */
PACKEDFUN_API int PFStructuralHash(const PFAny* value, uint64_t* out);

/*! `*out` receives None when `a` and `b` (borrowed) are equal, else a new ref to a String: the
 *  path of the first difference in depth-first order, e.g. `root.body[3].name` or `root["k"]`. */
PACKEDFUN_API int PFStructuralFirstDifference(const PFAny* a, const PFAny* b, PFAny* out);

/* Added in ABI 1.5 (appended; nothing above changed). */

/*! The kind of one step of an access path (PFStructuralFirstMismatch): a field (the step's value
 *  is its name), a sequence item (the index), a map entry (the key), and the same three for an
 *  item that one side lacks (only as the last step of that side's path). */
typedef enum {
  kPFAccessAttr = 0,
  kPFAccessArrayItem = 1,
  kPFAccessMapItem = 2,
  kPFAccessAttrMissing = 3,
  kPFAccessArrayItemMissing = 4,
  kPFAccessMapItemMissing = 5,
} PFAccessStepKind;

/*! The first difference between `a` and `b` (borrowed) as one access path per side: `*out`
 *  receives None when they are structurally equal, else a new Array [lhs steps, rhs steps], each
 *  an Array of steps [kind, value] with kind a PFAccessStepKind. Unlike
 * PFStructuralFirstDifference, sequences and maps of different sizes are compared item by item, so
 * the difference is the first item one side lacks. Also the global function
 *  "packedfun.structural_first_mismatch"; "packedfun.access_path_str" writes a list of steps as
 *  `root.body[3]["k"]` (a missing item as `[<missing:3>]`). */
PACKEDFUN_API int PFStructuralFirstMismatch(const PFAny* a, const PFAny* b, PFAny* out);

/*! How the objects of a reflected type take part in structural equality and hashing
 *  (PFTypeSetStructuralKind; a type without one takes its nearest ancestor's, else tree). */
typedef enum {
  /*! By content, field by field; sharing is invisible (the default). */
  kPFStructuralTree = 0,
  /*! As tree, and holds no variables below it: the same object on both sides is equal at once. */
  kPFStructuralConstTree = 1,
  /*! By content, and sharing counts: the objects of this type pair one to one between the sides,
   *  so [s, s] does not equal [s1, s2] even when s, s1 and s2 are equal by content. */
  kPFStructuralDAG = 2,
  /*! A variable: equal to the variable it is bound to (bound where a PACKEDFUN_FIELD_STRUCTURAL_DEF
   *  field holds it, or on first meeting under PACKEDFUN_STRUCTURAL_MAP_FREE_VARS), else only to
   *  itself. Its fields are not compared. */
  kPFStructuralFreeVar = 3,
  /*! Not comparable: structural equality and hashing fail with TypeError naming the type. */
  kPFStructuralUnsupported = 4,
} PFStructuralKind;

/*! Option bit of PFStructuralEqualEx/PFStructuralHashEx/PFStructuralFirstMismatchEx: variables
 *  (kPFStructuralFreeVar) not bound by a definition are bound on first meeting, so two terms equal
 *  up to a renaming of their free variables are equal (and hash alike). */
#define PACKEDFUN_STRUCTURAL_MAP_FREE_VARS 1

/*! Sets the structural kind (a PFStructuralKind) of reflected type `type_index`. ValueError for an
 *  unknown kind, TypeError for a type index below kPFTypeDynamicBegin or not registered. Also the
 *  global function "packedfun.type_set_structural_kind" (type index, kind). */
PACKEDFUN_API int PFTypeSetStructuralKind(int32_t type_index, int32_t kind);

/*! `*out` receives the structural kind of `type_index` (its own, else its nearest ancestor's, else
 *  kPFStructuralTree). Also the global function "packedfun.type_structural_kind". */
PACKEDFUN_API int PFTypeGetStructuralKind(int32_t type_index, int32_t* out);

/*! PFStructuralEqual with option bits `flags` (PACKEDFUN_STRUCTURAL_*; 0: the same). Variables
 *  (kPFStructuralFreeVar objects) pair one to one: a pair is bound in a definition field (or on
 *  first meeting with MAP_FREE_VARS) and must then meet only each other; an unbound variable
 *  equals only itself. Bindings last for the whole walk (nested scopes need distinct variables, as
 *  a term's own variables are). The global functions take `flags` as an optional last argument. */
PACKEDFUN_API int PFStructuralEqualEx(const PFAny* a, const PFAny* b, int32_t flags, int* out);

/*! PFStructuralHash with option bits `flags`: a bound variable hashes by the order of its binding,
 *  an unbound one by identity, so values equal under the same flags hash alike. */
PACKEDFUN_API int PFStructuralHashEx(const PFAny* value, int32_t flags, uint64_t* out);

/*! PFStructuralFirstMismatch with option bits `flags`. */
PACKEDFUN_API int PFStructuralFirstMismatchEx(const PFAny* a, const PFAny* b, int32_t flags,
                                              PFAny* out);

/* ------------------------------------------------------------------------------------------------
 * Environment: GPU streams and the caller's tensor allocator
 * ------------------------------------------------------------------------------------------------
 * Added in ABI 1.3. A language binding (or any caller) tells the code it calls which stream to
 * launch on for a device and which allocator makes output tensors, so a kernel runs on the
 * caller's stream and returns memory the caller's framework owns. Both are per calling thread.
 */

/*! Sets the calling thread's stream for device (`device_type`, `device_id`): an opaque handle
 *  (a cudaStream_t for CUDA), or NULL for the device's default stream. `*out_prev` (may be NULL)
 *  receives the handle it replaces. Fails with ValueError for a negative device type or id. */
PACKEDFUN_API int PFEnvSetStream(int32_t device_type, int32_t device_id, void* stream,
                                 void** out_prev);

/*! The calling thread's stream for the device, or NULL (the default stream) when none is set
 *  (where none is set here, the one set in Apache TVM FFI's environment, when the tvm-ffi bridge
 *  is in use). Never fails; a lookup is a few loads (no lock, no allocation). */
PACKEDFUN_API void* PFEnvGetStream(int32_t device_type, int32_t device_id);

/*! The allocator of DLPack's exchange API (DLPackManagedTensorAllocator): makes a new tensor with
 *  the prototype's dtype, ndim, shape and device, owned by the allocating framework; `*out` is a
 *  new DLManagedTensorVersioned (the caller runs its deleter). On failure it returns non-zero
 *  after calling `set_error(error_ctx, kind, message)` exactly once. */
typedef int (*PFEnvTensorAllocator)(DLTensor* prototype, DLManagedTensorVersioned** out,
                                    void* error_ctx,
                                    void (*set_error)(void* error_ctx, const char* kind,
                                                      const char* message));

/*! Sets the calling thread's tensor allocator (NULL: the runtime's own, PFTensorEmpty).
 *  `*out_prev` (may be NULL) receives the one it replaces. Never fails. */
PACKEDFUN_API int PFEnvSetTensorAllocator(PFEnvTensorAllocator allocator,
                                          PFEnvTensorAllocator* out_prev);

/*! Allocates a contiguous tensor through the calling thread's allocator (else the one set in
 *  Apache TVM FFI's environment, when the tvm-ffi bridge is in use; else PFTensorEmpty).
 *  `shape` (borrowed, `ndim` entries). `*out` receives a new ref to a Tensor that frees the
 *  memory through the allocator's deleter. Fails with the allocator's error kind and message, or
 *  ValueError for a negative dimension. */
PACKEDFUN_API int PFEnvTensorAlloc(const int64_t* shape, int32_t ndim, DLDataType dtype,
                                   DLDevice device, PFObject** out);

/* Added in ABI 1.4: the caller's lock and signals. A language binding with a global lock (Python's
 * GIL) installs hooks once per process; native code then releases and re-acquires its caller's
 * lock for a scope, and lets the caller notice signals (Ctrl-C), without knowing which language
 * called it. With no hooks installed (a C caller) all three entry points below do nothing. */

/*! Installs the process's lock hooks (NULL pointers: no hooks, the entry points below do nothing).
 *  `held()` says whether the calling thread holds the lock; `release()` releases it, returning a
 *  token; `acquire(token)` takes it back; `check_signals()` runs pending signal handlers and, when
 *  one raised, stores the error in the calling thread's error slot (PFErrorSetRaised); `gone()`
 * says that the lock can no longer be taken (the language is shutting down: a thread asking for it
 *  would be ended). From then on the runtime leaks, rather than runs, the deleters of Functions
 *  and Opaque objects dying on threads that do not hold the lock, since those deleters may belong
 *  to the language. All five must be callable from any thread, holding the lock or not
 *  (check_signals takes it itself). Never fails. */
PACKEDFUN_API int PFEnvSetLockHooks(int (*held)(void), void* (*release)(void),
                                    void (*acquire)(void* token), void (*check_signals)(void),
                                    int (*gone)(void));

/*! Releases the calling thread's lock if it holds it. Returns the token to pass to
 *  PFEnvAcquireCallerLock, or NULL when nothing was released (no hooks, or not held). */
PACKEDFUN_API void* PFEnvReleaseCallerLock(void);

/*! Re-acquires the lock released by PFEnvReleaseCallerLock (`token` NULL: does nothing). */
PACKEDFUN_API void PFEnvAcquireCallerLock(void* token);

/*! Lets the caller's language run its pending signal handlers. Returns 0, or non-zero when one
 *  raised (e.g. KeyboardInterrupt), the error then stored in the calling thread's error slot.
 *  Does nothing on a thread for which the lock is gone (see PFEnvSetLockHooks). */
PACKEDFUN_API int PFEnvCheckSignals(void);

/*! For a binding that cannot run code of its own before its callbacks take the lock (ctypes: its
 *  trampolines call PyGILState_Ensure on entry, which crashes or ends the thread once CPython is
 *  finalizing), so that the runtime refuses such calls for it:
 *  - `thread_state()` returns the calling thread's own state in the language, NULL when it has
 *    none or the language is gone. The runtime then takes `held()` to be false: CPython's
 *    PyGILState_Check answers "held" on every thread once finalization has deleted its state.
 *  - `call` is the binding's body for its callables. A Function created with PFEnvGuardedCall as
 *    its safe_call calls `call(self, args, num_args, result)` unless the lock is gone for the
 *    calling thread (see PFEnvSetLockHooks); then it fails with RuntimeError without entering it.
 *  Either may be NULL (none). One binding per process, like the lock hooks. Never fails. */
PACKEDFUN_API int PFEnvSetGuardedCall(void* (*thread_state)(void), PFSafeCall call);

/*! The PFSafeCall of a binding's guarded callables (see PFEnvSetGuardedCall): `args` borrowed,
 *  `*result` owned by the caller, as every PFSafeCall. Fails with RuntimeError ("the language is
 *  shutting down") once the lock is gone for the calling thread, or when no `call` is set. */
PACKEDFUN_API int PFEnvGuardedCall(void* self, const PFAny* args, int32_t num_args, PFAny* result);

/*! Called by a binding, holding its lock, just before its language shuts down (CPython: at exit,
 *  before finalization, when only daemon threads are left): from now on threads without a state
 *  in the language (`thread_state()` NULL, see PFEnvSetGuardedCall) are kept out of the binding's
 *  deleters and guarded callables as if the lock were gone, and this call waits, the lock
 *  released, up to `timeout_ms` for the threads already inside them to leave (a thread let in
 *  just before the language died would enter it after its death). Returns 0, or 1 when some
 *  were still inside at the timeout. PFEnvSetLockHooks opens it again. Never fails. */
PACKEDFUN_API int PFEnvCloseLock(int32_t timeout_ms);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PACKEDFUN_C_API_H_ */
