/* Private header of packedfun._core: the element conversions that run no Python code and cannot
 * fail (small ints, exact floats, ASCII strs), shared by the container conversions and views. */
#ifndef PACKEDFUN_SRC_PYTHON_CONVERT_PLAIN_H_
#define PACKEDFUN_SRC_PYTHON_CONVERT_PLAIN_H_

#include <string.h>

#include "core.h"

/* Stores `o` in `*out` when it is an exact int that fits a machine word without any call. */
static inline int pfpy_small_int(PyObject* o, PFAny* out) {
  if (!PyLong_CheckExact(o)) return 0;
#if PY_VERSION_HEX >= 0x030C0000
  if (!PyUnstable_Long_IsCompact((PyLongObject*)o)) return 0;
  PFPY_SET_POD(out, kPFTypeInt, v_int64, (int64_t)PyUnstable_Long_CompactValue((PyLongObject*)o));
#else
  Py_ssize_t size = Py_SIZE(o);
  if (size < -1 || size > 1) return 0;
  int64_t digit = (int64_t)((PyLongObject*)o)->ob_digit[0];
  PFPY_SET_POD(out, kPFTypeInt, v_int64, size < 0 ? -digit : size == 0 ? 0 : digit);
#endif
  return 1;
}

/* Stores `o` in `*out` when it is a value whose conversion runs no Python code, takes no
 * reference and cannot fail: a small int, an exact float, an exact ASCII str (up to 7 bytes
 * inline as its own owned copy, longer as a view over `view`). Floats and strs are tested by
 * exact type: PyFloat_Check would walk the subtype chain of every str. */
static inline int pfpy_plain_from_py(PyObject* o, PFAny* out, PFByteArray* view) {
  if (pfpy_small_int(o, out)) return 1;
  PyTypeObject* t = Py_TYPE(o);
  if (t == &PyFloat_Type) {
    PFPY_SET_POD(out, kPFTypeFloat, v_float64, PyFloat_AS_DOUBLE(o));
    return 1;
  }
  if (t != &PyUnicode_Type || !PyUnicode_IS_COMPACT_ASCII(o)) return 0; /* ASCII is UTF-8 */
  const char* data = (const char*)PyUnicode_DATA(o);
  Py_ssize_t size = PyUnicode_GET_LENGTH(o);
  if (size <= 7) {
    out->type_index = kPFTypeSmallStr;
    out->small_len = (uint32_t)size;
    out->v_int64 = 0;
    memcpy(out->v_bytes, data, (size_t)size);
    return 1;
  }
  view->data = data;
  view->size = (size_t)size;
  PFPY_SET_POD(out, kPFTypeStrView, v_ptr, view);
  return 1;
}

#endif /* PACKEDFUN_SRC_PYTHON_CONVERT_PLAIN_H_ */
