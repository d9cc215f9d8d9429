// Error objects, the thread-local error slot and the error entry points of c_api.h.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>

#include "backtrace/backtrace.h"
#include "runtime/error.h"
#include "runtime/object.h"

namespace packedfun {
namespace detail {
namespace {

/*! An Error and everything it owns, in one allocation: the struct, then kind and message bytes. */
struct ErrorImpl {
  PFErrorObject base;
  std::mutex mu;            // guards the backtrace strings below
  bool symbolized = false;  // `native` holds text (symbolized or given by the producer)
  bool text_valid = false;  // `text` is native + appended, current
  int num_frames = 0;
  std::string native;                // symbolized native frames, or the producer's text
  std::string appended;              // frames appended by bindings
  std::string text;                  // what PFErrorGetBacktrace hands out
  std::atomic<char*> what{nullptr};  // "Kind: message" (PFErrorGetWhat), built on first request
  void* frames[kMaxBacktraceFrames];
};

void DeleteError(PFObject* obj) noexcept {
  auto* impl = As<ErrorImpl>(obj);
  DecRef(impl->base.cause);
  delete[] impl->what.load(std::memory_order_relaxed);
  impl->~ErrorImpl();
  ::operator delete(static_cast<void*>(impl));
}

char* CopyBytes(char* dst, std::string_view src, PFByteArray* field) {
  if (!src.empty()) std::memcpy(dst, src.data(), src.size());
  dst[src.size()] = '\0';
  field->data = dst;
  field->size = src.size();
  return dst + src.size() + 1;
}

ErrorImpl* AllocError(std::string_view kind, std::string_view message) {
  void* mem = ::operator new(sizeof(ErrorImpl) + kind.size() + message.size() + 2);
  auto* impl = new (mem) ErrorImpl;  // default-init: `frames` is filled by the capture, not zeroed
  InitHeader(Header(impl), kPFTypeError, &DeleteError);
  char* tail = reinterpret_cast<char*>(impl + 1);
  tail = CopyBytes(tail, kind, &impl->base.kind);
  CopyBytes(tail, message, &impl->base.message);
  impl->base.cause = nullptr;
  return impl;
}

/*! Raised when even a MemoryError cannot be allocated; immortal. */
PFObject* OutOfMemoryError() noexcept {
  static PFObject* err = [] {
    PFObject* e = NewError("MemoryError", "out of memory", nullptr, nullptr);
    e->ref_count += uint64_t{1} << 40;
    return e;
  }();
  IncRef(err);
  return err;
}

/*! The calling thread's pending error; released when the thread exits. */
struct ErrorSlot {
  PFObject* error = nullptr;
  ~ErrorSlot() { DecRef(error); }
};
thread_local ErrorSlot tls_slot;

ErrorImpl* CheckError(PFObject* obj) {
  if (obj == nullptr || obj->type_index != kPFTypeError) {
    Throw("TypeError", "expected a packedfun.Error object");
  }
  return As<ErrorImpl>(obj);
}

std::string_view ViewOf(const PFByteArray* a) {
  if (a == nullptr || a->size == 0) return {};
  return std::string_view(a->data, a->size);
}

}  // namespace

PFObject* NewError(std::string_view kind, std::string_view message, const PFByteArray* backtrace,
                   PFObject* cause) {
  ErrorImpl* impl = AllocError(kind, message);
  if (backtrace != nullptr) {
    impl->native.assign(ViewOf(backtrace));
    impl->symbolized = true;
  } else {
    impl->num_frames = CaptureBacktrace(impl->frames, kMaxBacktraceFrames);
  }
  IncRef(cause);
  impl->base.cause = cause;
  return Header(impl);
}

PFObject* PeekRaised() noexcept { return tls_slot.error; }

void SetRaisedSteal(PFObject* error) noexcept {
  PFObject* old = tls_slot.error;
  tls_slot.error = error;
  DecRef(old);
}

[[noreturn]] void Throw(const char* kind, std::string message) {
  throw Exception(kind, std::move(message));
}

int RaiseError(std::string_view kind, std::string_view message) noexcept {
  PFObject* err;
  try {
    err = NewError(kind, message, nullptr, nullptr);
  } catch (...) {
    err = OutOfMemoryError();
  }
  SetRaisedSteal(err);
  return -1;
}

int RaiseCurrentException() noexcept {
  try {
    throw;
  } catch (const AlreadyRaised&) {
    return -1;
  } catch (const Exception& e) {
    return RaiseError(e.kind(), e.message());
  } catch (const std::bad_alloc&) {
    SetRaisedSteal(OutOfMemoryError());
    return -1;
  } catch (const std::out_of_range& e) {
    return RaiseError("IndexError", e.what());
  } catch (const std::invalid_argument& e) {
    return RaiseError("ValueError", e.what());
  } catch (const std::overflow_error& e) {
    return RaiseError("OverflowError", e.what());
  } catch (const std::exception& e) {
    return RaiseError("RuntimeError", e.what());
  } catch (...) {
    return RaiseError("RuntimeError", "unknown C++ exception");
  }
}

}  // namespace detail
}  // namespace packedfun

using namespace packedfun::detail;

extern "C" {

PACKEDFUN_API int PFErrorCreate(const PFByteArray* kind, const PFByteArray* message,
                                const PFByteArray* backtrace, PFObject* cause, PFObject** out) {
  return Guard([&] {
    *out = NewError(ViewOf(kind), ViewOf(message), backtrace, cause);
    return 0;
  });
}

PACKEDFUN_API void PFErrorSetRaised(PFObject* error) {
  IncRef(error);
  SetRaisedSteal(error);
}

PACKEDFUN_API void PFErrorMoveToRaised(PFObject* error) { SetRaisedSteal(error); }

PACKEDFUN_API int PFErrorSetRaisedFromCStr(const char* kind, const char* message) {
  return RaiseError(kind != nullptr ? kind : "RuntimeError", message != nullptr ? message : "");
}

PACKEDFUN_API void PFErrorMoveFromRaised(PFObject** out) {
  *out = tls_slot.error;
  tls_slot.error = nullptr;
}

PACKEDFUN_API int PFErrorGetBacktrace(PFObject* error, PFByteArray* out) {
  return Guard([&] {
    ErrorImpl* impl = CheckError(error);
    std::lock_guard<std::mutex> lock(impl->mu);
    if (!impl->symbolized) {
      impl->native = SymbolizeBacktrace(impl->frames, impl->num_frames);
      impl->symbolized = true;
    }
    if (!impl->text_valid) {
      impl->text = impl->native;
      if (!impl->appended.empty() && !impl->text.empty()) impl->text += '\n';
      impl->text += impl->appended;
      impl->text_valid = true;
    }
    out->data = impl->text.c_str();
    out->size = impl->text.size();
    return 0;
  });
}

PACKEDFUN_API PFObject* PFErrorNew(const PFByteArray* kind, const PFByteArray* message,
                                   const PFByteArray* backtrace) {
  try {
    return NewError(ViewOf(kind), ViewOf(message), backtrace, nullptr);
  } catch (...) {  // only allocation can fail
    return OutOfMemoryError();
  }
}

PACKEDFUN_API const char* PFErrorGetWhat(PFObject* error) {
  if (error == nullptr || error->type_index != kPFTypeError) return "packedfun::Error";
  auto* impl = As<ErrorImpl>(error);
  if (char* text = impl->what.load(std::memory_order_acquire)) return text;
  std::string_view k = ViewOf(&impl->base.kind), m = ViewOf(&impl->base.message);
  char* text = new (std::nothrow) char[k.size() + m.size() + 3];
  if (text == nullptr) return "packedfun::Error (out of memory for its text)";
  char* end = std::copy(k.begin(), k.end(), text);
  *end++ = ':';
  *end++ = ' ';
  end = std::copy(m.begin(), m.end(), end);
  *end = '\0';
  char* expected = nullptr;  // a thread that loses the race frees its copy
  if (impl->what.compare_exchange_strong(expected, text, std::memory_order_acq_rel)) return text;
  delete[] text;
  return expected;
}

PACKEDFUN_API int PFErrorAppendBacktrace(PFObject* error, const PFByteArray* frames) {
  return Guard([&] {
    ErrorImpl* impl = CheckError(error);
    std::string_view add = ViewOf(frames);
    if (add.empty()) return 0;
    std::lock_guard<std::mutex> lock(impl->mu);
    if (!impl->appended.empty()) impl->appended += '\n';
    impl->appended.append(add);
    impl->text_valid = false;
    return 0;
  });
}

}  // extern "C"
