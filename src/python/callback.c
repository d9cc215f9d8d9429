/* Python callables as native Functions, and Python objects as native Opaque objects. */
#include "callback.h"

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

/* ---- the recycled wrapper's cold steps (its lifecycle: callback.h) -------------------------- */
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
  PFObject* fn = pfpy_spare_callback;
  if (fn != NULL) {
    pfpy_spare_callback = NULL;
  } else {
    if (PFFunctionCreate(NULL, &pfpy_callback_call, &callback_free, &fn) != 0) {
      pfpy_raise_native(NULL);
      return -1;
    }
    hold_gil_when_called(fn);
  }
  Py_INCREF(callable); /* owned by the wrapper, whether it is recycled or kept */
  ((PFFunctionObject*)fn)->self = callable;
  *out = fn;
  return 0;
}

void pfpy_keep_borrowing_callback(PFObject* fn) {
  /* Taken before the call's reference goes: were it the last, the deleter drops this one. */
  Py_INCREF((PyObject*)((PFFunctionObject*)fn)->self);
  PFObjectDecRef(fn);
}

/* Calls `callable` through vectorcall. A Python function is called through its own entry point:
 * PyObject_Vectorcall would add a thread-state lookup and a check that the result agrees with
 * the error indicator, which only C callables can break (the interpreter keeps them in step for
 * Python code), about a third of a callback's cost. Everything else takes PyObject_Vectorcall. */
static inline __attribute__((always_inline)) PyObject* vectorcall(PyObject* callable,
                                                                  PyObject* const* args,
                                                                  size_t nargsf) {
  if (PFPY_LIKELY(Py_IS_TYPE(callable, &PyFunction_Type))) {
    return ((PyFunctionObject*)callable)->vectorcall(callable, args, nargsf, NULL);
  }
  return PyObject_Vectorcall(callable, args, nargsf, NULL);
}

/* Releases the first `n` converted arguments after a failed conversion. */
static PFPY_NOINLINE int drop_args(PyObject** pyargs, int32_t n) {
  for (int32_t j = 0; j < n; ++j) Py_DECREF(pyargs[j]);
  return pfpy_raise_python_as_native();
}

/* Stores the callback's result `r` (a new reference, or NULL with an exception) in `*result`: the
 * error or any value but None and a small int. Out of line: finish_result stores those two. */
static PFPY_NOINLINE int store_result(PyObject* r, PFAny* result) {
  if (r == NULL) return pfpy_raise_python_as_native();
  PFByteArray unused;
  if (Py_TYPE(r) != &PyUnicode_Type && pfpy_exact_from_py(r, result, &unused, 0)) {
    Py_DECREF(r); /* the rule's first step: a POD value (an ASCII str would be a view: not here) */
    return 0;
  }
  int rc = pfpy_any_from_py(r, result) != 0 ? pfpy_raise_python_as_native() : 0;
  Py_DECREF(r);
  return rc;
}

/* Stores the callback's result `r` (a new reference, or NULL with an exception) in `*result`. The
 * two common results are stored inline: None, and an int that fits the internal digit
 * (pfpy_exact_from_py's own test, so the value is the one store_result would give). */
static inline __attribute__((always_inline)) int finish_result(PyObject* r, PFAny* result) {
  if (PFPY_LIKELY(r == Py_None)) {
    Py_DECREF(r);
    PFPY_SET_POD(result, kPFTypeNone, v_int64, 0);
    return 0;
  }
  int64_t value;
  if (r != NULL && Py_IS_TYPE(r, &PyLong_Type) && pfpy_compact_int(r, &value)) {
    Py_DECREF(r); /* an int owns nothing that the value needs */
    PFPY_SET_POD(result, kPFTypeInt, v_int64, value);
    return 0;
  }
  return store_result(r, result);
}

/* One argument of a callback as a new Python object: an int, the common argument, converted here
 * (one call into CPython, as a C extension makes it), every other kind by the binding's
 * converter, which gives the same int for it. */
static inline __attribute__((always_inline)) PyObject* arg_to_py(const PFAny* v) {
  if (PFPY_LIKELY(v->type_index == kPFTypeInt)) return PyLong_FromLongLong(v->v_int64);
  return pfpy_any_view_to_py(v);
}

/* The callback with the GIL held, arguments on the stack (n <= PFPY_STACK_ARGS). Slot 0 of the
 * argument array is left free for PY_VECTORCALL_ARGUMENTS_OFFSET. */
static inline __attribute__((always_inline)) int call_held(PyObject* callable, const PFAny* args,
                                                           int32_t n, PFAny* result) {
  PyObject* pyargs[PFPY_STACK_ARGS + 1];
  for (int32_t i = 0; i < n; ++i) {
    pyargs[i + 1] = arg_to_py(&args[i]);
    if (PFPY_UNLIKELY(pyargs[i + 1] == NULL)) return drop_args(pyargs + 1, i);
  }
  PyObject* r = vectorcall(callable, pyargs + 1, (size_t)n | PY_VECTORCALL_ARGUMENTS_OFFSET);
  for (int32_t i = 1; i <= n; ++i) Py_DECREF(pyargs[i]);
  return finish_result(r, result);
}

/* More arguments than the stack holds: converted into a heap array. */
static PFPY_NOINLINE int call_many(PyObject* callable, const PFAny* args, int32_t n,
                                   PFAny* result) {
  PyObject** pyargs = (PyObject**)PyMem_Malloc(sizeof(PyObject*) * ((size_t)n + 1));
  if (pyargs == NULL) {
    PyErr_NoMemory();
    return pfpy_raise_python_as_native();
  }
  for (int32_t i = 0; i < n; ++i) {
    pyargs[i + 1] = arg_to_py(&args[i]);
    if (pyargs[i + 1] == NULL) {
      drop_args(pyargs + 1, i);
      PyMem_Free(pyargs);
      return -1;
    }
  }
  PyObject* r = vectorcall(callable, pyargs + 1, (size_t)n | PY_VECTORCALL_ARGUMENTS_OFFSET);
  for (int32_t i = 1; i <= n; ++i) Py_DECREF(pyargs[i]);
  PyMem_Free(pyargs);
  return finish_result(r, result);
}

/* A callback that arrives once the interpreter is shutting down (from a native thread, or one
 * whose caller released the GIL) must not wait for the GIL: it fails instead. */
static PFPY_NOINLINE int finalizing_error(void) {
  PFErrorSetRaisedFromCStr("RuntimeError",
                           "packedfun: a Python callback was called while the "
                           "interpreter is shutting down");
  return -1;
}

/* Every callback the fast path leaves out: a thread that does not hold the GIL (a native thread,
 * or a caller that released it) takes it for the call (PyGILState_Ensure gives a thread Python
 * never saw a thread state), and many arguments go through the heap. */
static PFPY_NOINLINE int call_general(PyObject* callable, const PFAny* args, int32_t n,
                                      PFAny* result) {
  int held = pfpy_gil_held();
  PFPyGil gil;
  if (!held && PFPY_UNLIKELY(!pfpy_gil_enter(&gil))) return finalizing_error();
  int rc = n > PFPY_STACK_ARGS ? call_many(callable, args, n, result)
                               : call_held(callable, args, n, result);
  if (!held) pfpy_gil_exit(&gil);
  return rc;
}

/* A callback with arguments: apart from the no-argument call below, which then keeps only two
 * values live across its calls (no argument array, no loops). */
static PFPY_NOINLINE int call_with_args(PyObject* callable, const PFAny* args, int32_t n,
                                        PFAny* result) {
  if (PFPY_UNLIKELY(n > PFPY_STACK_ARGS) || PFPY_UNLIKELY(!pfpy_gil_held())) {
    return call_general(callable, args, n, result);
  }
  return call_held(callable, args, n, result);
}

/* A callback without arguments. */
static PFPY_NOINLINE int call_without_args(PyObject* callable, PFAny* result) {
  if (PFPY_UNLIKELY(!pfpy_gil_held())) return call_general(callable, NULL, 0, result);
  PyObject* r = vectorcall(callable, NULL, 0);
  return finish_result(r, result);
}

/* Any thread may call. The common case, a call from Python code (C++ calling a Python callable
 * it received, the GIL held all along), goes straight through. Both ways are tail calls: this
 * frame saves no register, which a body of its own here would make it do for both. */
int pfpy_callback_call(void* self, const PFAny* args, int32_t num_args, PFAny* result) {
  if (num_args != 0) return call_with_args((PyObject*)self, args, num_args, result);
  return call_without_args((PyObject*)self, result);
}
