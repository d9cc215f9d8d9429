// testing.env_*: functions that report the calling environment (stream slot, allocator) they see.
#include <packedfun/packedfun.h>

#include <cstdint>

namespace {

using packedfun::Tensor;

/*! The stream the caller set for `device`, as an integer (0: the default stream). */
int64_t EnvStream(DLDevice device) {
  return static_cast<int64_t>(reinterpret_cast<intptr_t>(packedfun::EnvGetStream(device)));
}

/*! A float32 tensor of `n` ones from the caller's allocator. */
Tensor EnvOnes(int64_t n) {
  Tensor out = Tensor::FromEnvAlloc({n}, DLDataType{kDLFloat, 32, 1});
  float* data = static_cast<float*>(out->data);
  for (int64_t i = 0; i < n; ++i) data[i] = 1.0f;
  return out;
}

/*! `n` ones of `like`'s dtype (float32 only) and device, from the caller's allocator. */
Tensor EnvOnesLike(packedfun::TensorView like, int64_t n) {
  Tensor out = Tensor::FromEnvAlloc({n}, like->dtype, like->device);
  float* data = static_cast<float*>(out->data);
  for (int64_t i = 0; i < n; ++i) data[i] = 1.0f;
  return out;
}

}  // namespace

PACKEDFUN_REGISTER_GLOBAL("testing.env_ones_like").set_body_typed(EnvOnesLike);
PACKEDFUN_REGISTER_GLOBAL("testing.env_stream").set_body_typed(EnvStream);
PACKEDFUN_REGISTER_GLOBAL("testing.env_ones").set_body_typed(EnvOnes);
