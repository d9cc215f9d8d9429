/* packedfun.dtype and packedfun.device values crossing the boundary: as arguments and as results.
 */
#include "tensor.h"

PyObject* pfpy_dtype_class = NULL;
PyObject* pfpy_device_class = NULL;

/* Reads int attribute `name` of `o` into *out; -1 with an exception. */
static int int_attr(PyObject* o, const char* name, long* out) {
  PyObject* v = PyObject_GetAttrString(o, name);
  if (v == NULL) return -1;
  *out = PyLong_AsLong(v);
  Py_DECREF(v);
  return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

int pfpy_tensor_pod_arg(PyObject* o, PFAny* out) {
  long a, b, c = 1;
  if ((PyObject*)Py_TYPE(o) == pfpy_dtype_class) {
    if (int_attr(o, "type_code", &a) || int_attr(o, "bits", &b) || int_attr(o, "lanes", &c)) {
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
  if (int_attr(o, "device_type", &a) || int_attr(o, "device_id", &b)) return -1;
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
