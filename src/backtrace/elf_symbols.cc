// Reads function symbols from ELF .symtab sections so backtraces name hidden and static functions.
#include "backtrace/elf_symbols.h"

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
  ElfFileInfo info;
};

bool InFile(size_t file_size, uint64_t offset, uint64_t size) {
  return offset <= file_size && size <= file_size - offset;
}

bool StartsWith(const char* s, size_t max, const char* prefix) {
  size_t n = std::strlen(prefix);
  return n <= max && std::strncmp(s, prefix, n) == 0;
}

/*! Fills table->info from the .dynamic (DT_NEEDED) and .dynsym (PyInit_*) sections. */
void ReadDynamic(const char* base, size_t file_size, const Elf64_Shdr* sh, uint32_t count,
                 SymbolTable* table) {
  for (uint32_t i = 0; i < count; ++i) {
    if ((sh[i].sh_type != SHT_DYNAMIC && sh[i].sh_type != SHT_DYNSYM) || sh[i].sh_link >= count) {
      continue;
    }
    const Elf64_Shdr& strtab = sh[sh[i].sh_link];
    if (!InFile(file_size, sh[i].sh_offset, sh[i].sh_size) ||
        !InFile(file_size, strtab.sh_offset, strtab.sh_size) || strtab.sh_size == 0) {
      continue;
    }
    const char* names = base + strtab.sh_offset;
    if (sh[i].sh_type == SHT_DYNAMIC) {
      auto* dyn = reinterpret_cast<const Elf64_Dyn*>(base + sh[i].sh_offset);
      for (size_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Dyn) && dyn[k].d_tag != DT_NULL; ++k) {
        uint64_t at = dyn[k].d_un.d_val;
        if (dyn[k].d_tag != DT_NEEDED || at >= strtab.sh_size) continue;
        if (StartsWith(names + at, strtab.sh_size - at, "libpackedfun.so")) {
          table->info.needs_runtime = true;
        }
      }
    } else {
      auto* syms = reinterpret_cast<const Elf64_Sym*>(base + sh[i].sh_offset);
      for (size_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym); ++k) {
        uint32_t at = syms[k].st_name;
        if (syms[k].st_shndx == SHN_UNDEF || at >= strtab.sh_size) continue;
        if (StartsWith(names + at, strtab.sh_size - at, "PyInit_")) {
          table->info.python_extension = true;
        }
      }
    }
  }
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
  ReadDynamic(base, file_size, sh, eh->e_shnum, table);
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

std::mutex g_tables_mu;

/*! The table of `path`, loaded on first use; call with g_tables_mu held. Tables live as long as
 *  the process (a library's file may be unloaded, but its frames may still be printed). */
const SymbolTable& TableOf(const std::string& path) {
  static auto* tables = new std::map<std::string, std::unique_ptr<SymbolTable>>();
  auto it = tables->find(path);
  if (it == tables->end()) it = tables->emplace(path, LoadTable(path)).first;
  return *it->second;
}

}  // namespace

ElfFileInfo GetElfFileInfo(const std::string& path) {
  std::lock_guard<std::mutex> lock(g_tables_mu);
  return TableOf(path).info;
}

bool LookupElfSymbol(const std::string& path, uintptr_t vaddr, std::string* name,
                     uintptr_t* offset) {
  std::lock_guard<std::mutex> lock(g_tables_mu);
  const std::vector<FuncSymbol>& funcs = TableOf(path).funcs;
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
