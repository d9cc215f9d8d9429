/* Array arguments without Python-level DLPack: NumPy through the buffer protocol, torch through
 * its DLPack C exchange API, anything else through __dlpack__. */
#include "tensor.h"

#include <string.h>

/* ---- per-call scratch: a borrowed DLTensor and what backs it ----------------------------- */

#define SCRATCH_INLINE_RANK 6

/* Backs one DLTensor* argument: a promotable PFDLTensorArg whose keeper is the Scratch itself.
 * It is pushed into the call's temps; when native code keeps the argument (PFAnyViewToOwned), the
 * Tensor it makes holds a reference to the Scratch, which then outlives the call together with
 * what keeps the producer alive (the buffer view of a NumPy array, the torch tensor). Its deleter
 * returns it to a free list, so the steady state allocates nothing. The free list and the Python
 * references are only touched with the GIL held (the deleter takes it when needed). */
typedef struct Scratch {
  PFObject header;
  PFDLTensorArg arg;
  int64_t dims[2 * SCRATCH_INLINE_RANK]; /* shape then strides */
  int64_t* heap;                         /* for ndim > SCRATCH_INLINE_RANK */
  int32_t heap_rank;
  int has_view;
  Py_buffer view;
  PyObject* owner; /* a packedfun.Tensor or torch tensor kept with the Scratch, or NULL */
  struct Scratch* next;
} Scratch;

static Scratch* scratch_free_list = NULL;
static Py_ssize_t scratch_allocated = 0; /* ever allocated, for tests */

PyObject* pfpy_tensor_scratch_allocations(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  return PyLong_FromSsize_t(scratch_allocated);
}

/* Releases what `s` keeps and recycles it; needs the GIL. It may run while an exception is being
 * raised: a producer's deleter may run Python code, so the exception is set aside meanwhile. */
static void scratch_recycle(Scratch* s) {
  if (s->has_view) {
    s->has_view = 0;
    PyBuffer_Release(&s->view);
  }
  if (s->owner != NULL) {
    PyObject* exc = PyErr_Occurred() ? pfpy_fetch_exception() : NULL;
    Py_CLEAR(s->owner);
    if (exc != NULL) pfpy_restore_exception(exc);
  }
  s->next = scratch_free_list;
  scratch_free_list = s;
}

/* The last reference to a promoted argument died on a thread without the GIL. */
static PFPY_NOINLINE void scratch_release_elsewhere(Scratch* s) {
  if (!Py_IsInitialized()) return; /* at exit the producer is gone with everything else */
  PyGILState_STATE gil = PyGILState_Ensure();
  scratch_recycle(s);
  PyGILState_Release(gil);
}

/* The Scratch's deleter: at the end of the call, or when the last Tensor made from it dies. */
void pfpy_tensor_scratch_release(PFObject* obj) {
  Scratch* s = (Scratch*)obj;
  if (PFPY_LIKELY(pfpy_gil_held())) {
    scratch_recycle(s);
  } else {
    scratch_release_elsewhere(s);
  }
}

PyObject* pfpy_tensor_temp_owner(PFObject* temp, const DLTensor** tensor) {
  if (temp->deleter != pfpy_tensor_scratch_release) return NULL;
  *tensor = &((Scratch*)temp)->arg.tensor;
  return ((Scratch*)temp)->owner;
}

/* Makes `s` (filled) the promotable argument `*out` and hands it to the call's temps. */
static void scratch_pass(Scratch* s, PFPyArgs* pack, PFAny* out, uint32_t flags) {
  s->arg.keeper = &s->header;
  s->arg.flags = flags;
  pack->temps[pack->num_temps++] = &s->header;
  out->type_index = kPFTypeDLTensorPtr;
  out->zero_padding = PACKEDFUN_DLTENSOR_ARG_TAG;
  out->v_ptr = &s->arg.tensor;
}

static Scratch* scratch_take(void) {
  Scratch* s = scratch_free_list;
  if (s != NULL) {
    scratch_free_list = s->next;
  } else {
    s = (Scratch*)PyMem_Calloc(1, sizeof(Scratch));
    if (s == NULL) return (Scratch*)PyErr_NoMemory();
    ++scratch_allocated;
    s->header.type_index = kPFTypeObject;
    s->header.deleter = pfpy_tensor_scratch_release;
  }
  s->header.ref_count = 1;
  return s;
}

/* Room for 2 * ndim dims; NULL with MemoryError. */
static int64_t* scratch_dims(Scratch* s, int32_t ndim) {
  if (ndim <= SCRATCH_INLINE_RANK) return s->dims;
  if (s->heap_rank < ndim) {
    int64_t* grown = (int64_t*)PyMem_Realloc(s->heap, sizeof(int64_t) * 2 * (size_t)ndim);
    if (grown == NULL) return (int64_t*)PyErr_NoMemory();
    s->heap = grown;
    s->heap_rank = ndim;
  }
  return s->heap;
}

/* ---- NumPy: the buffer protocol ---------------------------------------------------------- */

/* NumPy's ndarray, learnt from the first array seen (never imported), and the last type seen with
 * a DLPack C exchange API (pfpy_tensor_known_type). */
PyTypeObject* pfpy_tensor_numpy_type = NULL;
PyTypeObject* pfpy_tensor_exchange_type = NULL;
const DLPackExchangeAPI* pfpy_tensor_exchange_api = NULL; /* that type's API */

static int is_numpy_type(PyTypeObject* type) {
  if (PFPY_LIKELY(type == pfpy_tensor_numpy_type)) return 1;
  if (pfpy_tensor_numpy_type == NULL && strcmp(type->tp_name, "numpy.ndarray") == 0) {
    Py_INCREF(type);
    pfpy_tensor_numpy_type = type;
    return 1;
  }
  return pfpy_tensor_numpy_type != NULL && PyType_IsSubtype(type, pfpy_tensor_numpy_type);
}

static int is_numpy_array(PyObject* o) { return is_numpy_type(Py_TYPE(o)); }

/* The DLDataType of a buffer-protocol format; 0, or -1 when DLPack cannot describe it. */
static int format_to_dtype(const char* f, Py_ssize_t itemsize, DLDataType* out) {
  if (*f == '@' || *f == '=' || *f == '<') ++f; /* native order (this is a little-endian build) */
  uint8_t bits = (uint8_t)(itemsize * 8);
  uint8_t code;
  switch (*f) {
    case '?':
      code = kDLBool;
      break;
    case 'b':
    case 'h':
    case 'i':
    case 'l':
    case 'q':
      code = kDLInt;
      break;
    case 'B':
    case 'H':
    case 'I':
    case 'L':
    case 'Q':
      code = kDLUInt;
      break;
    case 'e':
    case 'f':
    case 'd':
      code = kDLFloat;
      break;
    case 'Z':
      ++f;
      if (*f != 'f' && *f != 'd') return -1;
      code = kDLComplex;
      break;
    default:
      return -1;
  }
  if (f[1] != '\0' || itemsize <= 0 || itemsize > 16) return -1;
  out->code = code;
  out->bits = bits;
  out->lanes = 1;
  return 0;
}

/* BufferError "<fname>: argument <pos>: cannot pass a NumPy array of dtype 'X' (why)", `why`
 * the name of the reason's text in packedfun._rules.messages. */
static PFPY_NOINLINE void numpy_dtype_error(PyObject* o, PyObject* fname, Py_ssize_t pos,
                                            const char* why_name) {
  PyObject* exc = PyErr_Occurred() ? pfpy_fetch_exception() : NULL;
  PyObject* dtype = PyObject_GetAttrString(o, "dtype");
  PyObject* name = dtype ? PyObject_Str(dtype) : NULL;
  PyErr_Clear();
  PyObject* why = pfpy_message(why_name, "()");
  PyObject* what = why != NULL ? pfpy_message("NUMPY_ARRAY_REFUSED", "(sO)",
                                              name ? PyUnicode_AsUTF8(name) : "?", why)
                               : NULL;
  Py_XDECREF(why);
  if (what != NULL) {
    if (fname == NULL && pos < 0) {
      PyErr_Format(PyExc_BufferError, "from_dlpack: %U", what);
    } else {
      pfpy_arg_error(PyExc_BufferError, fname, pos, PyUnicode_AsUTF8(what));
    }
    if (exc != NULL) { /* keep the original error as the cause */
      PyObject* now = pfpy_fetch_exception();
      PyException_SetCause(now, exc);
      exc = NULL;
      pfpy_restore_exception(now);
    }
  }
  Py_XDECREF(exc);
  Py_XDECREF(what);
  Py_XDECREF(name);
  Py_XDECREF(dtype);
}

/* Fills `t` (its shape/strides into `dims`, 2 * ndim entries) from `view`; -1 + BufferError. */
static int numpy_fill(PyObject* o, const Py_buffer* view, DLTensor* t, int64_t* dims,
                      PyObject* fname, Py_ssize_t pos) {
  if (view->format == NULL || format_to_dtype(view->format, view->itemsize, &t->dtype) != 0) {
    const char* f = view->format ? view->format : "";
    numpy_dtype_error(o, fname, pos,
                      (*f == '>' || *f == '!') ? "NUMPY_BYTE_SWAPPED" : "NUMPY_NO_DLPACK_TYPE");
    return -1;
  }
  int32_t ndim = view->ndim;
  for (int32_t i = 0; i < ndim; ++i) {
    dims[i] = view->shape[i];
    Py_ssize_t s = view->strides[i];
    if (s % view->itemsize != 0) {
      numpy_dtype_error(o, fname, pos, "NUMPY_ODD_STRIDE");
      return -1;
    }
    dims[ndim + i] = s / view->itemsize;
  }
  t->data = view->buf;
  t->device.device_type = kDLCPU;
  t->device.device_id = 0;
  t->ndim = ndim;
  t->shape = dims;
  t->strides = dims + ndim;
  t->byte_offset = 0;
  return 0;
}

/* Exports `o` through the buffer protocol; -1 + BufferError naming the dtype on failure. */
static int numpy_get_buffer(PyObject* o, Py_buffer* view, PyObject* fname, Py_ssize_t pos) {
  if (PyObject_GetBuffer(o, view, PyBUF_RECORDS_RO) == 0) return 0;
  numpy_dtype_error(o, fname, pos, "NUMPY_NO_DLPACK_TYPE"); /* datetime64: NumPy exports none */
  return -1;
}

/* NumPy's array and dtype headers as laid out by NumPy 1.x and 2.x alike (the public
 * PyArrayObject_fields; the dtype fields up to type_num). Reading them directly skips the buffer
 * export, whose format string NumPy rebuilds on every request; the layout is checked against the
 * buffer protocol on the first array seen, and anything unusual takes the buffer route. */
typedef struct {
  PyObject_HEAD char* data;
  int nd;
  Py_ssize_t* dimensions;
  Py_ssize_t* strides;
  PyObject* base;
  PyObject* descr;
  int flags;
} NumpyArrayHead;

typedef struct {
  PyObject_HEAD PyTypeObject* typeobj;
  char kind, type, byteorder, former_flags;
  int type_num;
} NumpyDescrHead;

#define NUMPY_WRITEABLE 0x0400
static int numpy_layout_ok = 0; /* 1 checked, -1 unusable, 0 not checked yet */

/* The DLDataType of NumPy's built-in type number `num`; -1 for any other. */
static int numpy_type_num_dtype(int num, DLDataType* out) {
  static const struct {
    uint8_t code, bits;
  } table[24] = {{kDLBool, 8},
                 {kDLInt, 8},
                 {kDLUInt, 8},
                 {kDLInt, 16},
                 {kDLUInt, 16},
                 {kDLInt, 32},
                 {kDLUInt, 32},
                 {kDLInt, 8 * sizeof(long)},
                 {kDLUInt, 8 * sizeof(long)},
                 {kDLInt, 64},
                 {kDLUInt, 64},
                 {kDLFloat, 32},
                 {kDLFloat, 64},
                 {0, 0},
                 {kDLComplex, 64},
                 {kDLComplex, 128},
                 {0, 0},
                 {0, 0},
                 {0, 0},
                 {0, 0},
                 {0, 0},
                 {0, 0},
                 {0, 0},
                 {kDLFloat, 16}};
  if (num < 0 || num >= 24 || table[num].bits == 0) return -1;
  out->code = table[num].code;
  out->bits = table[num].bits;
  out->lanes = 1;
  return 0;
}

/* Fills `t` from the array header of `o` (dims from `dims_of(ndim)`); 0, or 1 to take the buffer
 * route (nothing set). `*readonly` receives the read-only bit. */
static int numpy_fill_direct(PyObject* o, DLTensor* t, int64_t* dims, uint32_t* readonly) {
  const NumpyArrayHead* a = (const NumpyArrayHead*)o;
  const NumpyDescrHead* d = (const NumpyDescrHead*)a->descr;
  if (d->byteorder == '>' || numpy_type_num_dtype(d->type_num, &t->dtype) != 0) return 1;
  /* Every item size in the table is a power of two: a mask and a shift, not two divisions (an
   * integer division costs tens of cycles on every array argument). */
  Py_ssize_t itemsize = t->dtype.bits / 8;
  int shift = __builtin_ctzll((unsigned long long)itemsize);
  for (int i = 0; i < a->nd; ++i) {
    Py_ssize_t stride = a->strides[i];
    if ((stride & (itemsize - 1)) != 0) return 1;
    dims[i] = a->dimensions[i];
    dims[a->nd + i] = stride >> shift; /* exact: GCC and Clang shift signed values arithmetically */
  }
  t->data = a->data;
  t->device.device_type = kDLCPU;
  t->device.device_id = 0;
  t->ndim = a->nd;
  t->shape = dims;
  t->strides = dims + a->nd;
  t->byte_offset = 0;
  *readonly = (a->flags & NUMPY_WRITEABLE) ? 0 : 1;
  return 0;
}

/* Compares the header reading with the buffer protocol once (cold). */
static PFPY_NOINLINE void numpy_check_layout(PyObject* o) {
  Py_buffer view;
  if (PyObject_GetBuffer(o, &view, PyBUF_RECORDS_RO) != 0) {
    PyErr_Clear(); /* e.g. an object array: decide on a later one */
    return;
  }
  int64_t dims[2 * 64];
  DLTensor t;
  uint32_t ro = 0;
  int ok = view.ndim <= 64 && numpy_fill_direct(o, &t, dims, &ro) == 0 && t.data == view.buf &&
           t.ndim == view.ndim && (int)ro == (view.readonly != 0) &&
           t.dtype.bits / 8 == view.itemsize;
  for (int i = 0; ok && i < view.ndim; ++i) {
    ok = dims[i] == view.shape[i] && dims[view.ndim + i] * view.itemsize == view.strides[i];
  }
  PyBuffer_Release(&view);
  numpy_layout_ok = ok ? 1 : -1;
}

/* Whether `o`'s header can be read directly (its rank, for room, in *ndim). */
static inline int numpy_direct_ok(PyObject* o, int32_t* ndim) {
  if (PFPY_UNLIKELY(numpy_layout_ok == 0)) numpy_check_layout(o);
  if (numpy_layout_ok != 1) return 0;
  *ndim = ((const NumpyArrayHead*)o)->nd;
  return 1;
}

/* A NumPy argument read from its header: the Scratch keeps a reference to the array (as NumPy's own
 * __dlpack__ does). 0, 1 to take the buffer route, -1 with MemoryError. */
static int numpy_arg_direct(PyObject* o, PFPyArgs* pack, Py_ssize_t pos) {
  int32_t ndim;
  if (!numpy_direct_ok(o, &ndim)) return 1;
  Scratch* s = scratch_take();
  if (s == NULL) return -1;
  int64_t* dims = scratch_dims(s, ndim);
  uint32_t ro = 0;
  if (dims == NULL || numpy_fill_direct(o, &s->arg.tensor, dims, &ro) != 0) {
    pfpy_tensor_scratch_release(&s->header);
    return dims == NULL ? -1 : 1;
  }
  Py_INCREF(o);
  s->owner = o;
  scratch_pass(s, pack, &pack->args[pos], ro ? PACKEDFUN_DLTENSOR_ARG_READ_ONLY : 0);
  return 0;
}

/* A NumPy argument as a promotable DLTensor* backed by a Scratch in pack->temps. */
static int numpy_arg(PyObject* o, PFPyArgs* pack, Py_ssize_t pos, PyObject* fname) {
  int direct = numpy_arg_direct(o, pack, pos);
  if (direct <= 0) return direct;
  Scratch* s = scratch_take();
  if (s == NULL) return -1;
  if (numpy_get_buffer(o, &s->view, fname, pos) != 0) {
    pfpy_tensor_scratch_release(&s->header);
    return -1;
  }
  s->has_view = 1;
  int64_t* dims = scratch_dims(s, s->view.ndim);
  if (dims == NULL || numpy_fill(o, &s->view, &s->arg.tensor, dims, fname, pos) != 0) {
    pfpy_tensor_scratch_release(&s->header);
    return -1;
  }
  uint32_t flags = s->view.readonly ? PACKEDFUN_DLTENSOR_ARG_READ_ONLY : 0;
  scratch_pass(s, pack, &pack->args[pos], flags);
  return 0;
}

/* An owning DLPack tensor over a NumPy array: the buffer (and so the array) lives until the
 * deleter runs, which takes the GIL. */
typedef struct {
  DLManagedTensorVersioned managed;
  PyObject* owner; /* the array, when read from its header; else `view` holds the export */
  Py_buffer view;
  int64_t dims[];
} NumpyManaged;

/* Gives the array back. Usually the last reference dies in Python code, which holds the GIL; that
 * includes the interpreter's own teardown of module globals at exit (Py_IsInitialized() is already
 * 0 then, so testing it would leak every array still wrapped at exit). Another thread takes the
 * GIL, unless Python is finalizing or gone: then the array is left to the process's end. */
static void numpy_managed_delete(DLManagedTensorVersioned* m) {
  NumpyManaged* nm = (NumpyManaged*)m;
  int held = pfpy_gil_held();
  if (held || pfpy_python_alive()) {
    PyGILState_STATE gil = held ? PyGILState_UNLOCKED : PyGILState_Ensure();
    PyObject* exc = PyErr_Occurred() ? pfpy_fetch_exception() : NULL;
    if (nm->owner != NULL) {
      Py_DECREF(nm->owner);
    } else {
      PyBuffer_Release(&nm->view);
    }
    if (exc != NULL) pfpy_restore_exception(exc);
    if (!held) PyGILState_Release(gil);
  }
  PyMem_RawFree(nm);
}

/* Hands `nm` (filled) to the runtime as a versioned DLPack tensor. */
static int numpy_adopt(NumpyManaged* nm, int readonly, PFObject** out) {
  nm->managed.version.major = 1;
  nm->managed.version.minor = 0;
  nm->managed.manager_ctx = nm;
  nm->managed.deleter = numpy_managed_delete;
  nm->managed.flags = readonly ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
  if (PFTensorFromDLPackVersioned(&nm->managed, out) != 0) { /* the deleter ran */
    pfpy_raise_native(NULL);
    return -1;
  }
  return 0;
}

/* numpy_import from the array header: 0, 1 to take the buffer route, -1 with an exception. */
static int numpy_import_direct(PyObject* o, PFObject** out) {
  int32_t ndim;
  if (!numpy_direct_ok(o, &ndim)) return 1;
  size_t size = sizeof(NumpyManaged) + sizeof(int64_t) * 2 * (size_t)ndim;
  NumpyManaged* nm = (NumpyManaged*)PyMem_RawMalloc(size);
  if (nm == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  uint32_t ro = 0;
  if (numpy_fill_direct(o, &nm->managed.dl_tensor, nm->dims, &ro) != 0) {
    PyMem_RawFree(nm);
    return 1;
  }
  Py_INCREF(o);
  nm->owner = o;
  return numpy_adopt(nm, (int)ro, out);
}

static int numpy_import(PyObject* o, PFObject** out, PyObject* fname, Py_ssize_t pos) {
  int direct = numpy_import_direct(o, out);
  if (direct <= 0) return direct;
  Py_buffer view;
  if (numpy_get_buffer(o, &view, fname, pos) != 0) return -1;
  size_t size = sizeof(NumpyManaged) + sizeof(int64_t) * 2 * (size_t)view.ndim;
  NumpyManaged* nm = (NumpyManaged*)PyMem_RawCalloc(1, size);
  if (nm == NULL) {
    PyBuffer_Release(&view);
    PyErr_NoMemory();
    return -1;
  }
  nm->view = view;
  if (numpy_fill(o, &nm->view, &nm->managed.dl_tensor, nm->dims, fname, pos) != 0) {
    PyBuffer_Release(&nm->view);
    PyMem_RawFree(nm);
    return -1;
  }
  return numpy_adopt(nm, view.readonly, out);
}

/* ---- torch and other producers of the DLPack C exchange API ------------------------------ */

#define EXCHANGE_CACHE_SIZE 16

/* Per-type answers of "__dlpack_c_exchange_api__" (api NULL: the type has none). */
static struct {
  PyTypeObject* type; /* owned */
  const DLPackExchangeAPI* api;
} exchange_cache[EXCHANGE_CACHE_SIZE];
static int exchange_cache_used = 0;

static const DLPackExchangeAPI* lookup_exchange_api(PyTypeObject* type) {
  static PyObject* attr = NULL;
  if (attr == NULL && (attr = PyUnicode_InternFromString("__dlpack_c_exchange_api__")) == NULL) {
    PyErr_Clear();
    return NULL;
  }
  PyObject* cap = _PyType_Lookup(type, attr); /* borrowed, no exception */
  if (cap == NULL || !PyCapsule_IsValid(cap, "dlpack_exchange_api")) return NULL;
  const DLPackExchangeAPI* api = PyCapsule_GetPointer(cap, "dlpack_exchange_api");
  if (api == NULL || api->header.version.major != DLPACK_MAJOR_VERSION) return NULL;
  return api;
}

/* The exchange API of objects of `type` (borrowed), or NULL; answers are cached per type. */
static const DLPackExchangeAPI* exchange_api_of(PyTypeObject* type) {
  for (int i = 0; i < exchange_cache_used; ++i) {
    if (exchange_cache[i].type == type) return exchange_cache[i].api;
  }
  const DLPackExchangeAPI* api = lookup_exchange_api(type);
  /* The tensor type is remembered even once the cache is full: sixteen other types seen first (any
   * objects converted as opaque values) used to leave torch unrecognised for the rest of the
   * process, its calls answering packedfun.Tensor instead of torch.Tensor. */
  if (api != NULL && api->dltensor_from_py_object_no_sync != NULL &&
      type != pfpy_tensor_exchange_type) {
    Py_INCREF(type); /* kept for the process's life, like the cache's entries */
    pfpy_tensor_exchange_type = type;
    pfpy_tensor_exchange_api = api;
  }
  if (exchange_cache_used < EXCHANGE_CACHE_SIZE) {
    Py_INCREF(type);
    exchange_cache[exchange_cache_used].type = type;
    exchange_cache[exchange_cache_used].api = api;
    ++exchange_cache_used;
  }
  return api;
}

static int exchange_arg(const DLPackExchangeAPI* api, PyObject* o, PFPyArgs* pack, Py_ssize_t pos) {
  Scratch* s = scratch_take();
  if (s == NULL) return -1;
  if (api->dltensor_from_py_object_no_sync(o, &s->arg.tensor) != 0) {
    pfpy_tensor_scratch_release(&s->header);
    return -1;
  }
  Py_INCREF(o); /* a promoted Tensor keeps the torch tensor (and so its storage) alive */
  s->owner = o;
  scratch_pass(s, pack, &pack->args[pos], 0);
  return 0;
}

static int exchange_import(const DLPackExchangeAPI* api, PyObject* o, PFObject** out) {
  DLManagedTensorVersioned* m = NULL;
  if (api->managed_tensor_from_py_object_no_sync(o, &m) != 0) return -1;
  if (PFTensorFromDLPackVersioned(m, out) != 0) {
    pfpy_raise_native(NULL);
    return -1;
  }
  return 0;
}

/* ---- entry points ------------------------------------------------------------------------ */

/* Fast owned import: 0 with *out, -1 when `x` has no fast route (no exception), -2 on error. */
int pfpy_tensor_fast_import(PyObject* x, PFObject** out) {
  if (is_numpy_array(x)) return numpy_import(x, out, NULL, -1) == 0 ? 0 : -2;
  const DLPackExchangeAPI* api = exchange_api_of(Py_TYPE(x));
  if (api != NULL) return exchange_import(api, x, out) == 0 ? 0 : -2;
  return -1;
}

/* Passes packedfun.Tensor `t` (stolen) as an argument: for a call (pos >= 0) a Scratch keeps
 * the wrapper; for a return value (pos < 0) the temp is the object's reference itself, which
 * pfpy_any_from_py hands on to its result. Returns 1, or -1 with an exception. */
static int tensor_temp(PyObject* t, PFPyArgs* pack, Py_ssize_t pos) {
  if (t == NULL) return -1;
  PFObject* h = ((PFPyObject*)t)->handle;
  PFAny* out = &pack->args[pos < 0 ? 0 : pos];
  if (pos >= 0) {
    Scratch* s = scratch_take();
    if (s == NULL) {
      Py_DECREF(t);
      return -1;
    }
    s->owner = t;
    pack->temps[pack->num_temps++] = &s->header;
  } else {
    PFObjectIncRef(h);
    Py_DECREF(t);
    pack->temps[pack->num_temps++] = h;
  }
  out->type_index = kPFTypeTensor;
  out->zero_padding = 0;
  out->v_obj = h;
  return 1;
}

/* Whether `type` has __dlpack__: 1, 0, or -1 with an exception. */
static int has_dlpack(PyTypeObject* type) {
  static PyObject* dlpack_name = NULL;
  if (dlpack_name == NULL && (dlpack_name = PyUnicode_InternFromString("__dlpack__")) == NULL) {
    return -1;
  }
  return _PyType_Lookup(type, dlpack_name) != NULL;
}

int pfpy_tensor_try_arg(PyObject* o, PFPyArgs* pack, Py_ssize_t pos, PyObject* fname) {
  PyTypeObject* type = Py_TYPE(o);
  if (type == pfpy_tensor_exchange_type && pos >= 0) { /* torch: no probing */
    return exchange_arg(pfpy_tensor_exchange_api, o, pack, pos) == 0 ? 1 : -1;
  }
  if (is_numpy_array(o)) {
    if (pos >= 0) return numpy_arg(o, pack, pos, fname) == 0 ? 1 : -1;
    PFObject* h = NULL;
    return numpy_import(o, &h, fname, pos) == 0 ? tensor_temp(pfpy_tensor_wrap(h), pack, pos) : -1;
  }
  const DLPackExchangeAPI* api = exchange_api_of(type);
  if (api != NULL) {
    if (pos >= 0 && api->dltensor_from_py_object_no_sync != NULL) {
      return exchange_arg(api, o, pack, pos) == 0 ? 1 : -1;
    }
    PFObject* h = NULL;
    return exchange_import(api, o, &h) == 0 ? tensor_temp(pfpy_tensor_wrap(h), pack, pos) : -1;
  }
  if (pfpy_dtype_class != NULL &&
      ((PyObject*)type == pfpy_dtype_class || (PyObject*)type == pfpy_device_class)) {
    return pfpy_tensor_pod_arg(o, &pack->args[pos < 0 ? 0 : pos]);
  }
  int dlpack = has_dlpack(type);
  if (dlpack != 0) return dlpack < 0 ? -1 : tensor_temp(pfpy_from_dlpack(o), pack, pos);
  return 0;
}

int pfpy_tensor_type_probe(PyTypeObject* type) {
  if (type == pfpy_tensor_exchange_type || is_numpy_type(type) || exchange_api_of(type) != NULL) {
    return 1;
  }
  if (pfpy_dtype_class != NULL &&
      ((PyObject*)type == pfpy_dtype_class || (PyObject*)type == pfpy_device_class)) {
    return 1;
  }
  if (has_dlpack(type) > 0) return 1;
  PyErr_Clear();
  return 0;
}
