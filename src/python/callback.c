/* Python callables as native Functions, and Python objects as native Opaque objects. */
#include "core.h"

/* The last native reference may die on any thread, holding the GIL or not, and even after the
 * interpreter finalized (e.g. in the registry's static destructor): the object is then leaked. */
void pfpy_opaque_free(void* handle) {
  if (pfpy_gil_held()) {
    Py_DECREF((PyObject*)handle);
    return;
  }
  PFPyGil gil;
  if (!pfpy_gil_enter(&gil)) return;
  Py_DECREF((PyObject*)handle);
  pfpy_gil_exit(&gil);
}

int pfpy_opaque_new(PyObject* o, PFObject** out) {
  Py_INCREF(o);
  /* The runtime owns the reference from the call on, and releases it itself if creation fails. */
  if (PFOpaqueObjectCreate(o, &pfpy_opaque_free, out) != 0) {
    pfpy_raise_native(NULL);
    return -1;
  }
  return 0;
}

/* A Python callable as a Function holds the GIL when called from Python: releasing it only to
 * take it straight back would cost two switches and nothing else. */
static void hold_gil_when_called(PFObject* fn) {
  __atomic_fetch_or(&fn->flags, PACKEDFUN_FUNCTION_FLAG_GIL_HOLD, __ATOMIC_RELEASE);
}

int pfpy_callable_to_function(PyObject* callable, PFObject** out) {
  Py_INCREF(callable);
  /* The runtime owns the reference from the call on, and releases it itself if creation fails. */
  if (PFFunctionCreate(callable, &pfpy_callback_call, &pfpy_opaque_free, out) != 0) {
    pfpy_raise_native(NULL);
    return -1;
  }
  hold_gil_when_called(*out);
  return 0;
}

/* ---- Functions wrapping callables passed as arguments, recycled ---------------------------------
 * A Python callable passed to a native function is wrapped for the duration of the call. Creating
 * and destroying that wrapper costs an allocation each time, so one wrapper is kept between calls:
 * it is taken out of the slot for a call (nested calls find the slot empty and create their own)
 * and put back afterwards only if the native side kept no reference to it (its reference count is
 * back to 1: nobody else can hold or gain one). A wrapper that was kept lives on as an ordinary
 * Function owning its callable. While in the slot a wrapper holds no callable (self == NULL). The
 * slot is guarded by the GIL (per thread where there is none). */
#ifdef Py_GIL_DISABLED
_Thread_local PFObject* pfpy_spare_callback = NULL;
#else
PFObject* pfpy_spare_callback = NULL;
#endif

/* The deleter of recycled wrappers: self is NULL while the wrapper waits in the slot. */
static void callback_free(void* handle) {
  if (handle != NULL) pfpy_opaque_free(handle);
}

int pfpy_callable_to_temp_function(PyObject* callable, PFObject** out) {
  if (pfpy_spare_callback != NULL) {
    *out = pfpy_take_spare_callback(callable);
    return 0;
  }
  PFObject* fn = NULL;
  if (PFFunctionCreate(NULL, &pfpy_callback_call, &callback_free, &fn) != 0) {
    pfpy_raise_native(NULL);
    return -1;
  }
  hold_gil_when_called(fn);
  Py_INCREF(callable); /* owned by the wrapper, whether it is recycled or kept */
  ((PFFunctionObject*)fn)->self = callable;
  *out = fn;
  return 0;
}

/* Converts the borrowed native arguments into `pyargs` (new references). */
static int convert_args(const PFAny* args, int32_t n, PyObject** pyargs) {
  for (int32_t i = 0; i < n; ++i) {
    pyargs[i] = pfpy_any_view_to_py(&args[i]);
    if (pyargs[i] == NULL) {
      for (int32_t j = 0; j < i; ++j) Py_DECREF(pyargs[j]);
      return -1;
    }
  }
  return 0;
}

/* Calls `callable` with the converted arguments; a new reference or NULL with an exception.
 * Slot 0 of the argument array is left free for PY_VECTORCALL_ARGUMENTS_OFFSET. */
static PyObject* call_python(PyObject* callable, const PFAny* args, int32_t n) {
  PyObject* small[PFPY_STACK_ARGS + 1];
  PyObject** pyargs = small;
  if (n > PFPY_STACK_ARGS) {
    pyargs = (PyObject**)PyMem_Malloc(sizeof(PyObject*) * ((size_t)n + 1));
    if (pyargs == NULL) return PyErr_NoMemory();
  }
  PyObject* result = NULL;
  if (convert_args(args, n, pyargs + 1) == 0) {
    result =
        PyObject_Vectorcall(callable, pyargs + 1, (size_t)n | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
    for (int32_t i = 1; i <= n; ++i) Py_DECREF(pyargs[i]);
  }
  if (pyargs != small) PyMem_Free(pyargs);
  return result;
}

/* A callback that arrives once the interpreter is shutting down (from a native thread, or one
 * whose caller released the GIL) must not wait for the GIL: it fails instead. */
static PFPY_NOINLINE int finalizing_error(void) {
  PFErrorSetRaisedFromCStr("RuntimeError",
                           "packedfun: a Python callback was called while the "
                           "interpreter is shutting down");
  return -1;
}

/* Any thread may call: one that does not hold the GIL (a native thread, or a caller that released
 * it) takes it for the call; PyGILState_Ensure gives a thread Python never saw a thread state. */
int pfpy_callback_call(void* self, const PFAny* args, int32_t num_args, PFAny* result) {
  int held = pfpy_gil_held(); /* called from Python code: no need to take the GIL again */
  PFPyGil gil;
  if (!held && PFPY_UNLIKELY(!pfpy_gil_enter(&gil))) return finalizing_error();
  int rc = 0;
  PyObject* r = call_python((PyObject*)self, args, num_args);
  if (PFPY_UNLIKELY(r == NULL)) {
    rc = pfpy_raise_python_as_native();
  } else {
    if (r == Py_None) {
      PFPY_SET_POD(result, kPFTypeNone, v_int64, 0);
    } else if (pfpy_any_from_py(r, result) != 0) {
      rc = pfpy_raise_python_as_native();
    }
    Py_DECREF(r);
  }
  if (!held) pfpy_gil_exit(&gil);
  return rc;
}
