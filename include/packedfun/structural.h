// Structural equality and hashing of values in C++ (over the ABI 1.3 PFStructural* entry points).
#ifndef PACKEDFUN_STRUCTURAL_H_
#define PACKEDFUN_STRUCTURAL_H_

#include <packedfun/any.h>
#include <packedfun/array.h>
#include <packedfun/c_api.h>
#include <packedfun/error.h>
#include <packedfun/function.h>
#include <packedfun/string.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

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

/*! Where a value sits below a root: `root.body[3]["k"]`. One side of a structural mismatch (its
 *  last step may say that this side lacks the item), or built with Attr/ArrayItem/MapItem. */
class AccessPath {
 public:
  /*! Step kinds, as PFStructuralFirstMismatch numbers them. */
  enum Kind : int64_t {
    kAttr = kPFAccessAttr,
    kArrayItem = kPFAccessArrayItem,
    kMapItem = kPFAccessMapItem,
    kAttrMissing = kPFAccessAttrMissing,
    kArrayItemMissing = kPFAccessArrayItemMissing,
    kMapItemMissing = kPFAccessMapItemMissing,
  };
  struct Step {
    Kind kind;
    Any value;  // the field name (a String), the index (an int) or the key
  };

  AccessPath() = default;  // the root
  explicit AccessPath(std::vector<Step> steps) : steps_(std::move(steps)) {}

  const std::vector<Step>& steps() const noexcept { return steps_; }
  AccessPath Attr(const std::string& name, bool missing = false) const {
    return With({missing ? kAttrMissing : kAttr, Any(String(name))});
  }
  AccessPath ArrayItem(int64_t index, bool missing = false) const {
    return With({missing ? kArrayItemMissing : kArrayItem, Any(index)});
  }
  AccessPath MapItem(Any key, bool missing = false) const {
    return With({missing ? kMapItemMissing : kMapItem, std::move(key)});
  }
  /*! Whether `other` starts with every step of this path. */
  bool IsPrefixOf(const AccessPath& other) const {
    if (steps_.size() > other.steps_.size()) return false;
    for (size_t i = 0; i < steps_.size(); ++i) {
      if (!SameStep(steps_[i], other.steps_[i])) return false;
    }
    return true;
  }
  bool operator==(const AccessPath& other) const {
    return steps_.size() == other.steps_.size() && IsPrefixOf(other);
  }
  bool operator!=(const AccessPath& other) const { return !(*this == other); }
  /*! The path as Python prints it, `root.body[<missing:3>]` (written by the runtime). */
  std::string ToString() const {
    static const Function str = Function::GetGlobalRequired("packedfun.access_path_str");
    return std::string(str(AsArray()).cast<String>().c_str());
  }
  /*! The steps as the runtime takes them: an Array of [kind, value]. */
  Array<Any> AsArray() const {
    std::vector<Any> items;
    items.reserve(steps_.size());
    for (const Step& s : steps_) items.push_back(Any(Array<Any>{Any(int64_t{s.kind}), s.value}));
    return Array<Any>(items);
  }

 private:
  AccessPath With(Step step) const {
    std::vector<Step> steps = steps_;
    steps.push_back(std::move(step));
    return AccessPath(std::move(steps));
  }
  static bool SameStep(const Step& a, const Step& b) {
    return a.kind == b.kind && StructuralEqual(a.value, b.value);
  }
  std::vector<Step> steps_;
};

/*! The first difference between `a` and `b` as one access path per side (lhs, rhs), or nullopt
 *  when they are equal; sequences and maps of different sizes differ at the first item one side
 *  lacks, which that side's path marks as missing (PFStructuralFirstMismatch). */
inline std::optional<std::pair<AccessPath, AccessPath>> StructuralFirstMismatch(const Any& a,
                                                                                const Any& b) {
  PFAny out{};
  detail::CheckCallResult(PFStructuralFirstMismatch(&a.raw(), &b.raw(), &out));
  Any sides = detail::AnyUnsafe::MoveFromPFAny(&out);
  if (sides.type_index() == kPFTypeNone) return std::nullopt;
  AccessPath paths[2];
  Array<Any> both = sides.cast<Array<Any>>();
  for (int side = 0; side < 2; ++side) {
    std::vector<AccessPath::Step> steps;
    for (const Any& step : both[side].cast<Array<Any>>()) {
      Array<Any> pair = step.cast<Array<Any>>();
      steps.push_back({static_cast<AccessPath::Kind>(pair[0].cast<int64_t>()), pair[1]});
    }
    paths[side] = AccessPath(std::move(steps));
  }
  return std::make_pair(std::move(paths[0]), std::move(paths[1]));
}

}  // namespace packedfun

#endif  // PACKEDFUN_STRUCTURAL_H_
