// Data type entry points of c_api.h: parsing and printing DLPack DLDataType names.
#include <cstring>
#include <string>
#include <string_view>

#include "runtime/error.h"
#include "runtime/object.h"
#include "runtime/string.h"
#include "runtime/tensor.h"

namespace packedfun {
namespace detail {
namespace {

/*! A type code whose name carries its bit width ("int32", "float16"): any width 1..255 parses. */
struct SizedName {
  const char* prefix;
  uint8_t code;
};

/*! A type code whose name fixes its bit width ("float8_e4m3fn" is always 8 bits wide). */
struct FixedName {
  const char* name;
  uint8_t code;
  uint8_t bits;
};

// Fixed names are tried first, so "bool" and "handle" print without their default widths, and a
// sized prefix only matches when everything after it is a decimal width.
constexpr SizedName kSizedNames[] = {
    {"int", kDLInt},         {"uint", kDLUInt}, {"float", kDLFloat},         {"bfloat", kDLBfloat},
    {"complex", kDLComplex}, {"bool", kDLBool}, {"handle", kDLOpaqueHandle},
};

constexpr FixedName kFixedNames[] = {
    {"bool", kDLBool, 8},
    {"handle", kDLOpaqueHandle, 64},
    {"float8_e3m4", kDLFloat8_e3m4, 8},
    {"float8_e4m3", kDLFloat8_e4m3, 8},
    {"float8_e4m3b11fnuz", kDLFloat8_e4m3b11fnuz, 8},
    {"float8_e4m3fn", kDLFloat8_e4m3fn, 8},
    {"float8_e4m3fnuz", kDLFloat8_e4m3fnuz, 8},
    {"float8_e5m2", kDLFloat8_e5m2, 8},
    {"float8_e5m2fnuz", kDLFloat8_e5m2fnuz, 8},
    {"float8_e8m0fnu", kDLFloat8_e8m0fnu, 8},
    {"float6_e2m3fn", kDLFloat6_e2m3fn, 6},
    {"float6_e3m2fn", kDLFloat6_e3m2fn, 6},
    {"float4_e2m1fn", kDLFloat4_e2m1fn, 4},
};

/*! Parses a non-empty run of decimal digits no greater than `max` (no sign, no leading '+'). */
bool ParseCount(std::string_view digits, uint32_t max, uint32_t* out) {
  if (digits.empty() || digits.size() > 6) return false;
  uint32_t value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint32_t>(c - '0');
  }
  if (value == 0 || value > max) return false;
  *out = value;
  return true;
}

/*! Splits a trailing "x<lanes>" off `text`; lanes is 1 when there is none. */
bool SplitLanes(std::string_view* text, uint32_t* lanes) {
  *lanes = 1;
  size_t end = text->size();
  size_t pos = end;
  while (pos > 0 && (*text)[pos - 1] >= '0' && (*text)[pos - 1] <= '9') --pos;
  if (pos == end || pos < 2 || (*text)[pos - 1] != 'x') return true;
  if (!ParseCount(text->substr(pos), 0xFFFF, lanes)) return false;
  *text = text->substr(0, pos - 1);
  return true;
}

/*! Parses the scalar part (no lanes) of a type name. */
bool ParseScalar(std::string_view base, DLDataType* out) {
  for (const FixedName& f : kFixedNames) {
    if (base == f.name) {
      *out = DLDataType{f.code, f.bits, 1};
      return true;
    }
  }
  for (const SizedName& s : kSizedNames) {
    size_t len = std::strlen(s.prefix);
    if (base.size() <= len || base.substr(0, len) != s.prefix) continue;
    uint32_t bits = 0;
    if (!ParseCount(base.substr(len), 255, &bits)) return false;
    *out = DLDataType{s.code, static_cast<uint8_t>(bits), 1};
    return true;
  }
  return false;
}

/*! The name of a scalar type, or an empty string for an unknown code. */
std::string ScalarName(DLDataType dtype) {
  for (const FixedName& f : kFixedNames) {
    if (dtype.code == f.code && dtype.bits == f.bits) return f.name;
  }
  for (const SizedName& s : kSizedNames) {
    if (dtype.code == s.code) return s.prefix + std::to_string(dtype.bits);
  }
  return std::string();
}

}  // namespace

/*! Parses a type name; throws ValueError naming the text when it is not one. */
DLDataType ParseDataType(std::string_view text) {
  std::string_view base = text;
  uint32_t lanes = 1;
  DLDataType dtype{0, 0, 0};
  // Whole-name first: "complex128" ends in "x128" but has no lanes.
  bool ok = ParseScalar(text, &dtype) ||
            (SplitLanes(&base, &lanes) && base.size() != text.size() && ParseScalar(base, &dtype));
  if (!ok) {
    Throw("ValueError", "cannot parse '" + std::string(text) +
                            "' as a data type (expected e.g. 'float32', 'int8x4', 'bool', "
                            "'bfloat16', 'float8_e4m3fn', 'complex64')");
  }
  dtype.lanes = static_cast<uint16_t>(lanes);
  return dtype;
}

/*! Prints a type; throws ValueError for a type code DLPack does not define or zero bits/lanes. */
std::string DataTypeName(DLDataType dtype) {
  std::string name = dtype.bits == 0 || dtype.lanes == 0 ? std::string() : ScalarName(dtype);
  if (name.empty()) {
    Throw("ValueError", "not a valid DLPack data type: code=" + std::to_string(dtype.code) +
                            " bits=" + std::to_string(dtype.bits) +
                            " lanes=" + std::to_string(dtype.lanes));
  }
  if (dtype.lanes != 1) name += "x" + std::to_string(dtype.lanes);
  return name;
}

}  // namespace detail
}  // namespace packedfun

using namespace packedfun::detail;

extern "C" {

PACKEDFUN_API int PFDataTypeFromString(const PFByteArray* text, DLDataType* out) {
  if (text == nullptr || out == nullptr || (text->data == nullptr && text->size != 0)) {
    return RaiseError("ValueError", "PFDataTypeFromString: text and out must not be NULL");
  }
  return Guard([&] {
    *out = ParseDataType(std::string_view(text->data, text->size));
    return 0;
  });
}

PACKEDFUN_API int PFDataTypeToString(DLDataType dtype, PFAny* out) {
  if (out == nullptr) return RaiseError("ValueError", "PFDataTypeToString: out is NULL");
  return Guard([&] {
    *out = MakeStringAny(DataTypeName(dtype));
    return 0;
  });
}

}  // extern "C"
