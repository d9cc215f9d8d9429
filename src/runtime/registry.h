// Private runtime helper: global functions the runtime itself registers at static-init time, and
// the hook through which another FFI's registry is seen through packedfun's.
#ifndef PACKEDFUN_SRC_INTERNAL_REGISTRY_H_
#define PACKEDFUN_SRC_INTERNAL_REGISTRY_H_

#include <packedfun/c_api.h>

#include <string>
#include <string_view>
#include <vector>

namespace packedfun {
namespace detail {

/*! Registers `call` as the global function `name` (replacing any). Never throws: a failure (out of
 *  memory at static init) leaves the name unregistered, which callers report when they look it up.
 */
void RegisterBuiltin(const char* name, PFSafeCall call) noexcept;

/*! Another FFI's global registry (the tvm-ffi bridge, when built, registers it at static
 *  initialisation). packedfun's own registry is asked first; this one only for names it lacks. */
struct ForeignRegistry {
  /*! A new Function for the foreign global `name`, or NULL when there is none (or the foreign
   *  runtime is not in the process). May throw. */
  PFObject* (*get)(std::string_view name);
  /*! Appends the foreign registry's names (nothing when its runtime is not loaded). May throw. */
  void (*list)(std::vector<std::string>* names);
  /*! Removes the foreign global `name` (one packedfun's registry lacks); whether there was one.
   *  May throw. */
  bool (*remove)(std::string_view name);
  /*! Told, outside the registry's lock, that packedfun's own entry for `name` was set or removed
   *  (it reads the entry again with LookupOwnGlobal, so calls racing each other agree). */
  void (*changed)(std::string_view name) noexcept;
};

/*! Registers the one foreign registry (static storage); called at static initialisation. */
void SetForeignRegistry(const ForeignRegistry* registry) noexcept;

/*! packedfun's own entry for `name` (a new reference), or NULL: the foreign registry not asked. */
PFObject* LookupOwnGlobal(std::string_view name);

/*! The names in packedfun's own registry (not the foreign one's). */
std::vector<std::string> OwnGlobalNames();

}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_SRC_INTERNAL_REGISTRY_H_
