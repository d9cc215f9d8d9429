// Function entry points of c_api.h: creating packed functions and calling them.
#include "internal/error.h"
#include "internal/object.h"

namespace packedfun {
namespace detail {
namespace {

/*! A Function plus the deleter of its `self`, in one allocation. */
struct FunctionImpl {
  PFFunctionObject base;
  void (*free_self)(void* self);
};

void DeleteFunction(PFObject* obj) noexcept {
  auto* impl = As<FunctionImpl>(obj);
  if (impl->free_self != nullptr) impl->free_self(impl->base.self);
  delete impl;
}

__attribute__((noinline, cold)) int RaiseNotAFunction(PFObject* func) {
  if (func == nullptr) return RaiseError("TypeError", "PFFunctionCall: the function is NULL");
  return RaiseError("TypeError", "PFFunctionCall: object of type index " +
                                     std::to_string(func->type_index) + " is not a Function");
}

}  // namespace
}  // namespace detail
}  // namespace packedfun

using namespace packedfun::detail;

extern "C" {

PACKEDFUN_API int PFFunctionCreate(void* self, PFSafeCall safe_call, void (*deleter)(void* self),
                                   PFObject** out) {
  if (safe_call == nullptr) {
    if (deleter != nullptr) deleter(self);
    return RaiseError("ValueError", "PFFunctionCreate: safe_call is NULL");
  }
  try {
    FunctionImpl* impl = AllocObject<FunctionImpl>(kPFTypeFunction, &DeleteFunction);
    impl->base.safe_call = safe_call;
    impl->base.self = self;
    impl->free_self = deleter;
    *out = Header(impl);
    return 0;
  } catch (...) {
    // The function owns `self` from the call on: a failed create still releases it.
    if (deleter != nullptr) deleter(self);
    return RaiseCurrentException();
  }
}

PACKEDFUN_API int PFFunctionCall(PFObject* func, const PFAny* args, int32_t num_args,
                                 PFAny* result) {
  if (__builtin_expect(func == nullptr || func->type_index != kPFTypeFunction, 0)) {
    return RaiseNotAFunction(func);
  }
  auto* f = As<PFFunctionObject>(func);
  return f->safe_call(f->self, args, num_args, result);
}

}  // extern "C"
