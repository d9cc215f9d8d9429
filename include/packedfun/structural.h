// Structural equality and hashing of values in C++ (over the ABI 1.3 PFStructural* entry points).
#ifndef PACKEDFUN_STRUCTURAL_H_
#define PACKEDFUN_STRUCTURAL_H_

#include <packedfun/any.h>
#include <packedfun/c_api.h>
#include <packedfun/error.h>
#include <packedfun/string.h>

#include <cstdint>
#include <optional>
#include <string>

namespace packedfun {

/*! Whether `a` and `b` are equal by content (containers, reflected objects; see c_api.h). */
inline bool StructuralEqual(const Any& a, const Any& b) {
  int out = 0;
  detail::CheckCallResult(PFStructuralEqual(&a.raw(), &b.raw(), &out));
  return out != 0;
}

/*! A hash of `value`'s content; structurally equal values hash alike. */
inline uint64_t StructuralHash(const Any& value) {
  uint64_t out = 0;
  detail::CheckCallResult(PFStructuralHash(&value.raw(), &out));
  return out;
}

/*! The path of the first difference (e.g. "root.body[3].name"), or nullopt when equal. */
inline std::optional<std::string> StructuralFirstDifference(const Any& a, const Any& b) {
  PFAny out{};
  detail::CheckCallResult(PFStructuralFirstDifference(&a.raw(), &b.raw(), &out));
  if (out.type_index == kPFTypeNone) return std::nullopt;
  std::optional<std::string> path;
  try {
    path = std::string(AnyView::FromPFAny(out).cast<String>().c_str());
  } catch (...) {
    PFAnyRelease(&out);
    throw;
  }
  PFAnyRelease(&out);
  return path;
}

}  // namespace packedfun

#endif  // PACKEDFUN_STRUCTURAL_H_
