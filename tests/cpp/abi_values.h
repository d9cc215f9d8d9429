// Test support for the C-ABI tests: building PFAny values and reading the pending error.
#ifndef PACKEDFUN_TESTS_CPP_ABI_VALUES_H_
#define PACKEDFUN_TESTS_CPP_ABI_VALUES_H_

#include <packedfun/c_api.h>

#include <string>

/*! An int PFAny. */
inline PFAny Int(int64_t v) {
  PFAny a;
  a.type_index = kPFTypeInt;
  a.zero_padding = 0;
  a.v_int64 = v;
  return a;
}

/*! Moves the pending error out of the thread's slot and returns "Kind: message". */
inline std::string TakeError() {
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);
  if (err == nullptr) return "<no error>";
  auto* e = reinterpret_cast<PFErrorObject*>(err);
  std::string s = std::string(e->kind.data, e->kind.size) + ": " +
                  std::string(e->message.data, e->message.size);
  PFObjectDecRef(err);
  return s;
}

inline bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

#endif  // PACKEDFUN_TESTS_CPP_ABI_VALUES_H_
