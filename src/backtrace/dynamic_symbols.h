// Private runtime helper: the function symbols a loaded shared library exports, from its memory.
#ifndef PACKEDFUN_SRC_INTERNAL_DYNAMIC_SYMBOLS_H_
#define PACKEDFUN_SRC_INTERNAL_DYNAMIC_SYMBOLS_H_

#include <string>
#include <vector>

namespace packedfun {
namespace detail {

/*! Appends to `*out` the names, with `prefix` removed, of the defined function symbols in the
 *  dynamic symbol table of the library behind `handle` (a dlopen handle) that start with `prefix`.
 *  Reads the loaded image (no file access). Returns false when the table cannot be read (a
 *  platform without ELF dynamic sections); `*out` is then unchanged. */
bool ListExportedFunctions(void* handle, const std::string& prefix, std::vector<std::string>* out);

}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_SRC_INTERNAL_DYNAMIC_SYMBOLS_H_
