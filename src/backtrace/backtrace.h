// Private runtime helpers: cheap native stack capture and lazy symbolization for Error objects.
#ifndef PACKEDFUN_SRC_INTERNAL_BACKTRACE_H_
#define PACKEDFUN_SRC_INTERNAL_BACKTRACE_H_

#include <string>

namespace packedfun {
namespace detail {

/*! Most frames an Error records. */
constexpr int kMaxBacktraceFrames = 32;

/*! Records up to `max_frames` raw return addresses of the calling thread, innermost first,
 *  skipping the runtime's own innermost frames and ending with the first frame that ends a
 *  symbolized backtrace (EndsBacktrace: the frames past it would be dropped anyway). Returns the
 *  count; 0 when capture is disabled (environment variable PACKEDFUN_BACKTRACE=0). Allocates only
 *  the first time a return address is seen (to classify its file). */
int CaptureBacktrace(void** pcs, int max_frames) noexcept;

/*! True when the frame returning to `pc` ends a symbolized backtrace: its file is a language
 *  binding, does not link the runtime, or is unknown (JIT code). SymbolizeBacktrace stops at the
 *  same frame. Never throws (false when the file cannot be classified for lack of memory). */
bool EndsBacktrace(void* pc) noexcept;

/*! Turns raw return addresses (innermost first) into "\n"-separated text, one frame of the
 *  user's code per line, most recent call last:
 *    File "/path/libmy_ext.so", offset 0x1234, in my_ns::RaiseError
 *  where the offset is the call site's address inside that file (what its DWARF line table
 *  counts: packedfun.error turns it into a source file and line when printing). Frames of the
 *  runtime and of packedfun's header machinery are left out; the first frame of a language
 *  binding or of a file that does not link the runtime ends the list (see the file comment of
 *  backtrace/symbolize.cc). */
std::string SymbolizeBacktrace(void* const* pcs, int count);

/*! A demangled, short function name: no parameter list, return type, clone suffix or anonymous
 *  namespace, and std::string for std::__cxx11::basic_string<char, ...>. */
std::string ShortFunctionName(const char* mangled);

}  // namespace detail
}  // namespace packedfun

#endif  // PACKEDFUN_SRC_INTERNAL_BACKTRACE_H_
