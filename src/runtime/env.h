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

/*! Another FFI's calling environment (the tvm-ffi bridge registers it at static
 *  initialisation), read where the calling thread set nothing in packedfun's: a stream for a
 *  device with no slot here, the allocator when none is set here. So a packedfun Function that
 *  tvm-ffi code calls runs on the stream and allocates from the allocator its host installed in
 *  tvm-ffi's environment. Both functions never fail: NULL means "nothing set there either". */
struct ForeignEnv {
  void* (*get_stream)(int32_t device_type, int32_t device_id);
  PFEnvTensorAllocator (*get_allocator)();
};

/*! Registers the one foreign environment (static storage); called at static initialisation. */
void SetForeignEnv(const ForeignEnv* env) noexcept;

}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_SRC_INTERNAL_ENV_H_
