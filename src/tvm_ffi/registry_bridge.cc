// The bridge's registry: global functions registered in tvm-ffi's registry
// (TVM_FFI_STATIC_INIT_BLOCK
// + refl::GlobalDef().def) seen through packedfun's, for names packedfun's own registry lacks.
// Registered with the runtime's registry at static initialisation (runtime/registry.h).
#include <string>
#include <string_view>
#include <vector>

#include "runtime/error.h"
#include "runtime/object.h"
#include "runtime/registry.h"
#include "runtime/string.h"
#include "tvm_ffi/bridge.h"

namespace packedfun {
namespace detail {
namespace tvmffi {
namespace {

/*! Releases a tvm-ffi value when it goes out of scope. */
struct TVMValue {
  PFAny value = NoneAny();
  TVMValue() = default;
  TVMValue(const TVMValue&) = delete;
  TVMValue& operator=(const TVMValue&) = delete;
  ~TVMValue() { ReleaseTVM(&value); }
};

/*! tvm-ffi's global `name` as a packedfun Function (new ref), or NULL. */
PFObject* GetGlobal(std::string_view name) {
  if (!AttachLoadedLibrary()) return nullptr;
  std::string key(name);
  PFByteArray bytes{key.data(), key.size()};
  void* handle = nullptr;
  if (GetApi().FunctionGetGlobal(&bytes, &handle) != 0) {
    RaiseFromTVM(key);
    throw AlreadyRaised{};
  }
  if (handle == nullptr) return nullptr;
  // A Function that packedfun handed to tvm-ffi (registered there from packedfun) stays a bridge
  // Function here too: it calls through tvm-ffi's trampoline back into the original.
  return NewFunction(Cell<FunctionCell>(handle)->safe_call, handle, nullptr, std::move(key));
}

/*! Appends the names of tvm-ffi's registry (through its `ffi.FunctionListGlobalNamesFunctor`). */
void ListNames(std::vector<std::string>* names) {
  if (!AttachLoadedLibrary()) return;
  TVMValue functor;
  CallGlobal("ffi.FunctionListGlobalNamesFunctor", nullptr, 0, &functor.value);
  if (functor.value.type_index != kFunction) {
    Throw("RuntimeError", "tvm-ffi's ffi.FunctionListGlobalNamesFunctor returned no Function");
  }
  PFAny index = NoneAny();
  index.type_index = kPFTypeInt;
  index.v_int64 = -1;
  TVMValue count;
  CallTVMFunction(functor.value.v_obj, &index, 1, &count.value);
  if (count.value.type_index != kPFTypeInt) Throw("RuntimeError", "tvm-ffi listed no name count");
  for (int64_t i = 0; i < count.value.v_int64; ++i) {
    index.v_int64 = i;
    TVMValue name;
    CallTVMFunction(functor.value.v_obj, &index, 1, &name.value);
    PFAny text = NoneAny();
    ToPF(name.value, &text, "a tvm-ffi global function name");
    std::string_view view;
    if (AnyToStringView(text, false, &view)) names->emplace_back(view);
    ReleaseAny(&text);
  }
}

const ForeignRegistry kRegistry = {&GetGlobal, &ListNames};

[[maybe_unused]] const bool kRegistered = (SetForeignRegistry(&kRegistry), true);

}  // namespace
}  // namespace tvmffi
}  // namespace detail
}  // namespace packedfun
