/* Keyword arguments and defaults of packedfun.Function, bound natively from the metadata record. */
#include "core.h"

/* packedfun._rules.signature's param_table, missing_message, name_argument_error and MISSING,
 * imported on first use. */
static PyObject* sig_param_table = NULL;
static PyObject* sig_missing_message = NULL;
static PyObject* sig_name_argument_error = NULL;
static PyObject* sig_missing = NULL;

static PFPY_NOINLINE int import_signature_module(void) {
  if (sig_missing != NULL) return 0;
  PyObject* mod = PyImport_ImportModule("packedfun._rules.signature");
  if (mod == NULL) return -1;
  sig_param_table = PyObject_GetAttrString(mod, "param_table");
  sig_missing_message = PyObject_GetAttrString(mod, "missing_message");
  sig_name_argument_error = PyObject_GetAttrString(mod, "name_argument_error");
  PyObject* missing = PyObject_GetAttrString(mod, "MISSING");
  Py_DECREF(mod);
  if (sig_param_table == NULL || sig_missing_message == NULL || sig_name_argument_error == NULL ||
      missing == NULL) {
    Py_CLEAR(sig_param_table);
    Py_CLEAR(sig_missing_message);
    Py_CLEAR(sig_name_argument_error);
    Py_XDECREF(missing);
    return -1;
  }
  sig_missing = missing;
  return 0;
}

/* Reads the metadata record once per Function object and caches its (names, defaults,
 * positional-only count) table, with the names interned so that keywords from code objects match
 * by identity. nparams becomes the table's size, or -2 when the record names no parameters. */
PFPY_NOINLINE int pfpy_function_load_table(PFPyFunction* f) {
  if (import_signature_module() != 0) return -1;
  PFAny meta = {0};
  if (PFFunctionGetMetadata(f->base.handle, &meta) != 0) return pfpy_raise_native(f->name), -1;
  PyObject* text = pfpy_any_steal_to_py(&meta);
  if (text == NULL) return -1;
  PyObject* table = text == Py_None ? NULL : PyObject_CallOneArg(sig_param_table, text);
  Py_DECREF(text);
  if (table == NULL) {
    if (PyErr_Occurred()) return -1;
    f->nparams = -2;
    return 0;
  }
  PyObject* names = PyTuple_GET_ITEM(table, 0);
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names); ++i) {
    PyObject* name = PyTuple_GET_ITEM(names, i);
    Py_INCREF(name);
    PyUnicode_InternInPlace(&name);
    PyObject* old = PyTuple_GET_ITEM(names, i);
    PyTuple_SET_ITEM(names, i, name); /* the tuple was made for us alone */
    Py_DECREF(old);
  }
  Py_XSETREF(f->table, table);
  PyObject* defaults = PyTuple_GET_ITEM(table, 1);
  Py_ssize_t required = PyTuple_GET_SIZE(names);
  while (required > 0 && PyTuple_GET_ITEM(defaults, required - 1) != sig_missing) --required;
  f->nrequired = required;
  f->nparams = PyTuple_GET_SIZE(names);
  return 0;
}

/* The name calls are reported under: the registry name, else __name__. */
static PyObject* display_name(PFPyFunction* f) {
  if (f->name != NULL) return Py_NewRef(f->name);
  return PyObject_GetAttrString((PyObject*)f, "__name__");
}

static PFPY_NOINLINE PyObject* too_many_positional(PFPyFunction* f, Py_ssize_t n) {
  PyObject* name = display_name(f);
  if (name == NULL) return NULL;
  pfpy_raise_message(PyExc_TypeError, "ARGS_TOO_MANY_POSITIONAL", "(Onsns)", name, f->nparams,
                     f->nparams == 1 ? "" : "s", n, n == 1 ? "was" : "were");
  Py_DECREF(name);
  return NULL;
}

/* `what` names the message in packedfun._rules.messages (its fields: the function, the keyword). */
static PFPY_NOINLINE PyObject* keyword_error(PFPyFunction* f, PyObject* key, const char* what) {
  PyObject* name = display_name(f);
  if (name == NULL) return NULL;
  pfpy_raise_message(PyExc_TypeError, what, "(OO)", name, key);
  Py_DECREF(name);
  return NULL;
}

/* The TypeError for the parameters left NULL in `full`, worded by packedfun._rules.signature. */
static PFPY_NOINLINE PyObject* missing_error(PFPyFunction* f, PyObject* const* full) {
  PyObject* names = PyTuple_GET_ITEM(f->table, 0);
  PyObject* missing = PyList_New(0);
  PyObject* name = display_name(f);
  for (Py_ssize_t i = 0; missing != NULL && name != NULL && i < f->nparams; ++i) {
    if (full[i] == NULL && PyList_Append(missing, PyTuple_GET_ITEM(names, i)) < 0) {
      Py_CLEAR(missing);
    }
  }
  PyObject* msg = missing != NULL && name != NULL
                      ? PyObject_CallFunctionObjArgs(sig_missing_message, name, missing, NULL)
                      : NULL;
  if (msg != NULL) PyErr_SetObject(PyExc_TypeError, msg);
  Py_XDECREF(msg);
  Py_XDECREF(missing);
  Py_XDECREF(name);
  return NULL;
}

/* Index of keyword `key` among `names`: identity first (interned names), then equality. */
static Py_ssize_t find_param(PyObject* names, PyObject* key) {
  Py_ssize_t count = PyTuple_GET_SIZE(names);
  for (Py_ssize_t i = 0; i < count; ++i) {
    if (PyTuple_GET_ITEM(names, i) == key) return i;
  }
  for (Py_ssize_t i = 0; i < count; ++i) {
    if (PyUnicode_Compare(PyTuple_GET_ITEM(names, i), key) == 0) return i;
  }
  return -1;
}

/* Few slots, copied one by one: GCC would otherwise call memset/memcpy for these loops, which
 * costs more than the handful of stores they replace. */
#if defined(__GNUC__) && !defined(__clang__)
#define PFPY_NO_LIBCALL_LOOPS __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define PFPY_NO_LIBCALL_LOOPS
#endif

/* Fills `full` (nparams borrowed slots) from positional `args`, the keywords and the defaults,
 * raising Python's own TypeErrors; 0 on success. */
PFPY_NO_LIBCALL_LOOPS int pfpy_function_bind(PFPyFunction* f, PyObject* const* args, Py_ssize_t n,
                                             PyObject* kwnames, PyObject** full) {
  Py_ssize_t np = f->nparams;
  if (PFPY_UNLIKELY(n > np)) return too_many_positional(f, n), -1;
  PyObject* defaults = PyTuple_GET_ITEM(f->table, 1);
  Py_ssize_t i = 0;
  for (; i < n; ++i) full[i] = args[i];
  for (; i < np; ++i) full[i] = NULL;
  Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
  /* the table's third item: how many leading parameters are positional-only (a Python `/`) */
  Py_ssize_t positional_only = nkw == 0 ? 0 : PyLong_AsSsize_t(PyTuple_GET_ITEM(f->table, 2));
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    PyObject* key = PyTuple_GET_ITEM(kwnames, k);
    Py_ssize_t at = find_param(PyTuple_GET_ITEM(f->table, 0), key);
    if (at < 0) {
      return keyword_error(f, key, "ARGS_UNEXPECTED_KEYWORD"), -1;
    }
    if (at < positional_only) return keyword_error(f, key, "ARGS_POSITIONAL_ONLY"), -1;
    if (full[at] != NULL) return keyword_error(f, key, "ARGS_MULTIPLE_VALUES"), -1;
    full[at] = args[n + k];
  }
  int missing = 0;
  for (i = n; i < np; ++i) {
    if (full[i] != NULL) continue;
    PyObject* d = PyTuple_GET_ITEM(defaults, i);
    missing |= d == sig_missing;
    full[i] = d == sig_missing ? NULL : d;
  }
  if (PFPY_UNLIKELY(missing)) return missing_error(f, full), -1;
  return 0;
}

PyObject* pfpy_function_unexpected_keyword(PFPyFunction* f, PyObject* key) {
  return keyword_error(f, key, "ARGS_UNEXPECTED_KEYWORD");
}

/* Rewords the pending error of converting argument `pos` so that it names the parameter (the
 * wording lives once, in packedfun._rules.signature.name_argument_error, shared with ctypes). Cold:
 * it reads the metadata record again rather than keep anything on the call path. */
PFPY_NOINLINE void pfpy_function_name_argument_error(PFPyFunction* f, Py_ssize_t pos) {
  PyObject* exc = pfpy_fetch_exception();
  if (exc == NULL) return;
  PyObject* text = NULL;
  if (import_signature_module() == 0 && f->base.handle != NULL) {
    PFAny meta = {0};
    if (PFFunctionGetMetadata(f->base.handle, &meta) == 0) {
      text = pfpy_any_steal_to_py(&meta);
    } else {
      pfpy_raise_native(NULL);
    }
  }
  if (text != NULL) {
    PyObject* name = f->name != NULL ? f->name : Py_None;
    PyObject* r = PyObject_CallFunction(sig_name_argument_error, "OOOn", exc, name, text, pos);
    Py_XDECREF(r);
    Py_DECREF(text);
  }
  PyErr_Clear(); /* rewording is best effort: the original error stands */
  pfpy_restore_exception(exc);
}

/* Raises the native error of a failed call of `f`, reworded to name a NumPy scalar argument by its
 * type: the callee words its refusal about the converted value ("got float"), and only the binding
 * still has the original argument. The wording lives in packedfun._rules.signature
 * (name_argument_types, shared with ctypes); it runs only for a TypeError or an OverflowError
 * while NumPy is imported. Returns NULL. */
PFPY_NOINLINE PyObject* pfpy_function_call_error(PFPyFunction* f, PyObject* const* args,
                                                 Py_ssize_t n) {
  pfpy_raise_native(f->name);
  if (!PyErr_ExceptionMatches(PyExc_TypeError) && !PyErr_ExceptionMatches(PyExc_OverflowError)) {
    return NULL;
  }
  if (PyDict_GetItemString(PyImport_GetModuleDict(), "numpy") == NULL) return NULL; /* no import */
  PyObject* exc = pfpy_fetch_exception();
  if (exc == NULL) return NULL;
  PyObject* mod = PyImport_ImportModule("packedfun._rules.signature");
  PyObject* tuple = mod != NULL ? PyTuple_New(n) : NULL;
  if (tuple != NULL) {
    for (Py_ssize_t i = 0; i < n; ++i) PyTuple_SET_ITEM(tuple, i, Py_NewRef(args[i]));
    PyObject* r = PyObject_CallMethod(mod, "name_argument_types", "OOO", exc, (PyObject*)f, tuple);
    Py_XDECREF(r);
  }
  Py_XDECREF(tuple);
  Py_XDECREF(mod);
  PyErr_Clear(); /* rewording is best effort: the original error stands */
  pfpy_restore_exception(exc);
  return NULL;
}
