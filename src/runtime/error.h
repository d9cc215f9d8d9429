// Private runtime helpers for raising errors and guarding extern "C" entry points.
//
// Every entry point of c_api.h that returns int is written as
//
//   int PFFooBar(...) {
//     return packedfun::detail::Guard([&] {
//       if (bad) return packedfun::detail::RaiseError("ValueError", "PFFooBar: why");
//       ...                                  // may throw: std::bad_alloc -> MemoryError,
//       return 0;                            // detail::Exception -> its kind, std::exception ->
//     });                                    // RuntimeError (what() as message)
//   }
//
// RaiseError stores a fresh Error (native backtrace captured cheaply, symbolized lazily) in the
// calling thread's error slot and returns -1. Throw() raises a detail::Exception that the Guard
// converts the same way, for errors detected deep inside helpers.
#ifndef PACKEDFUN_SRC_INTERNAL_ERROR_H_
#define PACKEDFUN_SRC_INTERNAL_ERROR_H_

#include <packedfun/c_api.h>
#include <packedfun/detail/forced_unwind.h>

#include <exception>
#include <string>
#include <string_view>

namespace packedfun {
namespace detail {

/*! An error of a given kind travelling inside the runtime as a C++ exception. */
class Exception : public std::exception {
 public:
  Exception(std::string kind, std::string message)
      : kind_(std::move(kind)), message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }
  const std::string& kind() const noexcept { return kind_; }
  const std::string& message() const noexcept { return message_; }

 private:
  std::string kind_;
  std::string message_;
};

/*! Thrown when a nested entry point already stored its error in the slot: the guard returns -1
 *  and leaves the slot as it is. */
struct AlreadyRaised {};

/*! Throws detail::Exception(kind, message). */
[[noreturn]] void Throw(const char* kind, std::string message);

/*! Throws AlreadyRaised unless `rc` (the return of a nested c_api.h call) is 0. */
inline void CheckCall(int rc) {
  if (rc != 0) throw AlreadyRaised{};
}

/*! Creates an Error of `kind` with `message` (native stack captured) and stores it in the calling
 *  thread's error slot. Never fails (falls back to a preallocated MemoryError). Returns -1. */
int RaiseError(std::string_view kind, std::string_view message) noexcept;

/*! Converts the exception being handled (call only inside a catch block) into a raised error.
 *  Returns -1. */
int RaiseCurrentException() noexcept;

/*! Runs `body` (returning int) and turns any C++ exception it throws into a raised error. */
template <class F>
inline int Guard(F&& body) {
  try {
    return body();
  } catch (...) {
    PACKEDFUN_RETHROW_FORCED_UNWIND  // a body dropping a reference may run a binding's deleter
        return RaiseCurrentException();
  }
}

/*! A new Error object (new ref). `backtrace` NULL captures the native stack. Throws bad_alloc. */
PFObject* NewError(std::string_view kind, std::string_view message, const PFByteArray* backtrace,
                   PFObject* cause);

/*! Admits the calling thread into code a binding owns (its deleters, its guarded callables), for
 *  the object's lifetime (env.cc). A thread that holds the lock, or any thread when no binding
 *  installed lock hooks, is always admitted. Another one is admitted only until the language is
 *  shutting down (PFEnvCloseLock, or the `gone` hook), and is counted meanwhile, so that
 *  PFEnvCloseLock waits for it: a thread admitted just before finalization must not enter the
 *  language once finalization has destroyed it. Not admitted, the caller must not run that code
 *  (a deleter's resource is leaked, the process is ending). */
class BindingEntry {
 public:
  BindingEntry() noexcept;
  ~BindingEntry();
  BindingEntry(const BindingEntry&) = delete;
  BindingEntry& operator=(const BindingEntry&) = delete;
  bool admitted() const noexcept { return admitted_; }

 private:
  bool admitted_ = true;
  bool counted_ = false;
};

/*! The calling thread's pending error (borrowed), or NULL: lets a hook report by raising. */
PFObject* PeekRaised() noexcept;

/*! Stores `error` in the calling thread's slot, taking over (stealing) the caller's reference. */
void SetRaisedSteal(PFObject* error) noexcept;

}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_SRC_INTERNAL_ERROR_H_
