// Module entry points of c_api.h: shared libraries loaded with dlopen and their exported functions.
#include <dlfcn.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "internal/error.h"
#include "internal/object.h"
#include "internal/seq.h"
#include "internal/string.h"

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
};

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
  delete m;
}

void DeleteModuleFunction(PFObject* obj) noexcept {
  auto* f = As<ModuleFunctionImpl>(obj);
  DecRef(f->module);
  delete f;
}

PFObject* NewModule(void* handle, std::string path) {
  ModuleImpl* m = AllocObject<ModuleImpl>(kPFTypeModule, &DeleteModule);
  m->handle = handle;
  m->path = std::move(path);
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

int LoadFromFile(const PFByteArray* path, PFObject** out) {
  static const char* fn = "PFModuleLoadFromFile";
  std::string p = CopyName(path, fn, "path");
  if (out == nullptr) Throw("ValueError", std::string(fn) + ": out is NULL");
  if (p.empty()) Throw("OSError", std::string(fn) + ": cannot load a library from an empty path");
  // RTLD_NOW reports unresolved symbols here rather than at first call; RTLD_LOCAL keeps one
  // library's __packedfun_* exports from shadowing another's.
  void* handle = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    Throw("OSError", std::string(fn) + ": cannot load '" + p +
                         "': " + (why != nullptr ? why : "unknown loader error"));
  }
  *out = NewModule(handle, std::move(p));
  return 0;
}

}  // namespace
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

PACKEDFUN_API int PFModuleGetFunction(PFObject* module, const PFByteArray* name, int query_imports,
                                      PFObject** out) {
  static const char* fn = "PFModuleGetFunction";
  return Guard([&] {
    if (out == nullptr) Throw("ValueError", std::string(fn) + ": out is NULL");
    Found found = ResolveName(module, name, query_imports, PACKEDFUN_SYMBOL_PREFIX, fn);
    *out = found.address == nullptr ? nullptr : NewModuleFunction(found.module, found.address);
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
      Throw("ValueError", std::string(fn) + ": importing would create an import cycle");
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
    if (found.address == nullptr) return 0;
    std::string doc_symbol = PACKEDFUN_DOC_SYMBOL_PREFIX + std::string(name->data, name->size);
    if (void* doc = dlsym(found.module->handle, doc_symbol.c_str())) *out = StringVariable(doc);
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

}  // extern "C"
