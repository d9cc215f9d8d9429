/* The global function registry as seen from Python, and Python callables made Functions. */
#include "core.h"

/* Borrowed UTF-8 view of a str argument named `what`; -1 with TypeError otherwise. */
static int name_view(PyObject* name, PFByteArray* out, const char* what) {
  if (!PyUnicode_Check(name)) {
    pfpy_raise_message(PyExc_TypeError, "NAME_NOT_STR", "(ss)", what, Py_TYPE(name)->tp_name);
    return -1;
  }
  return pfpy_str_view(name, out);
}

/* get_global_func(name, named_result=None): with `named_result`, a Function whose runtime flags
 * say its metadata returns a type key (PACKEDFUN_FUNCTION_FLAG_NAMED_RESULT: maybe an enum) is
 * passed through that callable (the shared layer's enum wrapper); every other lookup stays one
 * native call. */
static PyObject* get_global_func(PyObject* mod, PyObject* const* args, Py_ssize_t nargs) {
  (void)mod;
  if (nargs < 1 || nargs > 2) {
    return PyErr_Format(PyExc_TypeError, "get_global_func expected 1 or 2 arguments, got %zd",
                        nargs);
  }
  PyObject* name = args[0];
  PFByteArray key;
  if (name_view(name, &key, "name") != 0) return NULL;
  PFObject* func = NULL;
  if (PFFunctionGetGlobal(&key, &func) != 0) return pfpy_raise_native(name);
  if (func == NULL) Py_RETURN_NONE;
  int named =
      (__atomic_load_n(&func->flags, __ATOMIC_ACQUIRE) & PACKEDFUN_FUNCTION_FLAG_NAMED_RESULT) != 0;
  PyObject* out = pfpy_function_new(func, name);
  if (!named || nargs < 2 || args[1] == Py_None || out == NULL) return out;
  PyObject* wrapped = PyObject_CallOneArg(args[1], out);
  Py_DECREF(out);
  return wrapped;
}

/* A Function handle for `func` (borrowed): a Function's own, or a new one wrapping a callable
 * (then *owned is set and the caller releases it). */
static PFObject* function_handle(PyObject* func, int* owned) {
  *owned = 0;
  if (PyObject_TypeCheck(func, &PFPyFunction_Type)) return ((PFPyObject*)func)->handle;
  if (!PyCallable_Check(func)) {
    pfpy_raise_message(PyExc_TypeError, "REGISTER_NOT_CALLABLE", "(s)", Py_TYPE(func)->tp_name);
    return NULL;
  }
  PFObject* obj = NULL;
  if (pfpy_callable_to_function(func, &obj) != 0) return NULL;
  *owned = 1;
  return obj;
}

static PyObject* set_global_func(PyObject* mod, PyObject* args, PyObject* kwargs) {
  (void)mod;
  static char* keywords[] = {"name", "func", "override", "doc", NULL};
  PyObject *name, *func, *doc = Py_None;
  int override = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|pO:set_global_func", keywords, &name, &func,
                                   &override, &doc)) {
    return NULL;
  }
  PFByteArray key, doc_view;
  if (name_view(name, &key, "name") != 0) return NULL;
  if (doc != Py_None && name_view(doc, &doc_view, "doc") != 0) return NULL;
  int owned = 0;
  PFObject* handle = function_handle(func, &owned);
  if (handle == NULL) return NULL;
  int rc = PFFunctionSetGlobal(&key, handle, override, doc == Py_None ? NULL : &doc_view);
  if (owned) PFObjectDecRef(handle);
  if (rc != 0) return pfpy_raise_native(name);
  Py_RETURN_NONE;
}

static PyObject* list_global_func_names(PyObject* mod, PyObject* unused) {
  (void)mod;
  (void)unused;
  PFAny names = {0};
  if (PFFunctionListGlobalNames(&names) != 0) return pfpy_raise_native(NULL);
  if (names.type_index != kPFTypeArray && names.type_index != kPFTypeList) {
    PFAnyRelease(&names);
    return pfpy_raise_message(PyExc_RuntimeError, "GLOBAL_NAMES_NOT_AN_ARRAY", "()");
  }
  PFSeqObject* seq = (PFSeqObject*)names.v_obj;
  PyObject* result = PyList_New((Py_ssize_t)seq->size);
  for (int64_t i = 0; result != NULL && i < seq->size; ++i) {
    PyObject* item = pfpy_any_view_to_py(&seq->data[i]);
    if (item == NULL)
      Py_CLEAR(result);
    else
      PyList_SET_ITEM(result, (Py_ssize_t)i, item);
  }
  PFAnyRelease(&names);
  return result;
}

static PyObject* get_global_func_doc(PyObject* mod, PyObject* name) {
  (void)mod;
  PFByteArray key;
  if (name_view(name, &key, "name") != 0) return NULL;
  PFAny doc = {0};
  if (PFFunctionGetGlobalDoc(&key, &doc) != 0) return pfpy_raise_native(name);
  return pfpy_any_steal_to_py(&doc);
}

static PyObject* remove_global_func(PyObject* mod, PyObject* name) {
  (void)mod;
  PFByteArray key;
  if (name_view(name, &key, "name") != 0) return NULL;
  int removed = 0;
  if (PFFunctionRemoveGlobal(&key, &removed) != 0) return pfpy_raise_native(name);
  return PyBool_FromLong(removed);
}

static PyObject* to_function(PyObject* mod, PyObject* func) {
  (void)mod;
  if (PyObject_TypeCheck(func, &PFPyFunction_Type)) {
    Py_INCREF(func);
    return func;
  }
  int owned = 0;
  PFObject* handle = function_handle(func, &owned);
  if (handle == NULL) return NULL;
  return pfpy_function_new(handle, NULL);
}

/* The native Function of `func` (borrowed), or NULL with a TypeError. */
static PFObject* native_function(PyObject* func, const char* what) {
  if (!PyObject_TypeCheck(func, &PFPyFunction_Type) || ((PFPyObject*)func)->handle == NULL) {
    pfpy_raise_message(PyExc_TypeError, "FUNCTION_EXPECTED", "(ss)", what, Py_TYPE(func)->tp_name);
    return NULL;
  }
  return ((PFPyObject*)func)->handle;
}

static PyObject* function_get_metadata(PyObject* mod, PyObject* func) {
  (void)mod;
  PFObject* handle = native_function(func, "function_get_metadata");
  if (handle == NULL) return NULL;
  PFAny out = {0};
  if (PFFunctionGetMetadata(handle, &out) != 0) return pfpy_raise_native(NULL);
  return pfpy_any_steal_to_py(&out);
}

static PyObject* function_flags(PyObject* mod, PyObject* func) {
  (void)mod;
  PFObject* handle = native_function(func, "function_flags");
  if (handle == NULL) return NULL;
  return PyLong_FromUnsignedLong(__atomic_load_n(&handle->flags, __ATOMIC_ACQUIRE));
}

static PyObject* function_set_metadata(PyObject* mod, PyObject* args) {
  (void)mod;
  PyObject *func, *text;
  if (!PyArg_ParseTuple(args, "OU:function_set_metadata", &func, &text)) return NULL;
  PFObject* handle = native_function(func, "function_set_metadata");
  PFByteArray view;
  if (handle == NULL || pfpy_str_view(text, &view) != 0) return NULL;
  if (PFFunctionSetMetadata(handle, &view) != 0) return pfpy_raise_native(NULL);
  pfpy_function_forget_signature((PFPyFunction*)func);
  Py_RETURN_NONE;
}

PyMethodDef pfpy_registry_methods[] = {
    {"function_get_metadata", function_get_metadata, METH_O,
     "function_get_metadata(func)\n--\n\nThe JSON metadata record of `func`, or None."},
    {"function_flags", function_flags, METH_O,
     "function_flags(func)\n--\n\nThe PFObject.flags bits of `func` "
     "(PACKEDFUN_FUNCTION_FLAG_*)."},
    {"function_set_metadata", function_set_metadata, METH_VARARGS,
     "function_set_metadata(func, json)\n--\n\nAttaches a JSON metadata record to `func`."},
    {"get_global_func", (PyCFunction)(void (*)(void))get_global_func, METH_FASTCALL,
     "get_global_func(name, named_result=None)\n--\n\nThe global Function registered as "
     "`name`, or None; `named_result(func)` replaces one whose metadata returns a type key."},
    {"set_global_func", (PyCFunction)(void (*)(void))set_global_func, METH_VARARGS | METH_KEYWORDS,
     "set_global_func(name, func, override=False, doc=None)\n--\n\nRegisters `func` (a "
     "Function or any callable) globally as `name`."},
    {"list_global_func_names", list_global_func_names, METH_NOARGS,
     "list_global_func_names()\n--\n\nEvery registered global name, sorted."},
    {"get_global_func_doc", get_global_func_doc, METH_O,
     "get_global_func_doc(name)\n--\n\nThe docstring registered with `name`, or None."},
    {"remove_global_func", remove_global_func, METH_O,
     "remove_global_func(name)\n--\n\nRemoves `name`; returns whether it existed."},
    {"to_function", to_function, METH_O,
     "to_function(func)\n--\n\n`func` as a Function (a Function comes back unchanged)."},
    {NULL, NULL, 0, NULL}};
