// PFGetABIVersion: the ABI version of the runtime actually loaded.
#include <packedfun/c_api.h>

extern "C" PACKEDFUN_API uint32_t PFGetABIVersion(void) {
  return (static_cast<uint32_t>(PACKEDFUN_ABI_VERSION_MAJOR) << 16) |
         static_cast<uint32_t>(PACKEDFUN_ABI_VERSION_MINOR);
}
