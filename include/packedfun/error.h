// Errors in C++: packedfun::Error over a PFErrorObject, the throw/check macros, exception mapping.
#ifndef PACKEDFUN_ERROR_H_
#define PACKEDFUN_ERROR_H_

#include <packedfun/c_api.h>
#include <packedfun/detail/error_builder.h>
#include <packedfun/detail/forced_unwind.h>
#include <packedfun/object.h>

#include <exception>
#include <new>
#include <stdexcept>
#include <string>

namespace packedfun {

/*!
 * An error with a kind ("ValueError", ...), a message, a backtrace and an optional cause. It
 * wraps a PFErrorObject, so an error that crosses the C ABI and comes back is the same object,
 * with its kind, message, cause and backtrace intact. The runtime builds the error (PFErrorNew:
 * the native backtrace captured when the Error is created, symbolized only when backtrace() is
 * asked for) and the "Kind: message" text of what() (PFErrorGetWhat, on its first call, since an
 * error crossing into another language never reads it); copies share the error object.
 */
class Error : public std::exception {
 public:
  /*! A new error capturing the current native stack. */
  Error(const std::string& kind, const std::string& message) {
    Init(kind.data(), kind.size(), message.data(), message.size(), nullptr);
  }
  /*! As above, for the usual spelling `throw Error("ValueError", "...")`: no std::string is
   *  built for either text (the runtime copies the bytes into the error once). NULL reads as "". */
  Error(const char* kind, const char* message) {
    Init(kind, Length(kind), message, Length(message), nullptr);
  }
  /*! As above, for `throw Error("ValueError", "..." + detail)`. */
  Error(const char* kind, const std::string& message) {
    Init(kind, Length(kind), message.data(), message.size(), nullptr);
  }
  /*! A new error with a backtrace text given by its producer. */
  Error(const std::string& kind, const std::string& message, const std::string& backtrace) {
    PFByteArray bt{backtrace.data(), backtrace.size()};
    Init(kind.data(), kind.size(), message.data(), message.size(), &bt);
  }
  /*! Wraps an existing error object (a PFErrorObject), sharing it. */
  static Error FromObject(ObjectPtr<PFObject> error) noexcept {
    Error e;
    e.obj_ = std::move(error);
    return e;
  }

  std::string kind() const { return Part(true); }
  std::string message() const { return Part(false); }
  /*! "Kind: message", built on the first call; valid as long as this Error (or a copy), and safe
   *  to call from several threads at once. */
  const char* what() const noexcept override { return PFErrorGetWhat(obj_.get()); }
  /*! The backtrace text, innermost frame first (symbolized on first request). */
  std::string backtrace() const {
    PFByteArray bt{nullptr, 0};
    if (!obj_ || PFErrorGetBacktrace(obj_.get(), &bt) != 0) return std::string();
    return std::string(bt.data, bt.size);
  }
  /*! The error's cause (e.g. an Opaque holding the original Python exception), or null. */
  ObjectRef cause() const {
    if (!obj_) return ObjectRef();
    PFObject* c = reinterpret_cast<const PFErrorObject*>(obj_.get())->cause;
    return ObjectRef(ObjectPtr<PFObject>::FromBorrowed(c));
  }
  /*! The underlying error object (borrowed); NULL only in a moved-from Error. */
  PFObject* get() const noexcept { return obj_.get(); }

  /*! As SetRaised, handing this Error's reference to the slot, which leaves this Error empty
   *  (moved-from): for a caught exception object that is destroyed right after. */
  void MoveToRaised() noexcept {
    if (obj_) {
      PFErrorMoveToRaised(obj_.release());
    } else {
      SetRaised();
    }
  }

  /*! Stores this error in the calling thread's error slot (for returning -1 from a PFSafeCall). */
  void SetRaised() const noexcept {
    if (obj_) {
      PFErrorSetRaised(obj_.get());
    } else {
      PFErrorSetRaisedFromCStr("InternalError", "a moved-from packedfun::Error was raised");
    }
  }

 private:
  Error() = default;
  // Out of line so that `throw Error(...)` in user code is a call from the user's own line: the
  // backtrace's innermost user frame then points at it, not at this header.
  __attribute__((noinline)) void Init(const char* kind, size_t kind_size, const char* message,
                                      size_t message_size, const PFByteArray* backtrace) {
    PFByteArray k{kind, kind_size}, m{message, message_size};
    obj_ = ObjectPtr<PFObject>::FromOwned(PFErrorNew(&k, &m, backtrace));
  }
  static size_t Length(const char* s) noexcept {
    return s != nullptr ? std::char_traits<char>::length(s) : 0;
  }
  std::string Part(bool kind) const {
    if (!obj_) return std::string();
    const PFErrorObject* raw = reinterpret_cast<const PFErrorObject*>(obj_.get());
    const PFByteArray& part = kind ? raw->kind : raw->message;
    return std::string(part.data, part.size);
  }

  ObjectPtr<PFObject> obj_;
};

namespace detail {

[[noreturn]] inline void ErrorBuilder::Throw() { throw Error(kind_, text_); }

/*! Throws the calling thread's pending error (after a failed ABI call) as packedfun::Error. */
[[noreturn]] __attribute__((noinline, cold)) inline void ThrowRaised() {
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);
  if (err == nullptr) {
    static constexpr char kKind[] = "InternalError";
    static constexpr char kMessage[] = "a call failed without setting an error";
    PFByteArray k{kKind, sizeof(kKind) - 1}, m{kMessage, sizeof(kMessage) - 1};
    err = PFErrorNew(&k, &m, nullptr);
  }
  throw Error::FromObject(ObjectPtr<PFObject>::FromOwned(err));
}

/*! Checks the return code of an ABI entry point, throwing the pending error on failure. */
inline void CheckCallResult(int rc) {
  if (rc != 0) ThrowRaised();
}

/*! Inside a catch block: stores the in-flight exception in the error slot and returns -1. Errors
 *  keep their kind; standard exceptions map to the closest Python kind. */
__attribute__((noinline, cold)) inline int SetRaisedFromCurrentException() noexcept {
  try {
    throw;
  } catch (const Error& e) {
    e.SetRaised();
  } catch (const std::bad_alloc& e) {
    PFErrorSetRaisedFromCStr("MemoryError", e.what());
  } catch (const std::invalid_argument& e) {
    PFErrorSetRaisedFromCStr("ValueError", e.what());
  } catch (const std::domain_error& e) {
    PFErrorSetRaisedFromCStr("ValueError", e.what());
  } catch (const std::out_of_range& e) {
    PFErrorSetRaisedFromCStr("IndexError", e.what());
  } catch (const std::overflow_error& e) {
    PFErrorSetRaisedFromCStr("OverflowError", e.what());
  } catch (const std::exception& e) {
    PFErrorSetRaisedFromCStr("RuntimeError", e.what());
  } catch (...) {
    PFErrorSetRaisedFromCStr("RuntimeError", "unknown C++ exception");
  }
  return -1;
}

}  // namespace detail
}  // namespace packedfun

/*! `PACKEDFUN_THROW(ValueError) << "bad value " << x;` throws Error("ValueError", ...). */
#define PACKEDFUN_THROW(Kind) \
  ::packedfun::detail::ErrorThrower() & ::packedfun::detail::ErrorBuilder(#Kind).self()

#define PACKEDFUN_CHECK_IMPL_(kind, cond) \
  if (cond) {                             \
  } else /* NOLINT */                     \
    ::packedfun::detail::ErrorThrower() & \
        ::packedfun::detail::ErrorBuilder(kind, "Check failed: (" #cond ") is false").self()

#define PACKEDFUN_CHECK_OP_IMPL_(kind, Op, op, a, b)                                       \
  if (::packedfun::detail::CheckOpResult pf_check_result_ =                                \
          ::packedfun::detail::CheckBinary<::packedfun::detail::Op>((a), (b));             \
      pf_check_result_.ok) {                                                               \
  } else /* NOLINT */                                                                      \
    ::packedfun::detail::ErrorThrower() &                                                  \
        ::packedfun::detail::ErrorBuilder(                                                 \
            kind, "Check failed: " #a " " #op " " #b " (" + pf_check_result_.values + ")") \
            .self()

/*! `PACKEDFUN_CHECK(x > 0) << "x must be positive";` throws a RuntimeError naming the condition. */
#define PACKEDFUN_CHECK(cond) PACKEDFUN_CHECK_IMPL_("RuntimeError", cond)
#define PACKEDFUN_CHECK_EQ(a, b) PACKEDFUN_CHECK_OP_IMPL_("RuntimeError", CheckOpEq, ==, a, b)
#define PACKEDFUN_CHECK_NE(a, b) PACKEDFUN_CHECK_OP_IMPL_("RuntimeError", CheckOpNe, !=, a, b)
#define PACKEDFUN_CHECK_LT(a, b) PACKEDFUN_CHECK_OP_IMPL_("RuntimeError", CheckOpLt, <, a, b)
#define PACKEDFUN_CHECK_LE(a, b) PACKEDFUN_CHECK_OP_IMPL_("RuntimeError", CheckOpLe, <=, a, b)
#define PACKEDFUN_CHECK_GT(a, b) PACKEDFUN_CHECK_OP_IMPL_("RuntimeError", CheckOpGt, >, a, b)
#define PACKEDFUN_CHECK_GE(a, b) PACKEDFUN_CHECK_OP_IMPL_("RuntimeError", CheckOpGe, >=, a, b)

/*! `PACKEDFUN_CHECK_KIND(n > 0, ValueError) << "n must be positive";` as PACKEDFUN_CHECK, raising
 *  an error of kind `Kind` (ValueError, TypeError, IndexError, ...; any name Python registered). */
#define PACKEDFUN_CHECK_KIND(cond, Kind) PACKEDFUN_CHECK_IMPL_(#Kind, cond)

/*! Internal invariants: as PACKEDFUN_CHECK*, with kind InternalError. */
#define PACKEDFUN_ICHECK(cond) PACKEDFUN_CHECK_IMPL_("InternalError", cond)
#define PACKEDFUN_ICHECK_EQ(a, b) PACKEDFUN_CHECK_OP_IMPL_("InternalError", CheckOpEq, ==, a, b)
#define PACKEDFUN_ICHECK_NE(a, b) PACKEDFUN_CHECK_OP_IMPL_("InternalError", CheckOpNe, !=, a, b)
#define PACKEDFUN_ICHECK_LT(a, b) PACKEDFUN_CHECK_OP_IMPL_("InternalError", CheckOpLt, <, a, b)
#define PACKEDFUN_ICHECK_LE(a, b) PACKEDFUN_CHECK_OP_IMPL_("InternalError", CheckOpLe, <=, a, b)
#define PACKEDFUN_ICHECK_GT(a, b) PACKEDFUN_CHECK_OP_IMPL_("InternalError", CheckOpGt, >, a, b)
#define PACKEDFUN_ICHECK_GE(a, b) PACKEDFUN_CHECK_OP_IMPL_("InternalError", CheckOpGe, >=, a, b)

#endif  // PACKEDFUN_ERROR_H_
