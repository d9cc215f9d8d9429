// Reads function symbols from ELF .symtab sections so backtraces name hidden and static functions.
#include "internal/elf_symbols.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace packedfun {
namespace detail {
namespace {

struct FuncSymbol {
  uintptr_t start;
  uintptr_t size;
  const char* name;  // points into the mapped file
};

/*! The function symbols of one file, sorted by start; the file stays mapped for the process. */
struct SymbolTable {
  std::vector<FuncSymbol> funcs;
};

bool InFile(size_t file_size, uint64_t offset, uint64_t size) {
  return offset <= file_size && size <= file_size - offset;
}

void ReadSymbols(const char* base, size_t file_size, SymbolTable* table) {
  if (file_size < sizeof(Elf64_Ehdr) || std::memcmp(base, ELFMAG, SELFMAG) != 0 ||
      base[EI_CLASS] != ELFCLASS64) {
    return;
  }
  auto* eh = reinterpret_cast<const Elf64_Ehdr*>(base);
  if (eh->e_shentsize != sizeof(Elf64_Shdr) ||
      !InFile(file_size, eh->e_shoff, uint64_t{eh->e_shnum} * sizeof(Elf64_Shdr))) {
    return;
  }
  auto* sh = reinterpret_cast<const Elf64_Shdr*>(base + eh->e_shoff);
  for (int i = 0; i < eh->e_shnum; ++i) {
    if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum) continue;
    const Elf64_Shdr& strtab = sh[sh[i].sh_link];
    if (!InFile(file_size, sh[i].sh_offset, sh[i].sh_size) ||
        !InFile(file_size, strtab.sh_offset, strtab.sh_size) || strtab.sh_size == 0) {
      continue;
    }
    auto* syms = reinterpret_cast<const Elf64_Sym*>(base + sh[i].sh_offset);
    size_t count = sh[i].sh_size / sizeof(Elf64_Sym);
    const char* names = base + strtab.sh_offset;
    for (size_t k = 0; k < count; ++k) {
      const Elf64_Sym& s = syms[k];
      if (ELF64_ST_TYPE(s.st_info) != STT_FUNC || s.st_value == 0) continue;
      if (s.st_name >= strtab.sh_size || names[strtab.sh_size - 1] != '\0') continue;
      table->funcs.push_back(FuncSymbol{s.st_value, s.st_size, names + s.st_name});
    }
  }
  std::sort(table->funcs.begin(), table->funcs.end(),
            [](const FuncSymbol& a, const FuncSymbol& b) { return a.start < b.start; });
}

std::unique_ptr<SymbolTable> LoadTable(const std::string& path) {
  auto table = std::make_unique<SymbolTable>();
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return table;
  struct stat st;
  if (fstat(fd, &st) == 0 && st.st_size > 0) {
    size_t size = static_cast<size_t>(st.st_size);
    void* mem = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (mem != MAP_FAILED) {
      ReadSymbols(static_cast<const char*>(mem), size, table.get());
      if (table->funcs.empty()) munmap(mem, size);  // names point into the mapping otherwise
    }
  }
  close(fd);
  return table;
}

}  // namespace

bool LookupElfSymbol(const std::string& path, uintptr_t vaddr, std::string* name,
                     uintptr_t* offset) {
  static std::mutex mu;
  static auto* tables = new std::map<std::string, std::unique_ptr<SymbolTable>>();
  std::lock_guard<std::mutex> lock(mu);
  auto it = tables->find(path);
  if (it == tables->end()) it = tables->emplace(path, LoadTable(path)).first;
  const std::vector<FuncSymbol>& funcs = it->second->funcs;
  auto pos = std::upper_bound(funcs.begin(), funcs.end(), vaddr,
                              [](uintptr_t a, const FuncSymbol& s) { return a < s.start; });
  if (pos == funcs.begin()) return false;
  --pos;
  if (vaddr >= pos->start + std::max<uintptr_t>(pos->size, 1)) return false;
  name->assign(pos->name);
  *offset = vaddr - pos->start;
  return true;
}

}  // namespace detail
}  // namespace packedfun
