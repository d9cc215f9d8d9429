/* Conversion between Python objects and PFAny values, in both directions. */
#include "core.h"

#include <string.h>
#include "object_system.h"
#include "tensor.h"

/* ---- Python -> PFAny ----------------------------------------------------------------------------
 */

static PyObject* ctypes_void_p = NULL; /* owned; looked up once ctypes is imported */

PyObject* pfpy_ctypes_void_p(void) {
  static PyObject* key = NULL; /* interned "ctypes", so the lookup below hashes nothing */
  if (ctypes_void_p != NULL) return ctypes_void_p;
  if (key == NULL && (key = PyUnicode_InternFromString("ctypes")) == NULL) {
    PyErr_Clear();
    return NULL;
  }
  PyObject* ctypes = PyDict_GetItemWithError(PyImport_GetModuleDict(), key); /* no import */
  if (ctypes == NULL) {
    PyErr_Clear();
    return NULL;
  }
  ctypes_void_p = PyObject_GetAttrString(ctypes, "c_void_p");
  if (ctypes_void_p == NULL) PyErr_Clear();
  return ctypes_void_p;
}

PFPY_NOINLINE void pfpy_arg_error(PyObject* exc_type, PyObject* fname, Py_ssize_t pos,
                                  const char* what) {
  if (pos < 0) {
    PyErr_Format(exc_type, "%S: return value: %s", fname ? fname : (PyObject*)Py_None, what);
  } else if (fname != NULL) {
    PyErr_Format(exc_type, "%U: argument %zd: %s", fname, pos, what);
  } else {
    PyErr_Format(exc_type, "packedfun.Function argument %zd: %s", pos, what);
  }
}

int pfpy_prefix_unicode_reason(PyObject* exc, PyObject* where) {
  if (where == NULL || !PyErr_GivenExceptionMatches(exc, PyExc_UnicodeEncodeError)) return 0;
  PyObject* reason = PyObject_GetAttrString(exc, "reason");
  PyObject* text = reason != NULL ? PyUnicode_FromFormat("%U: %S", where, reason) : NULL;
  int ok = text != NULL && PyObject_SetAttrString(exc, "reason", text) == 0;
  Py_XDECREF(text);
  Py_XDECREF(reason);
  PyErr_Clear();
  return ok;
}

/* Names the argument in the exception being raised: a UnicodeEncodeError's reason gets "F:
 * argument N: " in front (its message is made from the reason), others a note "while converting
 * argument N of F" (3.11+). */
static PFPY_NOINLINE void add_arg_note(PyObject* fname, Py_ssize_t pos) {
  PyObject* exc = pfpy_fetch_exception();
  if (exc == NULL) return;
  if (pos >= 0) {
    PyObject* where = fname != NULL ? PyUnicode_FromFormat("%U: argument %zd", fname, pos)
                                    : PyUnicode_FromFormat("packedfun.Function argument %zd", pos);
    int done = pfpy_prefix_unicode_reason(exc, where);
    Py_XDECREF(where);
    PyErr_Clear();
    if (done) {
      pfpy_restore_exception(exc);
      return;
    }
  }
#if PY_VERSION_HEX >= 0x030B0000
  PyObject* note = pos < 0 ? PyUnicode_FromString("while converting a return value")
                           : PyUnicode_FromFormat("while converting argument %zd of %S", pos,
                                                  fname ? fname : (PyObject*)Py_None);
  if (note != NULL) {
    PyObject* r = PyObject_CallMethod(exc, "add_note", "O", note);
    Py_XDECREF(r);
    Py_DECREF(note);
    PyErr_Clear();
  }
#endif
  pfpy_restore_exception(exc);
}

static int push_temp(PFPyArgs* pack, PFObject* obj, PFAny* out) {
  pack->temps[pack->num_temps++] = obj;
  out->type_index = obj->type_index;
  out->zero_padding = 0;
  out->v_obj = obj;
  return 0;
}

/* An int beyond int64: [2**63, 2**64) travels as kPFTypeUInt64. Cold. */
static PFPY_NOINLINE int long_beyond_int64(PyObject* o, int overflow, PFAny* out) {
  if (overflow < 0) return PFPY_INT_TOO_SMALL;
  unsigned long long value = PyLong_AsUnsignedLongLong(o);
  if (value == (unsigned long long)-1 && PyErr_Occurred()) {
    if (!PyErr_ExceptionMatches(PyExc_OverflowError)) return -1;
    PyErr_Clear();
    return PFPY_INT_TOO_LARGE;
  }
  PFPY_SET_POD(out, kPFTypeUInt64, v_uint64, (uint64_t)value);
  return 0;
}

int pfpy_long_to_any(PyObject* o, PFAny* out) {
  int overflow;
  long long value = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (value == -1 && PyErr_Occurred()) return -1;
  if (overflow != 0) return long_beyond_int64(o, overflow, out);
  PFPY_SET_POD(out, kPFTypeInt, v_int64, (int64_t)value);
  return 0;
}

const char* pfpy_int_range_message(int rc) {
  return rc == PFPY_INT_TOO_LARGE ? "int too large for uint64" : "int too small for int64";
}

static int arg_from_int(PyObject* o, PFAny* out, Py_ssize_t pos, PyObject* fname) {
  int rc = pfpy_long_to_any(o, out);
  if (PFPY_LIKELY(rc == 0) || rc < 0) return rc;
  pfpy_arg_error(PyExc_OverflowError, fname, pos, pfpy_int_range_message(rc));
  return -1;
}

static int arg_from_void_p(PyObject* o, PFAny* out) {
  PyObject* value = PyObject_GetAttrString(o, "value");
  if (value == NULL) return -1;
  void* ptr = NULL;
  if (value != Py_None) {
    ptr = PyLong_AsVoidPtr(value);
    if (ptr == NULL && PyErr_Occurred()) {
      Py_DECREF(value);
      return -1;
    }
  }
  Py_DECREF(value);
  PFPY_SET_POD(out, kPFTypeOpaquePtr, v_ptr, ptr);
  return 0;
}

static int arg_from_bytes_like(PyObject* o, PFPyArgs* pack, PFAny* out, Py_ssize_t slot) {
  PFByteArray* view = &pack->views[slot];
  if (PyBytes_Check(o)) { /* a bytes object's buffer always ends in a NUL */
    view->data = PyBytes_AS_STRING(o);
    view->size = (size_t)PyBytes_GET_SIZE(o);
    PFPY_SET_NUL_VIEW(out, kPFTypeBytesView, view);
  } else {
    view->data = PyByteArray_AS_STRING(o);
    view->size = (size_t)PyByteArray_GET_SIZE(o);
    PFPY_SET_POD(out, kPFTypeBytesView, v_ptr, view);
  }
  return 0;
}

/* The number rule (docs/calling.md), last before Opaque: an object whose type has nb_index
 * (NumPy integer scalars) travels as int, numpy.bool_ as bool, one with nb_float (NumPy float
 * scalars) as float. Recognised by type slots and name: NumPy is never imported. 1 when
 * converted, 0 when `o` is no number, -1 on error. */
static int arg_from_number(PyObject* o, PFAny* out, Py_ssize_t pos, PyObject* fname) {
  PyTypeObject* t = Py_TYPE(o);
  PyNumberMethods* nb = t->tp_as_number;
  if (nb != NULL && nb->nb_index != NULL) {
    PyObject* index = PyNumber_Index(o);
    if (index == NULL) return -1;
    int rc = arg_from_int(index, out, pos, fname);
    Py_DECREF(index);
    return rc < 0 ? -1 : 1;
  }
  if (strcmp(t->tp_name, "numpy.bool_") == 0 || strcmp(t->tp_name, "numpy.bool") == 0) {
    int truth = PyObject_IsTrue(o);
    if (truth < 0) return -1;
    PFPY_SET_POD(out, kPFTypeBool, v_int64, truth);
    return 1;
  }
  if (nb != NULL && nb->nb_float != NULL) {
    double value = PyFloat_AsDouble(o);
    if (value == -1.0 && PyErr_Occurred()) return -1;
    PFPY_SET_POD(out, kPFTypeFloat, v_float64, value);
    return 1;
  }
  return 0;
}

int pfpy_arg_from_py_slow(PyObject* o, PFPyArgs* pack, Py_ssize_t pos, PyObject* fname) {
  Py_ssize_t slot = pos < 0 ? 0 : pos;
  PFAny* out = &pack->args[slot];
  PFObject* obj = NULL;
  if (pfpy_tensor_known_type(Py_TYPE(o))) { /* NumPy/torch: they would fail every probe below */
    return pfpy_tensor_try_arg(o, pack, pos, fname) < 0 ? -1 : 0;
  }
  if (PyFunction_Check(o) || Py_IS_TYPE(o, &PyCFunction_Type) || PyMethod_Check(o)) {
    if (pfpy_callable_to_temp_function(o, &obj) != 0) return -1; /* the usual callbacks, first */
    return push_temp(pack, obj, out);
  }
  if (PyList_CheckExact(o) || PyDict_CheckExact(o) || PyTuple_CheckExact(o)) {
    return pfpy_container_arg(o, pack, pos, fname); /* before the subtype walks below */
  }
  if ((PyObject*)Py_TYPE(o) == pfpy_dtype_class) { /* a str subclass: a DLDataType, not text */
    return pfpy_tensor_pod_arg(o, out) < 0 ? -1 : 0;
  }
  if (PyUnicode_Check(o)) {
    PFByteArray* view = &pack->views[slot];
    if (pfpy_str_view(o, view) != 0) {
      add_arg_note(fname, pos);
      return -1;
    }
    PFPY_SET_NUL_VIEW(out, kPFTypeStrView, view); /* PyUnicode_AsUTF8AndSize ends in a NUL */
    return 0;
  }
  if (PyBool_Check(o)) {
    PFPY_SET_POD(out, kPFTypeBool, v_int64, o == Py_True);
    return 0;
  }
  if (PyLong_Check(o)) return arg_from_int(o, out, pos, fname);
  if (PyFloat_Check(o)) {
    PFPY_SET_POD(out, kPFTypeFloat, v_float64, PyFloat_AS_DOUBLE(o));
    return 0;
  }
  if (PyObject_TypeCheck(o, &PFPyObject_Type)) {
    pfpy_object_arg(o, out);
    return 0;
  }
  if (PyBytes_Check(o) || PyByteArray_Check(o)) return arg_from_bytes_like(o, pack, out, slot);
  if (PyList_Check(o) || PyTuple_Check(o) || PyDict_Check(o)) {
    return pfpy_container_arg(o, pack, pos, fname); /* -> Array / Map (convert_container.c) */
  }
  if (PyCallable_Check(o)) { /* before the tensor probes: callbacks are hot, arrays not callable */
    if (pfpy_callable_to_temp_function(o, &obj) != 0) return -1;
    return push_temp(pack, obj, out);
  }
  int tensor_rc = pfpy_tensor_try_arg(o, pack, pos, fname); /* arrays, dtypes, devices */
  if (tensor_rc != 0) return tensor_rc < 0 ? -1 : 0;
  PyObject* void_p = pfpy_ctypes_void_p(); /* c_void_p instances are not callable */
  if (void_p != NULL && PyObject_TypeCheck(o, (PyTypeObject*)void_p)) {
    return arg_from_void_p(o, out);
  }
  int number_rc = arg_from_number(o, out, pos, fname);
  if (number_rc != 0) return number_rc < 0 ? -1 : 0;
  if (pfpy_opaque_new(o, &obj) != 0) return -1;
  return push_temp(pack, obj, out);
}

void pfpy_args_release(PFPyArgs* pack) {
  for (int i = 0; i < pack->num_temps; ++i) {
    PFObject* temp = pack->temps[i];
    if (temp->type_index == kPFTypeFunction) { /* a wrapped callable: recycled when not kept */
      pfpy_temp_function_release(temp);
    } else {
      PFObjectDecRef(temp);
    }
  }
  pack->num_temps = 0;
}

int pfpy_any_from_py(PyObject* o, PFAny* out) {
  PFAny arg;
  PFByteArray view;
  PFObject* temp = NULL;
  PFPyArgs pack = {&arg, &view, &temp, 0, 0, 0, NULL};
  if (pfpy_arg_from_py(o, &pack, -1, NULL) != 0) return -1;
  if (pack.num_temps != 0) { /* the temporary's reference moves into *out */
    *out = arg;
    return 0;
  }
  int rc = 0;
  if (arg.type_index == kPFTypeStrView) {
    rc = PFStringCreate(&view, out);
  } else if (arg.type_index == kPFTypeBytesView) {
    rc = PFBytesCreate(&view, out);
  } else {
    if (arg.type_index >= kPFTypeStaticObjectBegin) PFObjectIncRef(arg.v_obj);
    *out = arg;
  }
  if (rc != 0) {
    pfpy_raise_native(NULL);
    return -1;
  }
  return 0;
}

/* ---- PFAny -> Python ----------------------------------------------------------------------------
 */

static PyObject* void_p_from(void* ptr) {
  if (ptr == NULL) Py_RETURN_NONE;
  PyObject* void_p = pfpy_ctypes_void_p();
  if (void_p == NULL) {
    PyObject* ctypes = PyImport_ImportModule("ctypes");
    if (ctypes == NULL) return NULL;
    Py_DECREF(ctypes);
    void_p = pfpy_ctypes_void_p();
    if (void_p == NULL) return PyErr_Format(PyExc_ImportError, "ctypes.c_void_p not found");
  }
  PyObject* addr = PyLong_FromVoidPtr(ptr);
  if (addr == NULL) return NULL;
  PyObject* result = PyObject_CallOneArg(void_p, addr);
  Py_DECREF(addr);
  return result;
}

static PyObject* pod_to_py(const PFAny* v) {
  switch (v->type_index) {
    case kPFTypeNone:
      Py_RETURN_NONE;
    case kPFTypeInt:
      return PyLong_FromLongLong(v->v_int64);
    case kPFTypeUInt64:
      return PyLong_FromUnsignedLongLong(v->v_uint64);
    case kPFTypeBool:
      return PyBool_FromLong((long)v->v_int64);
    case kPFTypeFloat:
      return PyFloat_FromDouble(v->v_float64);
    case kPFTypeOpaquePtr:
      return void_p_from(v->v_ptr);
    case kPFTypeDataType:
      return pfpy_dtype_to_py(v->v_dtype);
    case kPFTypeDevice:
      return pfpy_device_to_py(v->v_device);
    case kPFTypeSmallStr:
      return PyUnicode_DecodeUTF8(v->v_bytes, (Py_ssize_t)v->small_len, NULL);
    case kPFTypeSmallBytes:
      return PyBytes_FromStringAndSize(v->v_bytes, (Py_ssize_t)v->small_len);
    case kPFTypeRawStr:
      return PyUnicode_DecodeUTF8(v->v_c_str, (Py_ssize_t)strlen(v->v_c_str), NULL);
    case kPFTypeStrView: {
      const PFByteArray* b = (const PFByteArray*)v->v_ptr;
      return PyUnicode_DecodeUTF8(b->data, (Py_ssize_t)b->size, NULL);
    }
    case kPFTypeBytesView: {
      const PFByteArray* b = (const PFByteArray*)v->v_ptr;
      return PyBytes_FromStringAndSize(b->data, (Py_ssize_t)b->size);
    }
    default:
      return NULL;
  }
}

static PFPY_NOINLINE PyObject* unknown_kind(const PFAny* v) {
  if (v->type_index == kPFTypeDLTensorPtr) {
    PFAny owned = {0};
    if (PFAnyViewToOwned(v, &owned) != 0) return pfpy_raise_native(NULL);
    return pfpy_any_steal_to_py(&owned);
  }
  return PyErr_Format(PyExc_TypeError, "packedfun: cannot convert a value of type index %d",
                      (int)v->type_index);
}

/* Strings and bytes objects become plain str/bytes; `obj` is borrowed. */
static PyObject* bytes_object_to_py(PFObject* obj) {
  const PFByteArray* b = &((PFBytesObject*)obj)->bytes;
  if (obj->type_index == kPFTypeString) {
    return PyUnicode_DecodeUTF8(b->data, (Py_ssize_t)b->size, NULL);
  }
  return PyBytes_FromStringAndSize(b->data, (Py_ssize_t)b->size);
}

PyObject* pfpy_any_steal_to_py(PFAny* v) {
  int32_t tindex = v->type_index;
  if (tindex < kPFTypeStaticObjectBegin) {
    PyObject* r = pod_to_py(v);
    if (r == NULL && !PyErr_Occurred()) r = unknown_kind(v);
    return r; /* POD results own nothing */
  }
  PFObject* obj = v->v_obj;
  v->type_index = kPFTypeNone;
  v->v_int64 = 0;
  if (tindex == kPFTypeString || tindex == kPFTypeBytes) {
    PyObject* r = bytes_object_to_py(obj);
    PFObjectDecRef(obj);
    return r;
  }
  return pfpy_object_wrap(obj);
}

PyObject* pfpy_any_view_to_py(const PFAny* v) {
  int32_t tindex = v->type_index;
  if (tindex < kPFTypeStaticObjectBegin) {
    PyObject* r = pod_to_py(v);
    if (r == NULL && !PyErr_Occurred()) r = unknown_kind(v);
    return r;
  }
  if (tindex == kPFTypeString || tindex == kPFTypeBytes) return bytes_object_to_py(v->v_obj);
  PFObjectIncRef(v->v_obj);
  return pfpy_object_wrap(v->v_obj);
}

/* ---- module functions
 * ----------------------------------------------------------------------------- */

static PyObject* convert_value(PyObject* mod, PyObject* value) {
  (void)mod;
  PFAny owned;
  if (PyList_Check(value) || PyTuple_Check(value) || PyDict_Check(value)) { /* Python reads it */
    int32_t kind = PyDict_Check(value) ? kPFTypeMap : kPFTypeArray;
    if (pfpy_container_from_py(value, kind, &owned, NULL, -1, 1) != 0) return NULL;
  } else if (pfpy_any_from_py(value, &owned) != 0) {
    return NULL;
  }
  return pfpy_any_steal_to_py(&owned);
}

PyMethodDef pfpy_convert_methods[] = {
    {"convert", convert_value, METH_O,
     "convert(value)\n--\n\nThe FFI form of `value`: callables become Functions, str/int/float/"
     "bytes/Objects come back unchanged in kind, other objects come back as themselves."},
    {NULL, NULL, 0, NULL}};
