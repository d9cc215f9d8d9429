// Private header of the Apache TVM FFI bridge: the facts of tvm-ffi's C ABI it relies on, and the
// bridge's internal entry points (no tvm-ffi header is included: nothing links against it).
#ifndef PACKEDFUN_SRC_INTERNAL_TVM_FFI_H_
#define PACKEDFUN_SRC_INTERNAL_TVM_FFI_H_

#include <packedfun/c_api.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace packedfun {
namespace detail {
namespace tvmffi {

/* tvm-ffi's TVMFFIAny is byte-identical to PFAny (16 bytes: type index, 4 bytes of padding or
 * small-string length, 8 bytes of payload), so PFAny stands for it throughout the bridge. POD type
 * indices 0-8, 11 and 12 mean the same in both ABIs; the ones below differ or exist only there. */
enum TypeIndex : int32_t {
  kByteArrayPtr = 9,      // v_ptr: borrowed TVMFFIByteArray* (same layout as PFByteArray)
  kObjectRValueRef = 10,  // v_ptr: address of an object handle being moved
  kStr = 65,
  kBytes = 66,
  kError = 67,
  kFunction = 68,
  kShape = 69,
  kTensor = 70,
  kArray = 71,
  kMap = 72,
  kModule = 73,
  kList = 75,
  kDict = 76,
};

/*! tvm-ffi's object header: 24 bytes like PFObject, but the count combines strong and weak
 *  references and the deleter takes flags, so the bridge only ever touches tvm-ffi objects through
 *  TVMFFIObjectIncRef/DecRef. Every object's cell starts right after it. */
struct Object {
  uint64_t combined_ref_count;
  int32_t type_index;
  uint32_t padding;
  void (*deleter)(void* self, int flags);
};

using SafeCall = int (*)(void* self, const PFAny* args, int32_t num_args, PFAny* result);

/*! The cell after the header of a tvm-ffi Error. */
struct ErrorCell {
  PFByteArray kind;
  PFByteArray message;
  PFByteArray backtrace;
};

/*! The cell after the header of a tvm-ffi Function. */
struct FunctionCell {
  SafeCall safe_call;
  void* cpp_call;
};

/*! The cell after the header of a tvm-ffi Shape. */
struct ShapeCell {
  const int64_t* data;
  size_t size;
};

/*! The cell after the header of a tvm-ffi Array or List. */
struct SeqCell {
  PFAny* data;
  int64_t size;
  int64_t capacity;
  void (*data_deleter)(void*);
};

/*! tvm-ffi's TVMFFIFieldInfo (ABI 0.1). */
struct FieldInfo {
  PFByteArray name;
  PFByteArray doc;
  PFByteArray metadata;
  int64_t flags;  // kFieldWritable, kFieldSetterIsFunction, ...
  int64_t size;
  int64_t alignment;
  int64_t offset;                          // of the field from the start of the object
  int (*getter)(void* field, PFAny* out);  // `*out` receives a new ref
  void* setter;  // int (*)(void* field, const PFAny* value), or a Function handle (flag below)
  PFAny default_value_or_factory;
  int32_t field_static_type_index;
};

constexpr int64_t kFieldWritable = 1 << 0;
constexpr int64_t kMethodStatic = 1 << 2;
constexpr int64_t kFieldSetterIsFunction = 1 << 11;

/*! tvm-ffi's TVMFFIMethodInfo (ABI 0.1). */
struct MethodInfo {
  PFByteArray name;
  PFByteArray doc;
  PFByteArray metadata;
  int64_t flags;  // kMethodStatic
  PFAny method;   // borrowed Function (owned by tvm-ffi's type table)
};

/*! tvm-ffi's TVMFFITypeInfo (ABI 0.1). */
struct TypeInfo {
  int32_t type_index;
  int32_t type_depth;
  PFByteArray type_key;
  const TypeInfo** type_ancestors;  // type_depth entries: [d] is the ancestor at depth d
  uint64_t type_key_hash;
  int32_t num_fields;
  int32_t num_methods;
  const FieldInfo* fields;    // the type's own fields
  const MethodInfo* methods;  // the type's own methods
  const void* metadata;
};

/*! tvm-ffi's TVMFFITypeAttrColumn: `data[i]` is the attribute of type `begin_index + i`. */
struct TypeAttrColumn {
  const PFAny* data;
  int32_t size;
  int32_t begin_index;
};

/*! tvm-ffi's field flags the bridge reports (TVMFFIFieldFlagBitMask). */
constexpr int64_t kFieldHasDefault = 1 << 1;
constexpr int64_t kFieldDefaultFromFactory = 1 << 5;

/*! tvm-ffi's TVMFFIVersion. */
struct Version {
  uint32_t major;
  uint32_t minor;
  uint32_t patch;
};

/*! The tvm-ffi ABI the bridge reads (major, minor): a libtvm_ffi of another is refused. */
constexpr uint32_t kSupportedMajor = 0;
constexpr uint32_t kSupportedMinor = 1;

/*! The cell of a tvm-ffi object (the memory right after its header). */
template <class T>
inline T* Cell(void* obj) noexcept {
  return reinterpret_cast<T*>(static_cast<char*>(obj) + sizeof(Object));
}

/*! tvm-ffi's entry points, resolved by name once per process. */
struct Api {
  int (*ObjectIncRef)(void* obj);
  int (*ObjectDecRef)(void* obj);
  int (*FunctionCreate)(void* self, SafeCall call, void (*deleter)(void*), void** out);
  int (*FunctionGetGlobal)(const PFByteArray* name, void** out);
  int (*FunctionSetGlobal)(const PFByteArray* name, void* func, int allow_override);
  void (*ErrorMoveFromRaised)(void** out);
  void (*ErrorSetRaised)(void* error);
  int (*ErrorCreate)(const PFByteArray* kind, const PFByteArray* message,
                     const PFByteArray* backtrace, void** out);
  int (*TensorFromDLPackVersioned)(DLManagedTensorVersioned* from, int32_t align,
                                   int32_t contiguous, void** out);
  int (*TensorToDLPackVersioned)(void* from, DLManagedTensorVersioned** out);
  int (*StringFromByteArray)(const PFByteArray* input, PFAny* out);
  int (*BytesFromByteArray)(const PFByteArray* input, PFAny* out);
  const TypeInfo* (*GetTypeInfo)(int32_t type_index);
  int (*TypeKeyToIndex)(const PFByteArray* type_key, int32_t* out);
  // tvm-ffi's calling environment (c_env_api.h); NULL in a libtvm_ffi without them, and then the
  // caller's stream and allocator are simply not mirrored.
  int (*EnvSetStream)(int32_t device_type, int32_t device_id, void* stream, void** out_prev);
  int (*EnvSetTensorAllocator)(PFEnvTensorAllocator allocator, int write_to_global_context,
                               PFEnvTensorAllocator* out_prev);
  void* (*EnvGetStream)(int32_t device_type, int32_t device_id);
  PFEnvTensorAllocator (*EnvGetTensorAllocator)();
  // A type attribute column by name (`__ffi_eq__`, ...); NULL in a libtvm_ffi without it.
  const TypeAttrColumn* (*GetTypeAttrColumn)(const PFByteArray* attr_name);
};

/*! Whether the API is resolved (libtvm_ffi is in the process and EnsureApi succeeded). */
bool ApiReady() noexcept;

/*! Resolves the API from a libtvm_ffi that something else already loaded into the process
 * (tvm-ffi's own Python package, a library linked against it); false when none is loaded. */
bool AttachLoadedLibrary();

/*! The resolved API. Only valid once EnsureApi succeeded (every bridge Function implies it). */
const Api& GetApi() noexcept;

/*! Resolves the API through `library` (a dlopen handle whose dependency scope holds libtvm_ffi)
 *  on the first call. Throws OSError naming what is missing. */
void EnsureApi(void* library);

/*! Makes libtvm_ffi loaded with global symbols so that libraries linked against it (without an
 *  rpath) load. Throws OSError saying where it looked and how to point packedfun at it. */
void LoadLibrary(const std::string& needed_by);

/*! Sets the path the binding found libtvm_ffi at (tried after PACKEDFUN_TVM_FFI_LIBRARY). */
void SetLibraryPath(std::string path);

/*! A packedfun Function (new ref) calling `call(self, ...)` of tvm-ffi. `tvm_function` (a tvm-ffi
 *  Function handle, may be NULL) is stolen and is what `self` points to; `keep` (may be NULL)
 *  gains a reference and lives as long as the Function (the Module a symbol came from). */
PFObject* NewFunction(SafeCall call, void* tvm_function, PFObject* keep, std::string name);

/*! Raises, in packedfun's slot, the error pending in tvm-ffi's slot (the original packedfun error
 *  when it came from one of packedfun's callbacks). Returns -1. */
int RaiseFromTVM(const std::string& name) noexcept;

/*! Calls a tvm-ffi global function `name` (cached); `*result` receives tvm-ffi's new ref. */
void CallGlobal(const char* name, const PFAny* args, int32_t num_args, PFAny* result);

/*! Calls a tvm-ffi Function handle (borrowed); `*result` receives tvm-ffi's new ref. */
void CallTVMFunction(void* func, const PFAny* args, int32_t num_args, PFAny* result);

/*! Releases a tvm-ffi owned value (decref when it holds an object). */
void ReleaseTVM(PFAny* value) noexcept;

/*! A str argument as a tvm-ffi value without allocating: a small string when it fits, else
 *  (without an inner NUL) a raw C string copied into `buffer` from `*used` on, which advances; a
 *  `String` parameter takes it as it takes a C string. False, and `*out` untouched, when neither
 *  applies: the caller makes a tvm-ffi String object. */
bool TextToTVM(const PFByteArray& bytes, PFAny* out, char* buffer, size_t capacity,
               size_t* used) noexcept;

/*! tvm-ffi objects and text made for one call, released (in reverse) when it returns. The first
 *  few objects and short text live inline: a call with one long string argument allocates
 *  nothing here. */
class Temps {
 public:
  Temps() = default;
  Temps(const Temps&) = delete;
  Temps& operator=(const Temps&) = delete;
  ~Temps();
  void KeepTVM(void* obj) {
    if (num_tvm_ < kInlineObjects) {
      tvm_inline_[num_tvm_++] = obj;
    } else {
      tvm_more_.push_back(obj);
    }
  }
  void KeepPF(PFAny value) { pf_.push_back(value); }
  /*! TextToTVM into the Temps' own text buffer (its raw strings live as long as the Temps). */
  bool Text(const PFByteArray& bytes, PFAny* out) noexcept {
    return TextToTVM(bytes, out, text_, kTextBytes, &text_used_);
  }
  /*! Storage for a DLTensor copy whose strides the bridge had to fill in. */
  DLTensor* NewTensorCopy(const DLTensor& t);

 private:
  static constexpr size_t kInlineObjects = 4;
  static constexpr size_t kTextBytes = 256;
  void* tvm_inline_[kInlineObjects];
  size_t num_tvm_ = 0;
  std::vector<void*> tvm_more_;
  std::vector<PFAny> pf_;
  struct TensorCopy {
    DLTensor tensor;
    std::vector<int64_t> strides;
  };
  std::vector<std::unique_ptr<TensorCopy>> copies_;  // heap cells: their addresses never move
  size_t text_used_ = 0;
  char text_[kTextBytes];  // uninitialised: only the used prefix is ever read
};

/*! How ToTVM should shape a value. */
struct ToTVMOptions {
  bool tensor_objects;  // tensors as tvm-ffi Tensor objects, not DLTensor* views
  bool owned_kinds;     // no borrowed kinds (raw strings, byte-array pointers): container items
};

/*! Translates a borrowed packedfun value into a tvm-ffi value valid while `temps` lives.
 *  Throws TypeError naming `what` when the value has no tvm-ffi equivalent. */
void ToTVM(const PFAny& in, PFAny* out, Temps* temps, ToTVMOptions options, const char* what);

/*! Translates a borrowed tvm-ffi value into an owned packedfun value (new ref). Throws TypeError
 *  naming `what` when the value has no packedfun equivalent. */
void ToPF(const PFAny& in, PFAny* out, const char* what);

/*! packedfun's metadata record (JSON) for function `name` from what its library exports as
 *  `__tvm_ffi__metadata_<name>` (`{"type_schema": "<tvm-ffi type schema JSON>"}`): parameter and
 *  return types in packedfun's type names, parameters named from the schema or `arg0`, `arg1`...
 *  Empty when the text is not such a record. */
std::string MetadataFromExport(std::string_view exported, const std::string& name);

/*! A kernel's backtrace as tvm-ffi stores it (most recent call first, `  File "f", line n, in g`
 *  frames) in packedfun's order (most recent call last), cut where the bridge called the kernel:
 *  the frames from there outward are the caller's own stack (packedfun's call path, then the
 *  binding's), which tvm-ffi's own callers never see either, since its capture stops at its FFI
 *  boundary. Without symbols for the bridge, nothing is cut. */
std::string BacktraceFromTVM(std::string_view text);

/*! packedfun's backtrace text (most recent call last) in tvm-ffi's order (most recent first). */
std::string BacktraceToTVM(std::string_view text);

/*! The tvm-ffi type index that packedfun type `pf_index` mirrors, or -1 when it mirrors none (a
 *  type of packedfun's own, or one not made yet). */
int32_t MirroredTVMIndex(int32_t pf_index);

/*! The type key of a tvm-ffi type index, for messages. */
std::string TypeKey(int32_t type_index);

/*! Whether `func` is a bridge Function over a tvm-ffi Function object; then `*tvm_function` is
 *  that object (borrowed). */
bool UnwrapFunction(PFObject* func, void** tvm_function) noexcept;

/*! A tvm-ffi Function (new ref) that calls the packedfun Function `func` (borrowed). */
void* WrapFunction(PFObject* func);

/*! Whether the tvm-ffi Function `tvm_function` is one WrapFunction made; then `*func` is the
 *  packedfun Function it calls (borrowed). */
bool UnwrapTrampoline(void* tvm_function, PFObject** func) noexcept;

/*! While one lives, the references this thread's bridge code drops through ReleaseLater (and the
 *  packedfun Function of a wrapper that tvm-ffi frees) are dropped when it goes instead: declared
 *  before a lock, it drops them after the lock is let go, since a last reference may run a
 *  deleter that needs the GIL, which another thread may hold while it waits for that lock. */
class DeferredReleases {
 public:
  DeferredReleases() noexcept;
  ~DeferredReleases();
  DeferredReleases(const DeferredReleases&) = delete;
  DeferredReleases& operator=(const DeferredReleases&) = delete;
  /*! Keeps the references (either may be NULL); false when out of memory. */
  bool Keep(PFObject* pf, void* tvm) noexcept;

 private:
  DeferredReleases* outer_;
  std::vector<PFObject*> pf_;
  std::vector<void*> tvm_;
};

/*! Drops a packedfun and a tvm-ffi reference (either may be NULL): later when a DeferredReleases
 *  lives on this thread, else now. */
void ReleaseLater(PFObject* pf, void* tvm) noexcept;

/*! Copies packedfun's globals into tvm-ffi's registry (registry_bridge.cc); called once, when the
 *  API becomes ready. Later changes are copied as they happen. */
void StartRegistryMirror() noexcept;

/*! Around a library load (nested calls count): tvm-ffi's registry holds only tvm-ffi's own
 *  entries until the matching Resume, which copies packedfun's back in. */
void SuspendRegistryMirror() noexcept;
void ResumeRegistryMirror() noexcept;

/*! A tvm-ffi object of a type with no packedfun counterpart (`in`, borrowed) as a packedfun object
 *  (new ref) of the type mirroring it, which holds a tvm-ffi reference: same type key, fields and
 *  methods read through tvm-ffi's reflection (the type is mirrored on first use). Throws TypeError
 *  naming the type when it cannot be mirrored. */
void ObjectToProxy(const PFAny& in, PFAny* out);

/*! Whether `obj` is such a packedfun object; then `*out` is the tvm-ffi object it holds
 *  (borrowed, same type index as in tvm-ffi), so it crosses back as the same object. */
bool ProxyToTVM(PFObject* obj, PFAny* out) noexcept;

}  // namespace tvmffi
}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_SRC_INTERNAL_TVM_FFI_H_
