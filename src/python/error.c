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

/* ---- the note's C base ------------------------------------------------------------------------
 * error.py's NativeBacktrace derives from this str subclass on the compiled backend: it owns the
 * native error in a C field, so a crossing makes no Python handle for it (one GC object and one
 * allocation fewer). `_error` reads the error as a packedfun Object, made on demand (a note is only
 * read when printed), and takes one when assigned, as the Python factory does. The GC sees
 * through the error the way it sees through an Object (pfpy_visit_owned). */
typedef struct {
  PyUnicodeObject str;
  PFObject* error; /* owned, a kPFTypeError; NULL when none */
} NativeNote;

static int note_traverse(PyObject* self, visitproc visit, void* arg) {
  return pfpy_visit_owned(((NativeNote*)self)->error, visit, arg);
}

static int note_clear(PyObject* self) {
  NativeNote* n = (NativeNote*)self;
  PFObject* e = n->error;
  if (e == NULL || __atomic_load_n(&e->ref_count, __ATOMIC_ACQUIRE) != 1) return 0;
  n->error = NULL; /* before the release, which may run Python code that sees this note */
  PFObjectDecRef(e);
  return 0;
}

static void note_dealloc(PyObject* self) {
  NativeNote* n = (NativeNote*)self;
  PyObject_GC_UnTrack(self);
  PFObject* e = n->error;
  n->error = NULL;
  PFObjectDecRef(e);
  PyUnicode_Type.tp_dealloc(self); /* frees the text, then tp_free */
}

static PyObject* note_get_error(PyObject* self, void* closure) {
  (void)closure;
  PFObject* e = ((NativeNote*)self)->error;
  if (e == NULL) return PyErr_Format(PyExc_AttributeError, "_error");
  PFObjectIncRef(e);
  return pfpy_object_wrap(e);
}

static int note_set_error(PyObject* self, PyObject* value, void* closure) {
  (void)closure;
  PFObject* e = NULL;
  if (value != NULL) {
    e = PyObject_TypeCheck(value, &PFPyObject_Type) ? ((PFPyObject*)value)->handle : NULL;
    if (e == NULL || e->type_index != kPFTypeError) {
      pfpy_raise_message(PyExc_TypeError, "BACKTRACE_NEEDS_ERROR", "()");
      return -1;
    }
    PFObjectIncRef(e);
  }
  PFObject* old = ((NativeNote*)self)->error;
  ((NativeNote*)self)->error = e;
  PFObjectDecRef(old);
  return 0;
}

static PyGetSetDef note_getset[] = {
    {"_error", note_get_error, note_set_error, "The native error (a packedfun Object).", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject NativeNote_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "packedfun._core.NativeNote",
    .tp_basicsize = sizeof(NativeNote),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A str that owns a native error: the C base of packedfun.error.NativeBacktrace.",
    .tp_dealloc = note_dealloc,
    .tp_traverse = note_traverse,
    .tp_clear = note_clear,
    .tp_getset = note_getset,
    .tp_free = PyObject_GC_Del,
};

int pfpy_error_add_to_module(PyObject* m) {
  NativeNote_Type.tp_base = &PyUnicode_Type;
  if (PyType_Ready(&NativeNote_Type) < 0) return -1;
  Py_INCREF(&NativeNote_Type);
  if (PyModule_AddObject(m, "NativeNote", (PyObject*)&NativeNote_Type) < 0) {
    Py_DECREF(&NativeNote_Type);
    return -1;
  }
  return 0;
}

/* ---- the factory's common case in C
 * ------------------------------------------------------------------------------------------
 * Every native error reaching Python goes through error.py's _make_exception. Its common case (a
 * kind already in the registry) is done here, step for step the same: cls(message) (Error(message,
 * kind) if that raises an Exception), a NativeBacktrace note owning the error, then
 * exc.kind and exc.__notes__. It saves the Python frame and the generic attribute and constructor
 * paths, about a third of the crossing. A kind not in the registry yet takes the Python factory,
 * which resolves and records it. error.py hands its objects over with set_error_fast_path. */
static struct {
  PyObject* kinds;         /* error.py's _KINDS: kind -> class */
  PyObject* error_cls;     /* packedfun.Error, for classes that cannot take a bare message */
  PyTypeObject* note_type; /* NativeBacktrace, a NativeNote subclass */
  PyObject* note_args;     /* (placeholder,) */
  PyObject* kind_name;     /* "kind" */
  PyObject* notes_name;    /* "__notes__" */
} fast = {NULL, NULL, NULL, NULL, NULL, NULL};

/* ---- kinds seen before: a few kinds make nearly every error, so the str of each recent one is
 * kept (its hash computed once): a compare instead of a decode, a fresh str and a hash per
 * crossing. Only ASCII kinds, whose bytes are their str's data. Guarded by the GIL (per thread
 * where there is none). */
#define PFPY_KIND_CACHE 8
#ifdef Py_GIL_DISABLED
static _Thread_local PyObject* kind_cache[PFPY_KIND_CACHE];
static _Thread_local unsigned kind_cache_next;
#else
static PyObject* kind_cache[PFPY_KIND_CACHE];
static unsigned kind_cache_next;
#endif

/* The kind as a str, a new reference (NULL with an exception on failure). */
static PyObject* kind_to_str(const PFByteArray* b) {
  for (int i = 0; i < PFPY_KIND_CACHE && b->data != NULL && kind_cache[i] != NULL; ++i) {
    PyObject* k = kind_cache[i];
    if ((size_t)PyUnicode_GET_LENGTH(k) == b->size &&
        memcmp(PyUnicode_DATA(k), b->data, b->size) == 0) {
      return Py_NewRef(k);
    }
  }
  PyObject* k = decode_lenient(b);
  if (k != NULL && PyUnicode_IS_COMPACT_ASCII(k) && PyObject_Hash(k) != -1) {
    PyObject* old = kind_cache[kind_cache_next];
    kind_cache[kind_cache_next] = Py_NewRef(k);
    kind_cache_next = (kind_cache_next + 1) % PFPY_KIND_CACHE;
    Py_XDECREF(old);
  }
  return k;
}

/* exc.kind = kind and exc.__notes__ = notes. An instance of a built-in exception type gets them
 * straight in a new instance dict: no descriptor there can take either name, so it is what
 * setattr does without the attribute machinery. Any other class goes through setattr. */
static int set_kind_and_notes(PyObject* exc, PyObject* kind, PyObject* notes) {
  PyBaseExceptionObject* base = (PyBaseExceptionObject*)exc;
  PyTypeObject* t = Py_TYPE(exc);
  if (!(t->tp_flags & Py_TPFLAGS_HEAPTYPE) && t->tp_setattro == PyObject_GenericSetAttr &&
      base->dict == NULL) {
    PyObject* dict = PyDict_New();
    if (dict == NULL) return -1;
    if (PyDict_SetItem(dict, fast.kind_name, kind) != 0 ||
        PyDict_SetItem(dict, fast.notes_name, notes) != 0) {
      Py_DECREF(dict);
      return -1;
    }
    base->dict = dict;
    return 0;
  }
  int rc = PyObject_SetAttr(exc, fast.kind_name, kind);
  if (rc == 0) rc = PyObject_SetAttr(exc, fast.notes_name, notes);
  return rc;
}

/* cls(message), or Error(message, kind) when that raises an Exception (as _make_exception). */
static PyObject* construct_exception(PyObject* cls, PyObject* kind, PyObject* message) {
  PyObject* exc = PyObject_CallOneArg(cls, message);
  if (exc != NULL || !PyErr_ExceptionMatches(PyExc_Exception)) return exc;
  PyErr_Clear();
  PyObject* args[2] = {message, kind};
  return PyObject_Vectorcall(fast.error_cls, args, 2, NULL);
}

/* The exception for a registered kind, a new reference; NULL with no Python error set when the
 * kind is not registered (the Python factory then runs), NULL with one on failure. On success the
 * note owns `*err` and it is set to NULL; otherwise `*err` is left to the caller. */
static PyObject* make_exception_fast(PyObject* kind, PyObject* message, PFObject** err) {
  PyObject* cls = PyDict_GetItemWithError(fast.kinds, kind); /* borrowed */
  if (cls == NULL) return NULL;
  PyObject* exc = construct_exception(cls, kind, message);
  if (exc == NULL) return NULL;
  PyObject* note = fast.note_type->tp_new(fast.note_type, fast.note_args, NULL);
  PyObject* notes = note != NULL ? PyList_New(1) : NULL;
  if (notes == NULL) {
    Py_XDECREF(note);
    Py_DECREF(exc);
    return NULL;
  }
  ((NativeNote*)note)->error = *err; /* a fresh note's field: empty */
  *err = NULL;
  PyList_SET_ITEM(notes, 0, note); /* stolen */
  int rc = set_kind_and_notes(exc, kind, notes);
  Py_DECREF(notes);
  if (rc != 0) Py_CLEAR(exc);
  return exc;
}

/* Calls the installed factory: the common case in C when it is set up, else the Python one, which
 * gets the error as a packedfun Object. Takes `err` (stolen). */
static PyObject* make_exception(PyObject* kind, PyObject* message, PFObject* err) {
  if (fast.kinds != NULL) {
    PyObject* exc = make_exception_fast(kind, message, &err);
    if (exc != NULL || PyErr_Occurred()) {
      PFObjectDecRef(err); /* NULL when the note took it */
      return exc;
    }
  }
  PyObject* handle = pfpy_object_wrap(err); /* takes err */
  if (handle == NULL) return NULL;
  PyObject* args[3] = {kind, message, handle};
  PyObject* exc = PyObject_Vectorcall(pfpy_error_factory, args, 3, NULL);
  Py_DECREF(handle);
  return exc;
}

/* Raises `err` (stolen) through the error factory (or a plain RuntimeError without one). */
static PFPY_NOINLINE PyObject* raise_through_factory(PFObject* err) {
  PFErrorObject* e = (PFErrorObject*)err;
  PyObject* kind = kind_to_str(&e->kind);
  PyObject* message = decode_lenient(&e->message);
  PyObject* exc = NULL;
  if (kind == NULL || message == NULL) {
    PFObjectDecRef(err);
  } else if (pfpy_error_factory == NULL) {
    PFObjectDecRef(err);
    PyErr_Format(PyExc_RuntimeError, "%U: %U", kind, message);
  } else {
    exc = make_exception(kind, message, err);
  }
  Py_XDECREF(kind);
  Py_XDECREF(message);
  if (exc == NULL) return NULL;
  if (!PyExceptionInstance_Check(exc)) {
    pfpy_raise_message(PyExc_TypeError, "ERROR_FACTORY_RESULT", "(s)", Py_TYPE(exc)->tp_name);
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
    return pfpy_raise_message(PyExc_RuntimeError, "NATIVE_FAILED_WITHOUT_ERROR", "(O)",
                              fname ? fname : (PyObject*)Py_None);
  }
  if (err->type_index != kPFTypeError) {
    PFObjectDecRef(err);
    return pfpy_raise_message(PyExc_RuntimeError, "NATIVE_RAISED_NON_ERROR", "(O)",
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
    return pfpy_raise_message(PyExc_TypeError, "ERROR_FACTORY_NOT_CALLABLE", "()");
  }
  /* A new factory replaces _make_exception: its C form no longer applies. */
  Py_CLEAR(fast.kinds);
  PyObject* old = pfpy_error_factory;
  if (factory != Py_None) Py_INCREF(factory);
  pfpy_error_factory = factory == Py_None ? NULL : factory;
  Py_XDECREF(old);
  Py_RETURN_NONE;
}

/* set_error_fast_path(kinds, error_cls, note_type, placeholder): see make_exception_fast. */
static PyObject* set_error_fast_path(PyObject* mod, PyObject* const* args, Py_ssize_t n) {
  (void)mod;
  if (n != 4 || !PyDict_CheckExact(args[0]) || !PyType_Check(args[1]) || !PyType_Check(args[2]) ||
      !PyType_IsSubtype((PyTypeObject*)args[2], &NativeNote_Type) || !PyUnicode_Check(args[3])) {
    return PyErr_Format(PyExc_TypeError,
                        "set_error_fast_path(kinds: dict, error_cls: type, note_type: NativeNote "
                        "subclass, placeholder: str)");
  }
  PyObject* note_args = PyTuple_Pack(1, args[3]);
  PyObject* kind_name = PyUnicode_InternFromString("kind");
  PyObject* notes_name = PyUnicode_InternFromString("__notes__");
  if (note_args == NULL || kind_name == NULL || notes_name == NULL) {
    Py_XDECREF(note_args);
    Py_XDECREF(kind_name);
    Py_XDECREF(notes_name);
    return NULL;
  }
  Py_INCREF(args[0]);
  Py_INCREF(args[1]);
  Py_INCREF(args[2]);
  Py_XSETREF(fast.kinds, args[0]);
  Py_XSETREF(fast.error_cls, args[1]);
  Py_XSETREF(fast.note_type, (PyTypeObject*)args[2]);
  Py_XSETREF(fast.note_args, note_args);
  Py_XSETREF(fast.kind_name, kind_name);
  Py_XSETREF(fast.notes_name, notes_name);
  Py_RETURN_NONE;
}

static PyObject* error_get_backtrace(PyObject* mod, PyObject* err) {
  (void)mod;
  PFObject* h = PyObject_TypeCheck(err, &PFPyObject_Type) ? ((PFPyObject*)err)->handle : NULL;
  if (h == NULL || h->type_index != kPFTypeError) {
    return pfpy_raise_message(PyExc_TypeError, "BACKTRACE_OF_NON_ERROR", "()");
  }
  PFByteArray text = {NULL, 0};
  if (PFErrorGetBacktrace(h, &text) != 0) return pfpy_raise_native(NULL);
  return decode_lenient(&text);
}

PyMethodDef pfpy_error_methods[] = {
    {"set_error_factory", set_error_factory, METH_O,
     "set_error_factory(factory)\n--\n\nInstalls factory(kind, message, error) -> exception, "
     "used to raise native errors."},
    {"set_error_fast_path", (PyCFunction)(void (*)(void))set_error_fast_path, METH_FASTCALL,
     "set_error_fast_path(kinds, error_cls, note_type, placeholder)\n--\n\nLets the error "
     "factory's common case (a registered kind) run in C; see packedfun.error._make_exception."},
    {"error_get_backtrace", error_get_backtrace, METH_O,
     "error_get_backtrace(error)\n--\n\nThe native backtrace of an Error object (symbolized "
     "on first use), innermost frame first."},
    {NULL, NULL, 0, NULL}};
