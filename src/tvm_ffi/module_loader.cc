// The bridge's module loader: libraries built for Apache TVM FFI (functions exported as
// `__tvm_ffi_<name>`) loaded and called through packedfun's Module. Registered with the runtime's
// module loader at static initialisation (runtime/module.h); the runtime itself knows nothing of
// tvm-ffi.
#include <dlfcn.h>

#include <string>
#include <string_view>
#include <vector>

#include <packedfun/detail/bytes_any.h>

#include "backtrace/dynamic_symbols.h"
#include "runtime/error.h"
#include "runtime/module.h"
#include "runtime/object.h"
#include "runtime/string.h"
#include "tvm_ffi/bridge.h"

namespace packedfun {
namespace detail {
namespace tvmffi {
namespace {

/*! The prefix of functions exported by libraries built for Apache TVM FFI, and of their
 *  docstring and metadata getters (functions returning a string). */
constexpr const char* kTVMFFIPrefix = "__tvm_ffi_";
constexpr const char* kTVMFFIDocPrefix = "__tvm_ffi__doc_";
constexpr const char* kTVMFFIMetaPrefix = "__tvm_ffi__metadata_";

/*! A library built for tvm-ffi links libtvm_ffi.so without an rpath: load it, then retry. */
bool RetryLoad(const std::string& path, const std::string& message) {
  if (message.find("libtvm_ffi") == std::string::npos) return false;
  LoadLibrary(path);
  return true;
}

/*! Whether a library built for tvm-ffi needs tvm-ffi's own loader: it has a library context
 *  (filled by that loader, used to find functions of its imports) or embedded binaries. */
bool NeedsTVMFFILoader(void* handle) {
  return dlsym(handle, "__tvm_ffi__library_ctx") != nullptr ||
         dlsym(handle, "__tvm_ffi__library_bin") != nullptr;
}

/*! Such a library is loaded (again) by tvm-ffi's loader; the packedfun Module keeps its Module. */
void OnLoad(PFObject* module, const std::string& path) {
  void* handle = ModuleHandle(module);
  // A library linked against libtvm_ffi (dlsym searches its dependencies too): the bridge reads
  // that libtvm_ffi from now on, so one of an ABI it cannot read is refused here, at load.
  if (dlsym(handle, "TVMFFIGetVersion") != nullptr) EnsureApi(handle);
  if (!NeedsTVMFFILoader(handle)) return;
  EnsureApi(handle);
  PFAny arg = NoneAny();
  arg.type_index = kPFTypeRawStr;
  arg.v_c_str = path.c_str();
  CallGlobal("ffi.ModuleLoadFromFile", &arg, 1, ModuleForeignState(module));
}

/*! Functions of libraries built for tvm-ffi come through its own loader or a translation layer
 *  that resolves names one by one: such a module's exports are not listed. */
bool ListsAllFunctions(PFObject* module) {
  std::vector<std::string> tvm_names;
  return ModuleForeignState(module)->type_index == kPFTypeNone &&
         ListExportedFunctions(ModuleHandle(module), kTVMFFIPrefix, &tvm_names) &&
         tvm_names.empty();
}

/*! Gives `func` the type schema a tvm-ffi library exports next to it (built with
 *  TVM_FFI_DLL_EXPORT_INCLUDE_METADATA=1: a getter `__tvm_ffi__metadata_<name>`) as packedfun
 *  metadata. A getter that fails or returns something else leaves the Function without any: the
 *  function itself still works. */
void AttachMetadata(PFObject* module, const std::string& name, PFObject* func) {
  std::string symbol = kTVMFFIMetaPrefix + name;
  void* getter = dlsym(ModuleHandle(module), symbol.c_str());
  if (getter == nullptr) return;
  PFObject* get = NewFunction(reinterpret_cast<SafeCall>(getter), nullptr, module, symbol);
  PFAny text = NoneAny();
  int rc = PFFunctionCall(get, nullptr, 0, &text);
  DecRef(get);
  if (rc != 0) {
    PFObject* err = nullptr;
    PFErrorMoveFromRaised(&err);
    DecRef(err);
    return;
  }
  std::string record;
  if (AnyIsStr(text)) {
    PFByteArray bytes = AnyBytes(text);
    record = MetadataFromExport(std::string_view(bytes.data, bytes.size), name);
  }
  ReleaseAny(&text);
  if (record.empty()) return;
  PFByteArray json{record.data(), record.size()};
  CheckCall(PFFunctionSetMetadata(func, &json));
}

/*! A Function over tvm-ffi function `name` of `module`, or NULL when it has none. */
PFObject* GetFunction(PFObject* module, const PFByteArray* name, int query_imports,
                      const char* fn) {
  std::string text(name->data == nullptr ? "" : name->data, name->size);
  PFAny* tvm_module = ModuleForeignState(module);
  if (tvm_module->type_index != kPFTypeNone) {
    PFAny args[3] = {*tvm_module, NoneAny(), NoneAny()};
    args[1].type_index = kPFTypeRawStr;
    args[1].v_c_str = text.c_str();
    args[2].type_index = kPFTypeBool;
    args[2].v_int64 = query_imports != 0;
    PFAny found = NoneAny();
    CallGlobal("ffi.ModuleGetFunction", args, 3, &found);
    if (found.type_index == kPFTypeNone) return nullptr;
    void* handle = found.v_obj;
    return NewFunction(Cell<FunctionCell>(handle)->safe_call, handle, module, text);
  }
  PFObject* owner = nullptr;
  void* address = ModuleFindSymbol(module, name, query_imports, kTVMFFIPrefix, fn, &owner);
  if (address == nullptr) return nullptr;
  EnsureApi(ModuleHandle(owner));
  PFObject* func = NewFunction(reinterpret_cast<SafeCall>(address), nullptr, owner, text);
  try {
    AttachMetadata(owner, text, func);
  } catch (...) {
    DecRef(func);
    throw;
  }
  return func;
}

/*! The docstring a tvm-ffi library exports for `name` (a getter function), or None. */
PFAny GetFunctionDoc(PFObject* module, const PFByteArray* name, int query_imports, const char* fn) {
  if (ModuleForeignState(module)->type_index != kPFTypeNone) return NoneAny();
  PFObject* owner = nullptr;
  void* address = ModuleFindSymbol(module, name, query_imports, kTVMFFIPrefix, fn, &owner);
  if (address == nullptr) return NoneAny();
  std::string symbol = kTVMFFIDocPrefix + std::string(name->data, name->size);
  void* getter = dlsym(ModuleHandle(owner), symbol.c_str());
  if (getter == nullptr) return NoneAny();
  EnsureApi(ModuleHandle(owner));
  PFObject* func = NewFunction(reinterpret_cast<SafeCall>(getter), nullptr, owner, symbol);
  PFAny doc = NoneAny();
  int rc = PFFunctionCall(func, nullptr, 0, &doc);
  DecRef(func);
  if (rc != 0) throw AlreadyRaised{};
  return doc;
}

const ForeignModuleLoader kLoader = {
    &RetryLoad,  &OnLoad,         &ListsAllFunctions,     &GetFunction,          &GetFunctionDoc,
    &ReleaseTVM, &SetLibraryPath, &SuspendRegistryMirror, &ResumeRegistryMirror,
};

[[maybe_unused]] const bool kRegistered = (SetForeignModuleLoader(&kLoader), true);

}  // namespace
}  // namespace tvmffi
}  // namespace detail
}  // namespace packedfun
