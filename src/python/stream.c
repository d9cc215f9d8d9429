/* The calling thread's stream per device: packedfun.stream's two entry points (PFEnv*Stream). */
#include "core.h"

/* env_get_stream(device_type, device_id) -> int: the handle set for the device on this thread, 0
 * for the default stream. packedfun.stream has checked both ints against DLDevice's int32. */
static PyObject* env_get_stream(PyObject* mod, PyObject* args) {
  (void)mod;
  int device_type, device_id;
  if (!PyArg_ParseTuple(args, "ii:env_get_stream", &device_type, &device_id)) return NULL;
  return PyLong_FromVoidPtr(PFEnvGetStream(device_type, device_id));
}

/* env_set_stream(device_type, device_id, handle) -> int: sets the handle (0: the default
 * stream) and returns the one it replaces; packedfun.stream has checked that it fits a pointer. */
static PyObject* env_set_stream(PyObject* mod, PyObject* args) {
  (void)mod;
  int device_type, device_id;
  unsigned long long handle;
  if (!PyArg_ParseTuple(args, "iiK:env_set_stream", &device_type, &device_id, &handle)) {
    return NULL;
  }
  void* previous = NULL;
  if (PFEnvSetStream(device_type, device_id, (void*)(uintptr_t)handle, &previous) != 0) {
    PyObject* name = PyUnicode_FromString("use_stream");
    pfpy_raise_native(name);
    Py_XDECREF(name);
    return NULL;
  }
  return PyLong_FromVoidPtr(previous);
}

PyMethodDef pfpy_stream_methods[] = {
    {"env_get_stream", env_get_stream, METH_VARARGS,
     "env_get_stream(device_type, device_id) -> int: this thread's stream handle (0: default)."},
    {"env_set_stream", env_set_stream, METH_VARARGS,
     "env_set_stream(device_type, device_id, handle) -> int: sets it, returns the previous one."},
    {NULL, NULL, 0, NULL}};
