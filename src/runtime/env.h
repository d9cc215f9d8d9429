// Private header of the calling environment: what the runtime's other parts read of it.
#ifndef PACKEDFUN_SRC_INTERNAL_ENV_H_
#define PACKEDFUN_SRC_INTERNAL_ENV_H_

#include <packedfun/c_api.h>

#include <cstddef>

namespace packedfun {
namespace detail {

/*! One stream slot of the calling thread (a NULL stream is the default stream). */
struct EnvStreamSlot {
  int32_t device_type;
  int32_t device_id;
  void* stream;
};

/*! The calling thread's stream slots (`*count` entries, valid until its next PFEnvSetStream; a
 *  slot set back to NULL stays) and, in `*allocator`, its tensor allocator (NULL: the runtime's
 *  own). One call, so that code mirroring the environment elsewhere (the tvm-ffi bridge) pays a
 *  single thread-local lookup when nothing is set. */
const EnvStreamSlot* EnvSnapshot(size_t* count, PFEnvTensorAllocator* allocator) noexcept;

}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_SRC_INTERNAL_ENV_H_
