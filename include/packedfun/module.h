// Modules: packedfun::Module (a loaded shared library, used from C++) and the macros that export
// functions from a library under C symbols, found by PFModuleLoadFromFile.
#ifndef PACKEDFUN_MODULE_H_
#define PACKEDFUN_MODULE_H_

#include <packedfun/c_api.h>
#include <packedfun/detail/function_details.h>
#include <packedfun/function.h>
#include <packedfun/signature.h>

#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace packedfun {
namespace detail {
/*! The metadata record of an exported typed function; empty (no record) when `args` does not fit
 *  its signature, which is reported on stderr: a loader cannot throw into the library. */
template <typename F>
std::string ExportedMetadata(const F&, const char* name, const ArgList& args) noexcept {
  try {
    using Sig = FunctionSignature<std::decay_t<F>>;
    return MetadataJson(name, Sig::TypeSchemas(), args, nullptr, Sig::IntRanges());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "packedfun: exported function '%s': %s\n", name, e.what());
    return std::string();
  }
}
/*! The container-view argument bits of an exported typed function. */
template <typename F>
constexpr uint32_t ExportedViewArgs(const F&) noexcept {
  return FunctionSignature<std::decay_t<F>>::ViewArgs();
}
/*! Moves a string PFAny (a new ref) into an std::string; nullopt for None. */
inline std::optional<std::string> TakeOptionalString(PFAny* v) {
  Any owner = AnyUnsafe::MoveFromPFAny(v);
  if (!AnyIsStr(owner.raw())) return std::nullopt;
  PFByteArray bytes = AnyBytes(owner.raw());
  return std::string(bytes.data, bytes.size);
}

/*! The elements of an Array PFAny (a new ref, taken), each passed to `each`; false for None. */
template <typename F>
bool TakeArray(PFAny* v, F each) {
  Any owner = AnyUnsafe::MoveFromPFAny(v);
  if (owner.type_index() != kPFTypeArray) return false;
  const PFSeqObject* seq = reinterpret_cast<const PFSeqObject*>(owner.raw().v_obj);
  for (int64_t i = 0; i < seq->size; ++i) each(seq->data[i]);
  return true;
}

/*! The parameter names of an exported typed function for its argument errors; empty (errors
 *  give positions) when `args` is empty or does not fit (ExportedMetadata reports that).
 *  `kUnnamed` (the export names no parameters, known at compile time) compiles none of it. */
template <bool kUnnamed, typename F>
ParamNames ExportedParamNames(const F&, const char* name, const ArgList& args) noexcept {
  if constexpr (kUnnamed) {
    return ParamNames();
  } else {
    try {
      return MakeParamNames(name, FunctionSignature<std::decay_t<F>>::TypeSchemas(), args);
    } catch (const std::exception&) {
      return ParamNames();
    }
  }
}
}  // namespace detail

/*!
 * A loaded shared library (kPFTypeModule): the C++ side of `packedfun.load_module`. Its functions
 * are those the library exports (PACKEDFUN_DLL_EXPORT_TYPED_FUNC, `__packedfun_<name>` symbols,
 * libraries built for Apache TVM FFI); a Function taken from it keeps the library loaded.
 *
 *   Module mod = Module::LoadFromFile("build/libadd_one.so");
 *   Function add_one = mod.GetFunctionRequired("add_one_cpu");
 *   add_one(x, y);
 *
 * Errors are packedfun::Error: FileNotFoundError for a missing file, OSError for one the loader
 * refuses (not a library, unresolved symbols), AttributeError for a missing function.
 */
class Module : public ObjectRef {
 public:
  /*! Loads the library at `path`, running its static initializers (its global registrations). */
  static Module LoadFromFile(std::string_view path) {
    PFByteArray p{path.data(), path.size()};
    PFObject* out = nullptr;
    detail::CheckCallResult(PFModuleLoadFromFile(&p, &out));
    return detail::ObjectUnsafe::FromOwned<Module>(out);
  }
  /*! The running program and everything loaded with it (functions exported by the executable
   *  itself, e.g. with PACKEDFUN_DLL_EXPORT_TYPED_FUNC in a host linked with -rdynamic). */
  static Module SystemLib() {
    PFObject* out = nullptr;
    detail::CheckCallResult(PFModuleGetSystemLib(&out));
    return detail::ObjectUnsafe::FromOwned<Module>(out);
  }

  /*! The function `name`, searched in this library and, with `query_imports`, in its imports;
   *  nullopt when there is none. */
  std::optional<Function> GetFunction(std::string_view name, bool query_imports = false) const {
    PFByteArray n{name.data(), name.size()};
    PFObject* out = nullptr;
    detail::CheckCallResult(PFModuleGetFunction(get(), &n, query_imports ? 1 : 0, &out));
    if (out == nullptr) return std::nullopt;
    return detail::ObjectUnsafe::FromOwned<Function>(out);
  }
  /*! As GetFunction; throws AttributeError naming the function and the library when missing. */
  Function GetFunctionRequired(std::string_view name, bool query_imports = false) const {
    std::optional<Function> f = GetFunction(name, query_imports);
    if (!f) ThrowMissing(name);
    return std::move(*f);
  }
  /*! The docstring of function `name` (PACKEDFUN_DLL_EXPORT_DOC), or nullopt. */
  std::optional<std::string> GetFunctionDoc(std::string_view name,
                                            bool query_imports = false) const {
    PFByteArray n{name.data(), name.size()};
    PFAny out;
    detail::SetPod(&out, kPFTypeNone);
    detail::CheckCallResult(PFModuleGetFunctionDoc(get(), &n, query_imports ? 1 : 0, &out));
    return detail::TakeOptionalString(&out);
  }
  /*! The names of the exported functions (with `query_imports`, the imports' too), sorted;
   *  nullopt when they cannot be listed (the system library): then look names up one by one. */
  std::optional<std::vector<std::string>> ListFunctions(bool query_imports = false) const {
    PFAny out;
    detail::SetPod(&out, kPFTypeNone);
    detail::CheckCallResult(PFModuleListFunctions(get(), query_imports ? 1 : 0, &out));
    std::vector<std::string> names;
    bool listed = detail::TakeArray(&out, [&](const PFAny& v) {
      PFByteArray bytes = detail::AnyBytes(v);
      names.emplace_back(bytes.data, bytes.size);
    });
    if (!listed) return std::nullopt;
    return names;
  }

  /*! The entry function (PACKEDFUN_DLL_EXPORT_MAIN), or nullopt when the library names none. */
  std::optional<Function> GetEntryFunction() const {
    PFAny out;
    detail::SetPod(&out, kPFTypeNone);
    detail::CheckCallResult(PFModuleGetEntryName(get(), &out));
    std::optional<std::string> name = detail::TakeOptionalString(&out);
    if (!name) return std::nullopt;
    return GetFunctionRequired(*name);
  }
  /*! Calls the entry function: `mod(x, y)`; TypeError when the library names none. */
  template <typename... Args>
  Any operator()(Args&&... args) const {
    std::optional<Function> entry = GetEntryFunction();
    if (!entry) ThrowNoEntry();
    return (*entry)(std::forward<Args>(args)...);
  }

  /*! Makes this module import `dependency`: GetFunction(name, true) searches it too. Throws
   *  ValueError when that would create an import cycle. */
  void Import(const Module& dependency) const {
    detail::CheckCallResult(PFModuleImport(get(), dependency.get()));
  }
  /*! The modules this one imports, in import order. */
  std::vector<Module> imports() const {
    PFAny out;
    detail::SetPod(&out, kPFTypeNone);
    detail::CheckCallResult(PFModuleGetImports(get(), &out));
    std::vector<Module> mods;
    detail::TakeArray(&out, [&](const PFAny& v) {
      mods.push_back(detail::ObjectUnsafe::FromBorrowed<Module>(v.v_obj));
    });
    return mods;
  }
  /*! The library's path ("" for the system library). */
  std::string path() const {
    PFAny out;
    detail::SetPod(&out, kPFTypeNone);
    detail::CheckCallResult(PFModuleGetPath(get(), &out));
    return detail::TakeOptionalString(&out).value_or(std::string());
  }

  static constexpr bool _type_is_nullable = false;
  static bool _type_accepts(int32_t type_index) noexcept { return type_index == kPFTypeModule; }
  static const char* _type_name() noexcept { return "Module"; }

 private:
  Module() noexcept = default;
  friend struct detail::ObjectUnsafe;

  [[noreturn]] __attribute__((noinline, cold)) void ThrowMissing(std::string_view name) const {
    throw Error("AttributeError",
                "module '" + path() + "' has no function '" + std::string(name) + "'");
  }
  [[noreturn]] __attribute__((noinline, cold)) void ThrowNoEntry() const {
    throw Error("TypeError", "module '" + path() +
                                 "' has no entry function (PACKEDFUN_DLL_EXPORT_MAIN) to call");
  }
};

}  // namespace packedfun

/*!
 * Exports `Callable` (a function or a lambda object with a fixed signature) as the PFSafeCall
 * symbol `__packedfun_<ExportName>`, with automatic argument/result conversion; error messages
 * name it ExportName. A library exporting functions this way needs no global registry.
 *   int64_t AddOne(int64_t x) { return x + 1; }
 *   PACKEDFUN_DLL_EXPORT_TYPED_FUNC(add_one, AddOne);
 * Parameter names and defaults may follow; they go into the metadata record that the
 * loader attaches, so Python calls the function with keywords:
 *   PACKEDFUN_DLL_EXPORT_TYPED_FUNC(add, Add, "a", "b"_a = 2);
 */
#define PACKEDFUN_DLL_EXPORT_TYPED_FUNC(ExportName, Callable, ...)                              \
  extern "C" PACKEDFUN_EXPORT int __packedfun_##ExportName(void* self, const PFAny* args,       \
                                                           int32_t num_args, PFAny* result) {   \
    (void)self;                                                                                 \
    /* Worked out once, out of line: the call itself keeps a small frame. */                    \
    static const ::packedfun::detail::ParamNames* const pf_params =                             \
        []() __attribute__((noinline, cold)) -> const ::packedfun::detail::ParamNames* {        \
      static const ::packedfun::detail::ParamNames names =                                      \
          ::packedfun::detail::ExportedParamNames<sizeof(#__VA_ARGS__) == 1>(                   \
              Callable, #ExportName, {__VA_ARGS__});                                            \
      return names.names.empty() ? nullptr : &names;                                            \
    }();                                                                                        \
    return ::packedfun::detail::SafeCallTyped(Callable, #ExportName, pf_params, args, num_args, \
                                              result);                                          \
  }                                                                                             \
  extern "C" PACKEDFUN_EXPORT const char* __packedfun_meta__##ExportName(void) {                \
    static const std::string json =                                                             \
        ::packedfun::detail::ExportedMetadata(Callable, #ExportName, {__VA_ARGS__});            \
    return json.empty() ? nullptr : json.c_str();                                               \
  }                                                                                             \
  extern "C" {                                                                                  \
  PACKEDFUN_EXPORT extern const uint32_t __packedfun_view_args__##ExportName =                  \
      ::packedfun::detail::ExportedViewArgs(Callable);                                          \
  }

/*! As PACKEDFUN_DLL_EXPORT_TYPED_FUNC for a packed callable `void(PackedArgs args, Any* rv)`. */
#define PACKEDFUN_DLL_EXPORT_PACKED_FUNC(ExportName, Callable)                                \
  extern "C" PACKEDFUN_EXPORT int __packedfun_##ExportName(void* self, const PFAny* args,     \
                                                           int32_t num_args, PFAny* result) { \
    (void)self;                                                                               \
    return ::packedfun::detail::SafeCallPacked(Callable, args, num_args, result);             \
  }

/*! The docstring of an exported function: `const char* __packedfun_doc__<ExportName>`. */
#define PACKEDFUN_DLL_EXPORT_DOC(ExportName, Doc)                   \
  extern "C" {                                                      \
  PACKEDFUN_EXPORT const char* __packedfun_doc__##ExportName = Doc; \
  }

/*! Declares the GIL policy of an exported function, read by the loader:
 *    PACKEDFUN_DLL_EXPORT_GIL(add_one, kPFGILHold);  // trivial: callers keep their lock
 *  `int32_t __packedfun_gil__<ExportName>`; without it the policy is kPFGILRelease. */
#define PACKEDFUN_DLL_EXPORT_GIL(ExportName, Policy)                              \
  extern "C" {                                                                    \
  PACKEDFUN_EXPORT extern const int32_t __packedfun_gil__##ExportName = (Policy); \
  }

/*! Names the module's entry function (what `mod(...)` calls): `const char* __packedfun_main__`. */
#define PACKEDFUN_DLL_EXPORT_MAIN(ExportName)                    \
  extern "C" {                                                   \
  PACKEDFUN_EXPORT const char* __packedfun_main__ = #ExportName; \
  }

#endif  // PACKEDFUN_MODULE_H_
