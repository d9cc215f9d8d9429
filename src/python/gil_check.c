/* CPython 3.11 on x86-64 glibc: where the GIL holder is kept, found once for the inline check. */
#include "core.h"

#if PFPY_INLINE_GIL_CHECK
/* Only this file sees CPython's internal headers, for one address: the GIL holder's slot. */
#define Py_BUILD_CORE 1
#include "internal/pycore_runtime.h"

void* const volatile* pfpy_gil_holder_slot = NULL;

void pfpy_gil_check_init(void) {
  /* Taken only if the slot holds this thread's state (the module is imported with the GIL held)
   * and the thread pointer is what pthread_self() returns (glibc's pthread_t on x86-64): else
   * every check goes through the two calls it replaces. */
  void* const volatile* slot = (void* const volatile*)&_PyRuntime.gilstate.tstate_current;
  PyThreadState* mine = PyThreadState_Get();
  if (*slot == (void*)mine && pfpy_thread_pointer() == (unsigned long)pthread_self() &&
      mine->thread_id == (unsigned long)pthread_self()) {
    pfpy_gil_holder_slot = slot;
  }
}
#else
void pfpy_gil_check_init(void) {}
#endif

#if PY_VERSION_HEX < 0x030C0000
int pfpy_gil_held_by_call(void) {
  /* The GIL holder's thread state; it is ours only if we hold the GIL. */
  PyThreadState* holder = _PyThreadState_UncheckedGet();
#if defined(__linux__)
  /* PyThread_get_thread_ident() is pthread_self() there; called inline, not through the PLT. */
  return holder != NULL && holder->thread_id == (unsigned long)pthread_self();
#else
  return holder != NULL && holder->thread_id == PyThread_get_thread_ident();
#endif
}
#endif
