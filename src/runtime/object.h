// Private runtime helpers for object allocation, reference counting and PFAny handling.
//
// Usage from any src/*.cc file:
//
//   struct MyImpl {              // a standard-layout struct whose FIRST member is the C header
//     PFTensorObject base;       // (or PFObject header;) so PFObject* <-> MyImpl* casts are valid
//     std::vector<int64_t> extra;
//   };
//   MyImpl* p = packedfun::detail::AllocObject<MyImpl>(kPFTypeTensor);   // ref_count 1
//   PFObject* obj = packedfun::detail::Header(p);                         // hand out as new ref
//
// AllocObject value-initializes T with `new T()` (throws std::bad_alloc; the entry point's guard,
// see error.h, turns that into a MemoryError) and installs DeleteObject<T> as the deleter, which
// runs `delete` on the T. Pass a custom deleter when T needs extra teardown that its destructor
// does not do. Nothing here locks; reference counting is a relaxed/acq-rel atomic on ref_count.
#ifndef PACKEDFUN_SRC_INTERNAL_OBJECT_H_
#define PACKEDFUN_SRC_INTERNAL_OBJECT_H_

#include <packedfun/c_api.h>

#include <cstdint>

namespace packedfun {
namespace detail {

/*! Drops the metadata record of a dying Function (function.cc); every Function deleter calls it. */
void ForgetFunctionMetadata(PFObject* func) noexcept;

/*! The PFObject header at the start of `p` (T's first member must be the header). */
template <class T>
inline PFObject* Header(T* p) noexcept {
  return reinterpret_cast<PFObject*>(p);
}

/*! The object `obj` seen as T (no check: the caller knows the type). */
template <class T>
inline T* As(PFObject* obj) noexcept {
  return reinterpret_cast<T*>(obj);
}

/*! A deleter that destroys a T made by AllocObject<T>. */
template <class T>
void DeleteObject(PFObject* obj) noexcept {
  delete reinterpret_cast<T*>(obj);
}

/*! Fills the header of a freshly allocated object: ref_count 1. */
inline void InitHeader(PFObject* obj, int32_t type_index, void (*deleter)(PFObject*)) noexcept {
  obj->ref_count = 1;
  obj->type_index = type_index;
  obj->flags = 0;
  obj->deleter = deleter;
}

/*! Allocates a value-initialized T (header first) with ref_count 1. Throws std::bad_alloc. */
template <class T>
T* AllocObject(int32_t type_index, void (*deleter)(PFObject*) = &DeleteObject<T>) {
  T* p = new T();
  InitHeader(Header(p), type_index, deleter);
  return p;
}

/*! Inline reference counting, identical to PFObjectIncRef/PFObjectDecRef (NULL allowed). */
inline void IncRef(PFObject* obj) noexcept {
  if (obj != nullptr) __atomic_fetch_add(&obj->ref_count, 1, __ATOMIC_RELAXED);
}

/*! Runs the deleter of `obj`, whose count reached 0 (object.cc). A deleter releasing its children
 *  runs theirs inside it, so freeing a million-deep chain would nest a million frames: past a few
 *  nested deleters, a dead object waits on its thread's list and the outermost deleter's caller
 *  frees the waiting ones one after another. Not noexcept: see DecRef. */
void Destroy(PFObject* obj);

/*! Set in the ref_count of a dead object waiting on its thread's deferred list (Destroy), whose
 *  count field then holds the link to the next one: no live count ever reaches it, so a count
 *  with this bit is never taken for a live one (TryIncRefAlive). */
constexpr uint64_t kDeferredTag = uint64_t{1} << 63;

/*! Adds a reference to `obj` only while it is alive (count above 0 and not a dead object's
 *  deferred link): false for an object whose count already reached 0, which must not be revived.
 *  For caches that hold objects without a reference and drop them in the deleter. */
inline bool TryIncRefAlive(PFObject* obj) noexcept {
  uint64_t count = __atomic_load_n(&obj->ref_count, __ATOMIC_ACQUIRE);
  while (count != 0 && (count & kDeferredTag) == 0) {
    if (__atomic_compare_exchange_n(&obj->ref_count, &count, count + 1, true, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
      return true;
    }
  }
  return false;
}

/*! Not noexcept: a deleter may run a binding's code (a Python callable's release), and CPython ends
 *  a daemon thread inside it at exit with a forced unwind that must pass (a noexcept frame would
 *  turn it into std::terminate). */
inline void DecRef(PFObject* obj) {
  if (obj != nullptr && __atomic_sub_fetch(&obj->ref_count, 1, __ATOMIC_ACQ_REL) == 0) {
    if (obj->deleter != nullptr) Destroy(obj);
  }
}

/*! Whether a PFAny holds an object pointer. */
inline bool IsObjectIndex(int32_t type_index) noexcept {
  return type_index >= kPFTypeStaticObjectBegin;
}

/*! A None PFAny. */
inline PFAny NoneAny() noexcept {
  PFAny v;
  v.type_index = kPFTypeNone;
  v.zero_padding = 0;
  v.v_int64 = 0;
  return v;
}

/*! A PFAny holding `obj` (the reference is transferred into the PFAny, not added). */
inline PFAny ObjectAny(PFObject* obj) noexcept {
  PFAny v;
  if (obj == nullptr) return NoneAny();
  v.type_index = obj->type_index;
  v.zero_padding = 0;
  v.v_obj = obj;
  return v;
}

/*! Releases an owned PFAny and resets it to None (same as PFAnyRelease). */
inline void ReleaseAny(PFAny* v) {  // not noexcept: see DecRef
  if (IsObjectIndex(v->type_index)) DecRef(v->v_obj);
  *v = NoneAny();
}

/*! Makes an owned copy of a borrowed PFAny; same contract as PFAnyViewToOwned but throws
 *  (std::bad_alloc, or detail::Exception from error.h) instead of returning an error code. */
void ViewToOwned(const PFAny& view, PFAny* out);

/*! A new Opaque object owning `handle`. Throws std::bad_alloc. */
PFObject* NewOpaque(void* handle, void (*free_handle)(void*));

}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_SRC_INTERNAL_OBJECT_H_
