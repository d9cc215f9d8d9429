// Private header of the type table: the check the module loader runs around a library's static
// initialisation, so that a library redefining an object type fails to load instead of leaving
// the first definition in place with a line on stderr.
#ifndef PACKEDFUN_SRC_RUNTIME_TYPE_H_
#define PACKEDFUN_SRC_RUNTIME_TYPE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace packedfun {
namespace detail {

/*!
 * Checks the reflection a library registers while it is being loaded (one per thread, held
 * around dlopen). A type key is defined once per process: when the library registers fields or
 * methods of a type that already had some before the load (a changed library loaded again, a
 * notebook cell rebuilt), an identical field or an identical method (same name, doc, flags and
 * signature record) is accepted as the same definition and anything else is recorded, not
 * applied. The loader then raises Conflict(). Registration outside a load is not affected.
 */
class TypeRedefinitionCheck {
 public:
  TypeRedefinitionCheck() noexcept;
  ~TypeRedefinitionCheck();
  TypeRedefinitionCheck(const TypeRedefinitionCheck&) = delete;
  TypeRedefinitionCheck& operator=(const TypeRedefinitionCheck&) = delete;

  /*! "" when the library redefined nothing; else the first difference, e.g.
   *  "object type 'mylib.Point' is already defined in this process (field 'z' is new)". */
  std::string Conflict() const;

  /*! The type's field and method counts when this load first touched it. */
  struct Baseline {
    size_t fields = 0;
    size_t methods = 0;
    size_t seen_fields = 0;     // fields this load registered
    size_t matched_fields = 0;  // of them, identical to an earlier one
  };
  std::unordered_map<int32_t, Baseline> touched;
  std::string conflict;

 private:
  TypeRedefinitionCheck* outer_;
};

/*! Another FFI's type table (the tvm-ffi bridge, when built, registers it at static
 *  initialisation): asked for a type key packedfun's own table lacks, it may mirror its type into
 *  packedfun's table (PFTypeRegister and friends) and give the new index. */
struct ForeignTypes {
  /*! The packedfun index of the foreign type `key`, registered on first use; -1 when the foreign
   *  runtime is not in the process or has no such type. Called without the table's lock; may
   *  throw. */
  int32_t (*find)(std::string_view key);
  /*! Where an object of a foreign type (a proxy the foreign FFI made) keeps its binding reference
   *  (PFObjectGetBindingRef), or NULL when `obj` is not such an object. Never throws. */
  std::atomic<void*>* (*binding_ref)(PFObject* obj);
};

/*! The binding reference slot of `obj` when it is a foreign FFI's object (ForeignTypes), or NULL.
 */
std::atomic<void*>* ForeignBindingRef(PFObject* obj) noexcept;

/*!
 * Registers a dynamic type (a new index below `parent_index`) whose key names it in its type info
 * but not in the key lookup (PFTypeKeyToIndex, PFTypeRegister of that key): a foreign FFI's type
 * whose key packedfun's own table already holds, mirrored beside it rather than refused. Throws
 * TypeError when the parent is no object type, RuntimeError when the table is full.
 */
int32_t RegisterUnkeyed(std::string_view key, int32_t parent_index);

/*! Registers the one foreign type table (static storage); called at static initialisation. */
void SetForeignTypes(const ForeignTypes* types) noexcept;

/*!
 * Frees the type keys of `indices` (dynamic types a binding just registered or reserved and whose
 * definition then failed), so that a corrected definition can take them: each key stops naming
 * its index, and the entry stays, an index being never reused (a pointer to its PFTypeInfo stays
 * valid). Throws ValueError, freeing nothing, when an index is not a dynamic type, or when a type
 * outside `indices` derives from one of them or declares a field of one of them.
 */
void ReleaseTypeKeys(const std::vector<int32_t>& indices);

}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_SRC_RUNTIME_TYPE_H_
