// String and bytes entry points of c_api.h: small inline form or one-allocation objects.
#include <cstdlib>
#include <cstring>
#include <new>

#include "runtime/error.h"
#include "runtime/object.h"
#include "runtime/string.h"

namespace packedfun {
namespace detail {
namespace {

void FreeBytesObject(PFObject* obj) noexcept { std::free(obj); }

PFAny MakeSmall(int32_t type_index, std::string_view text) noexcept {
  PFAny v;
  v.type_index = type_index;
  v.small_len = static_cast<uint32_t>(text.size());
  v.v_int64 = 0;
  if (!text.empty()) std::memcpy(v.v_bytes, text.data(), text.size());
  return v;
}

std::string_view ViewOfBytesObject(PFObject* obj) noexcept {
  auto* b = As<PFBytesObject>(obj);
  return std::string_view(b->bytes.data, b->bytes.size);
}

std::string_view ViewOfByteArray(const void* p) noexcept {
  auto* a = static_cast<const PFByteArray*>(p);
  if (a == nullptr || a->size == 0) return {};
  return std::string_view(a->data, a->size);
}

}  // namespace

PFObject* NewBytesObject(int32_t type_index, std::string_view text) {
  void* mem = std::malloc(sizeof(PFBytesObject) + text.size() + 1);
  if (mem == nullptr) throw std::bad_alloc();
  auto* obj = static_cast<PFBytesObject*>(mem);
  InitHeader(&obj->header, type_index, &FreeBytesObject);
  char* data = reinterpret_cast<char*>(obj + 1);
  if (!text.empty()) std::memcpy(data, text.data(), text.size());
  data[text.size()] = '\0';
  obj->bytes.data = data;
  obj->bytes.size = text.size();
  return &obj->header;
}

PFAny MakeStringAny(std::string_view text) {
  if (text.size() <= 7) return MakeSmall(kPFTypeSmallStr, text);
  return ObjectAny(NewBytesObject(kPFTypeString, text));
}

PFAny MakeBytesAny(std::string_view text) {
  if (text.size() <= 7) return MakeSmall(kPFTypeSmallBytes, text);
  return ObjectAny(NewBytesObject(kPFTypeBytes, text));
}

bool AnyIsString(const PFAny& v) noexcept {
  switch (v.type_index) {
    case kPFTypeSmallStr:
    case kPFTypeRawStr:
    case kPFTypeStrView:
    case kPFTypeString:
      return true;
    default:
      return false;
  }
}

bool AnyIsBytes(const PFAny& v) noexcept {
  return v.type_index == kPFTypeSmallBytes || v.type_index == kPFTypeBytesView ||
         v.type_index == kPFTypeBytes;
}

bool AnyToStringView(const PFAny& v, bool allow_bytes, std::string_view* out) noexcept {
  if (!AnyIsString(v) && !(allow_bytes && AnyIsBytes(v))) return false;
  switch (v.type_index) {
    case kPFTypeSmallStr:
    case kPFTypeSmallBytes:
      *out = std::string_view(v.v_bytes, v.small_len);
      return true;
    case kPFTypeRawStr:
      *out = v.v_c_str != nullptr ? std::string_view(v.v_c_str) : std::string_view();
      return true;
    case kPFTypeStrView:
    case kPFTypeBytesView:
      *out = ViewOfByteArray(v.v_ptr);
      return true;
    default:
      *out = ViewOfBytesObject(v.v_obj);
      return true;
  }
}

}  // namespace detail
}  // namespace packedfun

using namespace packedfun::detail;

extern "C" {

PACKEDFUN_API int PFStringCreate(const PFByteArray* bytes, PFAny* out) {
  std::string_view text = ViewOfByteArray(bytes);
  if (text.size() <= 7) {
    *out = MakeSmall(kPFTypeSmallStr, text);
    return 0;
  }
  return Guard([&] {
    *out = ObjectAny(NewBytesObject(kPFTypeString, text));
    return 0;
  });
}

PACKEDFUN_API int PFBytesCreate(const PFByteArray* bytes, PFAny* out) {
  return Guard([&] {
    *out = MakeBytesAny(ViewOfByteArray(bytes));
    return 0;
  });
}

}  // extern "C"
