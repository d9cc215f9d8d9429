// Test support for the C++ API tests: run code that must throw a packedfun::Error and return it.
#ifndef PACKEDFUN_TESTS_CPP_CATCH_ERROR_H_
#define PACKEDFUN_TESTS_CPP_CATCH_ERROR_H_

#include <gtest/gtest.h>
#include <packedfun/packedfun.h>

/*! Runs `fn`, expecting a packedfun::Error; returns it (a failure is recorded when none is thrown).
 */
template <typename F>
packedfun::Error Catch(F fn) {
  try {
    fn();
  } catch (const packedfun::Error& e) {
    return e;
  }
  ADD_FAILURE() << "no packedfun::Error was thrown";
  return packedfun::Error("None", "none");
}

#endif  // PACKEDFUN_TESTS_CPP_CATCH_ERROR_H_
