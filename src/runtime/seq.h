// Private runtime helpers for sequence objects (Array, List) and shapes.
#ifndef PACKEDFUN_SRC_INTERNAL_SEQ_H_
#define PACKEDFUN_SRC_INTERNAL_SEQ_H_

#include <packedfun/c_api.h>

#include <string>
#include <vector>

namespace packedfun {
namespace detail {

/*! Runtime-private bit of PFObject.flags on an Array that PFArrayCreate filled with plain PODs
 *  only (Arrays are never mutated after creation): its deleter skips the per-element release. */
constexpr uint32_t kSeqFlagPlainPods = 1u << 16;

/*! A new empty sequence (kPFTypeArray or kPFTypeList) with room for `capacity` elements stored in
 *  the same allocation; fill `data[size++]` with owned values. ref_count 1. Throws bad_alloc. */
PFSeqObject* NewSeq(int32_t type_index, int64_t capacity);

/*! Grows the element storage of `seq` to at least `capacity` (moving `data`). Throws bad_alloc. */
void SeqReserve(PFSeqObject* seq, int64_t capacity);

/*! Appends `value` (stolen, owned) to `seq`, growing it when full. Throws bad_alloc (and then
 *  releases `value`). */
void SeqPush(PFSeqObject* seq, PFAny value);

/*! A new Array (owned PFAny) of the strings `texts`, in order. Throws bad_alloc. */
PFAny MakeStringArray(const std::vector<std::string>& texts);

/*! A new Shape copying `dims`. Throws bad_alloc. */
PFObject* NewShape(const int64_t* dims, int64_t ndim);

}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_SRC_INTERNAL_SEQ_H_
