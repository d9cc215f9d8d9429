// Private header of the runtime: checks of a shared library's file before it is loaded.
#ifndef PACKEDFUN_SRC_RUNTIME_LIBRARY_FILE_H_
#define PACKEDFUN_SRC_RUNTIME_LIBRARY_FILE_H_

#include <string>

namespace packedfun {
namespace detail {

/*! Throws OSError ("cannot load library '<path>': ...", as the loader's errors read) when `path`
 *  is an ELF file that dlopen could not map without touching bytes past its end (a truncated copy
 *  of a library: SIGBUS in the loader). Files that are not ELF, and bare names the loader searches
 *  for, are left to dlopen. */
void CheckLibraryFile(const std::string& path);

}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_SRC_RUNTIME_LIBRARY_FILE_H_
