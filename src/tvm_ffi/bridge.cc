// Apache TVM FFI bridge: finds libtvm_ffi at run time and calls tvm-ffi functions as packedfun
// Functions (call path, errors both ways, packedfun callbacks handed to tvm-ffi code).
#include <dlfcn.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "runtime/env.h"
#include "runtime/error.h"
#include "runtime/object.h"
#include "tvm_ffi/bridge.h"

namespace packedfun {
namespace detail {
namespace tvmffi {
namespace {

constexpr const char* kLibraryName = "libtvm_ffi.so";
constexpr const char* kLibraryEnv = "PACKEDFUN_TVM_FFI_LIBRARY";

Api g_api;
std::atomic<bool> g_api_ready{false};

bool ApiReadyNow() noexcept { return g_api_ready.load(std::memory_order_acquire); }

std::mutex& LoadMutex() {
  static std::mutex mutex;
  return mutex;
}

std::string& ConfiguredPath() {
  static std::string path;
  return path;
}

template <class F>
void ResolveSymbol(void* library, const char* name, F* slot, std::string* missing) {
  void* address = dlsym(library, name);
  if (address == nullptr) *missing += std::string(" ") + name;
  *slot = reinterpret_cast<F>(address);
}

/*! A bridge Function's state: the tvm-ffi body and what keeps it alive. */
struct Target {
  SafeCall call;
  void* tvm_function;  // owned tvm-ffi Function handle, or NULL for an exported symbol
  PFObject* keep;      // owned: the Module whose library holds `call`, or NULL
  std::string name;
  // Set once a call proved that the function wants tvm-ffi Tensor objects (a `Tensor`, not a
  // `TensorView`, parameter): later calls convert tensors up front instead of failing first.
  std::atomic<bool> tensor_objects{false};
};

void DeleteTarget(void* self) {
  Target* t = static_cast<Target*>(self);
  if (t->tvm_function != nullptr) g_api.ObjectDecRef(t->tvm_function);
  DecRef(t->keep);
  delete t;
}

/*! The packedfun error that left through a packedfun callback as the tvm-ffi error `tvm_error`:
 *  when that same error object comes back, the original (with its Python exception) is raised
 *  instead of a copy. The slot holds a reference to both, so the address cannot be reused. */
struct Passthrough {
  void* tvm_error = nullptr;
  PFObject* pf_error = nullptr;
  void Reset(void* tvm, PFObject* pf) noexcept {
    if (tvm_error != nullptr) g_api.ObjectDecRef(tvm_error);
    DecRef(pf_error);
    tvm_error = tvm;
    pf_error = pf;
  }
  ~Passthrough() { Reset(nullptr, nullptr); }
};
thread_local Passthrough tls_passthrough;

/*! Takes tvm-ffi's pending error (new ref; NULL when none). */
void* TakeError() noexcept {
  void* err = nullptr;
  g_api.ErrorMoveFromRaised(&err);
  return err;
}

/*! Raises `err` (stolen tvm-ffi Error, may be NULL) in packedfun's slot. Returns -1. */
int RaiseTVMError(void* err, const std::string& name) noexcept {
  if (err == nullptr) {
    return RaiseError("RuntimeError", "tvm-ffi function '" + name + "' failed without an error");
  }
  if (err == tls_passthrough.tvm_error) {
    PFObject* original = tls_passthrough.pf_error;
    tls_passthrough.pf_error = nullptr;
    tls_passthrough.Reset(nullptr, nullptr);
    g_api.ObjectDecRef(err);
    SetRaisedSteal(original);
    return -1;
  }
  int rc = Guard([&] {
    const ErrorCell* cell = Cell<ErrorCell>(err);
    std::string_view kind(cell->kind.data, cell->kind.size);
    std::string_view message(cell->message.data, cell->message.size);
    std::string frames = BacktraceFromTVM({cell->backtrace.data, cell->backtrace.size});
    PFByteArray backtrace{frames.data(), frames.size()};
    SetRaisedSteal(NewError(kind.empty() ? "RuntimeError" : kind, message, &backtrace, nullptr));
    return -1;
  });
  g_api.ObjectDecRef(err);
  return rc;
}

/*! Moves packedfun's pending error into tvm-ffi's slot (remembering it for the way back).
 *  Returns -1, tvm-ffi's failure code. */
int PassErrorToTVM() noexcept {
  PFObject* pf = nullptr;
  PFErrorMoveFromRaised(&pf);
  PFErrorObject* e = pf == nullptr ? nullptr : As<PFErrorObject>(pf);
  PFByteArray none{"", 0};
  PFByteArray kind = e != nullptr ? e->kind : PFByteArray{"RuntimeError", 12};
  PFByteArray message = e != nullptr ? e->message : none;
  PFByteArray backtrace = none;
  if (pf != nullptr && PFErrorGetBacktrace(pf, &backtrace) != 0) {
    PFObject* ignored = nullptr;
    PFErrorMoveFromRaised(&ignored);
    DecRef(ignored);
    backtrace = none;
  }
  std::string frames;
  if (backtrace.size != 0) {
    try {
      frames = BacktraceToTVM({backtrace.data, backtrace.size});
      backtrace = PFByteArray{frames.data(), frames.size()};
    } catch (...) {  // out of memory: the error still crosses, without its frames
      backtrace = none;
    }
  }
  void* err = nullptr;
  if (g_api.ErrorCreate(&kind, &message, &backtrace, &err) != 0) {
    DecRef(pf);
    return -1;  // tvm-ffi's own failure is what is pending in its slot now
  }
  g_api.ErrorSetRaised(err);  // the slot takes its own reference
  tls_passthrough.Reset(err, pf);
  return -1;
}

/*! Whether a tvm-ffi argument means the same to packedfun, bits unchanged: POD, raw and small
 *  strings, and a DLTensor* (borrowed for the call in both ABIs: a TensorView parameter takes it
 *  as a view, a Tensor one makes its Tensor as for any caller's DLTensor*). */
inline bool PassesToPF(int32_t t) noexcept {
  // One compare and one bit test (the trampoline runs it per argument): indices 0-8, 11, 12.
  constexpr uint32_t kMask =
      ((1u << (kPFTypeRawStr + 1)) - 1) | (1u << kPFTypeSmallStr) | (1u << kPFTypeSmallBytes);
  return static_cast<uint32_t>(t) <= kPFTypeSmallBytes && ((kMask >> t) & 1u) != 0;
}

/*! Whether a packedfun result means the same to tvm-ffi, bits unchanged: POD and small strings. */
inline bool ResultPassesToTVM(int32_t t) noexcept {
  constexpr uint32_t kMask =
      ((1u << (kPFTypeDevice + 1)) - 1) | (1u << kPFTypeSmallStr) | (1u << kPFTypeSmallBytes);
  return static_cast<uint32_t>(t) <= kPFTypeSmallBytes && ((kMask >> t) & 1u) != 0;
}

/*! Gives a packedfun callback's result (owned, released here) to tvm-ffi as its new ref. */
int ResultToTVM(PFAny* pf_result, PFAny* result) noexcept {
  int rc = Guard([&] {
    Temps temps;
    PFAny out;
    ToTVM(*pf_result, &out, &temps, ToTVMOptions{true, true}, "callback result");
    if (out.type_index >= kPFTypeStaticObjectBegin) g_api.ObjectIncRef(out.v_obj);
    *result = out;
    return 0;
  });
  ReleaseAny(pf_result);
  return rc;
}

/*! The callback with translated arguments (objects, tvm-ffi strings and containers, more than
 *  eight arguments). */
__attribute__((noinline)) int TrampolineTranslated(PFObject* func, const PFAny* args,
                                                   int32_t num_args, PFAny* result) {
  PFAny inline_args[8];
  std::vector<PFAny> heap_args;
  PFAny* pf_args = inline_args;
  int32_t converted = 0;
  PFAny pf_result = NoneAny();
  int rc = Guard([&] {
    if (num_args > 8) pf_args = (heap_args.resize(static_cast<size_t>(num_args)), heap_args.data());
    for (; converted < num_args; ++converted) {
      ToPF(args[converted], &pf_args[converted], "callback argument");
    }
    CheckCall(PFFunctionCall(func, pf_args, num_args, &pf_result));
    return 0;
  });
  for (int32_t i = 0; i < converted; ++i) ReleaseAny(&pf_args[i]);
  if (rc == 0) rc = ResultToTVM(&pf_result, result);  // (a POD result goes through unchanged)
  return rc == 0 ? 0 : PassErrorToTVM();
}

/*!
 * A packedfun Function handed to tvm-ffi code, as a tvm-ffi Function object the bridge lays out
 * itself (tvm-ffi's object header, then its function cell): tvm-ffi's callers call `safe_call`,
 * the trampoline, directly. A Function made by TVMFFIFunctionCreate would add a hop (its own
 * safe_call forwarding to the trampoline with `self`) to every call; the packedfun Function's
 * body and state are copied here for the same reason (they never change once it is created).
 */
struct TrampolineObject {
  Object header;  // tvm-ffi's: combined strong and weak count, kFunction, Delete below
  FunctionCell cell;
  PFObject* func;   // owned packedfun Function
  PFSafeCall call;  // func's body and state
  void* self;
};

static_assert(sizeof(Object) == 24 && offsetof(TrampolineObject, cell) == 24,
              "tvm-ffi's Function cell follows its 24-byte object header");

constexpr uint64_t kStrongAndWeakOne = (uint64_t{1} << 32) | 1;  // tvm-ffi's initial count
constexpr int kDeleteStrong = 1;  // tvm-ffi's deleter flags: the last strong reference went,
constexpr int kDeleteWeak = 2;    // the last weak one (free the memory)

/*! tvm-ffi's deleter of a TrampolineObject. */
void DeleteTrampoline(void* self, int flags) {
  TrampolineObject* obj = static_cast<TrampolineObject*>(self);
  if ((flags & kDeleteStrong) != 0) {
    ReleaseLater(obj->func, nullptr);
    obj->func = nullptr;
  }
  if ((flags & kDeleteWeak) != 0) delete obj;
}

/*! tvm-ffi's side of a packedfun Function handed to tvm-ffi code. The common call (POD, strings,
 *  DLTensor*) hands tvm-ffi's arguments to packedfun as they are and takes packedfun's POD result
 *  as it is: the two value layouts are byte-identical, so nothing is copied or allocated. */
int Trampoline(void* self, const PFAny* args, int32_t num_args, PFAny* result) {
  const TrampolineObject* obj = static_cast<const TrampolineObject*>(self);
  for (int32_t i = 0; i < num_args; ++i) {
    if (!PassesToPF(args[i].type_index)) {
      return TrampolineTranslated(obj->func, args, num_args, result);
    }
  }
  // tvm-ffi's callers pass `*result` as None (its calling convention), as packedfun's expect.
  if (obj->call(obj->self, args, num_args, result) != 0) {
    *result = NoneAny();
    return PassErrorToTVM();
  }
  if (__builtin_expect(ResultPassesToTVM(result->type_index), 1)) {
    return 0;  // POD and small strings: the same bits in tvm-ffi
  }
  PFAny pf_result = *result;
  *result = NoneAny();
  return ResultToTVM(&pf_result, result) == 0 ? 0 : PassErrorToTVM();
}

/*! Whether a packedfun argument can be handed to tvm-ffi as it is (same bits, same meaning). */
inline bool PassesThrough(const PFAny& a) noexcept {
  int32_t t = a.type_index;
  if (t <= kPFTypeRawStr) {
    if (t != kPFTypeDLTensorPtr) return t >= 0;
    // tvm-ffi's TensorView reads strides without a NULL check.
    const DLTensor* d = static_cast<const DLTensor*>(a.v_ptr);
    return d != nullptr && (d->ndim == 0 || d->strides != nullptr);
  }
  return t == kPFTypeSmallStr || t == kPFTypeSmallBytes;
}

/*! Whether a tvm-ffi result needs translating (objects, borrowed kinds) or is already packedfun's.
 */
inline bool ResultPassesThrough(int32_t t) noexcept {
  return (t >= 0 && t <= kPFTypeDevice) || t == kPFTypeSmallStr || t == kPFTypeSmallBytes;
}

/*! Whether `err` says a `Tensor` parameter received a DLTensor* (then a retry with Tensor objects
 *  succeeds: the arguments were rejected before the body ran). */
bool WantsTensorObjects(void* err, const PFAny* args, int32_t num_args) noexcept {
  if (err == nullptr) return false;
  bool has_tensor = false;
  for (int32_t i = 0; i < num_args; ++i) {
    has_tensor |= args[i].type_index == kPFTypeDLTensorPtr || args[i].type_index == kPFTypeTensor;
  }
  const ErrorCell* cell = Cell<ErrorCell>(err);
  std::string_view kind(cell->kind.data, cell->kind.size);
  std::string_view message(cell->message.data, cell->message.size);
  return has_tensor && kind == "TypeError" && message.find("`DLTensor*`") != std::string::npos;
}

/*! Translates a tvm-ffi result in place into packedfun's (the tvm-ffi value is released). */
int TranslateResult(Target* t, PFAny* result) noexcept {
  PFAny tvm = *result;
  *result = NoneAny();
  int rc = Guard([&] {
    ToPF(tvm, result, "result");
    return 0;
  });
  ReleaseTVM(&tvm);
  if (rc != 0) {
    PFObject* err = nullptr;
    PFErrorMoveFromRaised(&err);
    PFErrorObject* e = As<PFErrorObject>(err);
    std::string message =
        "tvm-ffi function '" + t->name + "': " + std::string(e->message.data, e->message.size);
    std::string kind(e->kind.data, e->kind.size);
    DecRef(err);
    return RaiseError(kind, message);
  }
  return 0;
}

int CallTranslated(Target* t, const PFAny* args, int32_t num_args, PFAny* result);

__attribute__((noinline)) int Failed(Target* t, const PFAny* args, int32_t num_args,
                                     PFAny* result) {
  *result = NoneAny();
  void* err = TakeError();
  if (!t->tensor_objects.load(std::memory_order_relaxed) &&
      WantsTensorObjects(err, args, num_args)) {
    g_api.ObjectDecRef(err);
    t->tensor_objects.store(true, std::memory_order_relaxed);
    return CallTranslated(t, args, num_args, result);
  }
  return RaiseTVMError(err, t->name);
}

/*! The slow path: arguments translated into tvm-ffi values that live for the call. */
__attribute__((noinline)) int CallTranslated(Target* t, const PFAny* args, int32_t num_args,
                                             PFAny* result) {
  int32_t failed_at = -1;
  int rc = Guard([&] {
    Temps temps;
    PFAny inline_args[8];
    std::vector<PFAny> heap_args;
    PFAny* targs = inline_args;
    if (num_args > 8) targs = (heap_args.resize(static_cast<size_t>(num_args)), heap_args.data());
    ToTVMOptions options{t->tensor_objects.load(std::memory_order_relaxed), false};
    for (int32_t i = 0; i < num_args; ++i) {
      failed_at = i;
      ToTVM(args[i], &targs[i], &temps, options, "argument");
    }
    failed_at = -1;
    if (t->call(t->tvm_function, targs, num_args, result) != 0) {
      return Failed(t, args, num_args, result);
    }
    if (ResultPassesThrough(result->type_index)) return 0;
    return TranslateResult(t, result);
  });
  if (rc != 0 && failed_at >= 0) {
    PFObject* err = nullptr;
    PFErrorMoveFromRaised(&err);
    PFErrorObject* e = As<PFErrorObject>(err);
    std::string message = "tvm-ffi function '" + t->name + "', argument #" +
                          std::to_string(failed_at) + ": " +
                          std::string(e->message.data, e->message.size);
    std::string kind(e->kind.data, e->kind.size);
    DecRef(err);
    return RaiseError(kind, message);
  }
  return rc;
}

/*! The call with str arguments (the common `str` from Python arrives as a view): each becomes a
 *  small or raw string in a stack buffer, the rest passes through; nothing allocates or throws, so
 *  none of CallTranslated's machinery is needed. Any other argument starts over there. */
__attribute__((noinline)) int CallWithText(Target* t, const PFAny* args, int32_t num_args,
                                           PFAny* result) {
  constexpr int32_t kMaxArgs = 8;
  constexpr size_t kTextBytes = 256;
  if (num_args > kMaxArgs) return CallTranslated(t, args, num_args, result);
  PFAny targs[kMaxArgs];
  char text[kTextBytes];  // uninitialised: only the copies TextToTVM makes are read
  size_t used = 0;
  for (int32_t i = 0; i < num_args; ++i) {
    const PFAny& a = args[i];
    if (PassesThrough(a)) {
      targs[i] = a;
    } else if (a.type_index != kPFTypeStrView ||
               !TextToTVM(*static_cast<const PFByteArray*>(a.v_ptr), &targs[i], text, kTextBytes,
                          &used)) {
      return CallTranslated(t, args, num_args, result);
    }
  }
  if (t->call(t->tvm_function, targs, num_args, result) != 0) {
    return Failed(t, args, num_args, result);
  }
  if (ResultPassesThrough(result->type_index)) return 0;
  return TranslateResult(t, result);
}

/*! The bridge's work for one call. The fast path hands packedfun's arguments to tvm-ffi
 *  unchanged when every one of them means the same in both ABIs (POD, small strings, raw strings,
 *  DLTensor* with strides): no copy, no allocation, one type check per argument. */
inline int CallBody(Target* t, const PFAny* args, int32_t num_args, PFAny* result) {
  if (t->tensor_objects.load(std::memory_order_relaxed)) {
    return CallTranslated(t, args, num_args, result);
  }
  for (int32_t i = 0; i < num_args; ++i) {
    if (!PassesThrough(args[i])) return CallWithText(t, args, num_args, result);
  }
  if (t->call(t->tvm_function, args, num_args, result) != 0) {
    return Failed(t, args, num_args, result);
  }
  if (ResultPassesThrough(result->type_index)) return 0;
  return TranslateResult(t, result);
}

/*! packedfun's calling environment copied into tvm-ffi's for one call, so that a kernel asking
 *  tvm-ffi (TVMFFIEnvGetStream, TVMFFIEnvTensorAlloc) sees the caller's stream and allocator; the
 *  destructor puts tvm-ffi's previous values back. Only set slots are copied: where packedfun has
 *  no stream, tvm-ffi's own setting stands. */
class MirroredEnv {
 public:
  MirroredEnv(const EnvStreamSlot* slots, size_t count, PFEnvTensorAllocator allocator) {
    if (g_api.EnvSetStream != nullptr) {
      for (size_t i = 0; i < count; ++i) {
        if (slots[i].stream == nullptr) continue;
        Saved s{slots[i].device_type, slots[i].device_id, nullptr};
        if (g_api.EnvSetStream(s.device_type, s.device_id, slots[i].stream, &s.stream) != 0) {
          failed_ = true;
          return;
        }
        Keep(s);
      }
    }
    if (allocator != nullptr && g_api.EnvSetTensorAllocator != nullptr) {
      if (g_api.EnvSetTensorAllocator(allocator, 0, &previous_allocator_) != 0) {
        failed_ = true;
        return;
      }
      allocator_set_ = true;
    }
  }
  ~MirroredEnv() {
    if (allocator_set_) g_api.EnvSetTensorAllocator(previous_allocator_, 0, nullptr);
    for (size_t i = count_; i-- > 0;) {
      const Saved& s = i < kInline ? inline_[i] : more_[i - kInline];
      g_api.EnvSetStream(s.device_type, s.device_id, s.stream, nullptr);
    }
  }
  MirroredEnv(const MirroredEnv&) = delete;
  MirroredEnv& operator=(const MirroredEnv&) = delete;
  /*! Whether tvm-ffi refused a value (its error then sits in tvm-ffi's slot). */
  bool failed() const noexcept { return failed_; }

 private:
  struct Saved {
    int32_t device_type;
    int32_t device_id;
    void* stream;  // tvm-ffi's stream before the call
  };
  static constexpr size_t kInline = 4;  // devices a thread sets streams for: rarely more
  void Keep(const Saved& s) {
    if (count_ < kInline) {
      inline_[count_] = s;
    } else {
      more_.push_back(s);
    }
    ++count_;
  }

  Saved inline_[kInline];
  std::vector<Saved> more_;
  size_t count_ = 0;
  PFEnvTensorAllocator previous_allocator_ = nullptr;
  bool allocator_set_ = false;
  bool failed_ = false;
};

__attribute__((noinline)) int CallMirrored(Target* t, const PFAny* args, int32_t num_args,
                                           PFAny* result, const EnvStreamSlot* slots, size_t count,
                                           PFEnvTensorAllocator allocator) {
  bool any_stream = false;
  for (size_t i = 0; i < count; ++i) any_stream |= slots[i].stream != nullptr;
  if (!any_stream) {
    // The common case, a call with torch or NumPy arrays on the CPU: the allocator only, set and
    // put back around the call without the general machinery.
    if (allocator == nullptr || g_api.EnvSetTensorAllocator == nullptr) {
      return CallBody(t, args, num_args, result);
    }
    PFEnvTensorAllocator previous = nullptr;
    if (g_api.EnvSetTensorAllocator(allocator, 0, &previous) != 0) {
      return RaiseTVMError(TakeError(), t->name);
    }
    int rc = CallBody(t, args, num_args, result);
    g_api.EnvSetTensorAllocator(previous, 0, nullptr);
    return rc;
  }
  return Guard([&] {
    MirroredEnv env(slots, count, allocator);
    if (env.failed()) return RaiseTVMError(TakeError(), t->name);
    return CallBody(t, args, num_args, result);
  });
}

/*! The packedfun body of every bridge Function. A thread that never set a stream or allocator
 *  pays one thread-local lookup for the environment; otherwise it is mirrored for the call. */
int Call(void* self, const PFAny* args, int32_t num_args, PFAny* result) {
  Target* t = static_cast<Target*>(self);
  size_t count = 0;
  PFEnvTensorAllocator allocator = nullptr;
  const EnvStreamSlot* slots = EnvSnapshot(&count, &allocator);
  if (__builtin_expect(count != 0 || allocator != nullptr, 0)) {
    return CallMirrored(t, args, num_args, result, slots, count, allocator);
  }
  return CallBody(t, args, num_args, result);
}

/*! The path of the file that `library` (a dlopen handle) resolves `symbol` from, for messages. */
std::string FileOf(void* library, const char* symbol) {
  Dl_info info{};
  void* address = dlsym(library, symbol);
  if (address == nullptr || dladdr(address, &info) == 0 || info.dli_fname == nullptr) {
    return "libtvm_ffi.so";
  }
  return info.dli_fname;
}

/*! Refuses a libtvm_ffi whose ABI is not the one the bridge reads (its object, type-info and
 *  error layouts): a different major or minor version would be read with the wrong offsets. */
void CheckVersion(void* library) {
  void (*get_version)(Version*) = nullptr;
  std::string missing;
  ResolveSymbol(library, "TVMFFIGetVersion", &get_version, &missing);
  std::string supported =
      std::to_string(kSupportedMajor) + "." + std::to_string(kSupportedMinor) + ".x";
  if (get_version == nullptr) {
    Throw("OSError",
          "the libtvm_ffi loaded in this process has no TVMFFIGetVersion: packedfun's "
          "tvm-ffi bridge supports tvm-ffi ABI " +
              supported);
  }
  Version v{};
  get_version(&v);
  if (v.major == kSupportedMajor && v.minor == kSupportedMinor) return;
  Throw("OSError", FileOf(library, "TVMFFIGetVersion") + " is tvm-ffi ABI " +
                       std::to_string(v.major) + "." + std::to_string(v.minor) + "." +
                       std::to_string(v.patch) + ", but packedfun's tvm-ffi bridge supports ABI " +
                       supported + " only: install apache-tvm-ffi " +
                       std::to_string(kSupportedMajor) + "." + std::to_string(kSupportedMinor) +
                       ".x beside packedfun");
}

/*! tvm-ffi's environment as packedfun's fallback (runtime/env.h): only once the bridge is in
 *  use, so a process without tvm-ffi pays one atomic load per miss. */
void* ForeignStream(int32_t device_type, int32_t device_id) {
  if (!ApiReadyNow() || g_api.EnvGetStream == nullptr) return nullptr;
  return g_api.EnvGetStream(device_type, device_id);
}

PFEnvTensorAllocator ForeignAllocator() {
  if (!ApiReadyNow() || g_api.EnvGetTensorAllocator == nullptr) return nullptr;
  return g_api.EnvGetTensorAllocator();
}

const ForeignEnv kForeignEnv = {&ForeignStream, &ForeignAllocator};

[[maybe_unused]] const bool kEnvRegistered = (SetForeignEnv(&kForeignEnv), true);

/*! Resolves tvm-ffi's entry points through `library` (under LoadMutex) and marks the API ready. */
void ResolveApi(void* library) {
  CheckVersion(library);
  Api api{};
  std::string missing;
  ResolveSymbol(library, "TVMFFIObjectIncRef", &api.ObjectIncRef, &missing);
  ResolveSymbol(library, "TVMFFIObjectDecRef", &api.ObjectDecRef, &missing);
  ResolveSymbol(library, "TVMFFIFunctionCreate", &api.FunctionCreate, &missing);
  ResolveSymbol(library, "TVMFFIFunctionGetGlobal", &api.FunctionGetGlobal, &missing);
  ResolveSymbol(library, "TVMFFIFunctionSetGlobal", &api.FunctionSetGlobal, &missing);
  ResolveSymbol(library, "TVMFFIErrorMoveFromRaised", &api.ErrorMoveFromRaised, &missing);
  ResolveSymbol(library, "TVMFFIErrorSetRaised", &api.ErrorSetRaised, &missing);
  ResolveSymbol(library, "TVMFFIErrorCreate", &api.ErrorCreate, &missing);
  ResolveSymbol(library, "TVMFFITensorFromDLPackVersioned", &api.TensorFromDLPackVersioned,
                &missing);
  ResolveSymbol(library, "TVMFFITensorToDLPackVersioned", &api.TensorToDLPackVersioned, &missing);
  ResolveSymbol(library, "TVMFFIStringFromByteArray", &api.StringFromByteArray, &missing);
  ResolveSymbol(library, "TVMFFIBytesFromByteArray", &api.BytesFromByteArray, &missing);
  ResolveSymbol(library, "TVMFFIGetTypeInfo", &api.GetTypeInfo, &missing);
  ResolveSymbol(library, "TVMFFITypeKeyToIndex", &api.TypeKeyToIndex, &missing);
  std::string optional;  // older libtvm_ffi may lack the environment API: then it is not mirrored
  ResolveSymbol(library, "TVMFFIEnvSetStream", &api.EnvSetStream, &optional);
  ResolveSymbol(library, "TVMFFIEnvSetDLPackManagedTensorAllocator", &api.EnvSetTensorAllocator,
                &optional);
  ResolveSymbol(library, "TVMFFIEnvGetStream", &api.EnvGetStream, &optional);
  ResolveSymbol(library, "TVMFFIEnvGetDLPackManagedTensorAllocator", &api.EnvGetTensorAllocator,
                &optional);
  ResolveSymbol(library, "TVMFFIGetTypeAttrColumn", &api.GetTypeAttrColumn, &optional);
  if (!missing.empty()) {
    Throw("OSError", "the libtvm_ffi loaded in this process lacks entry points packedfun needs:" +
                         missing + " (install apache-tvm-ffi >= 0.1)");
  }
  g_api = api;
  g_api_ready.store(true, std::memory_order_release);
}

thread_local DeferredReleases* tls_deferred = nullptr;

}  // namespace

DeferredReleases::DeferredReleases() noexcept : outer_(tls_deferred) { tls_deferred = this; }

DeferredReleases::~DeferredReleases() {
  tls_deferred = outer_;
  for (void* t : tvm_) g_api.ObjectDecRef(t);
  for (PFObject* p : pf_) DecRef(p);
}

bool DeferredReleases::Keep(PFObject* pf, void* tvm) noexcept {
  try {
    pf_.reserve(pf_.size() + 1);
    tvm_.reserve(tvm_.size() + 1);
  } catch (...) {
    return false;
  }
  if (pf != nullptr) pf_.push_back(pf);
  if (tvm != nullptr) tvm_.push_back(tvm);
  return true;
}

void ReleaseLater(PFObject* pf, void* tvm) noexcept {
  if (tls_deferred != nullptr && tls_deferred->Keep(pf, tvm)) return;
  // Out of memory (or no deferral asked for): now, as before.
  if (tvm != nullptr) g_api.ObjectDecRef(tvm);
  DecRef(pf);
}

const Api& GetApi() noexcept { return g_api; }

bool ApiReady() noexcept { return g_api_ready.load(std::memory_order_acquire); }

bool AttachLoadedLibrary() {
  if (ApiReady()) return true;
  // RTLD_NOLOAD only finds a copy already mapped; the reference it takes is never dropped, like
  // the one LoadLibrary takes (the bridge's Functions point into it for the process's lifetime).
  void* library = dlopen(kLibraryName, RTLD_NOW | RTLD_NOLOAD);
  if (library == nullptr) return false;
  EnsureApi(library);
  return true;
}

void EnsureApi(void* library) {
  if (g_api_ready.load(std::memory_order_acquire)) return;
  {
    std::lock_guard<std::mutex> lock(LoadMutex());
    if (g_api_ready.load(std::memory_order_relaxed)) return;
    ResolveApi(library);
  }
  StartRegistryMirror();  // outside the lock: it calls into tvm-ffi and packedfun's registry
}

void SetLibraryPath(std::string path) {
  std::lock_guard<std::mutex> lock(LoadMutex());
  ConfiguredPath() = std::move(path);
}

void LoadLibrary(const std::string& needed_by) {
  std::lock_guard<std::mutex> lock(LoadMutex());
  // Already in the process (loaded by tvm_ffi's own Python package, say): make it global.
  if (dlopen(kLibraryName, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD) != nullptr) return;
  std::vector<std::string> candidates;
  if (const char* env = std::getenv(kLibraryEnv); env != nullptr && *env != '\0') {
    candidates.emplace_back(env);
  }
  if (!ConfiguredPath().empty()) candidates.push_back(ConfiguredPath());
  candidates.emplace_back(kLibraryName);
  std::string tried;
  for (const std::string& c : candidates) {
    // RTLD_GLOBAL: the kernel library names libtvm_ffi.so as a dependency without an rpath, so
    // the loader must find it among the libraries already loaded.
    if (dlopen(c.c_str(), RTLD_NOW | RTLD_GLOBAL) != nullptr) return;
    const char* why = dlerror();
    tried += "\n  " + c + ": " + (why != nullptr ? why : "not found");
  }
  Throw("OSError", "'" + needed_by +
                       "' was built for Apache TVM FFI and needs libtvm_ffi.so, which packedfun "
                       "could not load. Install the apache-tvm-ffi package (pip install "
                       "apache-tvm-ffi) or set " +
                       kLibraryEnv + " to the path of libtvm_ffi.so. Tried:" + tried);
}

PFObject* NewFunction(SafeCall call, void* tvm_function, PFObject* keep, std::string name) {
  Target* t = new Target();
  t->call = call;
  t->tvm_function = tvm_function;
  t->keep = keep;
  IncRef(keep);
  t->name = std::move(name);
  PFObject* out = nullptr;
  CheckCall(PFFunctionCreate(t, &Call, &DeleteTarget, &out));  // runs DeleteTarget on failure
  return out;
}

bool UnwrapFunction(PFObject* func, void** tvm_function) noexcept {
  auto* f = As<PFFunctionObject>(func);
  if (f->safe_call != &Call) return false;
  void* handle = static_cast<Target*>(f->self)->tvm_function;
  if (handle == nullptr) return false;
  *tvm_function = handle;
  return true;
}

void* WrapFunction(PFObject* func) {
  auto* f = As<PFFunctionObject>(func);
  TrampolineObject* obj = new TrampolineObject();
  obj->header.combined_ref_count = kStrongAndWeakOne;
  obj->header.type_index = kFunction;
  obj->header.padding = 0;
  obj->header.deleter = &DeleteTrampoline;
  obj->cell.safe_call = &Trampoline;
  obj->cell.cpp_call = nullptr;  // tvm-ffi's C++ callers then go through safe_call
  IncRef(func);
  obj->func = func;
  obj->call = f->safe_call;
  obj->self = f->self;
  return obj;
}

bool UnwrapTrampoline(void* tvm_function, PFObject** func) noexcept {
  if (Cell<FunctionCell>(tvm_function)->safe_call != &Trampoline) return false;
  *func = static_cast<TrampolineObject*>(tvm_function)->func;
  return true;
}

int RaiseFromTVM(const std::string& name) noexcept { return RaiseTVMError(TakeError(), name); }

void CallTVMFunction(void* func, const PFAny* args, int32_t num_args, PFAny* result) {
  *result = NoneAny();
  if (Cell<FunctionCell>(func)->safe_call(func, args, num_args, result) != 0) {
    *result = NoneAny();
    RaiseFromTVM("tvm-ffi function");
    throw AlreadyRaised{};
  }
}

void CallGlobal(const char* name, const PFAny* args, int32_t num_args, PFAny* result) {
  static std::mutex mutex;
  static std::unordered_map<std::string, void*> cache;  // process-lifetime references
  void* func = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex);
    void*& slot = cache[name];
    if (slot == nullptr) {
      PFByteArray key{name, std::strlen(name)};
      if (g_api.FunctionGetGlobal(&key, &slot) != 0) {
        RaiseFromTVM(name);
        throw AlreadyRaised{};
      }
      if (slot == nullptr) {
        Throw("RuntimeError", std::string("tvm-ffi has no global function '") + name + "'");
      }
    }
    func = slot;
  }
  CallTVMFunction(func, args, num_args, result);
}

void ReleaseTVM(PFAny* value) noexcept {
  if (value->type_index >= kPFTypeStaticObjectBegin) g_api.ObjectDecRef(value->v_obj);
  *value = NoneAny();
}

std::string TypeKey(int32_t type_index) {
  const TypeInfo* info = g_api.GetTypeInfo(type_index);
  if (info == nullptr) return "type index " + std::to_string(type_index);
  return std::string(info->type_key.data, info->type_key.size);
}

}  // namespace tvmffi
}  // namespace detail
}  // namespace packedfun
