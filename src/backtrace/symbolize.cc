// Turns captured return addresses into short frames of the user's code, only when asked.
//
// A captured stack holds, innermost first: the user's code (its functions, and the header code of
// packedfun inlined into it: typed trampolines, argument conversion, Error's constructor), the
// runtime's dispatch, then whoever called in: a language binding (a CPython extension module such
// as packedfun._core), ctypes' libffi, the interpreter, libc. Only the first group helps the
// reader. So a frame is kept when its file links libpackedfun.so (an extension library or a C++
// host program) and its function is not packedfun's or the standard library's; frames of the
// runtime itself are skipped; the first frame of a binding, or of a file that does not link the
// runtime, ends the backtrace: from there on it is the caller's stack, which the caller's own
// traceback already shows.
#include <cxxabi.h>
#include <dlfcn.h>
#include <link.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backtrace/backtrace.h"
#include "backtrace/elf_symbols.h"

namespace packedfun {
namespace detail {
namespace {

std::string Demangle(const char* name) {
  int status = 0;
  char* out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) return name;
  std::string text(out);
  std::free(out);
  return text;
}

void ReplaceAll(std::string* text, const char* from, const char* to) {
  size_t n = std::strlen(from), m = std::strlen(to);
  for (size_t at = text->find(from); at != std::string::npos; at = text->find(from, at + m)) {
    text->replace(at, n, to);
  }
}

/*! Removes a trailing balanced "(...)" group (a parameter list) and what follows it. */
void StripParameters(std::string* name) {
  if (name->empty() || name->back() != ')') return;
  int depth = 0;
  for (size_t i = name->size(); i-- > 0;) {
    char c = (*name)[i];
    if (c == ')') ++depth;
    if (c == '(' && --depth == 0) {
      // "operator()" keeps its own parentheses: only strip when something precedes them.
      if (i > 0) name->resize(i);
      return;
    }
  }
}

/*! Removes a leading return type ("int ns::f<T>" -> "ns::f<T>"): text up to the last space that
 *  lies outside every <...> and (...) group. */
void StripReturnType(std::string* name) {
  int depth = 0;
  size_t cut = std::string::npos;
  for (size_t i = 0; i < name->size(); ++i) {
    char c = (*name)[i];
    if (c == '<' || c == '(') ++depth;
    if ((c == '>' || c == ')') && depth > 0) --depth;
    if (c == ' ' && depth == 0) cut = i;
  }
  // "operator<" and friends contain unbalanced brackets; never cut them to nothing.
  if (cut != std::string::npos && cut + 1 < name->size()) name->erase(0, cut + 1);
}

}  // namespace

std::string ShortFunctionName(const char* mangled) {
  std::string name = Demangle(mangled);
  for (size_t at = name.find(" [clone "); at != std::string::npos; at = name.find(" [clone ")) {
    size_t end = name.find(']', at);
    name.erase(at, end == std::string::npos ? std::string::npos : end + 1 - at);
  }
  for (const char* q : {" const", " volatile", " &&", " &"}) {
    size_t n = std::strlen(q);
    if (name.size() > n && name.compare(name.size() - n, n, q) == 0) name.resize(name.size() - n);
  }
  StripParameters(&name);
  StripReturnType(&name);
  ReplaceAll(&name,
             "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >",
             "std::string");
  ReplaceAll(&name, "std::basic_string<char, std::char_traits<char>, std::allocator<char> >",
             "std::string");
  ReplaceAll(&name, "std::basic_string_view<char, std::char_traits<char> >", "std::string_view");
  ReplaceAll(&name, "std::__cxx11::", "std::");
  ReplaceAll(&name, "(anonymous namespace)::", "");
  return name;
}

namespace {

bool IsMachinery(const std::string& name) {
  auto starts = [&](const char* p) { return name.compare(0, std::strlen(p), p) == 0; };
  if (starts("packedfun::testing::")) return false;  // the testing library is user code here
  return starts("packedfun::") || starts("__packedfun_") || starts("std::") ||
         starts("__gnu_cxx::") || starts("__cxa") || starts("_Unwind");
}

/*! The runtime's own load base, to recognise its frames anywhere in the stack. */
const void* RuntimeBase() {
  static const void* base = [] {
    Dl_info info;
    std::memset(&info, 0, sizeof(info));
    dladdr(reinterpret_cast<void*>(&ShortFunctionName), &info);
    return info.dli_fbase;
  }();
  return base;
}

enum class Verdict { kKeep, kSkip, kStop };

struct Frame {
  std::string file;  // the ELF file holding the code
  uintptr_t vaddr;   // the call site's address inside that file (as its DWARF data counts)
  std::string name;  // short function name, "??" when unknown
};

/*! The mangled name of the function containing `addr`: the dynamic symbol table first, then the
 *  file's full symbol table (hidden and static functions). Empty when unknown. */
std::string MangledName(const Dl_info& info, const std::string& file, uintptr_t vaddr) {
  if (info.dli_sname != nullptr) return info.dli_sname;
  std::string name;
  uintptr_t off = 0;
  if (LookupElfSymbol(file, vaddr, &name, &off)) return name;
  return std::string();
}

/*! What the file holding `addr` makes of its frame: kStop when it ends a backtrace (see the file
 *  comment), kSkip for the runtime's own code, else kKeep (the function's name decides later). */
Verdict ClassifyFile(uintptr_t addr, Dl_info* info, struct link_map** map, std::string* file) {
  std::memset(info, 0, sizeof(*info));
  *map = nullptr;
  if (dladdr1(reinterpret_cast<void*>(addr), info, reinterpret_cast<void**>(map),
              RTLD_DL_LINKMAP) == 0 ||
      *map == nullptr) {
    return Verdict::kStop;  // JIT code or a stack we cannot read: the caller's business
  }
  if (info->dli_fbase == RuntimeBase()) return Verdict::kSkip;
  *file =
      (*map)->l_name != nullptr && (*map)->l_name[0] != '\0' ? (*map)->l_name : "/proc/self/exe";
  ElfFileInfo elf = GetElfFileInfo(*file);
  return !elf.needs_runtime || elf.python_extension ? Verdict::kStop : Verdict::kKeep;
}

Verdict Classify(void* pc, Frame* frame) {
  // The return address points after the call; the byte before it is inside the call.
  uintptr_t addr = reinterpret_cast<uintptr_t>(pc) - 1;
  Dl_info info;
  struct link_map* map;
  Verdict verdict = ClassifyFile(addr, &info, &map, &frame->file);
  if (verdict != Verdict::kKeep) return verdict;
  frame->vaddr = addr - map->l_addr;
  std::string mangled = MangledName(info, frame->file, frame->vaddr);
  frame->name = mangled.empty() ? "??" : ShortFunctionName(mangled.c_str());
  return IsMachinery(frame->name) ? Verdict::kSkip : Verdict::kKeep;
}

}  // namespace

bool EndsBacktrace(void* pc) noexcept {
  try {
    Dl_info info;
    struct link_map* map;
    std::string file;
    return ClassifyFile(reinterpret_cast<uintptr_t>(pc) - 1, &info, &map, &file) == Verdict::kStop;
  } catch (...) {
    return false;  // out of memory reading the file: capture on, symbolization decides later
  }
}

std::string SymbolizeBacktrace(void* const* pcs, int count) {
  std::vector<Frame> kept;
  for (int i = 0; i < count; ++i) {
    Frame frame;
    Verdict verdict = Classify(pcs[i], &frame);
    if (verdict == Verdict::kStop) break;
    if (verdict == Verdict::kKeep) kept.push_back(std::move(frame));
  }
  // Most recent call last, as Python prints its own frames.
  std::string text;
  char offset[32];
  for (size_t i = kept.size(); i-- > 0;) {
    const Frame& f = kept[i];
    std::snprintf(offset, sizeof(offset), "0x%llx", static_cast<unsigned long long>(f.vaddr));
    if (!text.empty()) text += '\n';
    text += "File \"" + f.file + "\", offset " + offset + ", in " + f.name;
  }
  return text;
}

}  // namespace detail
}  // namespace packedfun
