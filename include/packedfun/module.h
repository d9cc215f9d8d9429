// Exporting functions from a shared library under C symbols, found by PFModuleLoadFromFile.
#ifndef PACKEDFUN_MODULE_H_
#define PACKEDFUN_MODULE_H_

#include <packedfun/c_api.h>
#include <packedfun/detail/function_details.h>
#include <packedfun/function.h>

/*!
 * Exports `Callable` (a function or a lambda object with a fixed signature) as the PFSafeCall
 * symbol `__packedfun_<ExportName>`, with automatic argument/result conversion; error messages
 * name it ExportName. A library exporting functions this way needs no global registry.
 *   int64_t AddOne(int64_t x) { return x + 1; }
 *   PACKEDFUN_DLL_EXPORT_TYPED_FUNC(add_one, AddOne);
 */
#define PACKEDFUN_DLL_EXPORT_TYPED_FUNC(ExportName, Callable)                                 \
  extern "C" PACKEDFUN_EXPORT int __packedfun_##ExportName(void* self, const PFAny* args,     \
                                                           int32_t num_args, PFAny* result) { \
    (void)self;                                                                               \
    return ::packedfun::detail::SafeCallTyped(Callable, #ExportName, args, num_args, result); \
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
