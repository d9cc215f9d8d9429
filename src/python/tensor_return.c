/* Tensor results go back as they came in: torch tensors in -> torch tensors out, NumPy in ->
 * NumPy out, also when read from a returned container (set_tensor_return switches it off). */
#include "object_system.h"
#include "tensor.h"

_Thread_local int pfpy_keep_tensor_results = 0;

enum { kFrameworkNone = 0, kFrameworkNumpy = 1, kFrameworkExchange = 2 };

static _Thread_local int nested_framework = 0;
int pfpy_tensor_containers_remember = 0;

void pfpy_tensor_nested_note(PyTypeObject* type) {
  if (nested_framework == 0) {
    nested_framework = type == pfpy_tensor_exchange_type ? kFrameworkExchange : kFrameworkNumpy;
  }
}

int pfpy_tensor_nested_take(void) {
  int fw = nested_framework;
  nested_framework = 0;
  return fw;
}

/* `o` as a packedfun Array/Map/List/Dict wrapper (a PFPyContainer), or NULL: the native object's
 * kind picks the one class to test (kPFTypeArray, Map, List, Dict are consecutive). */
static PFPyContainer* as_container(PyObject* o) {
  static PyTypeObject* const kinds[] = {&PFPyArray_Type, &PFPyMap_Type, &PFPyList_Type,
                                        &PFPyDict_Type};
  if (!PyObject_TypeCheck(o, &PFPyObject_Type)) return NULL;
  const PFObject* h = ((const PFPyObject*)o)->handle;
  uint32_t k = h != NULL ? (uint32_t)(h->type_index - kPFTypeArray) : 4u;
  return k < 4u && PyObject_TypeCheck(o, kinds[k]) ? (PFPyContainer*)o : NULL;
}

/* The framework container argument `o` remembers (0 for anything else). */
static int container_framework(PyObject* o) {
  const PFPyContainer* c = as_container(o);
  return c != NULL ? c->tensor_framework : kFrameworkNone;
}

int pfpy_tensor_result_framework(PyObject* const* args, Py_ssize_t n, int nested) {
  if (pfpy_keep_tensor_results) return kFrameworkNone;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyTypeObject* type = Py_TYPE(args[i]);
    if (type == pfpy_tensor_exchange_type && type != NULL) return kFrameworkExchange;
    if (type == pfpy_tensor_numpy_type && type != NULL) return kFrameworkNumpy;
    int remembered = container_framework(args[i]);
    if (remembered != kFrameworkNone) return remembered;
  }
  return nested;
}

static int same_view(const DLTensor* a, const DLTensor* b) {
  if (a->data != b->data || a->byte_offset != b->byte_offset || a->ndim != b->ndim ||
      a->dtype.code != b->dtype.code || a->dtype.bits != b->dtype.bits ||
      a->dtype.lanes != b->dtype.lanes || a->device.device_type != b->device.device_type ||
      a->device.device_id != b->device.device_id) {
    return 0;
  }
  for (int32_t d = 0; d < a->ndim; ++d) {
    if (a->shape[d] != b->shape[d]) return 0;
    if (a->strides != NULL && b->strides != NULL && a->strides[d] != b->strides[d]) return 0;
  }
  return 1;
}

/* The argument object whose exact view `t` is (a new reference), or NULL. */
static PyObject* argument_of(const PFTensorObject* t, const PFPyArgs* pack) {
  for (int i = 0; pack != NULL && i < pack->num_temps; ++i) {
    const DLTensor* seen = NULL;
    PyObject* owner = pfpy_tensor_temp_owner(pack->temps[i], &seen);
    if (owner != NULL && Py_TYPE(owner) == pfpy_tensor_exchange_type &&
        same_view(&t->tensor, seen)) {
      Py_INCREF(owner);
      return owner;
    }
  }
  return NULL;
}

/* numpy.from_dlpack(packedfun.Tensor wrapping `h` (stolen)). */
static PyObject* to_numpy(PFObject* h) {
  static PyObject* from_dlpack = NULL;
  PyObject* t = pfpy_tensor_wrap(h);
  if (t == NULL) return NULL;
  if (from_dlpack == NULL) {
    PyObject* np = PyImport_ImportModule("numpy"); /* imported already: an ndarray came in */
    from_dlpack = np ? PyObject_GetAttrString(np, "from_dlpack") : NULL;
    Py_XDECREF(np);
    if (from_dlpack == NULL) {
      Py_DECREF(t);
      return NULL;
    }
  }
  PyObject* out = PyObject_CallOneArg(from_dlpack, t);
  Py_DECREF(t);
  return out;
}

/* The exchange-API framework's tensor for `h` (stolen), without a Python-level call. */
static PyObject* to_exchange(PFObject* h) {
  const DLPackExchangeAPI* api = pfpy_tensor_exchange_api;
  if (api == NULL || api->managed_tensor_to_py_object_no_sync == NULL) {
    return pfpy_tensor_wrap(h);
  }
  DLManagedTensorVersioned* m = NULL;
  int rc = PFTensorToDLPackVersioned(h, &m);
  PFObjectDecRef(h);
  if (rc != 0) return pfpy_raise_native(NULL);
  void* out = NULL;
  if (api->managed_tensor_to_py_object_no_sync(m, &out) != 0) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_BufferError, "the framework refused the tensor");
    return NULL;
  }
  return (PyObject*)out;
}

static PyObject* tensor_out(PFObject* h, int fw, const PFPyArgs* pack) {
  if (fw == kFrameworkExchange) {
    PyObject* same = argument_of((const PFTensorObject*)h, pack);
    if (same != NULL) {
      PFObjectDecRef(h);
      return same;
    }
    return to_exchange(h);
  }
  return to_numpy(h);
}

PyObject* pfpy_tensor_element_for(PyObject* e, int fw) {
  if (e == NULL) return NULL;
  if (PyObject_TypeCheck(e, &PFPyTensor_Type) && ((PFPyObject*)e)->handle != NULL) {
    PFObject* h = ((PFPyObject*)e)->handle;
    PFObjectIncRef(h);
    Py_DECREF(e);
    return tensor_out(h, fw, NULL);
  }
  PFPyContainer* c = as_container(e);
  if (c != NULL) {
    c->tensor_framework = fw;
    pfpy_tensor_containers_remember = 1;
  }
  return e;
}

PyObject* pfpy_tensor_result_to_py(PFAny* rv, int fw, const PFPyArgs* pack) {
  int32_t t = rv->type_index;
  /* The common result of a call taking an array (a count, a size) inline, as the plain call
   * returns it: no framework to convert for, and nothing owned. */
  if (t == kPFTypeInt) return PyLong_FromLongLong(rv->v_int64);
  if (t == kPFTypeNone) Py_RETURN_NONE;
  if (t == kPFTypeTensor) return tensor_out(rv->v_obj, fw, pack);
  PyObject* out = pfpy_any_steal_to_py(rv);
  return t >= kPFTypeArray && t <= kPFTypeDict ? pfpy_tensor_element_for(out, fw) : out;
}

PyObject* pfpy_tensor_result_from_containers(PFAny* rv, PyObject* const* args, const PFAny* packed,
                                             Py_ssize_t n) {
  for (Py_ssize_t i = 0; i < n; ++i) { /* only container arguments can remember one */
    if ((uint32_t)(packed[i].type_index - kPFTypeArray) > (uint32_t)(kPFTypeDict - kPFTypeArray)) {
      continue;
    }
    int fw = container_framework(args[i]);
    if (fw != kFrameworkNone) {
      if (pfpy_keep_tensor_results) break;
      return pfpy_tensor_result_to_py(rv, fw, NULL);
    }
  }
  return pfpy_any_steal_to_py(rv);
}

static PyObject* set_tensor_return(PyObject* self, PyObject* keep) {
  (void)self;
  int k = PyObject_IsTrue(keep);
  if (k < 0) return NULL;
  int previous = pfpy_keep_tensor_results;
  pfpy_keep_tensor_results = k;
  return PyBool_FromLong(previous);
}

static PyMethodDef tensor_return_methods[] = {
    {"_keep_tensor_results", set_tensor_return, METH_O,
     "_keep_tensor_results(keep)\n--\n\nSets this thread's switch; returns the previous one."},
    {NULL, NULL, 0, NULL},
};

int pfpy_tensor_return_add_to_module(PyObject* m) {
  return PyModule_AddFunctions(m, tensor_return_methods);
}

/* ---- the environment of a call with array arguments: allocator and stream ----------------- */

/* numpy.empty (a new ndarray, a new reference) for `proto`'s shape and dtype; NULL + exception. */
static PyObject* numpy_empty(const DLTensor* proto) {
  static PyObject* empty = NULL;
  if (empty == NULL) {
    PyObject* np = PyImport_ImportModule("numpy"); /* imported already: an ndarray came in */
    empty = np ? PyObject_GetAttrString(np, "empty") : NULL;
    Py_XDECREF(np);
    if (empty == NULL) return NULL;
  }
  int code = proto->dtype.code;
  char kind = code == kDLInt ? 'i' : code == kDLUInt ? 'u' : code == kDLFloat ? 'f' : 0;
  if (code == kDLBool) kind = 'b';
  if (code == kDLComplex) kind = 'c';
  if (kind == 0 || proto->dtype.lanes != 1 || proto->dtype.bits % 8 != 0) {
    PyErr_Format(PyExc_TypeError, "the NumPy allocator has no dtype for code=%d bits=%d lanes=%d",
                 code, proto->dtype.bits, proto->dtype.lanes);
    return NULL;
  }
  PyObject* shape = PyTuple_New(proto->ndim);
  for (int32_t i = 0; shape != NULL && i < proto->ndim; ++i) {
    PyObject* d = PyLong_FromLongLong(proto->shape[i]);
    if (d == NULL) Py_CLEAR(shape);
    if (shape != NULL) PyTuple_SET_ITEM(shape, i, d);
  }
  PyObject* dtype = PyUnicode_FromFormat("%c%d", kind, (int)(proto->dtype.bits / 8));
  PyObject* out = shape && dtype ? PyObject_CallFunctionObjArgs(empty, shape, dtype, NULL) : NULL;
  Py_XDECREF(shape);
  Py_XDECREF(dtype);
  return out;
}

/* The NumPy allocator (DLPack's allocator signature): CPU memory owned by a new ndarray. */
static int numpy_allocator(DLTensor* proto, DLManagedTensorVersioned** out, void* ctx,
                           void (*set_error)(void*, const char*, const char*)) {
  if (proto->device.device_type != kDLCPU) {
    set_error(ctx, "ValueError", "the NumPy allocator makes CPU tensors only");
    return -1;
  }
  PyGILState_STATE gil = PyGILState_Ensure();
  int rc = -1;
  PFObject* h = NULL;
  PyObject* arr = numpy_empty(proto);
  if (arr != NULL && pfpy_tensor_fast_import(arr, &h) == 0) {
    rc = PFTensorToDLPackVersioned(h, out) == 0 ? 0 : -1;
    PFObjectDecRef(h);
    if (rc != 0) pfpy_raise_native(NULL);
  }
  Py_XDECREF(arr);
  if (rc != 0) {
    PyObject* exc = pfpy_fetch_exception();
    PyObject* text = exc ? PyObject_Str(exc) : NULL;
    const char* msg = text ? PyUnicode_AsUTF8(text) : NULL;
    set_error(ctx, "MemoryError", msg ? msg : "the NumPy allocator failed");
    PyErr_Clear();
    Py_XDECREF(text);
    Py_XDECREF(exc);
  }
  PyGILState_Release(gil);
  return rc;
}

int pfpy_tensor_env_enter(PyObject* const* args, Py_ssize_t n, const PFPyArgs* pack, int nested,
                          PFPyTensorEnv* saved) {
  int fw = kFrameworkNone;
  for (Py_ssize_t i = 0; i < n && fw == kFrameworkNone; ++i) {
    PyTypeObject* type = Py_TYPE(args[i]);
    if (type == pfpy_tensor_exchange_type && type != NULL) fw = kFrameworkExchange;
    if (type == pfpy_tensor_numpy_type && type != NULL) fw = kFrameworkNumpy;
  }
  if (fw == kFrameworkNone) fw = nested;
  if (fw == kFrameworkNone) return 0;
  const DLPackExchangeAPI* api = pfpy_tensor_exchange_api;
  PFEnvTensorAllocator alloc = fw == kFrameworkNumpy ? numpy_allocator
                               : api != NULL         ? api->managed_tensor_allocator
                                                     : NULL;
  PFEnvSetTensorAllocator(alloc, &saved->allocator);
  saved->stream_set = 0;
  if (fw == kFrameworkExchange && api != NULL && api->current_work_stream != NULL) {
    for (int i = 0; i < pack->num_temps; ++i) { /* the first GPU tensor's current stream */
      const DLTensor* seen = NULL;
      if (pfpy_tensor_temp_owner(pack->temps[i], &seen) == NULL ||
          seen->device.device_type == kDLCPU) {
        continue;
      }
      void* stream = NULL;
      if (api->current_work_stream(seen->device.device_type, seen->device.device_id, &stream) ==
              0 &&
          PFEnvSetStream(seen->device.device_type, seen->device.device_id, stream,
                         &saved->stream) == 0) {
        saved->device = seen->device;
        saved->stream_set = 1;
      }
      PyErr_Clear();
      break;
    }
  }
  return 1;
}

void pfpy_tensor_env_exit(const PFPyTensorEnv* saved) {
  PFEnvSetTensorAllocator(saved->allocator, NULL);
  if (saved->stream_set) {
    PFEnvSetStream(saved->device.device_type, saved->device.device_id, saved->stream, NULL);
  }
}
