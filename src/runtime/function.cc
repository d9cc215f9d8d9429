// Function entry points of c_api.h: creating packed functions and calling them.
#include "runtime/error.h"
#include "runtime/object.h"
#include "runtime/string.h"

#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace packedfun {
namespace detail {
namespace {

/*! A Function plus the deleter of its `self`, in one allocation. */
struct FunctionImpl {
  PFFunctionObject base;
  void (*free_self)(void* self);
};

/*! The metadata records of every Function that has one, by object. A side table rather than a
 *  member, because Functions come in several layouts (module functions are their own struct).
 *  Records are set once and read rarely (when a binding first needs a signature), so one lock for
 *  all of them costs nothing on any hot path. Leaked: usable during static destruction. */
struct MetadataTable {
  std::mutex mu;
  std::unordered_map<const PFObject*, std::string> records;
};
MetadataTable& Metadata() {
  static MetadataTable* table = new MetadataTable();
  return *table;
}

/*! Not noexcept (see DecRef): `free_self` may be a binding's code. */
void DeleteFunction(PFObject* obj) {
  ForgetFunctionMetadata(obj);
  auto* impl = As<FunctionImpl>(obj);
  if (impl->free_self != nullptr) {
    BindingEntry entry;
    if (entry.admitted()) impl->free_self(impl->base.self);
  }
  delete impl;
}

__attribute__((noinline, cold)) int RaiseNotAFunction(PFObject* func) {
  if (func == nullptr) return RaiseError("TypeError", "PFFunctionCall: the function is NULL");
  return RaiseError("TypeError", "PFFunctionCall: object of type index " +
                                     std::to_string(func->type_index) + " is not a Function");
}

__attribute__((noinline, cold)) int RaiseNotAFunctionFor(const char* what, PFObject* func) {
  if (func != nullptr && func->type_index == kPFTypeFunction) return 0;
  return RaiseError("TypeError", std::string(what) + ": the object is not a Function");
}

/*! The "return" type schema of a metadata record (the text of its first "return" key), or
 *  empty. A scan, not a parse: type names never hold quotes or escapes. */
std::string_view ReturnSchema(std::string_view json) noexcept {
  constexpr std::string_view kKey = "\"return\"";
  size_t at = json.find(kKey);
  if (at == std::string_view::npos) return {};
  size_t i = at + kKey.size();
  auto skip_space = [&] {
    while (i < json.size() && (json[i] == ' ' || json[i] == '\n' || json[i] == '\t')) ++i;
  };
  skip_space();
  if (i >= json.size() || json[i] != ':') return {};
  ++i;
  skip_space();
  if (i >= json.size() || json[i] != '"') return {};
  size_t end = json.find('"', ++i);
  if (end == std::string_view::npos) return {};
  return json.substr(i, end - i);
}

/*! Whether a return type schema names a type by its key (see PACKEDFUN_FUNCTION_FLAG_NAMED_RESULT).
 */
bool IsNamedSchema(std::string_view schema) noexcept {
  if (schema.empty() || schema.find_first_of("[ ,\\") != std::string_view::npos) return false;
  for (std::string_view builtin :
       {"int",    "bool",   "float",  "str",    "bytes",    "None",     "Any",
        "void",   "object", "Object", "Tensor", "Function", "Callable", "Array",
        "List",   "Map",    "Dict",   "Shape",  "Device",   "DataType", "dtype",
        "Module", "Error",  "Opaque", "list",   "dict",     "tuple",    "Tuple"}) {
    if (schema == builtin) return false;
  }
  return true;
}

}  // namespace

void ForgetFunctionMetadata(PFObject* func) noexcept {
  if ((__atomic_load_n(&func->flags, __ATOMIC_ACQUIRE) & PACKEDFUN_FUNCTION_FLAG_HAS_METADATA) ==
      0) {
    return;
  }
  MetadataTable& table = Metadata();
  std::lock_guard<std::mutex> lock(table.mu);
  table.records.erase(func);
}

}  // namespace detail
}  // namespace packedfun

using namespace packedfun::detail;

extern "C" {

PACKEDFUN_API int PFFunctionCreate(void* self, PFSafeCall safe_call, void (*deleter)(void* self),
                                   PFObject** out) {
  if (safe_call == nullptr) {
    if (deleter != nullptr) deleter(self);
    return RaiseError("ValueError", "PFFunctionCreate: safe_call is NULL");
  }
  try {
    FunctionImpl* impl = AllocObject<FunctionImpl>(kPFTypeFunction, &DeleteFunction);
    impl->base.safe_call = safe_call;
    impl->base.self = self;
    impl->free_self = deleter;
    *out = Header(impl);
    return 0;
  } catch (...) {
    // The function owns `self` from the call on: a failed create still releases it.
    if (deleter != nullptr) deleter(self);
    return RaiseCurrentException();
  }
}

PACKEDFUN_API int PFFunctionCall(PFObject* func, const PFAny* args, int32_t num_args,
                                 PFAny* result) {
  if (__builtin_expect(func == nullptr || func->type_index != kPFTypeFunction, 0)) {
    return RaiseNotAFunction(func);
  }
  auto* f = As<PFFunctionObject>(func);
  return f->safe_call(f->self, args, num_args, result);
}

PACKEDFUN_API int PFFunctionSetMetadata(PFObject* func, const PFByteArray* json) {
  if (func == nullptr || func->type_index != kPFTypeFunction || json == nullptr) {
    return RaiseError("TypeError", "PFFunctionSetMetadata: expects a Function and a JSON string");
  }
  try {
    std::string text(json->data, json->size);
    bool named = IsNamedSchema(ReturnSchema(text));
    MetadataTable& table = Metadata();
    std::lock_guard<std::mutex> lock(table.mu);
    table.records[func].swap(text);
    if (named) {
      __atomic_fetch_or(&func->flags, PACKEDFUN_FUNCTION_FLAG_NAMED_RESULT, __ATOMIC_RELEASE);
    } else {
      __atomic_fetch_and(&func->flags, ~PACKEDFUN_FUNCTION_FLAG_NAMED_RESULT, __ATOMIC_RELEASE);
    }
    __atomic_fetch_or(&func->flags, PACKEDFUN_FUNCTION_FLAG_HAS_METADATA, __ATOMIC_RELEASE);
    return 0;
  } catch (...) {
    return RaiseCurrentException();
  }
}

PACKEDFUN_API int PFFunctionGetMetadata(PFObject* func, PFAny* out) {
  if (RaiseNotAFunctionFor("PFFunctionGetMetadata", func) != 0) return -1;
  try {
    if ((__atomic_load_n(&func->flags, __ATOMIC_ACQUIRE) & PACKEDFUN_FUNCTION_FLAG_HAS_METADATA) ==
        0) {
      *out = PFAny{};
      out->type_index = kPFTypeNone;
      return 0;
    }
    MetadataTable& table = Metadata();
    std::lock_guard<std::mutex> lock(table.mu);
    auto it = table.records.find(func);
    *out = it == table.records.end() ? PFAny{} : MakeStringAny(it->second);
    return 0;
  } catch (...) {
    return RaiseCurrentException();
  }
}

PACKEDFUN_API int PFFunctionGetGlobalMetadata(const PFByteArray* name, PFAny* out) {
  PFObject* func = nullptr;
  if (PFFunctionGetGlobal(name, &func) != 0) return -1;
  if (func == nullptr) {
    *out = PFAny{};
    out->type_index = kPFTypeNone;
    return 0;
  }
  int rc = PFFunctionGetMetadata(func, out);
  PFObjectDecRef(func);
  return rc;
}

PACKEDFUN_API int PFFunctionSetGILPolicy(PFObject* func, int32_t policy) {
  if (RaiseNotAFunctionFor("PFFunctionSetGILPolicy", func) != 0) return -1;
  if (policy == kPFGILHold) {
    __atomic_fetch_or(&func->flags, PACKEDFUN_FUNCTION_FLAG_GIL_HOLD, __ATOMIC_RELEASE);
  } else if (policy == kPFGILRelease) {
    __atomic_fetch_and(&func->flags, ~PACKEDFUN_FUNCTION_FLAG_GIL_HOLD, __ATOMIC_RELEASE);
  } else {
    return RaiseError("ValueError", "PFFunctionSetGILPolicy: unknown policy " +
                                        std::to_string(policy) +
                                        " (expected kPFGILRelease or kPFGILHold)");
  }
  return 0;
}

PACKEDFUN_API int PFFunctionGetGILPolicy(PFObject* func, int32_t* out) {
  if (RaiseNotAFunctionFor("PFFunctionGetGILPolicy", func) != 0) return -1;
  uint32_t flags = __atomic_load_n(&func->flags, __ATOMIC_ACQUIRE);
  *out = (flags & PACKEDFUN_FUNCTION_FLAG_GIL_HOLD) ? kPFGILHold : kPFGILRelease;
  return 0;
}

}  // extern "C"
