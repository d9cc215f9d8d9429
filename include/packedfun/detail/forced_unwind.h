// PACKEDFUN_RETHROW_FORCED_UNWIND: lets a thread's forced unwind pass through catch-all handlers.
#ifndef PACKEDFUN_DETAIL_FORCED_UNWIND_H_
#define PACKEDFUN_DETAIL_FORCED_UNWIND_H_

#include <exception>

/*!
 * Put first inside the `catch (...)` of every `try` whose body can run code of another language (a
 * callback, or the deleter of an object that language owns): rethrows an unwind that is not a C++
 * exception. CPython ends a thread that wants its lock during interpreter exit with pthread_exit,
 * which unwinds C++ frames with a forced unwind (abi::__forced_unwind under libstdc++); a
 * `catch (...)` that swallows it aborts the process ("FATAL: exception not rethrown"), and so does
 * one inside a noexcept function. Inside a catch-all, std::current_exception() is empty exactly
 * when what unwinds is not a C++ exception: a forced unwind, or another language's exception, which
 * a C++ handler must let through as well. Not a `catch (abi::__forced_unwind&)` handler: a forced
 * unwind has no C++ object, so libstdc++ binds that reference to a null pointer, which UBSan
 * reports ("reference binding to null pointer of type 'struct __forced_unwind'").
 */
#define PACKEDFUN_RETHROW_FORCED_UNWIND \
  if (!std::current_exception()) throw;

#endif  // PACKEDFUN_DETAIL_FORCED_UNWIND_H_
