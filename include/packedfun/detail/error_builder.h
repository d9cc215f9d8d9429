// Internal: the light stream that PACKEDFUN_THROW / PACKEDFUN_CHECK messages are written into.
#ifndef PACKEDFUN_DETAIL_ERROR_BUILDER_H_
#define PACKEDFUN_DETAIL_ERROR_BUILDER_H_

#include <packedfun/c_api.h>
#include <packedfun/detail/bytes_any.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <utility>

namespace packedfun {
namespace detail {

/*! Appends a double printed with the fewest digits that read back as the same value. */
inline void AppendDouble(std::string* out, double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.15g", v);
  if (std::strtod(buf, nullptr) != v) std::snprintf(buf, sizeof(buf), "%.17g", v);
  *out += buf;
}

/*! The DLPack device type name ("cpu", "cuda", ...), or NULL when it has none. */
inline const char* DeviceTypeName(int32_t device_type) noexcept {
  switch (device_type) {
    case kDLCPU:
      return "cpu";
    case kDLCUDA:
      return "cuda";
    case kDLCUDAHost:
      return "cuda_host";
    case kDLOpenCL:
      return "opencl";
    case kDLVulkan:
      return "vulkan";
    case kDLMetal:
      return "metal";
    case kDLROCM:
      return "rocm";
    case kDLROCMHost:
      return "rocm_host";
    case kDLCUDAManaged:
      return "cuda_managed";
    case kDLOneAPI:
      return "oneapi";
    case kDLWebGPU:
      return "webgpu";
    case kDLHexagon:
      return "hexagon";
    default:
      return nullptr;
  }
}

/*!
 * Accumulates an error message with `<<`. Knows strings, numbers, enums, pointers, booleans,
 * DLDataType and DLDevice; other types print through one of those (e.g. `x.c_str()`).
 * With a prefix, the first piece streamed after it is separated by ": ".
 */
class ErrorBuilder {
 public:
  explicit ErrorBuilder(const char* kind) : kind_(kind) {}
  ErrorBuilder(const char* kind, std::string prefix)
      : kind_(kind), text_(std::move(prefix)), separator_pending_(true) {}

  /*! The builder as an lvalue, so that free operator<< overloads apply to the first piece. */
  ErrorBuilder& self() noexcept { return *this; }

  ErrorBuilder& operator<<(const char* s) { return Append(s ? s : "(null)"); }
  ErrorBuilder& operator<<(const std::string& s) { return Append(s.data(), s.size()); }
  ErrorBuilder& operator<<(std::string_view s) { return Append(s.data(), s.size()); }
  ErrorBuilder& operator<<(char c) { return Append(&c, 1); }
  ErrorBuilder& operator<<(bool b) { return Append(b ? "true" : "false"); }
  ErrorBuilder& operator<<(double v) {
    Separate();
    AppendDouble(&text_, v);
    return *this;
  }
  ErrorBuilder& operator<<(float v) { return *this << static_cast<double>(v); }
  ErrorBuilder& operator<<(const void* p) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%p", p);
    return Append(buf);
  }
  template <typename T, typename = std::enable_if_t<
                            (std::is_integral<T>::value || std::is_enum<T>::value) &&
                            !std::is_same<T, bool>::value && !std::is_same<T, char>::value>>
  ErrorBuilder& operator<<(T v) {
    if constexpr (std::is_enum<T>::value) {
      return *this << static_cast<std::underlying_type_t<T>>(v);
    } else if constexpr (std::is_signed<T>::value) {
      return Append(std::to_string(static_cast<long long>(v)));
    } else {
      return Append(std::to_string(static_cast<unsigned long long>(v)));
    }
  }
  ErrorBuilder& operator<<(DLDataType dtype) {
    PFAny text{};
    if (PFDataTypeToString(dtype, &text) != 0) {
      PFObject* ignored = nullptr;
      PFErrorMoveFromRaised(&ignored);
      PFObjectDecRef(ignored);
      return Append("<invalid dtype>");
    }
    PFByteArray bytes = AnyBytes(text);
    Append(bytes.data, bytes.size);
    PFAnyRelease(&text);
    return *this;
  }
  ErrorBuilder& operator<<(DLDevice device) {
    const char* name = DeviceTypeName(device.device_type);
    std::string s = name ? name : std::to_string(static_cast<int>(device.device_type));
    s += ':';
    s += std::to_string(device.device_id);
    return Append(s);
  }

  const char* kind() const noexcept { return kind_; }
  const std::string& text() const noexcept { return text_; }

  /*! Throws packedfun::Error(kind, text) (defined in error.h). */
  [[noreturn]] void Throw();

 private:
  void Separate() {
    if (separator_pending_) {
      text_ += ": ";
      separator_pending_ = false;
    }
  }
  ErrorBuilder& Append(const char* data, size_t size) {
    Separate();
    text_.append(data, size);
    return *this;
  }
  ErrorBuilder& Append(const char* s) { return Append(s, std::char_traits<char>::length(s)); }
  ErrorBuilder& Append(const std::string& s) { return Append(s.data(), s.size()); }

  const char* kind_;
  std::string text_;
  bool separator_pending_ = false;
};

/*! `ErrorThrower() & builder << ...` throws once the whole message is streamed. Out of line on
 *  purpose: the call then sits in the user's function, so the return address that the error's
 *  backtrace records maps (through debug information) to the line of PACKEDFUN_THROW/CHECK. */
struct ErrorThrower {
  [[noreturn]] __attribute__((noinline, cold)) friend void operator&(ErrorThrower,
                                                                     ErrorBuilder& builder) {
    builder.Throw();
  }
};

/*! The result of a binary check: ok, or the two operands printed as "a vs. b". */
struct CheckOpResult {
  bool ok;
  std::string values;
};

struct CheckOpEq {
  template <typename A, typename B>
  static bool Apply(const A& a, const B& b) {
    return a == b;
  }
};
struct CheckOpNe {
  template <typename A, typename B>
  static bool Apply(const A& a, const B& b) {
    return a != b;
  }
};
struct CheckOpLt {
  template <typename A, typename B>
  static bool Apply(const A& a, const B& b) {
    return a < b;
  }
};
struct CheckOpLe {
  template <typename A, typename B>
  static bool Apply(const A& a, const B& b) {
    return a <= b;
  }
};
struct CheckOpGt {
  template <typename A, typename B>
  static bool Apply(const A& a, const B& b) {
    return a > b;
  }
};
struct CheckOpGe {
  template <typename A, typename B>
  static bool Apply(const A& a, const B& b) {
    return a >= b;
  }
};

template <typename Op, typename A, typename B>
inline CheckOpResult CheckBinary(const A& a, const B& b) {
  if (Op::Apply(a, b)) return CheckOpResult{true, std::string()};
  ErrorBuilder values("");
  values << a << " vs. " << b;
  return CheckOpResult{false, values.text()};
}

}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_DETAIL_ERROR_BUILDER_H_
