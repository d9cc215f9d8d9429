// Array, List and Shape: PFArrayCreate, PFShapeCreate and the sequence helpers of the runtime.
#include <cstdlib>
#include <cstring>
#include <new>

#include "runtime/error.h"
#include "runtime/object.h"
#include "runtime/seq.h"
#include "runtime/string.h"

namespace packedfun {
namespace detail {
namespace {

PFAny* InlineSlots(PFSeqObject* seq) noexcept { return reinterpret_cast<PFAny*>(seq + 1); }

/*! A value owned as it is (None .. Device): no reference, nothing borrowed. */
inline bool IsPlainPod(int32_t type_index) noexcept {
  return static_cast<uint32_t>(type_index) < static_cast<uint32_t>(kPFTypeDLTensorPtr);
}

/*! Releases the objects among `n` cells about to be freed (unreachable: nothing to reset). Type
 *  indices are never negative, so four cells hold no object exactly when their OR is below
 *  kPFTypeStaticObjectBegin: one test per four cells of an Array of numbers or short strings. */
void ReleaseCells(PFAny* cells, int64_t n) noexcept {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const PFAny* c = cells + i;
    if ((c[0].type_index | c[1].type_index | c[2].type_index | c[3].type_index) <
        kPFTypeStaticObjectBegin) {
      continue;
    }
    for (int k = 0; k < 4; ++k) {
      if (IsObjectIndex(c[k].type_index)) DecRef(c[k].v_obj);
    }
  }
  for (; i < n; ++i) {
    if (IsObjectIndex(cells[i].type_index)) DecRef(cells[i].v_obj);
  }
}

/*! One dead Array's or List's block (its slots inline) kept for the next one made on the same
 *  thread: an `Array<T>` parameter filled from a Python list makes and drops one per call. Only a
 *  block whose count reached 0 and whose cells are released comes here; the slot is the thread's
 *  own (no lock) and its block is freed when the thread ends. Blocks above kSpareSeqMaxSlots are
 *  freed, and a block is reused only for a size it does not oversize by more than twice (plus 4).
 *  Trivial (constant-initialized, no destructor): the runtime is loaded with dlopen, where each
 *  use of a thread_local is a call, and one with a destructor costs a second call for its guard;
 *  SpareSeqReleaser frees the block at thread exit, registered by the first block kept. */
struct SpareSeq {
  PFSeqObject* block;
  bool armed;   // SpareSeqReleaser is registered for this thread
  bool closed;  // the thread is ending: sequences dying after this are freed
};
thread_local SpareSeq spare_seq{};
constexpr int64_t kSpareSeqMaxSlots = 256;

/*! This thread's slot, its address looked up once: opaque to the compiler, which otherwise looks
 *  it up again (another TLS descriptor call) for a later store instead of keeping the pointer. */
inline SpareSeq* ThisThreadSpareSeq() noexcept {
  SpareSeq* spare = &spare_seq;
  __asm__("" : "+r"(spare));
  return spare;
}

struct SpareSeqReleaser {
  bool armed = false;
  ~SpareSeqReleaser() {
    if (!armed) return;
    SpareSeq* spare = &spare_seq;
    std::free(spare->block);
    spare->block = nullptr;
    spare->closed = true;
  }
};
thread_local SpareSeqReleaser spare_seq_releaser;

/*! Registers the thread-exit release of the spare block (once per thread). */
__attribute__((noinline, cold)) void ArmSpareSeq(SpareSeq* spare) noexcept {
  spare_seq_releaser.armed = true;
  spare->armed = true;
}

void DeleteSeq(PFObject* obj) noexcept {
  auto* seq = As<PFSeqObject>(obj);
  if ((obj->flags & kSeqFlagPlainPods) == 0) ReleaseCells(seq->data, seq->size);
  if (seq->data == InlineSlots(seq) && seq->capacity <= kSpareSeqMaxSlots) {
    SpareSeq* spare = ThisThreadSpareSeq();
    if (spare->block == nullptr && !spare->closed) {
      if (!spare->armed) ArmSpareSeq(spare);
      spare->block = seq;
      return;
    }
  } else if (seq->data != InlineSlots(seq)) {
    std::free(seq->data);
  }
  std::free(seq);
}

/*! The spare block if it fits `capacity` slots, else NULL (a spare of another size is freed: the
 *  sizes now being made are the ones worth keeping). */
PFSeqObject* TakeSpareSeq(int64_t capacity) noexcept {
  SpareSeq* spare = ThisThreadSpareSeq();
  PFSeqObject* seq = spare->block;
  if (seq == nullptr) return nullptr;
  spare->block = nullptr;
  if (seq->capacity >= capacity && seq->capacity <= 2 * capacity + 4) return seq;
  std::free(seq);
  return nullptr;
}

void FreeShape(PFObject* obj) noexcept { std::free(obj); }

}  // namespace

PFSeqObject* NewSeq(int32_t type_index, int64_t capacity) {
  if (capacity < 0 || static_cast<uint64_t>(capacity) > (SIZE_MAX >> 5)) throw std::bad_alloc();
  PFSeqObject* seq = TakeSpareSeq(capacity);
  if (seq == nullptr) {
    void* mem = std::malloc(sizeof(PFSeqObject) + sizeof(PFAny) * static_cast<size_t>(capacity));
    if (mem == nullptr) throw std::bad_alloc();
    seq = static_cast<PFSeqObject*>(mem);
    seq->capacity = capacity;
  }
  InitHeader(&seq->header, type_index, &DeleteSeq);
  seq->data = InlineSlots(seq);
  seq->size = 0;
  return seq;
}

PFAny MakeStringArray(const std::vector<std::string>& texts) {
  PFSeqObject* arr = NewSeq(kPFTypeArray, static_cast<int64_t>(texts.size()));
  PFAny result = ObjectAny(Header(arr));
  try {
    for (const std::string& text : texts) arr->data[arr->size++] = MakeStringAny(text);
  } catch (...) {
    ReleaseAny(&result);
    throw;
  }
  return result;
}

void SeqReserve(PFSeqObject* seq, int64_t capacity) {
  if (capacity <= seq->capacity) return;
  if (static_cast<uint64_t>(capacity) > (SIZE_MAX >> 5)) throw std::bad_alloc();
  auto* data = static_cast<PFAny*>(std::malloc(sizeof(PFAny) * static_cast<size_t>(capacity)));
  if (data == nullptr) throw std::bad_alloc();
  if (seq->size > 0) std::memcpy(data, seq->data, sizeof(PFAny) * static_cast<size_t>(seq->size));
  if (seq->data != InlineSlots(seq)) std::free(seq->data);
  seq->data = data;
  seq->capacity = capacity;
}

void SeqPush(PFSeqObject* seq, PFAny value) {
  if (seq->size == seq->capacity) {
    try {
      SeqReserve(seq, seq->capacity < 4 ? 4 : seq->capacity * 2);
    } catch (...) {
      ReleaseAny(&value);
      throw;
    }
  }
  if (IsObjectIndex(value.type_index)) seq->header.flags &= ~kSeqFlagPlainPods;
  seq->data[seq->size++] = value;
}

PFObject* NewShape(const int64_t* dims, int64_t ndim) {
  if (ndim < 0 || static_cast<uint64_t>(ndim) > (SIZE_MAX >> 4)) throw std::bad_alloc();
  size_t bytes = sizeof(int64_t) * static_cast<size_t>(ndim);
  void* mem = std::malloc(sizeof(PFShapeObject) + bytes);
  if (mem == nullptr) throw std::bad_alloc();
  auto* shape = static_cast<PFShapeObject*>(mem);
  InitHeader(&shape->header, kPFTypeShape, &FreeShape);
  auto* data = reinterpret_cast<int64_t*>(shape + 1);
  if (bytes != 0) std::memcpy(data, dims, bytes);
  shape->data = data;
  shape->size = ndim;
  return &shape->header;
}

}  // namespace detail
}  // namespace packedfun

using namespace packedfun::detail;

extern "C" {

PACKEDFUN_API int PFArrayCreate(const PFAny* items, int64_t num_items, PFAny* out) {
  return Guard([&] {
    if (num_items < 0) return RaiseError("ValueError", "PFArrayCreate: negative num_items");
    PFSeqObject* arr = NewSeq(kPFTypeArray, num_items);
    PFAny result = ObjectAny(Header(arr));
    if (items == nullptr) {  // room for the creator to append to in place (size 0)
      *out = result;
      return 0;
    }
    bool plain = true;
    try {
      for (int64_t i = 0; i < num_items;) {
        // A run of plain PODs (the common case: ints, floats) is copied in one go; only views
        // (strings, tensors) and objects need a call each.
        int64_t end = i;
        while (end < num_items && IsPlainPod(items[end].type_index)) ++end;
        if (end > i) {
          std::memcpy(arr->data + i, items + i, sizeof(PFAny) * static_cast<size_t>(end - i));
          arr->size = i = end;
          continue;
        }
        ViewToOwned(items[i], &arr->data[i]);
        arr->size = ++i;
        plain = false;
      }
      if (plain) arr->header.flags |= kSeqFlagPlainPods;
    } catch (...) {
      ReleaseAny(&result);
      throw;
    }
    *out = result;
    return 0;
  });
}

PACKEDFUN_API int PFShapeCreate(const int64_t* dims, int64_t ndim, PFObject** out) {
  return Guard([&] {
    if (ndim < 0) return RaiseError("ValueError", "PFShapeCreate: negative ndim");
    *out = NewShape(dims, ndim);
    return 0;
  });
}

}  // extern "C"
