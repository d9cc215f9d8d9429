/* Errors crossing the boundary: native Error objects <-> Python exceptions. */
#include "core.h"

#include <string.h>

PyObject* pfpy_error_factory = NULL;

/* ---- version shims ----------------------------------------------------------------------------
 */

PyObject* pfpy_fetch_exception(void) {
#if PY_VERSION_HEX >= 0x030C0000
  return PyErr_GetRaisedException();
#else
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  if (type == NULL) return NULL;
  PyErr_NormalizeException(&type, &value, &tb);
  if (value == NULL) {
    value = Py_None;
    Py_INCREF(value);
  }
  if (tb != NULL && PyExceptionInstance_Check(value)) PyException_SetTraceback(value, tb);
  Py_XDECREF(tb);
  Py_DECREF(type);
  return value;
#endif
}

void pfpy_restore_exception(PyObject* exc) {
#if PY_VERSION_HEX >= 0x030C0000
  PyErr_SetRaisedException(exc);
#else
  PyObject* type = (PyObject*)Py_TYPE(exc);
  Py_INCREF(type);
  PyErr_Restore(type, exc, PyException_GetTraceback(exc));
#endif
}

/* ---- native -> Python -------------------------------------------------------------------------
 */

static PyObject* decode_lenient(const PFByteArray* b) {
  return PyUnicode_DecodeUTF8(b->data ? b->data : "", (Py_ssize_t)b->size, "replace");
}

/* Raises `err` (stolen) through the error factory (or a plain RuntimeError without one). */
static PFPY_NOINLINE PyObject* raise_through_factory(PFObject* err) {
  PFErrorObject* e = (PFErrorObject*)err;
  PyObject* kind = decode_lenient(&e->kind);
  PyObject* message = decode_lenient(&e->message);
  PyObject* handle = NULL;
  PyObject* exc = NULL;
  if (kind == NULL || message == NULL) {
    PFObjectDecRef(err);
  } else if (pfpy_error_factory == NULL) {
    PFObjectDecRef(err);
    PyErr_Format(PyExc_RuntimeError, "%U: %U", kind, message);
  } else if ((handle = pfpy_object_wrap(err)) != NULL) { /* err now owned by handle */
    PyObject* args[3] = {kind, message, handle};
    exc = PyObject_Vectorcall(pfpy_error_factory, args, 3, NULL);
  }
  Py_XDECREF(kind);
  Py_XDECREF(message);
  Py_XDECREF(handle);
  if (exc == NULL) return NULL;
  if (!PyExceptionInstance_Check(exc)) {
    PyErr_Format(PyExc_TypeError, "packedfun error factory returned %.200s, not an exception",
                 Py_TYPE(exc)->tp_name);
    Py_DECREF(exc);
    return NULL;
  }
  pfpy_restore_exception(exc);
  return NULL;
}

PFPY_NOINLINE PyObject* pfpy_raise_native(PyObject* fname) {
  PFObject* err = NULL;
  PFErrorMoveFromRaised(&err);
  if (err == NULL) {
    return PyErr_Format(PyExc_RuntimeError, "%S: native call failed without an error",
                        fname ? fname : (PyObject*)Py_None);
  }
  if (err->type_index != kPFTypeError) {
    PFObjectDecRef(err);
    return PyErr_Format(PyExc_RuntimeError, "%S: native call raised a non-Error object",
                        fname ? fname : (PyObject*)Py_None);
  }
  PFObject* cause = ((PFErrorObject*)err)->cause;
  if (pfpy_is_own_opaque(cause)) {
    PyObject* exc = (PyObject*)((PFOpaqueObject*)cause)->handle;
    if (PyExceptionInstance_Check(exc)) { /* the very exception a callback raised */
      Py_INCREF(exc);
      PFObjectDecRef(err);
      pfpy_restore_exception(exc);
      return NULL;
    }
  }
  return raise_through_factory(err);
}

/* ---- Python -> native -------------------------------------------------------------------------
 */

/* The error kind of `exc` (borrowed UTF-8): its `kind` attribute when it carries a str one (an
 * error that came from native code), else the name of its type. */
static const char* exception_kind(PyObject* exc, Py_ssize_t* size) {
  PyObject* dict = ((PyBaseExceptionObject*)exc)->dict;
  if (dict != NULL) {
    PyObject* kind = PyDict_GetItemString(dict, "kind");
    if (kind != NULL && PyUnicode_Check(kind)) {
      const char* s = PyUnicode_AsUTF8AndSize(kind, size);
      if (s != NULL) return s;
      PyErr_Clear();
    }
  }
  const char* name = Py_TYPE(exc)->tp_name;
  if (!(Py_TYPE(exc)->tp_flags & Py_TPFLAGS_HEAPTYPE)) {
    const char* dot = strrchr(name, '.');
    if (dot != NULL) name = dot + 1;
  }
  *size = (Py_ssize_t)strlen(name);
  return name;
}

/* str(exc) as a new str; never fails (falls back to a fixed text). */
static PyObject* exception_message(PyObject* exc) {
  PyObject* msg = PyObject_Str(exc);
  if (msg == NULL) {
    PyErr_Clear();
    msg = PyUnicode_FromString("<exception str() failed>");
  }
  return msg;
}

static int store_native_error(PyObject* exc) {
  Py_ssize_t kind_size = 0;
  Py_ssize_t msg_size = 0;
  const char* kind_data = exception_kind(exc, &kind_size);
  PyObject* msg = exception_message(exc);
  const char* msg_data = msg ? PyUnicode_AsUTF8AndSize(msg, &msg_size) : NULL;
  if (msg_data == NULL) {
    PyErr_Clear();
    msg_data = "<unencodable message>";
    msg_size = (Py_ssize_t)strlen(msg_data);
  }
  PFByteArray kind = {kind_data, (size_t)kind_size};
  PFByteArray message = {msg_data, (size_t)msg_size};
  PFByteArray no_backtrace = {"", 0};
  PFObject* cause = NULL;
  PFObject* err = NULL;
  Py_INCREF(exc);
  if (PFOpaqueObjectCreate(exc, &pfpy_opaque_free, &cause) != 0) {
    /* The runtime released exc itself and raised its own error (e.g. MemoryError); keep that. */
  } else if (PFErrorCreate(&kind, &message, &no_backtrace, cause, &err) == 0) {
    PFErrorSetRaised(err);
    PFObjectDecRef(err);
  }
  PFObjectDecRef(cause);
  Py_XDECREF(msg);
  return -1;
}

int pfpy_raise_python_as_native(void) {
  PyObject* exc = pfpy_fetch_exception();
  if (exc == NULL) return PFErrorSetRaisedFromCStr("RuntimeError", "callback failed silently");
  if (!PyExceptionInstance_Check(exc)) {
    Py_DECREF(exc);
    return PFErrorSetRaisedFromCStr("RuntimeError", "callback raised a non-exception");
  }
  store_native_error(exc);
  Py_DECREF(exc);
  return -1;
}

/* ---- module functions -------------------------------------------------------------------------
 */

static PyObject* set_error_factory(PyObject* mod, PyObject* factory) {
  (void)mod;
  if (factory != Py_None && !PyCallable_Check(factory)) {
    return PyErr_Format(PyExc_TypeError, "error factory must be callable or None");
  }
  PyObject* old = pfpy_error_factory;
  if (factory != Py_None) Py_INCREF(factory);
  pfpy_error_factory = factory == Py_None ? NULL : factory;
  Py_XDECREF(old);
  Py_RETURN_NONE;
}

static PyObject* error_get_backtrace(PyObject* mod, PyObject* err) {
  (void)mod;
  PFObject* h = PyObject_TypeCheck(err, &PFPyObject_Type) ? ((PFPyObject*)err)->handle : NULL;
  if (h == NULL || h->type_index != kPFTypeError) {
    return PyErr_Format(PyExc_TypeError, "error_get_backtrace expects an Error object");
  }
  PFByteArray text = {NULL, 0};
  if (PFErrorGetBacktrace(h, &text) != 0) return pfpy_raise_native(NULL);
  return decode_lenient(&text);
}

PyMethodDef pfpy_error_methods[] = {
    {"set_error_factory", set_error_factory, METH_O,
     "set_error_factory(factory)\n--\n\nInstalls factory(kind, message, error) -> exception, "
     "used to raise native errors."},
    {"error_get_backtrace", error_get_backtrace, METH_O,
     "error_get_backtrace(error)\n--\n\nThe native backtrace of an Error object (symbolized "
     "on first use), innermost frame first."},
    {NULL, NULL, 0, NULL}};
