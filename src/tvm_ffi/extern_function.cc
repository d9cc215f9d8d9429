// Apache TVM FFI bridge: Functions made from the address of a tvm-ffi C function (a JIT's output):
// tvm-ffi's `Function.__from_extern_c__` (a safe call) and `__from_mlir_packed_safe_call__` (an
// MLIR packed-call wrapper of one), as builtin globals the Python bindings call.
#include <cstdint>
#include <string>

#include "runtime/error.h"
#include "runtime/object.h"
#include "runtime/registry.h"
#include "tvm_ffi/bridge.h"

namespace packedfun {
namespace detail {
namespace tvmffi {
namespace {

/*! MLIR's packed-call form of a safe call: one array of pointers to the arguments and results. */
using MlirPackedCall = void (*)(void** packed_args);

/*! The state of a tvm-ffi Function made here: what it calls, and what it keeps alive. */
struct ExternState {
  MlirPackedCall packed = nullptr;  // only for the MLIR form
  PFObject* keep = nullptr;         // owned, or NULL
};

/*! tvm-ffi's deleter of the Function's state (the last reference to the Function went). */
void DeleteState(void* self) {
  ExternState* state = static_cast<ExternState*>(self);
  ReleaseLater(state->keep, nullptr);
  delete state;
}

/*! A safe call over an MLIR packed call: it takes the safe call's four arguments and writes its
 *  return code through a fifth pointer. The handle it receives is the Function's state, which the
 *  JIT's function ignores (as a safe call given to tvm-ffi must). */
int MlirPackedSafeCall(void* self, const PFAny* args, int32_t num_args, PFAny* result) {
  int rc = 0;
  void* handle = self;
  void* packed[5] = {&handle, &args, &num_args, &result, &rc};
  static_cast<ExternState*>(self)->packed(packed);
  return rc;
}

/*! The address argument as a code pointer: an int other than 0. */
void* AddressArg(const PFAny* args, int32_t n, const char* name) {
  bool keep_ok = n == 2 && (args[1].type_index == kPFTypeNone ||
                            args[1].type_index >= kPFTypeStaticObjectBegin);
  if (!keep_ok || args[0].type_index != kPFTypeInt) {
    Throw("TypeError", std::string(name) + ": expected (address: int, keep_alive: object or None)");
  }
  if (args[0].v_int64 == 0) Throw("ValueError", std::string(name) + ": the address is 0 (NULL)");
  return reinterpret_cast<void*>(static_cast<intptr_t>(args[0].v_int64));
}

/*! libtvm_ffi attached: the function at the address reports errors through tvm-ffi's slot. */
void AttachBridge(const char* name) {
  if (AttachLoadedLibrary()) return;
  LoadLibrary(name);
  if (!AttachLoadedLibrary()) Throw("OSError", std::string(name) + ": libtvm_ffi.so is not loaded");
}

/*! A tvm-ffi Function (made by tvm-ffi, so that handing it to tvm-ffi code gives tvm-ffi this very
 *  Function) over `call` with `state` as its handle, as a packedfun Function. */
PFObject* Wrap(SafeCall call, ExternState* state, const char* label) {
  IncRef(state->keep);
  void* handle = nullptr;
  if (GetApi().FunctionCreate(state, call, &DeleteState, &handle) != 0) {
    DeleteState(state);  // tvm-ffi did not take it (its own binding cleans up the same way)
    RaiseFromTVM(label);
    throw AlreadyRaised{};
  }
  return NewFunction(Cell<FunctionCell>(handle)->safe_call, handle, nullptr, label);  // owns it
}

/*! What both constructors below share: (address: int, keep_alive: object | None) -> a Function
 *  calling the tvm-ffi safe call at `address`, or with `mlir` the MLIR packed call there (a safe
 *  call's arguments and its return code as one array of pointers); the Function owns `keep_alive`.
 */
int FromAddress(const PFAny* args, int32_t n, PFAny* result, const char* name, bool mlir) {
  return Guard([&] {
    void* address = AddressArg(args, n, name);
    AttachBridge(name);
    ExternState* state = new ExternState();
    state->keep = args[1].type_index == kPFTypeNone ? nullptr : args[1].v_obj;
    SafeCall call = reinterpret_cast<SafeCall>(address);
    if (mlir) {
      state->packed = reinterpret_cast<MlirPackedCall>(address);
      call = &MlirPackedSafeCall;
    }
    *result = ObjectAny(Wrap(call, state, mlir ? "MLIR packed function" : "extern C function"));
    return 0;
  });
}

/*! "packedfun.tvm_ffi_function_from_safe_call": the safe call at an address as a Function. */
int FromSafeCall(void*, const PFAny* args, int32_t n, PFAny* result) {
  return FromAddress(args, n, result, "packedfun.tvm_ffi_function_from_safe_call", false);
}

/*! "packedfun.tvm_ffi_function_from_mlir_packed": the MLIR packed call at an address. */
int FromMlirPacked(void*, const PFAny* args, int32_t n, PFAny* result) {
  return FromAddress(args, n, result, "packedfun.tvm_ffi_function_from_mlir_packed", true);
}

const int kRegistered = [] {
  RegisterBuiltin("packedfun.tvm_ffi_function_from_safe_call", &FromSafeCall);
  RegisterBuiltin("packedfun.tvm_ffi_function_from_mlir_packed", &FromMlirPacked);
  return 0;
}();

}  // namespace
}  // namespace tvmffi
}  // namespace detail
}  // namespace packedfun
