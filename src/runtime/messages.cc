// The cold text of the C++ headers, built once here instead of in every extension (c_api.h, ABI
// 1.5): type names for messages, the argument errors of typed calls, function metadata records.
#include <cstdio>
#include <string>
#include <string_view>

#include <packedfun/detail/bytes_any.h>

#include "runtime/error.h"
#include "runtime/object.h"
#include "runtime/string.h"

namespace packedfun {
namespace detail {
namespace {

/*! The registry name of the optional hook a language binding registers to name its opaque
 *  objects: called with the Opaque object, it returns the foreign type's name as a str. */
constexpr std::string_view kOpaqueTypeNameHook = "packedfun.OpaqueTypeName";

/*! Python-facing names of the built-in type indices; NULL where the runtime's table decides. */
const char* BuiltinTypeName(int32_t type_index) noexcept {
  static const char* const kPod[] = {"None",      "int", "bool", "float", "ptr", "dtype", "Device",
                                     "DLTensor*", "str", "str",  "bytes", "str", "bytes", "int"};
  static const char* const kObject[] = {"Object", "str",   "bytes",  "Error", "Function",
                                        "Opaque", "Shape", "Tensor", "Array", "Map",
                                        "List",   "Dict",  "Module"};
  if (type_index >= 0 && type_index < static_cast<int32_t>(sizeof(kPod) / sizeof(kPod[0]))) {
    return kPod[type_index];
  }
  int32_t i = type_index - kPFTypeStaticObjectBegin;
  if (i >= 0 && i < static_cast<int32_t>(sizeof(kObject) / sizeof(kObject[0]))) return kObject[i];
  return nullptr;
}

/*! Drops whatever error a failed lookup left in the error slot. */
void DiscardError() noexcept {
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);
  if (err != nullptr) DecRef(err);
}

/*! Asks the binding's hook for the name of a foreign (opaque) object; empty when it cannot. */
std::string OpaqueTypeName(const PFAny& value) {
  PFByteArray name{kOpaqueTypeNameHook.data(), kOpaqueTypeNameHook.size()};
  PFObject* hook = nullptr;
  if (PFFunctionGetGlobal(&name, &hook) != 0) {
    DiscardError();
    return std::string();
  }
  if (hook == nullptr) return std::string();
  PFAny result = NoneAny();
  std::string out;
  if (PFFunctionCall(hook, &value, 1, &result) == 0) {
    if (AnyIsStr(result)) {
      PFByteArray bytes = AnyBytes(result);
      out.assign(bytes.data, bytes.size);
    }
    ReleaseAny(&result);
  } else {
    DiscardError();
  }
  DecRef(hook);
  return out;
}

/*! The type name of `value` for messages: built-in names, then the runtime's type key. */
std::string TypeName(const PFAny& value) {
  int32_t t = value.type_index;
  if (t == kPFTypeOpaque) {
    std::string foreign = OpaqueTypeName(value);
    if (!foreign.empty()) return foreign;
  }
  if (const char* builtin = BuiltinTypeName(t)) return builtin;
  const PFTypeInfo* info = nullptr;
  if (PFTypeGetInfo(t, &info) == 0 && info != nullptr) {
    return std::string(info->type_key.data, info->type_key.size);
  }
  DiscardError();
  return "<type index " + std::to_string(t) + ">";
}

/*! "<prefix>value V does not fit in R" (OverflowError) for an int out of `int_range`, else
 *  "<prefix>expected E, got T" (TypeError). */
[[noreturn]] void ThrowConversion(const std::string& prefix, const char* expected,
                                  const char* int_range, const PFAny& value) {
  if (int_range != nullptr && value.type_index == kPFTypeInt) {
    Throw("OverflowError",
          prefix + "value " + std::to_string(value.v_int64) + " does not fit in " + int_range);
  }
  if (int_range != nullptr && value.type_index == kPFTypeUInt64) {
    Throw("OverflowError",
          prefix + "value " + std::to_string(value.v_uint64) + " does not fit in " + int_range);
  }
  Throw("TypeError",
        prefix + "expected " + (expected != nullptr ? expected : "?") + ", got " + TypeName(value));
}

/*! `text` as a JSON string literal. */
std::string JsonText(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

const char* OrEmpty(const char* s) noexcept { return s != nullptr ? s : ""; }

/*! The arrays of a metadata or label request, checked. */
void CheckNames(const char* fn, const char* name, const char* const* types, int32_t num_types,
                const char* const* arg_names, int32_t num_args) {
  if (name == nullptr) Throw("ValueError", std::string(fn) + ": name is NULL");
  if (num_types < 0 || num_args < 0) Throw("ValueError", std::string(fn) + ": negative count");
  if ((num_types > 0 && types == nullptr) || (num_args > 0 && arg_names == nullptr)) {
    Throw("ValueError", std::string(fn) + ": an array is NULL");
  }
  for (int32_t i = 0; i < num_types; ++i) {
    if (types[i] == nullptr) Throw("ValueError", std::string(fn) + ": a type is NULL");
  }
  for (int32_t i = 0; i < num_args; ++i) {
    if (arg_names[i] == nullptr) Throw("ValueError", std::string(fn) + ": a name is NULL");
  }
}

/*! Refuses what would make a metadata record unusable: a parameter named twice, and a default
 *  that is no JSON value (a non-finite float prints as nan or inf). */
void CheckParam(const char* name, const std::string& pname, const char* const* arg_names, int32_t i,
                const char* def) {
  if (pname.empty())
    Throw("ValueError",
          std::string(name) + ": parameter " + std::to_string(i) + " has an empty name");
  for (int32_t j = 0; arg_names != nullptr && j < i; ++j) {
    if (pname == arg_names[j]) {
      Throw("ValueError", std::string(name) + ": parameter '" + pname + "' is named twice");
    }
  }
  std::string_view text = def == nullptr ? std::string_view() : std::string_view(def);
  if (!text.empty() && text.front() == '-') text.remove_prefix(1);
  if (text.substr(0, 3) == "nan" || text.substr(0, 3) == "inf") {
    Throw("ValueError", std::string(name) + ": the default of parameter '" + pname + "' is " + def +
                            ": a default must be a finite number");
  }
}

std::string BuildMetadata(const char* name, const char* const* types, int32_t num_types,
                          const char* const* arg_names, const char* const* arg_defaults,
                          int32_t num_args, const char* doc) {
  int32_t num_params = num_types == 0 ? num_args : num_types - 1;
  if (num_args != 0 && num_args != num_params) {
    Throw("ValueError", std::string(name) + ": " + std::to_string(num_args) +
                            " argument names given for " + std::to_string(num_params) +
                            " parameters");
  }
  std::string out = "{\"name\": " + JsonText(name) + ", \"params\": [";
  bool seen_default = false;
  for (int32_t i = 0; i < num_params; ++i) {
    std::string pname = num_args == 0 ? "arg" + std::to_string(i) : arg_names[i];
    CheckParam(name, pname, num_args == 0 ? nullptr : arg_names, i,
               num_args == 0 || arg_defaults == nullptr ? nullptr : arg_defaults[i]);
    out += (i ? ", " : "") + std::string("{\"name\": ") + JsonText(pname);
    out += ", \"type\": " + JsonText(num_types == 0 ? "Any" : types[i + 1]);
    const char* def = num_args == 0 || arg_defaults == nullptr ? nullptr : arg_defaults[i];
    if (def != nullptr && *def != '\0') {
      out += ", \"default\": " + std::string(def);
      seen_default = true;
    } else if (seen_default) {
      Throw("ValueError", std::string(name) + ": parameter '" + pname +
                              "' without a default follows one with a default");
    }
    out += "}";
  }
  out += "], \"return\": " + JsonText(num_types == 0 ? "Any" : types[0]);
  if (doc != nullptr) out += ", \"doc\": " + JsonText(doc);
  return out + "}";
}

}  // namespace
}  // namespace detail
}  // namespace packedfun

using namespace packedfun::detail;

extern "C" {

PACKEDFUN_API int PFAnyGetTypeName(const PFAny* value, PFAny* out) {
  return Guard([&] {
    if (value == nullptr || out == nullptr) {
      Throw("ValueError", "PFAnyGetTypeName: value or out is NULL");
    }
    *out = MakeStringAny(TypeName(*value));
    return 0;
  });
}

PACKEDFUN_API int PFErrorSetRaisedArity(const char* function, int32_t expected, int32_t got) {
  return Guard([&] {
    Throw("TypeError", std::string(OrEmpty(function)) + ": expected " + std::to_string(expected) +
                           (expected == 1 ? " argument, got " : " arguments, got ") +
                           std::to_string(got));
    return 0;
  });
}

PACKEDFUN_API int PFErrorSetRaisedConversion(const char* prefix, const char* expected,
                                             const char* int_range, const PFAny* value) {
  return Guard([&] {
    if (value == nullptr) Throw("ValueError", "PFErrorSetRaisedConversion: value is NULL");
    ThrowConversion(OrEmpty(prefix), expected, int_range, *value);
    return 0;
  });
}

PACKEDFUN_API int PFErrorSetRaisedArgument(const char* function, const char* label,
                                           const char* param, int64_t index, const char* expected,
                                           const char* int_range, const PFAny* value) {
  return Guard([&] {
    if (value == nullptr) Throw("ValueError", "PFErrorSetRaisedArgument: value is NULL");
    std::string where =
        label != nullptr && param != nullptr
            ? std::string(label) + ": argument '" + param + "'"
            : std::string(OrEmpty(function)) + ": argument " + std::to_string(index);
    ThrowConversion(where + ": ", expected, int_range, *value);
    return 0;
  });
}

PACKEDFUN_API int PFErrorSetRaisedAxis(const char* what, int64_t axis, int32_t ndim) {
  return Guard([&] {
    Throw("IndexError", std::string(OrEmpty(what)) + ": axis " + std::to_string(axis) +
                            " is out of range for a tensor with " + std::to_string(ndim) +
                            (ndim == 1 ? " dimension" : " dimensions"));
    return 0;
  });
}

PACKEDFUN_API int PFFunctionBuildMetadata(const char* name, const char* const* types,
                                          int32_t num_types, const char* const* arg_names,
                                          const char* const* arg_defaults, int32_t num_args,
                                          const char* doc, PFAny* out) {
  return Guard([&] {
    if (out == nullptr) Throw("ValueError", "PFFunctionBuildMetadata: out is NULL");
    CheckNames("PFFunctionBuildMetadata", name, types, num_types, arg_names, num_args);
    *out = MakeStringAny(
        BuildMetadata(name, types, num_types, arg_names, arg_defaults, num_args, doc));
    return 0;
  });
}

PACKEDFUN_API int PFFunctionBuildMetadataRanges(const char* name, const char* const* types,
                                                int32_t num_types, const char* const* arg_names,
                                                const char* const* arg_defaults, int32_t num_args,
                                                const char* doc, const char* const* int_ranges,
                                                int32_t num_ranges, PFAny* out) {
  return Guard([&] {
    if (out == nullptr) Throw("ValueError", "PFFunctionBuildMetadataRanges: out is NULL");
    if (num_ranges < 0 || (num_ranges > 0 && int_ranges == nullptr)) {
      Throw("ValueError", "PFFunctionBuildMetadataRanges: int_ranges is NULL or num_ranges < 0");
    }
    CheckNames("PFFunctionBuildMetadataRanges", name, types, num_types, arg_names, num_args);
    std::string json =
        BuildMetadata(name, types, num_types, arg_names, arg_defaults, num_args, doc);
    bool any_range = false;
    for (int32_t i = 0; i < num_ranges; ++i) any_range = any_range || int_ranges[i] != nullptr;
    if (any_range) {
      json.pop_back();  // the record's closing brace
      json += ", \"ranges\": [";
      for (int32_t i = 0; i < num_ranges; ++i) {
        json += (i ? ", " : "") +
                (int_ranges[i] != nullptr ? JsonText(int_ranges[i]) : std::string("null"));
      }
      json += "]}";
    }
    *out = MakeStringAny(json);
    return 0;
  });
}

PACKEDFUN_API int PFFunctionBuildLabel(const char* name, const char* const* types,
                                       int32_t num_types, const char* const* arg_names,
                                       int32_t num_args, PFAny* out) {
  return Guard([&] {
    if (out == nullptr) Throw("ValueError", "PFFunctionBuildLabel: out is NULL");
    CheckNames("PFFunctionBuildLabel", name, types, num_types, arg_names, num_args);
    if (num_args == 0 || num_types != num_args + 1) {
      *out = NoneAny();
      return 0;
    }
    std::string label = std::string(name) + "(";
    for (int32_t i = 0; i < num_args; ++i) {
      label += (i ? ", " : "") + std::string(arg_names[i]) + ": " + types[i + 1];
    }
    *out = MakeStringAny(label + ") -> " + types[0]);
    return 0;
  });
}

}  // extern "C"
