// Object entry points of c_api.h: atomic reference counting and opaque foreign handles.
#include "internal/error.h"
#include "internal/object.h"

namespace packedfun {
namespace detail {
namespace {

void DeleteOpaque(PFObject* obj) noexcept {
  auto* opaque = As<PFOpaqueObject>(obj);
  if (opaque->free_handle != nullptr && !CallerLockGone()) opaque->free_handle(opaque->handle);
  delete opaque;
}

}  // namespace

PFObject* NewOpaque(void* handle, void (*free_handle)(void*)) {
  PFOpaqueObject* opaque = AllocObject<PFOpaqueObject>(kPFTypeOpaque, &DeleteOpaque);
  opaque->handle = handle;
  opaque->free_handle = free_handle;
  return Header(opaque);
}

}  // namespace detail
}  // namespace packedfun

using namespace packedfun::detail;

extern "C" {

PACKEDFUN_API void PFObjectIncRef(PFObject* obj) { IncRef(obj); }

PACKEDFUN_API void PFObjectDecRef(PFObject* obj) { DecRef(obj); }

PACKEDFUN_API int PFOpaqueObjectCreate(void* handle, void (*free_handle)(void* handle),
                                       PFObject** out) {
  try {
    *out = NewOpaque(handle, free_handle);
    return 0;
  } catch (...) {
    // The handle was handed over: release it so a failed wrap does not leak it.
    if (free_handle != nullptr) free_handle(handle);
    return RaiseCurrentException();
  }
}

}  // extern "C"
