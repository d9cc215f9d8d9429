// List entry points of c_api.h: creating and mutating the mutable PFSeqObject (kPFTypeList).
#include <cstring>
#include <string>
#include <vector>

#include "runtime/error.h"
#include "runtime/object.h"
#include "runtime/seq.h"

namespace packedfun {
namespace detail {
namespace {

PFSeqObject* CheckList(PFObject* obj, const char* fn) {
  if (obj == nullptr || obj->type_index != kPFTypeList) {
    Throw("TypeError", std::string(fn) + ": expected a packedfun.List object");
  }
  return As<PFSeqObject>(obj);
}

/*! `index` made non-negative; IndexError when outside [0, size). */
int64_t CheckIndex(const PFSeqObject* seq, int64_t index, const char* fn) {
  int64_t i = index < 0 ? index + seq->size : index;
  if (i < 0 || i >= seq->size) {
    Throw("IndexError", std::string(fn) + ": index " + std::to_string(index) +
                            " out of range for a List of size " + std::to_string(seq->size));
  }
  return i;
}

/*! Makes room for one more element, moving `data` when needed. */
void GrowForOne(PFSeqObject* seq) {
  if (seq->size == seq->capacity) SeqReserve(seq, seq->capacity < 4 ? 4 : seq->capacity * 2);
}

}  // namespace
}  // namespace detail
}  // namespace packedfun

using namespace packedfun::detail;

extern "C" {

PACKEDFUN_API int PFListCreate(const PFAny* items, int64_t num_items, PFAny* out) {
  return Guard([&] {
    if (num_items < 0) return RaiseError("ValueError", "PFListCreate: negative num_items");
    PFSeqObject* list = NewSeq(kPFTypeList, num_items);
    PFAny result = ObjectAny(Header(list));
    try {
      for (int64_t i = 0; i < num_items; ++i) {
        ViewToOwned(items[i], &list->data[i]);
        list->size = i + 1;
      }
    } catch (...) {
      ReleaseAny(&result);
      throw;
    }
    *out = result;
    return 0;
  });
}

PACKEDFUN_API int PFListAppend(PFObject* list, const PFAny* value) {
  return Guard([&] {
    PFSeqObject* seq = CheckList(list, "PFListAppend");
    PFAny owned;
    ViewToOwned(*value, &owned);
    SeqPush(seq, owned);
    return 0;
  });
}

PACKEDFUN_API int PFListSetItem(PFObject* list, int64_t index, const PFAny* value) {
  return Guard([&] {
    PFSeqObject* seq = CheckList(list, "PFListSetItem");
    int64_t i = CheckIndex(seq, index, "PFListSetItem");
    PFAny owned;
    ViewToOwned(*value, &owned);
    PFAny old = seq->data[i];
    seq->data[i] = owned;
    ReleaseAny(&old);
    return 0;
  });
}

PACKEDFUN_API int PFListInsert(PFObject* list, int64_t index, const PFAny* value) {
  return Guard([&] {
    PFSeqObject* seq = CheckList(list, "PFListInsert");
    int64_t i = index < 0 ? index + seq->size : index;
    if (i < 0) i = 0;
    if (i > seq->size) i = seq->size;
    PFAny owned;
    ViewToOwned(*value, &owned);
    try {
      GrowForOne(seq);
    } catch (...) {
      ReleaseAny(&owned);
      throw;
    }
    std::memmove(seq->data + i + 1, seq->data + i, sizeof(PFAny) * (seq->size - i));
    seq->data[i] = owned;
    ++seq->size;
    return 0;
  });
}

PACKEDFUN_API int PFListPop(PFObject* list, int64_t index, PFAny* out) {
  return Guard([&] {
    PFSeqObject* seq = CheckList(list, "PFListPop");
    int64_t i = CheckIndex(seq, index, "PFListPop");
    PFAny removed = seq->data[i];
    std::memmove(seq->data + i, seq->data + i + 1, sizeof(PFAny) * (seq->size - i - 1));
    --seq->size;
    if (out != nullptr) {
      *out = removed;
    } else {
      ReleaseAny(&removed);
    }
    return 0;
  });
}

PACKEDFUN_API int PFListClear(PFObject* list) {
  return Guard([&] {
    PFSeqObject* seq = CheckList(list, "PFListClear");
    // Empty the List first: a released element's deleter may look at (or mutate) it.
    std::vector<PFAny> old(seq->data, seq->data + seq->size);
    seq->size = 0;
    for (PFAny& v : old) ReleaseAny(&v);
    return 0;
  });
}

}  // extern "C"
