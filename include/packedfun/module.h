// Exporting functions from a shared library under C symbols, found by PFModuleLoadFromFile.
#ifndef PACKEDFUN_MODULE_H_
#define PACKEDFUN_MODULE_H_

#include <packedfun/c_api.h>
#include <packedfun/detail/function_details.h>
#include <packedfun/function.h>
#include <packedfun/signature.h>

#include <cstdio>
#include <exception>
#include <string>

namespace packedfun {
namespace detail {
/*! The metadata record of an exported typed function; empty (no record) when `args` does not fit
 *  its signature, which is reported on stderr: a loader cannot throw into the library. */
template <typename F>
std::string ExportedMetadata(const F&, const char* name, const ArgList& args) noexcept {
  try {
    return MetadataJson(name, FunctionSignature<std::decay_t<F>>::TypeSchemas(), args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "packedfun: exported function '%s': %s\n", name, e.what());
    return std::string();
  }
}
}  // namespace detail
}  // namespace packedfun

/*!
 * Exports `Callable` (a function or a lambda object with a fixed signature) as the PFSafeCall
 * symbol `__packedfun_<ExportName>`, with automatic argument/result conversion; error messages
 * name it ExportName. A library exporting functions this way needs no global registry.
 *   int64_t AddOne(int64_t x) { return x + 1; }
 *   PACKEDFUN_DLL_EXPORT_TYPED_FUNC(add_one, AddOne);
 * Parameter names and defaults may follow; they go into the metadata record (ABI 1.3) that the
 * loader attaches, so Python calls the function with keywords:
 *   PACKEDFUN_DLL_EXPORT_TYPED_FUNC(add, Add, "a", "b"_a = 2);
 */
#define PACKEDFUN_DLL_EXPORT_TYPED_FUNC(ExportName, Callable, ...)                            \
  extern "C" PACKEDFUN_EXPORT int __packedfun_##ExportName(void* self, const PFAny* args,     \
                                                           int32_t num_args, PFAny* result) { \
    (void)self;                                                                               \
    return ::packedfun::detail::SafeCallTyped(Callable, #ExportName, args, num_args, result); \
  }                                                                                           \
  extern "C" PACKEDFUN_EXPORT const char* __packedfun_meta__##ExportName(void) {              \
    static const std::string json =                                                           \
        ::packedfun::detail::ExportedMetadata(Callable, #ExportName, {__VA_ARGS__});          \
    return json.empty() ? nullptr : json.c_str();                                             \
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

/*! Names the module's entry function (what `mod(...)` calls): `const char* __packedfun_main__`. */
#define PACKEDFUN_DLL_EXPORT_MAIN(ExportName)                    \
  extern "C" {                                                   \
  PACKEDFUN_EXPORT const char* __packedfun_main__ = #ExportName; \
  }

#endif  // PACKEDFUN_MODULE_H_
