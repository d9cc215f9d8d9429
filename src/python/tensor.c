/* packedfun.Tensor: the Python type over kPFTypeTensor objects, with DLPack export and import. */
#include "tensor.h"

#include <string.h>

#define CAPSULE_LEGACY "dltensor"
#define CAPSULE_VERSIONED "dltensor_versioned"
#define CAPSULE_USED_LEGACY "used_dltensor"
#define CAPSULE_USED_VERSIONED "used_dltensor_versioned"

static DLTensor* tensor_of(PyObject* self) {
  return &((PFTensorObject*)((PFPyObject*)self)->handle)->tensor;
}

PyObject* pfpy_tensor_wrap(PFObject* obj) {
  PFPyObject* self = (PFPyObject*)PFPyTensor_Type.tp_alloc(&PFPyTensor_Type, 0);
  if (self == NULL) {
    PFObjectDecRef(obj);
    return NULL;
  }
  self->handle = obj;
  return (PyObject*)self;
}

/* Raises the pending native error as a Python exception; returns NULL. */
static PyObject* raise_native(const char* where) {
  PyObject* name = PyUnicode_FromString(where);
  pfpy_raise_native(name);
  Py_XDECREF(name);
  return NULL;
}

/* The last reference may run a producer's deleter, which may run Python code: any exception being
 * raised is set aside meanwhile. */
static void tensor_dealloc(PyObject* self) {
  PFPyObject* o = (PFPyObject*)self;
  PyObject_GC_UnTrack(self); /* GC-tracked like every Object (it visits nothing itself) */
  PyObject* exc = PyErr_Occurred() ? pfpy_fetch_exception() : NULL;
  if (o->weakrefs != NULL) PyObject_ClearWeakRefs(self);
  PFObject* h = o->handle;
  o->handle = NULL;
  PFObjectDecRef(h);
  if (exc != NULL) pfpy_restore_exception(exc);
  Py_TYPE(self)->tp_free(self);
}

/* ---- properties ---------------------------------------------------------------------------------
 */

static PyObject* int64_tuple(const int64_t* values, int32_t n) {
  PyObject* t = PyTuple_New(n);
  for (int32_t i = 0; t != NULL && i < n; ++i) {
    PyObject* v = PyLong_FromLongLong(values[i]);
    if (v == NULL)
      Py_CLEAR(t);
    else
      PyTuple_SET_ITEM(t, i, v);
  }
  return t;
}

static int check_handle(PyObject* self) {
  if (((PFPyObject*)self)->handle != NULL) return 0;
  pfpy_raise_message(PyExc_ValueError, "TENSOR_EMPTY", "()");
  return -1;
}

#define TENSOR_GETTER(name, expr)                        \
  static PyObject* name(PyObject* self, void* closure) { \
    (void)closure;                                       \
    if (check_handle(self) != 0) return NULL;            \
    const DLTensor* t = tensor_of(self);                 \
    return expr;                                         \
  }

static int64_t numel_of(const DLTensor* t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

TENSOR_GETTER(tensor_shape, int64_tuple(t->shape, t->ndim))
TENSOR_GETTER(tensor_strides, int64_tuple(t->strides, t->ndim))
TENSOR_GETTER(tensor_ndim, PyLong_FromLong(t->ndim))
TENSOR_GETTER(tensor_numel, PyLong_FromLongLong(numel_of(t)))
TENSOR_GETTER(tensor_dtype, pfpy_dtype_to_py(t->dtype))
TENSOR_GETTER(tensor_device, pfpy_device_to_py(t->device))
TENSOR_GETTER(tensor_data_ptr, PyLong_FromVoidPtr(t->data))
TENSOR_GETTER(tensor_byte_offset, PyLong_FromUnsignedLongLong(t->byte_offset))

/* packedfun._rules.tensor_layout.<name>(arg): the shared layer's value forms and checks. Each rule
 * is looked up on first use and kept in its own *slot (owned), so .size, .data_ptr,
 * is_contiguous() and from_dlpack's keyword checks import nothing after the first use. */
static PyObject* layout_rule(PyObject** slot, const char* name) {
  if (*slot == NULL) {
    PyObject* mod = PyImport_ImportModule("packedfun._rules.tensor_layout");
    if (mod == NULL) return NULL;
    *slot = PyObject_GetAttrString(mod, name);
    Py_DECREF(mod);
  }
  return *slot; /* borrowed */
}
static PyObject* layout_call(PyObject** slot, const char* name, PyObject* arg) {
  PyObject* rule = layout_rule(slot, name);
  return rule != NULL ? PyObject_CallOneArg(rule, arg) : NULL;
}
static PyObject* size_of_rule = NULL;              /* owned, see layout_call */
static PyObject* data_ptr_of_rule = NULL;          /* owned, see layout_call */
static PyObject* require_layout_rule = NULL;       /* owned, see layout_call */
static PyObject* tensor_is_contiguous_rule = NULL; /* owned, see layout_call */

/* size: the element count, an int that is also callable as size(dim) (torch's, tvm-ffi's). */
static PyObject* tensor_size(PyObject* self, void* closure) {
  (void)closure;
  if (check_handle(self) != 0) return NULL;
  return layout_call(&size_of_rule, "size_of", self);
}

/* data_ptr: the data's address, an int that is also callable as data_ptr(). */
static PyObject* tensor_data_ptr_value(PyObject* self, void* closure) {
  PyObject* address = tensor_data_ptr(self, closure);
  if (address == NULL) return NULL;
  PyObject* result = layout_call(&data_ptr_of_rule, "data_ptr_of", address);
  Py_DECREF(address);
  return result;
}

static PyObject* tensor_readonly(PyObject* self, void* closure) {
  (void)closure;
  if (check_handle(self) != 0) return NULL;
  int ro = 0;
  if (PFTensorIsReadOnly(((PFPyObject*)self)->handle, &ro) != 0) return raise_native("Tensor");
  return PyBool_FromLong(ro);
}

static PyObject* tensor_repr(PyObject* self) {
  if (((PFPyObject*)self)->handle == NULL) return pfpy_message("TENSOR_REPR_EMPTY", "()");
  PyObject* shape = tensor_shape(self, NULL);
  PyObject* dtype = shape ? tensor_dtype(self, NULL) : NULL;
  PyObject* device = dtype ? tensor_device(self, NULL) : NULL;
  PyObject* r = NULL;
  if (device != NULL) {
    r = pfpy_message("TENSOR_REPR", "(OOOK)", shape, dtype, device,
                     (unsigned long long)(uintptr_t)((PFPyObject*)self)->handle);
  }
  Py_XDECREF(shape);
  Py_XDECREF(dtype);
  Py_XDECREF(device);
  return r;
}

/* ---- __dlpack__ / __dlpack_device__
 * --------------------------------------------------------------- */

static void capsule_free_versioned(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, CAPSULE_VERSIONED)) return; /* consumed (renamed) */
  DLManagedTensorVersioned* m = PyCapsule_GetPointer(capsule, CAPSULE_VERSIONED);
  if (m != NULL && m->deleter != NULL) m->deleter(m);
}

static void capsule_free_legacy(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, CAPSULE_LEGACY)) return;
  DLManagedTensor* m = PyCapsule_GetPointer(capsule, CAPSULE_LEGACY);
  if (m != NULL && m->deleter != NULL) m->deleter(m);
}

/* Whether max_version asks for versioned DLPack: None (no) or exactly a (major, minor) tuple of
 * integers, versioned when major >= 1; anything else is a TypeError naming max_version, as NumPy
 * and the array API standard's 2-tuple have it. */
static int wants_versioned(PyObject* max_version) {
  if (max_version == NULL || max_version == Py_None) return 0;
  if (!PyTuple_Check(max_version) || PyTuple_GET_SIZE(max_version) != 2) {
    pfpy_raise_message(PyExc_TypeError, "DLPACK_MAX_VERSION", "(O)", max_version);
    return -1;
  }
  int overflow = 0;
  long major = 0;
  for (Py_ssize_t i = 0; i < 2; ++i) {
    PyObject* item = PyTuple_GET_ITEM(max_version, i);
    PyObject* number = PyLong_Check(item) ? (Py_INCREF(item), item) : PyNumber_Index(item);
    if (number == NULL) {
      PyErr_Clear();
      pfpy_raise_message(PyExc_TypeError, "DLPACK_MAX_VERSION", "(O)", max_version);
      return -1;
    }
    if (i == 0) major = PyLong_AsLongAndOverflow(number, &overflow);
    Py_DECREF(number);
  }
  return overflow > 0 || major >= 1;
}

/* Checks dl_device (None or a (type, id) pair) and copy against the tensor; -1 + BufferError. */
static int check_export_request(const DLTensor* t, PyObject* dl_device, PyObject* copy) {
  if (copy != NULL && copy != Py_None && PyObject_IsTrue(copy)) {
    pfpy_raise_message(PyExc_BufferError, "DLPACK_COPY", "()");
    return -1;
  }
  if (dl_device == NULL || dl_device == Py_None) return 0;
  if (!PyTuple_Check(dl_device) || PyTuple_GET_SIZE(dl_device) != 2 ||
      !PyLong_Check(PyTuple_GET_ITEM(dl_device, 0)) ||
      !PyLong_Check(PyTuple_GET_ITEM(dl_device, 1))) {
    pfpy_raise_message(PyExc_TypeError, "DLPACK_DEVICE_ARG", "()");
    return -1;
  }
  long type = PyLong_AsLong(PyTuple_GET_ITEM(dl_device, 0));
  long id = type == -1 && PyErr_Occurred() ? -1 : PyLong_AsLong(PyTuple_GET_ITEM(dl_device, 1));
  if (id == -1 && PyErr_Occurred()) return -1;
  if (type != (int)t->device.device_type || id != (int)t->device.device_id) {
    pfpy_raise_message(PyExc_BufferError, "DLPACK_OTHER_DEVICE", "((ii)(ll))",
                       (int)t->device.device_type, (int)t->device.device_id, type, id);
    return -1;
  }
  return 0;
}

static PyObject* export_capsule(PFObject* h, int versioned) {
  if (versioned) {
    DLManagedTensorVersioned* m = NULL;
    if (PFTensorToDLPackVersioned(h, &m) != 0) return raise_native("__dlpack__");
    PyObject* cap = PyCapsule_New(m, CAPSULE_VERSIONED, capsule_free_versioned);
    if (cap == NULL) m->deleter(m);
    return cap;
  }
  int ro = 0;
  if (PFTensorIsReadOnly(h, &ro) != 0) return raise_native("__dlpack__");
  if (ro) {
    return pfpy_raise_message(PyExc_BufferError, "DLPACK_READONLY_LEGACY", "()");
  }
  DLManagedTensor* m = NULL;
  if (PFTensorToDLPack(h, &m) != 0) return raise_native("__dlpack__");
  PyObject* cap = PyCapsule_New(m, CAPSULE_LEGACY, capsule_free_legacy);
  if (cap == NULL) m->deleter(m);
  return cap;
}

/* The index of keyword `key` among the __dlpack__ keywords, or -1. Callers such as NumPy pass
 * keys that are equal but not identical to interned names, so ASCII keys compare their bytes
 * directly (PyUnicode_Compare costs more than the whole export). */
static int dlpack_kwarg_index(PyObject* key) {
  static const char* names[] = {"stream", "max_version", "dl_device", "copy"};
  static const Py_ssize_t lengths[] = {6, 11, 9, 4};
  if (!PyUnicode_Check(key)) return -1;
  int ascii = PyUnicode_IS_COMPACT_ASCII(key);
  Py_ssize_t len = PyUnicode_GET_LENGTH(key);
  for (int i = 0; i < 4; ++i) {
    if (len != lengths[i]) continue;
    if (ascii ? memcmp(PyUnicode_DATA(key), names[i], (size_t)len) == 0
              : PyUnicode_CompareWithASCIIString(key, names[i]) == 0) {
      return i;
    }
  }
  return -1;
}

/* Matches the keyword arguments of __dlpack__ by hand: the generic keyword parser costs more than
 * the whole export. Returns 0, or -1 with a TypeError. */
static int parse_dlpack_kwargs(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                               PyObject** values) {
  if (nargs != 0) {
    PyErr_SetString(PyExc_TypeError, "__dlpack__() takes keyword arguments only");
    return -1;
  }
  /* Consumers pass the same kwnames tuple on every call (a code object's constant): remember the
   * last one (a reference keeps it, so identity stays meaningful) and where its keys go. */
  static PyObject* last_kwnames = NULL;
  static int last_index[4];
  int index[4] = {0, 0, 0, 0};
  Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
  if (kwnames != NULL && kwnames == last_kwnames) {
    for (Py_ssize_t k = 0; k < nkw; ++k) values[last_index[k]] = args[k];
    return 0;
  }
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    PyObject* key = PyTuple_GET_ITEM(kwnames, k);
    int i = dlpack_kwarg_index(key);
    if (i < 0) {
      PyErr_Format(PyExc_TypeError, "__dlpack__() got an unexpected keyword argument '%U'", key);
      return -1;
    }
    values[i] = args[k];
    if (k < 4) index[k] = i;
  }
  if (nkw > 0 && nkw <= 4) { /* all valid: remember them */
    memcpy(last_index, index, sizeof(index));
    Py_INCREF(kwnames);
    Py_XSETREF(last_kwnames, kwnames);
  }
  return 0;
}

static PyObject* tensor_dlpack(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                               PyObject* kwnames) {
  PyObject* values[4] = {NULL, NULL, NULL, NULL}; /* stream, max_version, dl_device, copy */
  if (parse_dlpack_kwargs(args, nargs, kwnames, values) != 0) return NULL;
  if (check_handle(self) != 0) return NULL;
  const DLTensor* t = tensor_of(self);
  /* CPU data needs no stream; for device data packedfun has no stream of its own to order. */
  if (t->device.device_type == kDLCPU && values[0] != NULL && values[0] != Py_None) {
    return pfpy_raise_message(PyExc_BufferError, "DLPACK_CPU_STREAM", "()");
  }
  int versioned = wants_versioned(values[1]);
  if (versioned < 0 || check_export_request(t, values[2], values[3]) != 0) return NULL;
  return export_capsule(((PFPyObject*)self)->handle, versioned);
}

static PyObject* tensor_dlpack_device(PyObject* self, PyObject* unused) {
  (void)unused;
  if (check_handle(self) != 0) return NULL;
  const DLTensor* t = tensor_of(self);
  return Py_BuildValue("(ii)", (int)t->device.device_type, (int)t->device.device_id);
}

/* ---- from_dlpack --------------------------------------------------------------------------------
 */

/* Consumes a DLPack capsule exactly once: renamed to used_* before the runtime adopts it (the
 * runtime runs the producer's deleter itself when adoption fails). */
static PyObject* from_capsule(PyObject* cap) {
  PFObject* out = NULL;
  int rc;
  if (PyCapsule_IsValid(cap, CAPSULE_VERSIONED)) {
    DLManagedTensorVersioned* m = PyCapsule_GetPointer(cap, CAPSULE_VERSIONED);
    if (PyCapsule_SetName(cap, CAPSULE_USED_VERSIONED) != 0) return NULL;
    rc = PFTensorFromDLPackVersioned(m, &out);
  } else if (PyCapsule_IsValid(cap, CAPSULE_LEGACY)) {
    DLManagedTensor* m = PyCapsule_GetPointer(cap, CAPSULE_LEGACY);
    if (PyCapsule_SetName(cap, CAPSULE_USED_LEGACY) != 0) return NULL;
    rc = PFTensorFromDLPack(m, &out);
  } else {
    const char* name = PyCapsule_GetName(cap);
    if (name == NULL && PyErr_Occurred()) return NULL;
    if (name != NULL &&
        (strcmp(name, CAPSULE_USED_VERSIONED) == 0 || strcmp(name, CAPSULE_USED_LEGACY) == 0)) {
      return pfpy_raise_message(PyExc_ValueError, "CAPSULE_CONSUMED", "(s)", name);
    }
    return pfpy_raise_message(PyExc_ValueError, "CAPSULE_NOT_DLPACK", "(s)",
                              name ? name : "<unnamed>");
  }
  if (rc != 0) return raise_native("from_dlpack");
  return pfpy_tensor_wrap(out);
}

/* x.__dlpack__(...) through the rule both bindings share (packedfun._rules.tensor_layout:
 * max_version, the caller's stream for CUDA/ROCm data, the fallback for old producers). The rule
 * and the (major, minor) it is handed are looked up once, on the first generic producer: this
 * path is taken on every call that passes a CuPy or JAX array. */
static PyObject* producer_capsule = NULL; /* owned, kept for the process */
static PyObject* dlpack_version = NULL;   /* owned: (DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION) */

static PFPY_NOINLINE int import_producer_rule(void) {
  PyObject* mod = PyImport_ImportModule("packedfun._rules.tensor_layout");
  PyObject* rule = mod != NULL ? PyObject_GetAttrString(mod, "producer_capsule") : NULL;
  Py_XDECREF(mod);
  PyObject* version =
      rule != NULL ? Py_BuildValue("(ii)", DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION) : NULL;
  if (version == NULL) {
    Py_XDECREF(rule);
    return -1;
  }
  producer_capsule = rule;
  dlpack_version = version;
  return 0;
}

static PyObject* call_dlpack(PyObject* x) {
  if (PFPY_UNLIKELY(producer_capsule == NULL) && import_producer_rule() != 0) return NULL;
  return PyObject_CallFunctionObjArgs(producer_capsule, x, dlpack_version, NULL);
}

/* Fast producers (NumPy through the buffer protocol, torch through its C exchange API) live in
 * tensor_arg.c; -1 there means "not one of them". */
int pfpy_tensor_fast_import(PyObject* x, PFObject** out);

PyObject* pfpy_from_dlpack(PyObject* x) {
  if (Py_IS_TYPE(x, &PFPyTensor_Type)) {
    Py_INCREF(x);
    return x;
  }
  if (PyCapsule_CheckExact(x)) return from_capsule(x);
  PFObject* fast = NULL;
  int rc = pfpy_tensor_fast_import(x, &fast);
  if (rc == 0) return pfpy_tensor_wrap(fast);
  if (rc == -2) return NULL;
  PyObject* cap = call_dlpack(x);
  if (cap == NULL) return NULL;
  PyObject* r = PyCapsule_CheckExact(cap)
                    ? from_capsule(cap)
                    : pfpy_raise_message(PyExc_TypeError, "FROM_DLPACK_NOT_A_CAPSULE", "(ss)",
                                         Py_TYPE(x)->tp_name, Py_TYPE(cap)->tp_name);
  Py_DECREF(cap);
  return r;
}

/* The keyword options (require_alignment, require_contiguous) are checked once, in the shared
 * Python layer (packedfun._rules.tensor_layout.require_layout), for both backends; the plain call
 * never pays. */
static PFPY_NOINLINE PyObject* from_dlpack_checked(PyObject* tensor, PyObject* const* kwargs,
                                                   PyObject* kwnames) {
  PyObject* kw = PyDict_New();
  PyObject* check = kw != NULL ? layout_rule(&require_layout_rule, "require_layout") : NULL;
  PyObject* result = NULL;
  Py_ssize_t n = check != NULL ? PyTuple_GET_SIZE(kwnames) : -1;
  Py_ssize_t i = 0;
  for (; i < n; ++i) {
    if (PyDict_SetItem(kw, PyTuple_GET_ITEM(kwnames, i), kwargs[i]) != 0) break;
  }
  if (i == n) {
    PyObject* args = PyTuple_Pack(1, tensor);
    if (args != NULL) result = PyObject_Call(check, args, kw);
    Py_XDECREF(args);
  }
  Py_XDECREF(kw);
  Py_DECREF(tensor);
  return result;
}

static PyObject* from_dlpack(PyObject* mod, PyObject* const* args, Py_ssize_t nargs,
                             PyObject* kwnames) {
  (void)mod;
  if (nargs != 1) {
    return PyErr_Format(PyExc_TypeError,
                        "from_dlpack() takes exactly one positional argument (%zd given)", nargs);
  }
  PyObject* tensor = pfpy_from_dlpack(args[0]);
  if (tensor == NULL || kwnames == NULL || PyTuple_GET_SIZE(kwnames) == 0) return tensor;
  return from_dlpack_checked(tensor, args + 1, kwnames);
}

/* ---- the type
 * ------------------------------------------------------------------------------------ */

static PyObject* tensor_new(PyTypeObject* type, PyObject* args, PyObject* kwds) {
  (void)type;
  (void)kwds;
  PyObject* x;
  if (!PyArg_ParseTuple(args, "O:Tensor", &x)) return NULL;
  return pfpy_from_dlpack(x);
}

static PyGetSetDef tensor_getset[] = {
    {"shape", tensor_shape, NULL, "Extent of each axis, as a tuple of int.", NULL},
    {"strides", tensor_strides, NULL, "Stride of each axis in elements (always known).", NULL},
    {"ndim", tensor_ndim, NULL, "Number of axes.", NULL},
    {"size", tensor_size, NULL,
     "Number of elements (same as numel()); also callable: size(dim) is the extent of axis dim.",
     NULL},
    {"dtype", tensor_dtype, NULL, "Element type, a packedfun.dtype.", NULL},
    {"device", tensor_device, NULL, "Device holding the data, a packedfun.device.", NULL},
    {"data_ptr", tensor_data_ptr_value, NULL,
     "Address of the data (before byte_offset); also callable: data_ptr() gives the same.", NULL},
    {"byte_offset", tensor_byte_offset, NULL, "Offset of the first element in bytes.", NULL},
    {"readonly", tensor_readonly, NULL, "Whether the producer exported it read-only.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

/* numel() is a method, as in PyTorch and apache-tvm-ffi; the size property says the same. */
static PyObject* tensor_numel_method(PyObject* self, PyObject* unused) {
  (void)unused;
  return tensor_numel(self, NULL);
}

/* is_contiguous() (apache-tvm-ffi's name) asks the shared Python layer, which from_dlpack's
 * require_contiguous uses too, so both backends share one definition of "contiguous". */
static PyObject* tensor_is_contiguous(PyObject* self, PyObject* unused) {
  (void)unused;
  return layout_call(&tensor_is_contiguous_rule, "tensor_is_contiguous", self);
}

static PyMethodDef tensor_methods[] = {
    {"numel", tensor_numel_method, METH_NOARGS, "numel()\n--\n\nNumber of elements."},
    {"is_contiguous", tensor_is_contiguous, METH_NOARGS,
     "is_contiguous()\n--\n\nWhether the layout is compact row-major (dimensions of extent 1 "
     "may have any stride)."},
    {"__dlpack__", (PyCFunction)(void (*)(void))tensor_dlpack, METH_FASTCALL | METH_KEYWORDS,
     "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)\n--\n\n"
     "A DLPack capsule sharing this tensor's memory (versioned when max_version >= (1, 0))."},
    {"__dlpack_device__", tensor_dlpack_device, METH_NOARGS,
     "__dlpack_device__()\n--\n\n(device_type, device_id) of the data."},
    {NULL, NULL, 0, NULL}};

PyTypeObject PFPyTensor_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "packedfun.Tensor",
    .tp_basicsize = sizeof(PFPyObject),
    .tp_dealloc = tensor_dealloc,
    .tp_repr = tensor_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc =
        "Tensor(x)\n--\n\nA DLPack tensor owned by packedfun, sharing memory with its "
        "producer; Tensor(x) is from_dlpack(x).",
    .tp_methods = tensor_methods,
    .tp_getset = tensor_getset,
    .tp_base = &PFPyObject_Type,
    .tp_new = tensor_new,
};

/* _set_tensor_classes(dtype, device): installed by packedfun.tensor. */
static PyObject* set_tensor_classes(PyObject* mod, PyObject* args) {
  (void)mod;
  PyObject *dtype, *device;
  if (!PyArg_ParseTuple(args, "OO:_set_tensor_classes", &dtype, &device)) return NULL;
  Py_INCREF(dtype);
  Py_INCREF(device);
  Py_XSETREF(pfpy_dtype_class, dtype);
  Py_XSETREF(pfpy_device_class, device);
  pfpy_kind_cache_reset(); /* the conversion rule tests these two by identity */
  Py_RETURN_NONE;
}

static PyObject* dtype_from_string(PyObject* mod, PyObject* text) {
  (void)mod;
  PFByteArray view;
  if (!PyUnicode_Check(text)) {
    return pfpy_raise_message(PyExc_TypeError, "DTYPE_NOT_STR", "(s)", Py_TYPE(text)->tp_name);
  }
  if (pfpy_str_view(text, &view) != 0) return NULL;
  DLDataType dtype;
  if (PFDataTypeFromString(&view, &dtype) != 0) return raise_native("dtype");
  return Py_BuildValue("(iii)", (int)dtype.code, (int)dtype.bits, (int)dtype.lanes);
}

static PyObject* dtype_to_string(PyObject* mod, PyObject* args) {
  (void)mod;
  int code, bits, lanes;
  if (!PyArg_ParseTuple(args, "iii:_dtype_to_string", &code, &bits, &lanes)) return NULL;
  if (code < 0 || code > 255 || bits < 0 || bits > 255 || lanes < 0 || lanes > 65535) {
    return pfpy_raise_message(PyExc_ValueError, "DTYPE_INVALID", "(iii)", code, bits, lanes);
  }
  DLDataType dtype = {(uint8_t)code, (uint8_t)bits, (uint16_t)lanes};
  PFAny out = {0};
  if (PFDataTypeToString(dtype, &out) != 0) return raise_native("dtype");
  return pfpy_any_steal_to_py(&out);
}

static PyMethodDef tensor_module_methods[] = {
    {"_dtype_from_string", dtype_from_string, METH_O,
     "_dtype_from_string(text)\n--\n\n(code, bits, lanes) of a type name."},
    {"_dtype_to_string", dtype_to_string, METH_VARARGS,
     "_dtype_to_string(code, bits, lanes)\n--\n\nThe name of a data type."},
    {"from_dlpack", (PyCFunction)(void (*)(void))from_dlpack, METH_FASTCALL | METH_KEYWORDS,
     "from_dlpack(x, *, require_alignment=0, require_contiguous=False)\n--\n\nA Tensor sharing "
     "the memory of ``x``, without a copy.\n\n"
     "Parameters\n----------\nx : object\n    Any object implementing ``__dlpack__`` (NumPy, "
     "PyTorch, JAX, CuPy, a ``Tensor``) or a\n    DLPack capsule, which is consumed (renamed "
     "``used_dltensor*``) exactly once.\nrequire_alignment : int\n    When > 0, the data "
     "address must be a multiple of it (else ValueError).\nrequire_contiguous : bool\n    "
     "When true, the layout must be compact row-major (else "
     "ValueError).\n\nReturns\n-------\nTensor\n    ``x`` itself when it "
     "already is a Tensor. Read-only producers give read-only tensors.\n\nRaises\n------\n"
     "BufferError\n    When DLPack cannot describe the data (byte-swapped or object dtypes, a "
     "consumed capsule).\nTypeError\n    When ``x`` is not a DLPack producer.\n"},
    {"_set_tensor_classes", set_tensor_classes, METH_VARARGS,
     "_set_tensor_classes(dtype, device)\n--\n\nThe Python classes of dtype and device values."},
    {"_tensor_scratch_allocations", pfpy_tensor_scratch_allocations, METH_NOARGS,
     "_tensor_scratch_allocations()\n--\n\nHow many array-argument scratch records were ever "
     "allocated (tests check that the steady state allocates none)."},
    {NULL, NULL, 0, NULL}};

int pfpy_tensor_add_to_module(PyObject* m) {
  if (PyType_Ready(&PFPyTensor_Type) < 0) return -1;
  if (PyModule_AddFunctions(m, tensor_module_methods) < 0) return -1;
  if (pfpy_tensor_return_add_to_module(m) < 0) return -1;
  Py_INCREF(&PFPyTensor_Type);
  if (PyModule_AddObject(m, "Tensor", (PyObject*)&PFPyTensor_Type) < 0) {
    Py_DECREF(&PFPyTensor_Type);
    return -1;
  }
  return 0;
}
