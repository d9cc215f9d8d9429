/* The GIL from any thread: native threads calling back, the runtime's lock and signal hooks. */
#include "core.h"

int pfpy_python_alive(void) {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsInitialized() && !Py_IsFinalizing();
#else
  return Py_IsInitialized() && !_Py_IsFinalizing();
#endif
}

/* ---- native threads keep their thread state
 * ------------------------------------------------------ PyGILState_Ensure on a thread Python never
 * saw makes a thread state, and the matching Release destroys it (with its frame stack, an mmap'ed
 * chunk): tens of microseconds per callback. A native thread therefore keeps the state its first
 * callback made; a pthread key destructor gives it back when the thread exits, unless the
 * interpreter is gone (finalization frees every thread state itself, so there is nothing left to
 * release then). Threads Python made are never pinned. */
static _Thread_local PyThreadState* kept_tstate = NULL;
static pthread_key_t kept_key;
static pthread_once_t kept_once = PTHREAD_ONCE_INIT;
static int kept_key_ok = 0;

static void release_kept(void* ts) {
  kept_tstate = NULL;
  if (!pfpy_python_alive()) return;
  /* Not PyGILState_Release: the thread's keys (PyGILState's among them) may be cleared by now. */
  PyEval_RestoreThread((PyThreadState*)ts);
  PyThreadState_Clear((PyThreadState*)ts);
  PyThreadState_DeleteCurrent(); /* and releases the GIL */
}

static void make_kept_key(void) { kept_key_ok = pthread_key_create(&kept_key, release_kept) == 0; }

_Thread_local PyThreadState* pfpy_released_tstate = NULL;

int pfpy_gil_enter(PFPyGil* gil) {
  if (PFPY_UNLIKELY(!pfpy_python_alive())) return 0;
  /* A callback during a released call on this very thread (the common case: C++ calling a Python
   * callable it received): no thread-specific-storage lookups. */
  gil->pinned = pfpy_released_tstate != NULL ? pfpy_released_tstate : kept_tstate;
  if (gil->pinned != NULL) {
    PyEval_RestoreThread(gil->pinned);
    return 1;
  }
  int native = PyGILState_GetThisThreadState() == NULL;
  gil->state = PyGILState_Ensure();
  if (native) {
    pthread_once(&kept_once, make_kept_key);
    if (kept_key_ok && pthread_setspecific(kept_key, PyThreadState_Get()) == 0) {
      kept_tstate = gil->pinned = PyThreadState_Get();
    }
  }
  return 1;
}

void pfpy_gil_exit(PFPyGil* gil) {
  if (gil->pinned != NULL) {
    PyEval_SaveThread();
  } else {
    PyGILState_Release(gil->state);
  }
}

/* ---- environment hooks: C++ releases and re-takes the GIL, checks signals -----------
 */

static int hook_gil_held(void) { return pfpy_gil_held(); }

static void* hook_release(void) { return PyEval_SaveThread(); }

static void hook_acquire(void* token) { PyEval_RestoreThread((PyThreadState*)token); }

/* Runs Python's pending signal handlers (only the main thread runs them); an exception they raise
 * (KeyboardInterrupt) becomes the native error that C++ throws and Python gets back. */
static void hook_check_signals(void) {
  int held = pfpy_gil_held();
  PFPyGil gil;
  if (!held && !pfpy_gil_enter(&gil)) return;
  if (PyErr_CheckSignals() != 0) pfpy_raise_python_as_native();
  if (!held) pfpy_gil_exit(&gil);
}

static int hook_gone(void) { return !pfpy_python_alive(); }

void pfpy_install_env_hooks(void) {
  PFEnvSetLockHooks(&hook_gil_held, &hook_release, &hook_acquire, &hook_check_signals, &hook_gone);
}
