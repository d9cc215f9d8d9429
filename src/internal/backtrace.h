// Private runtime helpers: cheap native stack capture and lazy symbolization for Error objects.
#ifndef PACKEDFUN_SRC_INTERNAL_BACKTRACE_H_
#define PACKEDFUN_SRC_INTERNAL_BACKTRACE_H_

#include <string>

namespace packedfun {
namespace detail {

/*! Most frames an Error records. */
constexpr int kMaxBacktraceFrames = 32;

/*! Records up to `max_frames` raw return addresses of the calling thread, innermost first,
 *  skipping the runtime's own innermost frames. Returns the count; 0 when capture is disabled
 *  (environment variable PACKEDFUN_BACKTRACE=0). Does not allocate. */
int CaptureBacktrace(void** pcs, int max_frames) noexcept;

/*! Turns raw return addresses into "\n"-separated text, one frame per line, innermost first.
 *  Uses dladdr and the C++ demangler; addresses without a symbol print as library+offset. */
std::string SymbolizeBacktrace(void* const* pcs, int count);

}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_SRC_INTERNAL_BACKTRACE_H_
