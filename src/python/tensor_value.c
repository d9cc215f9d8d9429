/* packedfun.dtype and packedfun.device values crossing the boundary: as arguments and as results.
 */
#include "tensor.h"

PyObject* pfpy_dtype_class = NULL;
PyObject* pfpy_device_class = NULL;

/* Reads int attribute `attr` (called `name` in messages) of `o` into *out, checked to lie in [low,
 * high]: the field is named in the OverflowError (above), ValueError (below) or TypeError, so
 * nothing ever wraps. */
static int field_attr(PyObject* o, const char* attr, const char* name, long low, long high,
                      long* out) {
  PyObject* v = PyObject_GetAttrString(o, attr);
  if (v == NULL) return -1;
  if (!PyLong_Check(v) || PyBool_Check(v)) {
    PyErr_Format(PyExc_TypeError, "%s must be an int, got %s", name, Py_TYPE(v)->tp_name);
    Py_DECREF(v);
    return -1;
  }
  int overflow = 0;
  long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
  if (x == -1 && PyErr_Occurred()) {
    Py_DECREF(v);
    return -1;
  }
  if (overflow > 0 || (overflow == 0 && x > high)) {
    PyErr_Format(PyExc_OverflowError, "%s %R does not fit (the largest is %ld)", name, v, high);
  } else if (overflow < 0 || x < low) {
    PyErr_Format(PyExc_ValueError, "%s %R is out of range (the smallest is %ld)", name, v, low);
  }
  Py_DECREF(v);
  if (PyErr_Occurred()) return -1;
  *out = (long)x;
  return 0;
}

int pfpy_tensor_pod_arg(PyObject* o, PFAny* out) {
  long a, b, c = 1;
  if ((PyObject*)Py_TYPE(o) == pfpy_dtype_class) {
    if (field_attr(o, "type_code", "dtype.type_code", 0, 255, &a) ||
        field_attr(o, "bits", "dtype.bits", 0, 255, &b) ||
        field_attr(o, "lanes", "dtype.lanes", 0, 65535, &c)) {
      return -1;
    }
    out->type_index = kPFTypeDataType;
    out->zero_padding = 0;
    out->v_int64 = 0;
    out->v_dtype.code = (uint8_t)a;
    out->v_dtype.bits = (uint8_t)b;
    out->v_dtype.lanes = (uint16_t)c;
    return 1;
  }
  if (field_attr(o, "device_type", "device_type", 0, INT32_MAX, &a) ||
      field_attr(o, "device_id", "device_id", 0, INT32_MAX, &b)) {
    return -1;
  }
  out->type_index = kPFTypeDevice;
  out->zero_padding = 0;
  out->v_int64 = 0;
  out->v_device.device_type = (DLDeviceType)a;
  out->v_device.device_id = (int32_t)b;
  return 1;
}

/* ---- dtype and device results
 * ---------------------------------------------------------------------- */

PyObject* pfpy_dtype_to_py(DLDataType dtype) {
  if (pfpy_dtype_class == NULL) {
    return Py_BuildValue("(iii)", (int)dtype.code, (int)dtype.bits, (int)dtype.lanes);
  }
  return PyObject_CallMethod(pfpy_dtype_class, "_from_dl", "iii", (int)dtype.code, (int)dtype.bits,
                             (int)dtype.lanes);
}

PyObject* pfpy_device_to_py(DLDevice device) {
  if (pfpy_device_class == NULL) {
    return Py_BuildValue("(ii)", (int)device.device_type, (int)device.device_id);
  }
  return PyObject_CallFunction(pfpy_device_class, "ii", (int)device.device_type,
                               (int)device.device_id);
}
