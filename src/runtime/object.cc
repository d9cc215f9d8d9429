// Object entry points of c_api.h: atomic reference counting, opaque foreign handles, and the
// children an object holds (for the garbage collectors of language bindings).
#include <cstdint>

#include "runtime/error.h"
#include "runtime/map.h"
#include "runtime/object.h"

namespace packedfun {
namespace detail {
namespace {

/*! Not noexcept (see DecRef): `free_handle` may be a binding's code. */
void DeleteOpaque(PFObject* obj) {
  auto* opaque = As<PFOpaqueObject>(obj);
  if (opaque->free_handle != nullptr) {
    BindingEntry entry;
    if (entry.admitted()) opaque->free_handle(opaque->handle);
  }
  delete opaque;
}

/*! Whether a field declared as `static_type_index` can hold an object worth visiting: strings,
 *  bytes and POD values never lead anywhere. */
bool MayHoldObject(int32_t static_type_index) noexcept {
  return static_type_index == kPFTypeAny ||
         (IsObjectIndex(static_type_index) && static_type_index != kPFTypeString &&
          static_type_index != kPFTypeBytes && static_type_index != kPFTypeShape);
}

/*! Visits the object-typed fields of a reflected object, its parents' fields included. A getter
 *  hands out a new reference: the object it returns is the field's own one when something else
 *  (the field) still holds it after that reference is dropped; an object the getter made afresh
 *  (count 1) is no child and is released unvisited. A failing getter is skipped. Not noexcept,
 *  like every frame under a visitor that may run Python (a forced unwind must pass). */
int VisitFields(PFObject* obj, PFObjectVisitor visit, void* ctx) {
  const PFTypeInfo* info = nullptr;
  if (PFTypeGetInfo(obj->type_index, &info) != 0) {
    PFObject* err = nullptr;
    PFErrorMoveFromRaised(&err);
    DecRef(err);
    return 0;
  }
  for (int32_t d = 0; d <= info->depth; ++d) {
    const PFTypeInfo* level = nullptr;
    if (PFTypeGetInfo(info->ancestors[d], &level) != 0) continue;
    for (int32_t i = 0; i < level->num_fields; ++i) {
      const PFFieldInfo& field = level->fields[i];
      if (!MayHoldObject(field.static_type_index)) continue;
      PFAny value = NoneAny();
      if (field.getter(reinterpret_cast<char*>(obj) + field.offset, &value) != 0) {
        PFObject* err = nullptr;
        PFErrorMoveFromRaised(&err);
        DecRef(err);
        continue;
      }
      if (!IsObjectIndex(value.type_index)) continue;  // owned POD: nothing to release
      PFObject* child = value.v_obj;
      if (__atomic_load_n(&child->ref_count, __ATOMIC_ACQUIRE) < 2) {
        DecRef(child);  // made by the getter: not held by the field
        continue;
      }
      DecRef(child);  // the field keeps it alive
      if (int rc = visit(child, ctx)) return rc;
    }
  }
  return 0;
}

}  // namespace

namespace {
/*! Deleters nested deeper than this on one thread defer their children (Destroy). */
constexpr int kMaxNestedDeleters = 64;
/*! One thread's deleter state, in one thread_local so that Destroy finds it with one TLS address
 *  lookup: the runtime is loaded with dlopen, where each lookup of a thread_local is a call
 *  (__tls_get_addr / the TLS descriptor), and every object's death goes through here. */
struct DeleterState {
  int nested = 0;
  /*! Dead objects whose deleter has not run yet, linked through their ref_count (unread by anyone
   *  once an object is dead but TryIncRefAlive, which the kDeferredTag bit turns away), newest
   *  first. */
  PFObject* deferred = nullptr;
};
thread_local DeleterState deleter_state;

struct NestedDeleter {
  explicit NestedDeleter(DeleterState* s) noexcept : s_(s) { ++s_->nested; }
  ~NestedDeleter() { --s_->nested; }  // also on a forced unwind
  DeleterState* s_;
};
}  // namespace

void Destroy(PFObject* obj) {
  DeleterState* s = &deleter_state;
  if (s->nested >= kMaxNestedDeleters) {
    obj->ref_count = reinterpret_cast<uintptr_t>(s->deferred) | kDeferredTag;
    s->deferred = obj;
    return;
  }
  NestedDeleter nested(s);
  obj->deleter(obj);
  if (s->nested != 1) return;
  while (s->deferred != nullptr) {  // the outermost deleter: each waiting object in turn
    PFObject* next = s->deferred;
    s->deferred =
        reinterpret_cast<PFObject*>(static_cast<uintptr_t>(next->ref_count & ~kDeferredTag));
    next->ref_count = 0;
    next->deleter(next);
  }
}

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

PACKEDFUN_API int PFObjectVisitChildren(PFObject* obj, PFObjectVisitor visit, void* ctx) {
  if (obj == nullptr) return 0;
  switch (obj->type_index) {
    case kPFTypeArray:
    case kPFTypeList: {
      auto* seq = As<PFSeqObject>(obj);
      for (int64_t i = 0; i < seq->size; ++i) {
        if (!IsObjectIndex(seq->data[i].type_index)) continue;
        if (int rc = visit(seq->data[i].v_obj, ctx)) return rc;
      }
      return 0;
    }
    case kPFTypeMap:
    case kPFTypeDict:
      return MapVisitObjects(obj, visit, ctx);
    case kPFTypeError: {
      PFObject* cause = As<PFErrorObject>(obj)->cause;
      return cause != nullptr ? visit(cause, ctx) : 0;
    }
    default:
      return obj->type_index >= kPFTypeDynamicBegin ? VisitFields(obj, visit, ctx) : 0;
  }
}

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
