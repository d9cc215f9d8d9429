// Private runtime helper: global functions the runtime itself registers at static-init time.
#ifndef PACKEDFUN_SRC_INTERNAL_REGISTRY_H_
#define PACKEDFUN_SRC_INTERNAL_REGISTRY_H_

#include <packedfun/c_api.h>

namespace packedfun {
namespace detail {

/*! Registers `call` as the global function `name` (replacing any). Never throws: a failure (out of
 *  memory at static init) leaves the name unregistered, which callers report when they look it up.
 */
void RegisterBuiltin(const char* name, PFSafeCall call) noexcept;

}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_SRC_INTERNAL_REGISTRY_H_
