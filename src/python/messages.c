/* The wording of user-facing messages, read from packedfun._rules.messages (shared with ctypes). */
#include "core.h"

/* packedfun._rules.messages, imported on the first message (the bottom layer: it imports nothing
 * of the package, so importing it from here closes no circle). */
static PyObject* messages_module = NULL;

/* The template `name` filled (str.format) with the tuple Py_VaBuildValue makes of `format`. An
 * exception already pending is dropped first, as PyErr_Format would replace it: the message is
 * made by Python code, which must not run with one set. */
static PFPY_NOINLINE PyObject* format_message(const char* name, const char* format, va_list va) {
  if (PyErr_Occurred()) PyErr_Clear();
  if (messages_module == NULL) {
    messages_module = PyImport_ImportModule("packedfun._rules.messages");
    if (messages_module == NULL) return NULL;
  }
  PyObject* values = Py_VaBuildValue(format, va);
  if (values == NULL) return NULL;
  PyObject* template_ = PyObject_GetAttrString(messages_module, name);
  PyObject* text = NULL;
  if (template_ != NULL) {
    PyObject* fill = PyObject_GetAttrString(template_, "format");
    if (fill != NULL) text = PyObject_Call(fill, values, NULL);
    Py_XDECREF(fill);
  }
  Py_XDECREF(template_);
  Py_DECREF(values);
  return text;
}

PyObject* pfpy_message(const char* name, const char* format, ...) {
  va_list va;
  va_start(va, format);
  PyObject* text = format_message(name, format, va);
  va_end(va);
  return text;
}

PyObject* pfpy_raise_message(PyObject* exc, const char* name, const char* format, ...) {
  va_list va;
  va_start(va, format);
  PyObject* text = format_message(name, format, va);
  va_end(va);
  if (text != NULL) {
    PyErr_SetObject(exc, text);
    Py_DECREF(text);
  }
  return NULL;
}
