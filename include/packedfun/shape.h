// Shape: a typed reference to an immutable run of int64 (kPFTypeShape), e.g. a tensor's dims.
#ifndef PACKEDFUN_SHAPE_H_
#define PACKEDFUN_SHAPE_H_

#include <packedfun/c_api.h>
#include <packedfun/detail/container_details.h>
#include <packedfun/error.h>
#include <packedfun/object.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace packedfun {

/*!
 * An immutable tuple of int64. It also converts from an Array of ints (as a Python tuple of ints
 * arrives), copying it; a non-int element raises "Shape element [i]: expected int, got X".
 */
class Shape : public ObjectRef {
 public:
  static constexpr int32_t _type_static_index = kPFTypeShape;

  Shape() : Shape(nullptr, 0) {}
  Shape(std::initializer_list<int64_t> dims)  // NOLINT(runtime/explicit)
      : Shape(dims.begin(), static_cast<int64_t>(dims.size())) {}
  explicit Shape(const std::vector<int64_t>& dims)
      : Shape(dims.data(), static_cast<int64_t>(dims.size())) {}
  Shape(const int64_t* dims, int64_t ndim) {
    PFObject* out = nullptr;
    detail::CheckCallResult(PFShapeCreate(dims, ndim, &out));
    data_ = ObjectPtr<PFObject>::FromOwned(out);
  }

  const PFShapeObject* shape() const noexcept {
    return reinterpret_cast<const PFShapeObject*>(get());
  }
  int64_t size() const noexcept { return shape()->size; }
  bool empty() const noexcept { return size() == 0; }
  const int64_t* data() const noexcept { return shape()->data; }
  const int64_t* begin() const noexcept { return data(); }
  const int64_t* end() const noexcept { return data() + size(); }
  /*! Dimension i (negative counts from the end); IndexError when out of range. */
  int64_t operator[](int64_t i) const {
    int64_t j = i < 0 ? i + size() : i;
    if (j < 0 || j >= size()) {
      throw Error("IndexError", "Shape index " + std::to_string(i) + " out of range for size " +
                                    std::to_string(size()));
    }
    return data()[j];
  }
  /*! Product of the dimensions (1 for an empty shape). */
  int64_t numel() const noexcept {
    int64_t n = 1;
    for (int64_t d : *this) n *= d;
    return n;
  }
  /*! tvm-ffi's name of numel(). */
  int64_t Product() const noexcept { return numel(); }
  std::vector<int64_t> to_vector() const { return std::vector<int64_t>(begin(), end()); }

  static constexpr bool _type_is_nullable = false;
  static bool _type_accepts(int32_t type_index) noexcept {
    return type_index == kPFTypeShape || type_index == kPFTypeArray;
  }
  static std::string _type_name() { return "Shape"; }
  static Shape _type_try_from(PFObject* obj) {
    if (obj->type_index == kPFTypeShape) return Shape(ObjectPtr<PFObject>::FromBorrowed(obj));
    const PFSeqObject* s = reinterpret_cast<const PFSeqObject*>(obj);
    std::vector<int64_t> dims(static_cast<size_t>(s->size));
    for (int64_t i = 0; i < s->size; ++i) {
      const PFAny& v = s->data[i];
      if (v.type_index != kPFTypeInt) {
        throw Error("TypeError", "Shape element [" + std::to_string(i) + "]: expected int, got " +
                                     detail::AnyTypeName(v));
      }
      dims[static_cast<size_t>(i)] = v.v_int64;
    }
    return Shape(dims);
  }

 private:
  explicit Shape(ObjectPtr<PFObject> p) noexcept : ObjectRef(std::move(p)) {}
};

}  // namespace packedfun

#endif  // PACKEDFUN_SHAPE_H_
