/* The floor: a hand-written CPython C extension (METH_FASTCALL) around the shared benchmark bodies.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "../native/bodies.h"

static PyObject* g_registry; /* name -> callable, for call_global; lives as long as the process */

static PyObject* floor_nop(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  bench_nop();
  Py_RETURN_NONE;
}

static int check_nargs(const char* name, Py_ssize_t nargs, Py_ssize_t want) {
  if (nargs == want) return 0;
  PyErr_Format(PyExc_TypeError, "%s() takes %zd arguments (%zd given)", name, want, nargs);
  return -1;
}

static PyObject* floor_add_int(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  if (check_nargs("add_int", nargs, 2) < 0) return NULL;
  long long a = PyLong_AsLongLong(args[0]);
  if (a == -1 && PyErr_Occurred()) return NULL;
  long long b = PyLong_AsLongLong(args[1]);
  if (b == -1 && PyErr_Occurred()) return NULL;
  return PyLong_FromLongLong(bench_add_int(a, b));
}

static PyObject* floor_add3_int(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  if (check_nargs("add3_int", nargs, 3) < 0) return NULL;
  long long v[3];
  for (int i = 0; i < 3; ++i) {
    v[i] = PyLong_AsLongLong(args[i]);
    if (v[i] == -1 && PyErr_Occurred()) return NULL;
  }
  return PyLong_FromLongLong(bench_add3_int(v[0], v[1], v[2]));
}

static PyObject* floor_echo_float(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  if (check_nargs("echo_float", nargs, 1) < 0) return NULL;
  double x = PyFloat_AsDouble(args[0]);
  if (x == -1.0 && PyErr_Occurred()) return NULL;
  return PyFloat_FromDouble(bench_echo_float(x));
}

static PyObject* floor_str_len(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  if (check_nargs("str_len", nargs, 1) < 0) return NULL;
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(args[0], &size);
  if (data == NULL) return NULL;
  return PyLong_FromLongLong(bench_str_len(data, (size_t)size));
}

static PyObject* floor_apply(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  if (check_nargs("apply", nargs, 1) < 0) return NULL;
  return PyObject_CallNoArgs(args[0]);
}

static PyObject* floor_register_global(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  if (check_nargs("register_global", nargs, 2) < 0) return NULL;
  if (PyDict_SetItem(g_registry, args[0], args[1]) < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject* floor_call_global(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  if (check_nargs("call_global", nargs, 1) < 0) return NULL;
  PyObject* func = PyDict_GetItemWithError(g_registry, args[0]); /* borrowed */
  if (func == NULL) {
    if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, args[0]);
    return NULL;
  }
  return PyObject_CallNoArgs(func);
}

static PyObject* floor_raise_error(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  if (check_nargs("raise_error", nargs, 2) < 0) return NULL;
  PyErr_SetObject(PyExc_ValueError, args[1]);
  return NULL;
}

#define FASTCALL(name) {#name, (PyCFunction)(void (*)(void))floor_##name, METH_FASTCALL, NULL}

static PyMethodDef floor_methods[] = {
    {"nop", floor_nop, METH_NOARGS, NULL},
    FASTCALL(add_int),
    FASTCALL(add3_int),
    FASTCALL(echo_float),
    FASTCALL(str_len),
    FASTCALL(apply),
    FASTCALL(register_global),
    FASTCALL(call_global),
    FASTCALL(raise_error),
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef floor_module = {
    PyModuleDef_HEAD_INIT,
    "pf_bench_floor",
    "Benchmark floor: plain CPython C API.",
    -1,
    floor_methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit_pf_bench_floor(void) {
  if (g_registry == NULL && (g_registry = PyDict_New()) == NULL) return NULL;
  return PyModule_Create(&floor_module);
}
