// PACKEDFUN_RETHROW_FORCED_UNWIND: lets a thread's forced unwind pass through catch-all handlers.
#ifndef PACKEDFUN_DETAIL_FORCED_UNWIND_H_
#define PACKEDFUN_DETAIL_FORCED_UNWIND_H_

#include <cstddef>  // defines __GLIBCXX__ under libstdc++, whose <cxxabi.h> has __forced_unwind
#if defined(__GLIBCXX__)
#include <cxxabi.h>
#endif

/*!
 * Put first among the handlers of every `try` whose body can run code of another language (a
 * callback, or the deleter of an object that language owns): lets the forced unwind through.
 * CPython ends a thread that wants its lock during interpreter exit with pthread_exit, which
 * unwinds C++ frames with abi::__forced_unwind; a `catch (...)` that swallows it aborts the
 * process ("FATAL: exception not rethrown"), and so does one inside a noexcept function.
 */
#if defined(__GLIBCXX__)
#define PACKEDFUN_RETHROW_FORCED_UNWIND \
  catch (abi::__forced_unwind&) {       \
    throw;                              \
  }
#else
#define PACKEDFUN_RETHROW_FORCED_UNWIND
#endif

#endif  // PACKEDFUN_DETAIL_FORCED_UNWIND_H_
