// "testing.str_*" functions: how string parameters are borrowed (c_str() in place, string_view).
#include <packedfun/packedfun.h>

#include <cstring>
#include <mutex>
#include <string_view>

namespace packedfun {
namespace testing {
namespace {

/*! Whether c_str()/data() of a parameter returned the bytes it already pointed at (no copy). */
template <typename T>
bool DataInPlace(const T& s) {
  const char* before = s.view().data();
  return s.data() == before && s.data()[s.size()] == '\0';
}

/*! Parameters kept past their call: each must have become an owned copy. */
std::mutex kept_mutex;
String kept_string;
Bytes kept_bytes;

}  // namespace

PACKEDFUN_REGISTER_GLOBAL("testing.str_c_str_in_place")
    .set_body_typed([](const String& s) { return DataInPlace(s); })
    .describe("Whether c_str() of a String parameter returned the caller's bytes (no copy).")
    .gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.bytes_data_in_place")
    .set_body_typed([](const Bytes& b) { return DataInPlace(b); })
    .describe("Whether data() of a Bytes parameter returned the caller's bytes (no copy).")
    .gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.str_strlen")
    .set_body_typed([](String s) { return static_cast<int64_t>(std::strlen(s.c_str())); })
    .describe("strlen(c_str()) of a String parameter: where its first NUL is.")
    .gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.str_view_len")
    .set_body_typed([](std::string_view s) { return static_cast<int64_t>(s.size()); })
    .describe("The size of a std::string_view parameter.")
    .gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.str_view_echo")
    .set_body_typed([](int64_t skip, std::string_view s) {
      return s.substr(static_cast<size_t>(skip) < s.size() ? static_cast<size_t>(skip) : s.size());
    })
    .describe("Returns a std::string_view parameter without its first `skip` bytes.")
    .gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.str_keep")
    .set_body_typed([](const String& s, const Bytes& b) {
      std::lock_guard<std::mutex> lock(kept_mutex);
      kept_string = s;
      kept_bytes = b;
      return kept_string.is_borrowed() || kept_bytes.is_borrowed();
    })
    .describe("Stores its parameters past the call; returns whether a stored one still borrows.")
    .gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("testing.str_kept")
    .set_body_typed([]() {
      std::lock_guard<std::mutex> lock(kept_mutex);
      return Array<Any>({Any(kept_string), Any(kept_bytes)});
    })
    .describe("The String and Bytes that testing.str_keep stored, as an Array.")
    .gil(GILPolicy::kHold);

}  // namespace testing
}  // namespace packedfun
