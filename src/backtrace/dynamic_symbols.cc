// Lists a loaded library's exported function symbols from its ELF dynamic section in memory.
#include "backtrace/dynamic_symbols.h"

#if defined(__linux__)
#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstring>
#endif

namespace packedfun {
namespace detail {

#if defined(__linux__)
namespace {

/*! Where the dynamic section points: the loader relocates these entries on most targets, but not
 *  on all, so an address below the load base is still an offset from it. */
uintptr_t Resolve(const link_map* map, ElfW(Addr) value) {
  uintptr_t base = static_cast<uintptr_t>(map->l_addr);
  return value < base ? base + value : static_cast<uintptr_t>(value);
}

/*! The number of symbols in the table: DT_HASH says it; DT_GNU_HASH needs its chains walked to the
 *  end of the last bucket's chain. */
size_t CountSymbols(const uint32_t* sysv_hash, const uint32_t* gnu_hash) {
  if (sysv_hash != nullptr) return sysv_hash[1];
  if (gnu_hash == nullptr) return 0;
  uint32_t nbuckets = gnu_hash[0];
  uint32_t symoffset = gnu_hash[1];
  uint32_t bloom_size = gnu_hash[2];
  const ElfW(Addr)* bloom = reinterpret_cast<const ElfW(Addr)*>(gnu_hash + 4);
  const uint32_t* buckets = reinterpret_cast<const uint32_t*>(bloom + bloom_size);
  const uint32_t* chains = buckets + nbuckets;
  uint32_t last = 0;
  for (uint32_t b = 0; b < nbuckets; ++b) last = buckets[b] > last ? buckets[b] : last;
  if (last < symoffset) return symoffset;
  while ((chains[last - symoffset] & 1u) == 0) ++last;
  return static_cast<size_t>(last) + 1;
}

}  // namespace

bool ListExportedFunctions(void* handle, const std::string& prefix, std::vector<std::string>* out) {
  link_map* map = nullptr;
  if (handle == nullptr || dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr) {
    return false;
  }
  const ElfW(Sym)* symtab = nullptr;
  const char* strtab = nullptr;
  const uint32_t* sysv_hash = nullptr;
  const uint32_t* gnu_hash = nullptr;
  for (const ElfW(Dyn)* d = map->l_ld; d != nullptr && d->d_tag != DT_NULL; ++d) {
    uintptr_t p = Resolve(map, d->d_un.d_ptr);
    if (d->d_tag == DT_SYMTAB) symtab = reinterpret_cast<const ElfW(Sym)*>(p);
    if (d->d_tag == DT_STRTAB) strtab = reinterpret_cast<const char*>(p);
    if (d->d_tag == DT_HASH) sysv_hash = reinterpret_cast<const uint32_t*>(p);
    if (d->d_tag == DT_GNU_HASH) gnu_hash = reinterpret_cast<const uint32_t*>(p);
  }
  if (symtab == nullptr || strtab == nullptr || (sysv_hash == nullptr && gnu_hash == nullptr)) {
    return false;
  }
  size_t count = CountSymbols(sysv_hash, gnu_hash);
  for (size_t i = 0; i < count; ++i) {
    const ElfW(Sym) & sym = symtab[i];
#if UINTPTR_MAX > 0xffffffffu
    unsigned type = ELF64_ST_TYPE(sym.st_info);
#else
    unsigned type = ELF32_ST_TYPE(sym.st_info);
#endif
    if (type != STT_FUNC || sym.st_shndx == SHN_UNDEF) continue;
    const char* name = strtab + sym.st_name;
    if (std::strncmp(name, prefix.c_str(), prefix.size()) != 0) continue;
    out->emplace_back(name + prefix.size());
  }
  return true;
}

#else

bool ListExportedFunctions(void*, const std::string&, std::vector<std::string>*) { return false; }

#endif

}  // namespace detail
}  // namespace packedfun
