// A shared library's file checked before dlopen maps it: a truncated or corrupt ELF file whose
// segments reach past its end would make the loader touch pages no file backs (SIGBUS).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "runtime/error.h"
#include "runtime/library_file.h"

#if defined(__linux__)
#include <elf.h>
#endif

namespace packedfun {
namespace detail {
namespace {

#if defined(__linux__)
/*! Reads exactly `size` bytes at `offset`; false on a short read or an error. */
bool ReadAt(int fd, uint64_t offset, void* out, size_t size) {
  char* to = static_cast<char*>(out);
  while (size > 0) {
    ssize_t got = pread(fd, to, size, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    to += got;
    offset += static_cast<uint64_t>(got);
    size -= static_cast<size_t>(got);
  }
  return true;
}

/*! Whether [offset, offset + size) lies within a file of `file_size` bytes (no overflow). */
bool Within(uint64_t offset, uint64_t size, uint64_t file_size) {
  return offset <= file_size && size <= file_size - offset;
}

/*! Why the 64-bit ELF file `fd` of `file_size` bytes cannot be mapped safely, or "" when it can:
 *  its program header table and every segment's file bytes lie within the file. */
std::string Elf64Problem(int fd, uint64_t file_size) {
  Elf64_Ehdr eh;
  if (!ReadAt(fd, 0, &eh, sizeof(eh))) return "truncated ELF header";
  if (eh.e_phentsize != sizeof(Elf64_Phdr)) return "bad ELF program header size";
  uint64_t table = static_cast<uint64_t>(eh.e_phnum) * sizeof(Elf64_Phdr);
  if (!Within(eh.e_phoff, table, file_size)) return "ELF program headers past the end of the file";
  if (eh.e_shnum != 0 &&
      !Within(eh.e_shoff, static_cast<uint64_t>(eh.e_shnum) * eh.e_shentsize, file_size)) {
    return "ELF section headers past the end of the file";
  }
  for (uint16_t i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    if (!ReadAt(fd, eh.e_phoff + uint64_t{i} * sizeof(ph), &ph, sizeof(ph))) {
      return "truncated ELF program header";
    }
    if (ph.p_type == PT_NULL) continue;
    if (!Within(ph.p_offset, ph.p_filesz, file_size)) {
      return "ELF segment " + std::to_string(i) +
             " past the end of the file (truncated: " + std::to_string(file_size) +
             " bytes, the segment ends at " + std::to_string(ph.p_offset + ph.p_filesz) + ")";
    }
  }
  return "";
}
#endif

}  // namespace

void CheckLibraryFile(const std::string& path) {
#if defined(__linux__)
  if (path.find('/') == std::string::npos) return;  // searched by the loader: not a file here
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;  // dlopen reports it, with its own words
  struct stat st;
  std::string problem;
  unsigned char ident[EI_NIDENT];
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ReadAt(fd, 0, ident, sizeof(ident)) &&
      std::memcmp(ident, ELFMAG, SELFMAG) == 0) {
    uint64_t size = static_cast<uint64_t>(st.st_size);
    if (ident[EI_CLASS] == ELFCLASS64) {
      problem = Elf64Problem(fd, size);
    } else if (ident[EI_CLASS] != ELFCLASS32) {
      problem = "unknown ELF class";
    }
  }
  close(fd);
  if (!problem.empty()) {
    Throw("OSError", "cannot load library '" + path + "': " + problem);
  }
#else
  (void)path;
#endif
}

}  // namespace detail
}  // namespace packedfun
