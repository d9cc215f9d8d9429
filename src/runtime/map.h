// Private runtime helpers for hash-map objects (kPFTypeMap and kPFTypeDict).
#ifndef PACKEDFUN_SRC_INTERNAL_MAP_H_
#define PACKEDFUN_SRC_INTERNAL_MAP_H_

#include <packedfun/c_api.h>

#include <cstdint>

namespace packedfun {
namespace detail {

/*! A new empty map of `type_index` (kPFTypeMap or kPFTypeDict), ref_count 1. Throws bad_alloc. */
PFObject* NewMap(int32_t type_index);

/*! Whether `obj` is a Map or a Dict. */
bool IsMapObject(const PFObject* obj) noexcept;

/*! Sizes the table of the empty `map` for `num_items` entries, so that filling it does not rehash
 *  log(n) times on the way. Throws bad_alloc. */
void MapReserve(PFObject* map, int64_t num_items);

/*! Inserts or replaces `key` -> `value` (both borrowed, stored as owned copies). Throws. */
void MapSet(PFObject* map, const PFAny& key, const PFAny& value);

/*! The stored value for `key` (borrowed view into the map), or NULL when absent. Throws bad_alloc
 *  only when this first lookup builds the index of a map made by PFMapCreateDistinct. */
const PFAny* MapFind(PFObject* map, const PFAny& key);

/*! Removes `key`; returns whether it was present. Throws as MapFind. */
bool MapErase(PFObject* map, const PFAny& key);

/*! Removes every entry. */
void MapClear(PFObject* map) noexcept;

/*! Number of live entries. */
int64_t MapCount(PFObject* map) noexcept;

/*! Calls `visit(obj, ctx)` for each key and value of `map` that is an object (borrowed), in
 *  insertion order; stops at and returns the first non-zero result. Not noexcept: a visitor
 *  that runs Python may see its thread ended by a forced unwind at interpreter exit. `visit` must
 * not mutate `map`.
 */
int MapVisitObjects(PFObject* map, int (*visit)(PFObject* obj, void* ctx), void* ctx);
/*! The next live entry at or after `*cursor` (an index into insertion order): its key and value
 *  (borrowed views into the map) and `*cursor` moved past it; false at the end. */
bool MapEntryAt(PFObject* map, int64_t* cursor, const PFAny** key, const PFAny** value) noexcept;

/*! A new Array [k0, v0, k1, v1, ...] in insertion order. Throws bad_alloc. */
PFObject* MapItemsArray(PFObject* map);

}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_SRC_INTERNAL_MAP_H_
