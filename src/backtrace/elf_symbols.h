// Private runtime helper: function names from ELF symbol tables, for frames dladdr cannot name.
#ifndef PACKEDFUN_SRC_INTERNAL_ELF_SYMBOLS_H_
#define PACKEDFUN_SRC_INTERNAL_ELF_SYMBOLS_H_

#include <cstdint>
#include <string>

namespace packedfun {
namespace detail {

/*! What a backtrace needs to know of a loaded file besides its symbols. */
struct ElfFileInfo {
  bool needs_runtime = false;     // DT_NEEDED names libpackedfun.so: an extension or a host
  bool python_extension = false;  // defines PyInit_*: a CPython extension module (a binding)
};

/*! The ElfFileInfo of the ELF file at `path` (all false when it cannot be read); cached. */
ElfFileInfo GetElfFileInfo(const std::string& path);

/*! Finds the function symbol containing `vaddr` (an address relative to the file's load bias) in
 *  the .symtab of the ELF file at `path`. On success sets `*name` (mangled) and `*offset` (from
 *  the symbol's start) and returns true. Files are read once and cached; thread-safe. */
bool LookupElfSymbol(const std::string& path, uintptr_t vaddr, std::string* name,
                     uintptr_t* offset);

}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_SRC_INTERNAL_ELF_SYMBOLS_H_
