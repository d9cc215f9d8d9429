// Module entry points of c_api.h: shared libraries loaded with dlopen and their exported functions.
#include <dlfcn.h>
#include <sys/stat.h>

#include <cerrno>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <packedfun/detail/bytes_any.h>

#include "backtrace/dynamic_symbols.h"
#include "runtime/error.h"
#include "runtime/library_file.h"
#include "runtime/module.h"
#include "runtime/object.h"
#include "runtime/seq.h"
#include "runtime/string.h"
#include "runtime/type.h"

namespace packedfun {
namespace detail {
namespace {

/*! A loaded library.
 *
 *  The library is never dlclose()d, not even when the last Module over it dies. Code and data of
 *  the library escape into places the runtime cannot track: Functions registered in the global
 *  registry at static-init time, object deleters and type-table entries (whose strings must be of
 *  static storage), errors whose backtraces or causes point into it, DLPack deleters of tensors it
 *  produced. Any of those may outlive every Module; unmapping the code under them would turn a
 *  later call or decref into a jump to unmapped memory. A library is loaded once per process
 *  (dlopen reference-counts repeated loads of one path), so keeping it is cheap. */
struct ModuleImpl {
  PFObject header;
  void* handle;                    // from dlopen; never closed (see above)
  std::string path;                // "" for the system library
  std::vector<PFObject*> imports;  // owned references; guarded by ImportsMutex()
  PFAny foreign;                   // the foreign loader's state for the library; else None
};

/*! The foreign loader (runtime/module.h), when an interop layer registered one. */
const ForeignModuleLoader* g_foreign_loader = nullptr;

/*! One lock for the whole import graph: imports change rarely, and a single lock makes the cycle
 *  check of PFModuleImport atomic with the insertion it guards. */
std::mutex& ImportsMutex() {
  static std::mutex mutex;
  return mutex;
}

/*! A Function over an exported symbol: `safe_call` is the symbol itself and `self` is NULL, as
 *  the export convention requires, so a call costs no more than a registry function's. */
struct ModuleFunctionImpl {
  PFFunctionObject base;
  PFObject* module;  // owned: keeps the Module (and through it its imports) alive
};

void DeleteModule(PFObject* obj) noexcept {
  auto* m = As<ModuleImpl>(obj);
  for (PFObject* dep : m->imports) DecRef(dep);
  if (m->foreign.type_index != kPFTypeNone && g_foreign_loader != nullptr) {
    g_foreign_loader->release(&m->foreign);
  }
  delete m;
}

void DeleteModuleFunction(PFObject* obj) noexcept {
  ForgetFunctionMetadata(obj);
  auto* f = As<ModuleFunctionImpl>(obj);
  DecRef(f->module);
  delete f;
}

PFObject* NewModule(void* handle, std::string path) {
  ModuleImpl* m = AllocObject<ModuleImpl>(kPFTypeModule, &DeleteModule);
  m->handle = handle;
  m->path = std::move(path);
  m->foreign = NoneAny();
  return Header(m);
}

/*! Checks that `obj` is a Module; throws TypeError naming `fn` otherwise. */
ModuleImpl* CheckModule(PFObject* obj, const char* fn) {
  if (obj == nullptr) Throw("TypeError", std::string(fn) + ": the module is NULL");
  if (obj->type_index != kPFTypeModule) {
    Throw("TypeError", std::string(fn) + ": object of type index " +
                           std::to_string(obj->type_index) + " is not a Module");
  }
  return As<ModuleImpl>(obj);
}

/*! A NUL-free copy of a borrowed byte array; throws ValueError naming `what` otherwise. */
std::string CopyName(const PFByteArray* text, const char* fn, const char* what) {
  if (text == nullptr || (text->data == nullptr && text->size != 0)) {
    Throw("ValueError", std::string(fn) + ": " + what + " is NULL");
  }
  std::string s(text->data == nullptr ? "" : text->data, text->size);
  if (s.find('\0') != std::string::npos) {
    Throw("ValueError", std::string(fn) + ": " + what + " contains a NUL byte");
  }
  return s;
}

/*! A snapshot of `m`'s imports, each with a reference the caller releases. */
std::vector<PFObject*> SnapshotImports(ModuleImpl* m) {
  std::lock_guard<std::mutex> lock(ImportsMutex());
  std::vector<PFObject*> deps = m->imports;
  for (PFObject* dep : deps) IncRef(dep);
  return deps;
}

/*! Where a symbol was found: the module (borrowed) and the address. */
struct Found {
  ModuleImpl* module = nullptr;
  void* address = nullptr;
};

/*! Whether `target` is `from` or reachable through its imports. Call with ImportsMutex() held. */
bool ReachesLocked(ModuleImpl* from, ModuleImpl* target) {
  if (from == target) return true;
  for (PFObject* dep : from->imports) {
    if (ReachesLocked(As<ModuleImpl>(dep), target)) return true;
  }
  return false;
}

/*! Looks `symbol` up in `m`, then depth-first in its imports; `seen` skips shared imports.
 *  The returned module is borrowed from the import graph, which the caller keeps alive. */
Found Resolve(ModuleImpl* m, const std::string& symbol, bool query_imports,
              std::vector<ModuleImpl*>* seen) {
  if (void* address = dlsym(m->handle, symbol.c_str())) return Found{m, address};
  if (!query_imports) return Found{};
  seen->push_back(m);
  std::vector<PFObject*> deps = SnapshotImports(m);
  Found found;
  for (PFObject* dep : deps) {
    ModuleImpl* d = As<ModuleImpl>(dep);
    if (std::find(seen->begin(), seen->end(), d) != seen->end()) continue;
    found = Resolve(d, symbol, true, seen);
    if (found.address != nullptr) break;
  }
  // The import graph still holds every module (an import is never removed), so `found.module`
  // stays valid after these snapshot references go.
  for (PFObject* dep : deps) DecRef(dep);
  return found;
}

Found ResolveName(PFObject* module, const PFByteArray* name, int query_imports, const char* prefix,
                  const char* fn) {
  ModuleImpl* m = CheckModule(module, fn);
  if (name == nullptr || (name->data == nullptr && name->size != 0)) {
    Throw("ValueError", std::string(fn) + ": name is NULL");
  }
  std::string symbol = prefix + std::string(name->data == nullptr ? "" : name->data, name->size);
  // No symbol has a NUL in its name: such a function is simply missing.
  if (symbol.find('\0') != std::string::npos) return Found{};
  std::vector<ModuleImpl*> seen;
  return Resolve(m, symbol, query_imports != 0, &seen);
}

/*! Adds the exported function names of `m` (and, with `query_imports`, of its imports) to
 *  `*names`; false when some library's table cannot be read. */
bool CollectFunctionNames(ModuleImpl* m, bool query_imports, std::vector<ModuleImpl*>* seen,
                          std::vector<std::string>* names) {
  if (std::find(seen->begin(), seen->end(), m) != seen->end()) return true;
  seen->push_back(m);
  // A library whose foreign functions cannot be listed has no complete list.
  if (g_foreign_loader != nullptr && !g_foreign_loader->lists_all_functions(Header(m))) {
    return false;
  }
  size_t first = names->size();
  if (!ListExportedFunctions(m->handle, PACKEDFUN_SYMBOL_PREFIX, names)) return false;
  // Symbols under the prefix that describe a function rather than being one (docstring, entry
  // name, metadata) are `<kind>__...`; they are data, but a library may define them otherwise.
  auto described = [](const std::string& n) {
    for (const char* kind : {"doc__", "main__", "meta__", "metadata__", "gil__"}) {
      if (n.compare(0, std::strlen(kind), kind) == 0) return true;
    }
    return false;
  };
  names->erase(
      std::remove_if(names->begin() + static_cast<std::ptrdiff_t>(first), names->end(), described),
      names->end());
  if (!query_imports) return true;
  std::vector<PFObject*> deps = SnapshotImports(m);
  bool ok = true;
  for (PFObject* dep : deps) {
    ok = ok && CollectFunctionNames(As<ModuleImpl>(dep), true, seen, names);
  }
  for (PFObject* dep : deps) DecRef(dep);
  return ok;
}

PFObject* NewModuleFunction(ModuleImpl* owner, void* address) {
  ModuleFunctionImpl* f = AllocObject<ModuleFunctionImpl>(kPFTypeFunction, &DeleteModuleFunction);
  // dlsym yields a data pointer; POSIX guarantees it converts to the function it names.
  f->base.safe_call = reinterpret_cast<PFSafeCall>(address);
  f->base.self = nullptr;
  f->module = Header(owner);
  IncRef(f->module);
  return Header(f);
}

/*! The text of a `const char*` variable exported by a library (NULL pointer gives None). */
PFAny StringVariable(void* address) {
  const char* text = *static_cast<const char* const*>(address);
  if (text == nullptr) return NoneAny();
  return MakeStringAny(text);
}

/*! Whether `path` names a file that does not exist (a bare name is searched by the loader, so it
 *  is never "missing" here): the kind of the error is then FileNotFoundError. */
bool MissingFile(const std::string& path) {
  struct stat st;
  return path.find('/') != std::string::npos && stat(path.c_str(), &st) != 0 && errno == ENOENT;
}

/*! Tells the foreign loader that a library is being opened, for as long as it lives. */
class ForeignLoadScope {
 public:
  ForeignLoadScope() noexcept {
    if (g_foreign_loader != nullptr) g_foreign_loader->begin_load();
  }
  ~ForeignLoadScope() {
    if (g_foreign_loader != nullptr) g_foreign_loader->end_load();
  }
  ForeignLoadScope(const ForeignLoadScope&) = delete;
  ForeignLoadScope& operator=(const ForeignLoadScope&) = delete;
};

int LoadFromFile(const PFByteArray* path, PFObject** out) {
  static const char* fn = "PFModuleLoadFromFile";
  std::string p = CopyName(path, fn, "path");
  if (out == nullptr) Throw("ValueError", std::string(fn) + ": out is NULL");
  // The load messages are what a user of load_module reads: they name the library, not this
  // entry point (C callers know which function they called).
  if (p.empty()) Throw("OSError", "cannot load a library from an empty path");
  CheckLibraryFile(p);
  // The library's static initialisation (run by dlopen) registers its reflection under this
  // check: redefining an object type of an earlier library fails the load below.
  TypeRedefinitionCheck redefinition;
  ForeignLoadScope foreign_load;
  // RTLD_NOW reports unresolved symbols here rather than at first call; RTLD_LOCAL keeps one
  // library's __packedfun_* exports from shadowing another's.
  void* handle = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    std::string message = why != nullptr ? why : "unknown loader error";
    // The foreign loader may make a retry worthwhile (by loading a runtime the library needs).
    if (g_foreign_loader == nullptr || !g_foreign_loader->retry_load(p, message)) {
      Throw(MissingFile(p) ? "FileNotFoundError" : "OSError",
            "cannot load library '" + p + "': " + message);
    }
    handle = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      why = dlerror();
      Throw("OSError",
            "cannot load library '" + p + "': " + (why != nullptr ? why : "unknown loader error"));
    }
  }
  std::string conflict = redefinition.Conflict();
  if (!conflict.empty()) {
    // The library stays open: what it did register (its global functions) runs its code.
    Throw("RuntimeError", "cannot load library '" + p + "': " + conflict +
                              "; an object type is defined once per process: restart the "
                              "interpreter (in a notebook, the kernel) to load the new definition");
  }
  PFObject* module = NewModule(handle, p);
  if (g_foreign_loader != nullptr) {
    int rc = Guard([&] {
      g_foreign_loader->on_load(module, p);
      return 0;
    });
    if (rc != 0) {
      DecRef(module);
      throw AlreadyRaised{};
    }
  }
  *out = module;
  return 0;
}

}  // namespace

void* ModuleHandle(PFObject* module) noexcept { return As<ModuleImpl>(module)->handle; }

PFAny* ModuleForeignState(PFObject* module) noexcept { return &As<ModuleImpl>(module)->foreign; }

PFObject* NewForeignModule(PFAny state, std::string description) {
  // The program's own handle: a module of no library, whose functions all come from `state`.
  void* handle = dlopen(nullptr, RTLD_NOW);
  if (handle == nullptr) {
    const char* why = dlerror();
    Throw("OSError", why != nullptr ? why : "dlopen of the program failed");
  }
  PFObject* module = NewModule(handle, std::move(description));
  *ModuleForeignState(module) = state;
  return module;
}

void* ModuleFindSymbol(PFObject* module, const PFByteArray* name, int query_imports,
                       const char* prefix, const char* fn, PFObject** owner) {
  Found found = ResolveName(module, name, query_imports, prefix, fn);
  if (owner != nullptr) *owner = found.module == nullptr ? nullptr : Header(found.module);
  return found.address;
}

void SetForeignModuleLoader(const ForeignModuleLoader* loader) noexcept {
  g_foreign_loader = loader;
}

}  // namespace detail
}  // namespace packedfun

using namespace packedfun::detail;

extern "C" {

PACKEDFUN_API int PFModuleLoadFromFile(const PFByteArray* path, PFObject** out) {
  return Guard([&] { return LoadFromFile(path, out); });
}

PACKEDFUN_API int PFModuleGetSystemLib(PFObject** out) {
  if (out == nullptr) return RaiseError("ValueError", "PFModuleGetSystemLib: out is NULL");
  return Guard([&] {
    void* handle = dlopen(nullptr, RTLD_NOW);
    if (handle == nullptr) {
      const char* why = dlerror();
      Throw("OSError", std::string("PFModuleGetSystemLib: ") +
                           (why != nullptr ? why : "unknown loader error"));
    }
    *out = NewModule(handle, std::string());
    return 0;
  });
}

namespace {
/*! Gives `func` the metadata its library exports next to it:
 *  `const char* __packedfun_meta__<name>(void)` returns its JSON record, or NULL. Libraries built
 *  before 1.3 export no such symbol and their functions simply carry no metadata. */
void AttachExportedMetadata(ModuleImpl* module, const PFByteArray& name, PFObject* func) {
  std::string symbol = PACKEDFUN_META_SYMBOL_PREFIX + std::string(name.data, name.size);
  void* address = dlsym(module->handle, symbol.c_str());
  if (address == nullptr) return;
  const char* json = reinterpret_cast<const char* (*)(void)>(address)();
  if (json == nullptr) return;
  PFByteArray text{json, std::strlen(json)};
  if (PFFunctionSetMetadata(func, &text) != 0) Throw("ValueError", "bad function metadata");
}

/*! Gives `func` the GIL policy its library declares with PACKEDFUN_DLL_EXPORT_GIL:
 *  `const int32_t __packedfun_gil__<name>`; without the symbol it keeps kPFGILRelease. */
void AttachExportedGILPolicy(ModuleImpl* module, const PFByteArray& name, PFObject* func) {
  std::string symbol = "__packedfun_gil__" + std::string(name.data, name.size);
  void* address = dlsym(module->handle, symbol.c_str());
  if (address == nullptr) return;
  if (PFFunctionSetGILPolicy(func, *static_cast<const int32_t*>(address)) != 0) {
    Throw("ValueError", "bad GIL policy exported as " + symbol);
  }
}

/*! Sets on `func` the container-view argument bits its library declares (ABI 1.4, see
 *  PACKEDFUN_FUNCTION_VIEW_ARGS_SHIFT): `const uint32_t __packedfun_view_args__<name>`. */
void AttachExportedViewArgs(ModuleImpl* module, const PFByteArray& name, PFObject* func) {
  std::string symbol = "__packedfun_view_args__" + std::string(name.data, name.size);
  void* address = dlsym(module->handle, symbol.c_str());
  if (address == nullptr) return;
  uint32_t bits = *static_cast<const uint32_t*>(address);
  bits &= (1u << PACKEDFUN_FUNCTION_MAX_VIEW_ARGS) - 1u;
  __atomic_fetch_or(&func->flags, bits << PACKEDFUN_FUNCTION_VIEW_ARGS_SHIFT, __ATOMIC_RELEASE);
}
}  // namespace

PACKEDFUN_API int PFModuleGetFunction(PFObject* module, const PFByteArray* name, int query_imports,
                                      PFObject** out) {
  static const char* fn = "PFModuleGetFunction";
  return Guard([&] {
    if (out == nullptr) Throw("ValueError", std::string(fn) + ": out is NULL");
    Found found = ResolveName(module, name, query_imports, PACKEDFUN_SYMBOL_PREFIX, fn);
    if (found.address != nullptr) {
      *out = NewModuleFunction(found.module, found.address);
      AttachExportedMetadata(found.module, *name, *out);
      AttachExportedGILPolicy(found.module, *name, *out);
      AttachExportedViewArgs(found.module, *name, *out);
      return 0;
    }
    // Not a packedfun export: perhaps a function of a library built for another FFI.
    *out = g_foreign_loader == nullptr
               ? nullptr
               : g_foreign_loader->get_function(module, name, query_imports, fn);
    return 0;
  });
}

PACKEDFUN_API int PFModuleImport(PFObject* module, PFObject* dependency) {
  static const char* fn = "PFModuleImport";
  return Guard([&] {
    ModuleImpl* m = CheckModule(module, fn);
    ModuleImpl* d = CheckModule(dependency, fn);
    std::lock_guard<std::mutex> lock(ImportsMutex());
    // A cycle would keep its modules alive forever (reference counts never reach zero).
    if (ReachesLocked(d, m)) {
      Throw("ValueError", "importing this module would create an import cycle");
    }
    m->imports.push_back(dependency);
    IncRef(dependency);
    return 0;
  });
}

PACKEDFUN_API int PFModuleGetImports(PFObject* module, PFAny* out) {
  static const char* fn = "PFModuleGetImports";
  return Guard([&] {
    ModuleImpl* m = CheckModule(module, fn);
    if (out == nullptr) Throw("ValueError", std::string(fn) + ": out is NULL");
    std::vector<PFObject*> deps = SnapshotImports(m);
    PFSeqObject* seq = nullptr;
    try {
      seq = NewSeq(kPFTypeArray, static_cast<int64_t>(deps.size()));
    } catch (...) {
      for (PFObject* dep : deps) DecRef(dep);
      throw;
    }
    for (PFObject* dep : deps) seq->data[seq->size++] = ObjectAny(dep);  // snapshot refs move in
    *out = ObjectAny(&seq->header);
    return 0;
  });
}

PACKEDFUN_API int PFModuleGetPath(PFObject* module, PFAny* out) {
  static const char* fn = "PFModuleGetPath";
  return Guard([&] {
    ModuleImpl* m = CheckModule(module, fn);
    if (out == nullptr) Throw("ValueError", std::string(fn) + ": out is NULL");
    *out = MakeStringAny(m->path);
    return 0;
  });
}

PACKEDFUN_API int PFModuleGetFunctionDoc(PFObject* module, const PFByteArray* name,
                                         int query_imports, PFAny* out) {
  static const char* fn = "PFModuleGetFunctionDoc";
  return Guard([&] {
    if (out == nullptr) Throw("ValueError", std::string(fn) + ": out is NULL");
    Found found = ResolveName(module, name, query_imports, PACKEDFUN_SYMBOL_PREFIX, fn);
    *out = NoneAny();
    if (found.address == nullptr) {
      if (g_foreign_loader != nullptr) {
        *out = g_foreign_loader->get_function_doc(module, name, query_imports, fn);
      }
      return 0;
    }
    std::string doc_symbol = PACKEDFUN_DOC_SYMBOL_PREFIX + std::string(name->data, name->size);
    if (void* doc = dlsym(found.module->handle, doc_symbol.c_str())) *out = StringVariable(doc);
    return 0;
  });
}

PACKEDFUN_API int PFModuleSetTVMFFILibrary(const PFByteArray* path) {
  return Guard([&] {
    std::string p =
        path == nullptr ? std::string() : CopyName(path, "PFModuleSetTVMFFILibrary", "path");
    // Without the tvm-ffi interop there is nothing to point at the library: accepted, unused.
    if (g_foreign_loader != nullptr) g_foreign_loader->set_library_path(std::move(p));
    return 0;
  });
}

PACKEDFUN_API int PFModuleGetEntryName(PFObject* module, PFAny* out) {
  static const char* fn = "PFModuleGetEntryName";
  return Guard([&] {
    ModuleImpl* m = CheckModule(module, fn);
    if (out == nullptr) Throw("ValueError", std::string(fn) + ": out is NULL");
    void* address = dlsym(m->handle, PACKEDFUN_MAIN_SYMBOL);
    *out = address == nullptr ? NoneAny() : StringVariable(address);
    return 0;
  });
}

PACKEDFUN_API int PFModuleListFunctions(PFObject* module, int query_imports, PFAny* out) {
  static const char* fn = "PFModuleListFunctions";
  return Guard([&] {
    ModuleImpl* m = CheckModule(module, fn);
    if (out == nullptr) Throw("ValueError", std::string(fn) + ": out is NULL");
    std::vector<std::string> names;
    std::vector<ModuleImpl*> seen;
    if (m->path.empty() || !CollectFunctionNames(m, query_imports != 0, &seen, &names)) {
      *out = NoneAny();
      return 0;
    }
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    *out = MakeStringArray(names);
    return 0;
  });
}

}  // extern "C"
