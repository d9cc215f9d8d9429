// Private header of the module loader: what an interop layer sees of a loaded library, and the
// hook through which it loads libraries built for another FFI. The runtime knows no such FFI: an
// interop layer linked into the runtime (the tvm-ffi bridge, when built) registers its loader at
// static-initialisation time; without one, a library is just a library whose packedfun exports
// are found.
#ifndef PACKEDFUN_SRC_RUNTIME_MODULE_H_
#define PACKEDFUN_SRC_RUNTIME_MODULE_H_

#include <packedfun/c_api.h>

#include <string>

namespace packedfun {
namespace detail {

/*! The dlopen handle of a Module (never NULL; the process itself for the system library). */
void* ModuleHandle(PFObject* module) noexcept;

/*! The Module's slot for the foreign loader's own state (None until the loader sets it; the
 *  loader's `release` frees it when the Module dies). */
PFAny* ModuleForeignState(PFObject* module) noexcept;

/*! Looks up the symbol `prefix` + `name` in `module`, then (with `query_imports`) depth-first in
 *  its imports. Returns the address, or NULL when no library has it; `*owner` (may be NULL)
 *  receives the Module it was found in, borrowed from the import graph. Throws TypeError when
 *  `module` is not a Module and ValueError when `name` is NULL, naming `fn`. */
void* ModuleFindSymbol(PFObject* module, const PFByteArray* name, int query_imports,
                       const char* prefix, const char* fn, PFObject** owner);

/*! A loader for libraries built for another FFI. Every member is called with a checked Module
 *  and may throw (detail::Throw or AlreadyRaised). */
struct ForeignModuleLoader {
  /*! dlopen of `path` failed with `message`: true after making a retry worthwhile (the library
   *  needs the foreign runtime, now loaded), false to let the error stand. */
  bool (*retry_load)(const std::string& path, const std::string& message);
  /*! Called once a library is open, before the Module is returned. */
  void (*on_load)(PFObject* module, const std::string& path);
  /*! Whether the packedfun exports of `module` are all its functions (false: listing its
   *  functions gives None, as its foreign functions cannot be listed). */
  bool (*lists_all_functions)(PFObject* module);
  /*! The foreign function `name` of `module` (a new Function), or NULL when there is none. */
  PFObject* (*get_function)(PFObject* module, const PFByteArray* name, int query_imports,
                            const char* fn);
  /*! The docstring of the foreign function `name` of `module`, or None. */
  PFAny (*get_function_doc)(PFObject* module, const PFByteArray* name, int query_imports,
                            const char* fn);
  /*! Releases what `on_load` stored in a Module's foreign state. */
  void (*release)(PFAny* state) noexcept;
  /*! Where the foreign runtime's library is (PFModuleSetTVMFFILibrary); "" to forget it. */
  void (*set_library_path)(std::string path);
  /*! Called before a library is opened and after (whether or not it opened), in pairs. */
  void (*begin_load)() noexcept;
  void (*end_load)() noexcept;
};

/*! A Module over another FFI's module object: `state` (stolen; released by the foreign loader's
 *  `release`) is what `on_load` would have stored, `description` names it in messages. */
PFObject* NewForeignModule(PFAny state, std::string description);

/*! Registers the one foreign loader (static storage); called at static initialisation. */
void SetForeignModuleLoader(const ForeignModuleLoader* loader) noexcept;

}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_SRC_RUNTIME_MODULE_H_
