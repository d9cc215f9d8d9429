// Preloaded by the sanitized run: pthread_exit first tells ASan that the thread's stack unwinds.
/* A thread that calls pthread_exit is ended by a forced unwind (_Unwind_ForcedUnwind) that runs
 * the cleanups of every frame it discards. ASan intercepts the other ways out of a frame
 * (__cxa_throw, _Unwind_RaiseException, longjmp and siglongjmp) and unpoisons the thread's stack
 * before they unwind (__asan_handle_no_return), but not pthread_exit: when uninstrumented code
 * calls it (CPython ends a daemon thread that wants the GIL back after finalization so), the
 * redzones of the instrumented frames it discards stay poisoned, and the next
 * __asan_handle_no_return, called by an instrumented frame's cleanup before it resumes the unwind,
 * puts its own locals on that stale poison and reports a stack-buffer-overflow in
 * __interceptor_sigaltstack. tests/sanitize/forced_unwind_repro.cc gets the same report without
 * packedfun. This wrapper does for pthread_exit what ASan does for a throw: it unpoisons the
 * stack first, then ends the thread the same way. It changes nothing else; a thread that does not
 * call pthread_exit never runs it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

void __asan_handle_no_return(void);

static void (*real_pthread_exit)(void*);

__attribute__((constructor)) static void find_real_pthread_exit(void) {
  real_pthread_exit = (void (*)(void*))dlsym(RTLD_NEXT, "pthread_exit");
}

void pthread_exit(void* retval) {
  __asan_handle_no_return();
  if (real_pthread_exit == NULL) abort();
  real_pthread_exit(retval);
  abort(); /* pthread_exit never returns */
}
