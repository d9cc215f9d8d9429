// The add_one kernel of tvm-ffi's Python guide, for CUDA: y = x + 1 on 1-d float32 GPU tensors.
#include <cuda_runtime.h>
#include <packedfun/packedfun.h>

namespace {

__global__ void AddOneKernel(const float* x, float* y, int64_t n, int64_t sx, int64_t sy) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i * sy] = x[i * sx] + 1.0f;
}

/*! Checks that `t` (named `name`) is a 1-d float32 tensor in CUDA memory. */
void CheckVector(packedfun::TensorView t, const char* name) {
  PACKEDFUN_CHECK(t->ndim == 1) << name << " must be a 1-d tensor, got ndim=" << t->ndim;
  PACKEDFUN_CHECK(t->dtype == packedfun::kFloat32)
      << name << " must be float32, got " << packedfun::DataTypeToString(t->dtype);
  PACKEDFUN_CHECK(t->device.device_type == kDLCUDA)
      << name << " must be a CUDA tensor, got " << packedfun::DeviceToString(t->device);
}

void AddOneCuda(packedfun::TensorView x, packedfun::TensorView y) {
  CheckVector(x, "x");
  CheckVector(y, "y");
  PACKEDFUN_CHECK(x->shape[0] == y->shape[0])
      << "x and y must have the same shape, got " << x->shape[0] << " and " << y->shape[0];
  PACKEDFUN_CHECK(x->device == y->device) << "x and y must be on the same device";
  int64_t n = x->shape[0];
  if (n == 0) return;
  cudaError_t err = cudaSetDevice(x->device.device_id);
  PACKEDFUN_CHECK(err == cudaSuccess) << "cudaSetDevice: " << cudaGetErrorString(err);
  constexpr int kThreads = 256;
  int blocks = static_cast<int>((n + kThreads - 1) / kThreads);
  // The default stream: the caller synchronises as it would for its own kernels.
  AddOneKernel<<<blocks, kThreads>>>(x.data_ptr<float>(), y.data_ptr<float>(), n, x->strides[0],
                                     y->strides[0]);
  err = cudaGetLastError();
  PACKEDFUN_CHECK(err == cudaSuccess) << "add_one_cuda launch: " << cudaGetErrorString(err);
}

}  // namespace

PACKEDFUN_DLL_EXPORT_TYPED_FUNC(add_one_cuda, AddOneCuda);
PACKEDFUN_DLL_EXPORT_DOC(add_one_cuda,
                         "add_one_cuda(x, y): y = x + 1 for 1-d float32 CUDA tensors");
