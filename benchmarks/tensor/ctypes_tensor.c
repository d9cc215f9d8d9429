/* ctypes peer of the tensor benchmark: the array travels as a data pointer and a length. */
#include <stdint.h>

int64_t bench_ndim_c(const float* data, int64_t n) { return data != 0 && n >= 0 ? 1 : 0; }
