// packedfun's <tvm/ffi/enum.h>: tvm-ffi's C++ names over packedfun
// (docs/migration-from-tvm-ffi.md).
#include <packedfun/compat/tvm_ffi.h>
