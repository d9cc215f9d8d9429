// Data types and devices in C++: DLDataType/DLDevice constants, parsing, printing and comparison.
#ifndef PACKEDFUN_DTYPE_H_
#define PACKEDFUN_DTYPE_H_

#include <packedfun/c_api.h>
#include <packedfun/detail/bytes_any.h>
#include <packedfun/detail/type_name.h>
#include <packedfun/error.h>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

// DLDataType and DLDevice are DLPack's global structs, so their comparisons live where argument
// lookup finds them: kernels write `x->dtype == packedfun::kFloat32`.
inline constexpr bool operator==(DLDataType a, DLDataType b) noexcept {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}
inline constexpr bool operator!=(DLDataType a, DLDataType b) noexcept { return !(a == b); }
inline constexpr bool operator==(DLDevice a, DLDevice b) noexcept {
  return a.device_type == b.device_type && a.device_id == b.device_id;
}
inline constexpr bool operator!=(DLDevice a, DLDevice b) noexcept { return !(a == b); }

namespace packedfun {

/* ---- data types ------------------------------------------------------------------------------ */

/*! A scalar (or `lanes`-wide vector) DLDataType. */
constexpr DLDataType MakeDataType(DLDataTypeCode code, int bits, int lanes = 1) noexcept {
  return DLDataType{static_cast<uint8_t>(code), static_cast<uint8_t>(bits),
                    static_cast<uint16_t>(lanes)};
}

/*! The common data types, by name: kFloat32 is float32, kBFloat16 bfloat16, ... */
inline constexpr DLDataType kBool = MakeDataType(kDLBool, 8);
inline constexpr DLDataType kInt8 = MakeDataType(kDLInt, 8);
inline constexpr DLDataType kInt16 = MakeDataType(kDLInt, 16);
inline constexpr DLDataType kInt32 = MakeDataType(kDLInt, 32);
inline constexpr DLDataType kInt64 = MakeDataType(kDLInt, 64);
inline constexpr DLDataType kUInt8 = MakeDataType(kDLUInt, 8);
inline constexpr DLDataType kUInt16 = MakeDataType(kDLUInt, 16);
inline constexpr DLDataType kUInt32 = MakeDataType(kDLUInt, 32);
inline constexpr DLDataType kUInt64 = MakeDataType(kDLUInt, 64);
inline constexpr DLDataType kFloat16 = MakeDataType(kDLFloat, 16);
inline constexpr DLDataType kBFloat16 = MakeDataType(kDLBfloat, 16);
inline constexpr DLDataType kFloat32 = MakeDataType(kDLFloat, 32);
inline constexpr DLDataType kFloat64 = MakeDataType(kDLFloat, 64);
inline constexpr DLDataType kComplex64 = MakeDataType(kDLComplex, 64);
inline constexpr DLDataType kComplex128 = MakeDataType(kDLComplex, 128);

/*! Parses "float32", "int8x4", "bfloat16", "bool", "float8_e4m3fn", ...; throws ValueError. */
inline DLDataType DataTypeFromString(std::string_view text) {
  PFByteArray bytes{text.data(), text.size()};
  DLDataType out{0, 0, 0};
  detail::CheckCallResult(PFDataTypeFromString(&bytes, &out));
  return out;
}

/*! The name of `dtype` ("float32", "int8x4"); throws ValueError for an undefined type code. */
inline std::string DataTypeToString(DLDataType dtype) {
  PFAny out{};
  detail::CheckCallResult(PFDataTypeToString(dtype, &out));
  PFByteArray bytes = detail::AnyBytes(out);
  std::string s(bytes.data, bytes.size);
  PFAnyRelease(&out);
  return s;
}

/*! Bytes taken by one element (all lanes), rounded up for sub-byte types. */
constexpr int64_t DataTypeBytes(DLDataType dtype) noexcept {
  return (static_cast<int64_t>(dtype.bits) * dtype.lanes + 7) / 8;
}

/* ---- devices --------------------------------------------------------------------------------- */

/*! A device from its type and id; CPUDevice() and CUDADevice(id) are the common ones. */
constexpr DLDevice MakeDevice(DLDeviceType type, int32_t id = 0) noexcept {
  return DLDevice{type, id};
}
constexpr DLDevice CPUDevice() noexcept { return MakeDevice(kDLCPU, 0); }
constexpr DLDevice CUDADevice(int32_t id = 0) noexcept { return MakeDevice(kDLCUDA, id); }

namespace detail {

struct DeviceName {
  DLDeviceType type;
  const char* name;
};

/*! The names used by str(device) in Python, one per DLPack device type. */
inline const DeviceName* DeviceNames(size_t* count) noexcept {
  static const DeviceName kNames[] = {
      {kDLCPU, "cpu"},
      {kDLCUDA, "cuda"},
      {kDLCUDAHost, "cuda_host"},
      {kDLOpenCL, "opencl"},
      {kDLVulkan, "vulkan"},
      {kDLMetal, "metal"},
      {kDLVPI, "vpi"},
      {kDLROCM, "rocm"},
      {kDLROCMHost, "rocm_host"},
      {kDLExtDev, "ext_dev"},
      {kDLCUDAManaged, "cuda_managed"},
      {kDLOneAPI, "oneapi"},
      {kDLWebGPU, "webgpu"},
      {kDLHexagon, "hexagon"},
      {kDLMAIA, "maia"},
      {kDLTrn, "trn"},
  };
  *count = sizeof(kNames) / sizeof(kNames[0]);
  return kNames;
}

}  // namespace detail

/*! "cpu", "cuda", ... for a device type; "device_type(N)" for one DLPack does not name. */
inline std::string DeviceTypeName(DLDeviceType type) {
  size_t n = 0;
  const detail::DeviceName* names = detail::DeviceNames(&n);
  for (size_t i = 0; i < n; ++i) {
    if (names[i].type == type) return names[i].name;
  }
  return "device_type(" + std::to_string(static_cast<int>(type)) + ")";
}

/*! "cpu:0", "cuda:1". */
inline std::string DeviceToString(DLDevice device) {
  return DeviceTypeName(device.device_type) + ":" + std::to_string(device.device_id);
}

/*! Parses "cpu", "cuda:1", "rocm:0"; throws ValueError naming the text otherwise. */
inline DLDevice DeviceFromString(std::string_view text) {
  size_t colon = text.find(':');
  std::string_view type = text.substr(0, colon);
  int64_t id = 0;
  bool ok = true;
  if (colon != std::string_view::npos) {
    std::string_view digits = text.substr(colon + 1);
    ok = !digits.empty() && digits.size() <= 9;
    for (char c : digits) {
      ok = ok && c >= '0' && c <= '9';
      if (ok) id = id * 10 + (c - '0');
    }
  }
  size_t n = 0;
  const detail::DeviceName* names = detail::DeviceNames(&n);
  for (size_t i = 0; ok && i < n; ++i) {
    if (type == names[i].name) return MakeDevice(names[i].type, static_cast<int32_t>(id));
  }
  throw Error("ValueError", "cannot parse '" + std::string(text) +
                                "' as a device (expected e.g. 'cpu', 'cuda:1')");
}

namespace detail {
/*! The name of `dtype`, or "DLDataType(code=C, bits=B, lanes=L)" for an undefined type code:
 *  for printing, which must not fail. */
inline std::string DataTypeText(DLDataType dtype) {
  PFAny out{};
  if (PFDataTypeToString(dtype, &out) != 0) {
    DiscardRaised();
    return "DLDataType(code=" + std::to_string(dtype.code) +
           ", bits=" + std::to_string(dtype.bits) + ", lanes=" + std::to_string(dtype.lanes) + ")";
  }
  PFByteArray bytes = AnyBytes(out);
  std::string s(bytes.data, bytes.size);
  PFAnyRelease(&out);
  return s;
}
}  // namespace detail

/*! `to_string(dtype)` and `to_string(device)`: "float32", "cuda:1" (as DataTypeToString and
 *  DeviceToString), so generic code can write `using std::to_string; to_string(x)`. */
inline std::string to_string(DLDataType dtype) { return DataTypeToString(dtype); }
inline std::string to_string(DLDevice device) { return DeviceToString(device); }

}  // namespace packedfun

// Streaming into any std::ostream (`std::cout << x->dtype`): templates over the stream type, so
// this header needs only <iosfwd>; the caller that streams has included <ostream>.
template <typename CharT, typename Traits>
std::basic_ostream<CharT, Traits>& operator<<(std::basic_ostream<CharT, Traits>& os,
                                              DLDataType dtype) {
  return os << packedfun::detail::DataTypeText(dtype);
}
template <typename CharT, typename Traits>
std::basic_ostream<CharT, Traits>& operator<<(std::basic_ostream<CharT, Traits>& os,
                                              DLDevice device) {
  return os << packedfun::DeviceToString(device);
}

#endif  // PACKEDFUN_DTYPE_H_
