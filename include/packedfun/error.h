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
 * with its kind, message, cause and backtrace intact. The native backtrace is captured when the
 * Error is created and symbolized only when backtrace() is asked for; the "Kind: message" text of
 * what() is likewise built on its first call, since an error crossing into another language never
 * reads it.
 */
class Error : public std::exception {
 public:
  /*! A new error capturing the current native stack. */
  Error(const std::string& kind, const std::string& message) { Init(kind, message, nullptr); }
  /*! A new error with a backtrace text given by its producer. */
  Error(const std::string& kind, const std::string& message, const std::string& backtrace) {
    PFByteArray bt{backtrace.data(), backtrace.size()};
    Init(kind, message, &bt);
  }
  /*! Wraps an existing error object (a PFErrorObject), sharing it. */
  static Error FromObject(ObjectPtr<PFObject> error) {
    Error e;
    e.obj_ = std::move(error);
    return e;
  }
  // Copies share the error object; each builds its own what() text when asked.
  Error(const Error& other) : obj_(other.obj_), fallback_(other.fallback_) {}
  Error(Error&& other) noexcept
      : obj_(std::move(other.obj_)), fallback_(std::move(other.fallback_)), what_(other.what_) {
    other.what_ = nullptr;
  }
  Error& operator=(const Error& other) {
    if (this != &other) {
      obj_ = other.obj_;
      fallback_ = other.fallback_;
      ClearWhat();
    }
    return *this;
  }
  Error& operator=(Error&& other) noexcept {
    if (this != &other) {
      obj_ = std::move(other.obj_);
      fallback_ = std::move(other.fallback_);
      ClearWhat();
      what_ = other.what_;
      other.what_ = nullptr;
    }
    return *this;
  }
  ~Error() override { ClearWhat(); }

  std::string kind() const { return Part(true); }
  std::string message() const { return Part(false); }
  /*! "Kind: message", built on the first call; valid as long as this Error, and safe to call
   *  from several threads at once. */
  const char* what() const noexcept override {
    const char* text = __atomic_load_n(&what_, __ATOMIC_ACQUIRE);
    return text != nullptr ? text : BuildWhat();
  }
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
  /*! The underlying error object (borrowed); NULL only if it could not be allocated. */
  PFObject* get() const noexcept { return obj_.get(); }

  /*! Stores this error in the calling thread's error slot (for returning -1 from a PFSafeCall). */
  void SetRaised() const noexcept {
    if (obj_) {
      PFErrorSetRaised(obj_.get());
    } else {
      PFErrorSetRaisedFromCStr(fallback_.kind.c_str(), fallback_.message.c_str());
    }
  }

 private:
  /*! Kind and message kept here only when the error object could not be allocated. */
  struct Fallback {
    std::string kind, message;
  };

  Error() = default;
  // Out of line so that `throw Error(...)` in user code is a call from the user's own line: the
  // backtrace's innermost user frame then points at it, not at this header.
  __attribute__((noinline)) void Init(const std::string& kind, const std::string& message,
                                      const PFByteArray* backtrace) {
    PFByteArray k{kind.data(), kind.size()}, m{message.data(), message.size()};
    PFObject* out = nullptr;
    if (PFErrorCreate(&k, &m, backtrace, nullptr, &out) == 0) {
      obj_ = ObjectPtr<PFObject>::FromOwned(out);
    } else {
      PFErrorMoveFromRaised(&out);  // only allocation can fail: keep the text, drop the rest
      PFObjectDecRef(out);
      fallback_.kind = kind;
      fallback_.message = message;
    }
  }
  std::string Part(bool kind) const {
    if (!obj_) return kind ? fallback_.kind : fallback_.message;
    const PFErrorObject* raw = reinterpret_cast<const PFErrorObject*>(obj_.get());
    const PFByteArray& part = kind ? raw->kind : raw->message;
    return std::string(part.data, part.size);
  }
  /*! Builds the what() text and publishes it; a thread that loses the race frees its copy. */
  __attribute__((noinline, cold)) const char* BuildWhat() const noexcept {
    PFByteArray k{fallback_.kind.data(), fallback_.kind.size()};
    PFByteArray m{fallback_.message.data(), fallback_.message.size()};
    if (obj_) {
      const PFErrorObject* raw = reinterpret_cast<const PFErrorObject*>(obj_.get());
      k = raw->kind;
      m = raw->message;
    }
    char* text = new (std::nothrow) char[k.size + m.size + 3];
    if (text == nullptr) return "packedfun::Error (out of memory for its text)";
    std::char_traits<char>::copy(text, k.data, k.size);
    std::char_traits<char>::copy(text + k.size, ": ", 2);
    std::char_traits<char>::copy(text + k.size + 2, m.data, m.size);
    text[k.size + 2 + m.size] = '\0';
    char* expected = nullptr;
    if (__atomic_compare_exchange_n(&what_, &expected, text, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
      return text;
    }
    delete[] text;
    return expected;
  }
  void ClearWhat() noexcept {
    delete[] what_;
    what_ = nullptr;
  }

  ObjectPtr<PFObject> obj_;
  Fallback fallback_;
  mutable char* what_ = nullptr;  // written once, atomically, by BuildWhat
};

namespace detail {

[[noreturn]] inline void ErrorBuilder::Throw() { throw Error(kind_, text_); }

/*! Throws the calling thread's pending error (after a failed ABI call) as packedfun::Error. */
[[noreturn]] __attribute__((noinline, cold)) inline void ThrowRaised() {
  PFObject* err = nullptr;
  PFErrorMoveFromRaised(&err);
  if (err == nullptr) throw Error("InternalError", "a call failed without setting an error");
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
