// The add_one kernel of tvm-ffi's Python guide: y = x + 1 on 1-d float32 CPU tensors.
#include <packedfun/packedfun.h>

namespace {

/*! Checks that `t` (named `name`) is a 1-d float32 tensor in CPU memory. */
void CheckVector(packedfun::TensorView t, const char* name) {
  PACKEDFUN_CHECK(t->ndim == 1) << name << " must be a 1-d tensor, got ndim=" << t->ndim;
  PACKEDFUN_CHECK(t->dtype == packedfun::kFloat32)
      << name << " must be float32, got " << packedfun::DataTypeToString(t->dtype);
  PACKEDFUN_CHECK(t->device.device_type == kDLCPU)
      << name << " must be in CPU memory, got " << packedfun::DeviceToString(t->device);
}

void AddOneCpu(packedfun::TensorView x, packedfun::TensorView y) {
  CheckVector(x, "x");
  CheckVector(y, "y");
  PACKEDFUN_CHECK(x->shape[0] == y->shape[0])
      << "x and y must have the same shape, got " << x->shape[0] << " and " << y->shape[0];
  const float* src = x.data_ptr<float>();
  float* dst = y.data_ptr<float>();
  const int64_t sx = x->strides[0], sy = y->strides[0];
  for (int64_t i = 0; i < x->shape[0]; ++i) dst[i * sy] = src[i * sx] + 1.0f;
}

}  // namespace

PACKEDFUN_DLL_EXPORT_TYPED_FUNC(add_one_cpu, AddOneCpu);
PACKEDFUN_DLL_EXPORT_DOC(add_one_cpu, "add_one_cpu(x, y): y = x + 1 for 1-d float32 CPU tensors");
