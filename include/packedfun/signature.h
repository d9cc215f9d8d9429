// Function metadata: parameter names and defaults (`{"a", "b"_a = 2}`) and the JSON record.
#ifndef PACKEDFUN_SIGNATURE_H_
#define PACKEDFUN_SIGNATURE_H_

#include <packedfun/c_api.h>
#include <packedfun/detail/type_traits.h>
#include <packedfun/error.h>

#include <cstdio>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace packedfun {

namespace detail {
/*! `text` as a JSON string literal. */
inline std::string JsonString(std::string_view text) {
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

inline std::string JsonValue(std::nullptr_t) { return "null"; }
inline std::string JsonValue(bool v) { return v ? "true" : "false"; }
inline std::string JsonValue(const char* v) { return JsonString(v); }
inline std::string JsonValue(const std::string& v) { return JsonString(v); }
template <typename T>
std::string JsonValue(const T& v) {
  static_assert(std::is_arithmetic<T>::value, "a default must be a number, bool, str or None");
  if constexpr (std::is_integral<T>::value) {
    return std::to_string(v);
  } else {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.17g", static_cast<double>(v));
    return buf;
  }
}
}  // namespace detail

struct Arg;

/*! What `"b"_a` makes: a parameter name waiting for `= default`. */
struct ArgName {
  const char* name;
  template <typename T>
  Arg operator=(const T& value) const;  // NOLINT(misc-unconventional-assign-operator)
};

/*!
 * One parameter's name and, optionally, its default value, for registration and export:
 *
 *   using namespace packedfun::literals;
 *   PACKEDFUN_REGISTER_GLOBAL("mylib.add").set_body_typed(Add, {"a", "b"_a = 2});
 *
 * Defaults may be integers, floats, bools, strings and nullptr (None); they travel as JSON.
 */
struct Arg {
  Arg(const char* n) : name(n) {}   // NOLINT(runtime/explicit): "a" in an argument list
  Arg(ArgName n) : name(n.name) {}  // NOLINT(runtime/explicit): "a"_a alone
  Arg(const char* n, std::string json) : name(n), default_json(std::move(json)) {}

  const char* name;
  std::string default_json;  // empty: required
};

template <typename T>
Arg ArgName::operator=(const T& value) const {
  if constexpr (std::is_array<T>::value) {
    return Arg(name, detail::JsonValue(static_cast<const char*>(value)));
  } else {
    return Arg(name, detail::JsonValue(value));
  }
}

/*! The names (and defaults) of a function's parameters, in order. */
using ArgList = std::vector<Arg>;

namespace literals {
/*! `"b"_a` names a parameter; `"b"_a = 2` gives it a default. */
inline ArgName operator""_a(const char* name, size_t) { return ArgName{name}; }
}  // namespace literals

namespace detail {

/*! The type schema of a parameter or result type: its TypeTraits<T>::TypeName() ("int",
 *  "Optional[int]", "Array[Tensor]", an object type key), "None" for void, "Any" otherwise. New
 *  types take part by giving their TypeTraits a TypeName(). */
template <typename T>
std::string TypeSchema() {
  using Key = TraitsKey<T>;
  if constexpr (std::is_void<T>::value) {
    return "None";
  } else if constexpr (HasTypeTraits<Key>::value) {
    return TypeTraits<Key>::TypeName();
  } else {
    return "Any";
  }
}

/*! Moves a string PFAny (a new ref) into an std::string ("" for anything else). */
inline std::string TakeStdString(PFAny* value) {
  PFByteArray bytes = AnyIsStr(*value) ? AnyBytes(*value) : PFByteArray{nullptr, 0};
  std::string out(bytes.data == nullptr ? "" : bytes.data, bytes.size);
  PFAnyRelease(value);
  return out;
}

/*! The C arrays of PFFunctionBuildMetadata / PFFunctionBuildLabel: the type schemas, then the
 *  parameter names, then their defaults. */
class SignatureArrays {
 public:
  SignatureArrays(const std::vector<std::string>& types, const ArgList& args)
      : num_types_(types.size()),
        num_args_(args.size()),
        ptrs_(new const char*[num_types_ + 2 * num_args_ + 1]) {
    for (size_t i = 0; i < num_types_; ++i) ptrs_[i] = types[i].c_str();
    for (size_t i = 0; i < num_args_; ++i) {
      ptrs_[num_types_ + i] = args[i].name;
      ptrs_[num_types_ + num_args_ + i] = args[i].default_json.c_str();
    }
  }
  const char* const* types() const noexcept { return ptrs_.get(); }
  const char* const* names() const noexcept { return ptrs_.get() + num_types_; }
  const char* const* defaults() const noexcept { return ptrs_.get() + num_types_ + num_args_; }
  int32_t num_types() const noexcept { return static_cast<int32_t>(num_types_); }
  int32_t num_args() const noexcept { return static_cast<int32_t>(num_args_); }

 private:
  size_t num_types_, num_args_;
  std::unique_ptr<const char*[]> ptrs_;
};

/*!
 * The JSON metadata record of a function: `types` holds the result's schema first, then one per
 * parameter (empty: an untyped packed function, whose parameters are "Any" and whose number is
 * that of `args`); `ranges` the integer parameters' ranges ("int32"). Throws ValueError when the
 * names do not match the parameters.
 */
__attribute__((noinline, cold)) inline std::string MetadataJson(
    const std::string& name, const std::vector<std::string>& types, const ArgList& args,
    const char* doc = nullptr, const std::vector<const char*>& ranges = {}) {
  SignatureArrays a(types, args);
  PFAny out{};
  CheckCallResult(PFFunctionBuildMetadataRanges(name.c_str(), a.types(), a.num_types(), a.names(),
                                                a.defaults(), a.num_args(), doc, ranges.data(),
                                                static_cast<int32_t>(ranges.size()), &out));
  return TakeStdString(&out);
}

/*! How a typed Function names its parameters in argument errors. */
struct ParamNames {
  std::string label;               // "mylib.add(a: int, b: int) -> int"
  std::vector<std::string> names;  // one per parameter; empty: errors give positions
};

/*! The ParamNames of a typed function `name` with type schemas `types` (result first) and
 *  argument list `args`; empty when `args` is empty or does not fit. */
__attribute__((noinline, cold)) inline ParamNames MakeParamNames(
    const std::string& name, const std::vector<std::string>& types, const ArgList& args) {
  ParamNames out;
  if (args.empty() || types.size() != args.size() + 1) return out;
  SignatureArrays a(types, args);
  PFAny label{};
  CheckCallResult(PFFunctionBuildLabel(name.c_str(), a.types(), a.num_types(), a.names(),
                                       a.num_args(), &label));
  out.label = TakeStdString(&label);
  for (const Arg& arg : args) out.names.emplace_back(arg.name);
  return out;
}

/*! Attaches `json` to the Function object `func` (borrowed); throws on failure. */
inline void SetFunctionMetadata(PFObject* func, const std::string& json) {
  PFByteArray text{json.data(), json.size()};
  CheckCallResult(PFFunctionSetMetadata(func, &text));
}

}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_SIGNATURE_H_
