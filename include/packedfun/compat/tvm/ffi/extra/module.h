// <tvm/ffi/extra/module.h> is not in packedfun's tvm/ffi header tree: a source that needs it fails
// here.
#error \
    "<tvm/ffi/extra/module.h>: tvm-ffi's extra/ API is not provided by packedfun's tvm/ffi headers; build this source against apache-tvm-ffi's own headers (docs/migration-from-tvm-ffi.md, Sources and builds written for tvm-ffi)"
