/* packedfun's Array, List and Shape types: Python sequences over the native object, no copy. */
#include "container_common.h"
#include "tensor.h"

PyObject* pfpy_int_cache[PFPY_INT_CACHE_SIZE];

PyObject* pfpy_int_cache_fill(int64_t v) {
  PyObject* o = PyLong_FromLongLong(v);
  if (o == NULL) return NULL;
  Py_INCREF(o); /* the cache's reference */
  pfpy_int_cache[v] = o;
  return o;
}

/* ---- element access ----------------------------------------------------------------------------
 */

static inline int is_shape(PyObject* self) { return PyObject_TypeCheck(self, &PFPyShape_Type); }

Py_ssize_t pfpy_seq_size(PyObject* self) {
  PFObject* h = ((PFPyObject*)self)->handle;
  if (h == NULL) return 0;
  if (h->type_index == kPFTypeShape) return (Py_ssize_t)((PFShapeObject*)h)->size;
  return (Py_ssize_t)((PFSeqObject*)h)->size;
}

/* Element `i` (in range) as a new Python object. */
static inline PyObject* element(PyObject* self, Py_ssize_t i) {
  PFObject* h = ((PFPyObject*)self)->handle;
  if (h->type_index == kPFTypeShape) return pfpy_int_element(((PFShapeObject*)h)->data[i]);
  const PFAny* v = &((PFSeqObject*)h)->data[i];
  if (PFPY_LIKELY(v->type_index == kPFTypeInt)) return pfpy_int_element(v->v_int64);
  return pfpy_container_element(self, pfpy_any_view_to_py(v));
}

static PFPY_NOINLINE PyObject* index_error(PyObject* self) {
  return pfpy_raise_message(PyExc_IndexError, "SEQ_INDEX_OUT_OF_RANGE", "(s)",
                            Py_TYPE(self)->tp_name);
}

PyObject* pfpy_seq_item(PyObject* self, Py_ssize_t i) {
  if (i < 0 || i >= pfpy_seq_size(self)) return index_error(self);
  return element(self, i);
}

/* A new Python list of every element (a snapshot). */
PyObject* pfpy_seq_to_list(PyObject* self) {
  Py_ssize_t n = pfpy_seq_size(self);
  PyObject* list = PyList_New(n);
  for (Py_ssize_t i = 0; list != NULL && i < n; ++i) {
    PyObject* e = i < pfpy_seq_size(self) ? element(self, i) : index_error(self);
    if (e == NULL)
      Py_CLEAR(list);
    else
      PyList_SET_ITEM(list, i, e);
  }
  return list;
}

static PFPY_NOINLINE PyObject* seq_slice(PyObject* self, PyObject* key) {
  Py_ssize_t start, stop, step;
  if (PySlice_Unpack(key, &start, &stop, &step) < 0) return NULL;
  Py_ssize_t n = PySlice_AdjustIndices(pfpy_seq_size(self), &start, &stop, step);
  PFObject* h = ((PFPyObject*)self)->handle;
  if (is_shape(self) || h == NULL) {
    PyObject* t = PyTuple_New(n);
    for (Py_ssize_t i = 0; t != NULL && i < n; ++i) {
      PyObject* e = element(self, start + i * step);
      if (e == NULL)
        Py_CLEAR(t);
      else
        PyTuple_SET_ITEM(t, i, e);
    }
    return t;
  }
  PFAny* items = (PFAny*)PyMem_Malloc(sizeof(PFAny) * (size_t)(n > 0 ? n : 1));
  if (items == NULL) return PyErr_NoMemory();
  for (Py_ssize_t i = 0; i < n; ++i) items[i] = ((PFSeqObject*)h)->data[start + i * step];
  PFAny out;
  int rc =
      h->type_index == kPFTypeList ? PFListCreate(items, n, &out) : PFArrayCreate(items, n, &out);
  PyMem_Free(items);
  if (rc != 0) return pfpy_raise_native(NULL);
  return pfpy_container_element(self, pfpy_any_steal_to_py(&out));
}

PyObject* pfpy_seq_subscript(PyObject* self, PyObject* key) {
  Py_ssize_t i;
  if (PFPY_LIKELY(pfpy_compact_index(key, &i))) {
    PFObject* h = ((PFPyObject*)self)->handle;
    if (PFPY_LIKELY(h != NULL && h->type_index != kPFTypeShape)) {
      Py_ssize_t n = (Py_ssize_t)((PFSeqObject*)h)->size;
      if (i < 0) i += n;
      if (PFPY_UNLIKELY((size_t)i >= (size_t)n)) return index_error(self);
      return element(self, i);
    }
  }
  if (PyLong_CheckExact(key)) {
    i = PyLong_AsSsize_t(key);
    if (PFPY_UNLIKELY(i == -1 && PyErr_Occurred())) {
      PyErr_Clear();
      return index_error(self);
    }
    Py_ssize_t n = pfpy_seq_size(self);
    if (i < 0) i += n;
    if (PFPY_UNLIKELY(i < 0 || i >= n)) return index_error(self);
    return element(self, i);
  }
  if (PySlice_Check(key)) return seq_slice(self, key);
  if (PyIndex_Check(key)) {
    Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
    if (i == -1 && PyErr_Occurred()) return NULL;
    if (i < 0) i += pfpy_seq_size(self);
    return pfpy_seq_item(self, i);
  }
  return pfpy_raise_message(PyExc_TypeError, "SEQ_BAD_INDEX", "(ss)", Py_TYPE(self)->tp_name,
                            Py_TYPE(key)->tp_name);
}

int pfpy_seq_contains(PyObject* self, PyObject* x) {
  for (Py_ssize_t i = 0; i < pfpy_seq_size(self); ++i) {
    PyObject* e = element(self, i);
    if (e == NULL) return -1;
    int eq = PyObject_RichCompareBool(e, x, Py_EQ);
    Py_DECREF(e);
    if (eq != 0) return eq;
  }
  return 0;
}

PyObject* pfpy_seq_index(PyObject* self, PyObject* x) {
  for (Py_ssize_t i = 0; i < pfpy_seq_size(self); ++i) {
    PyObject* e = element(self, i);
    int eq = e ? PyObject_RichCompareBool(e, x, Py_EQ) : -1;
    Py_XDECREF(e);
    if (eq < 0) return NULL;
    if (eq) return PyLong_FromSsize_t(i);
  }
  return pfpy_raise_message(PyExc_ValueError, "SEQ_NOT_IN", "(Os)", x, Py_TYPE(self)->tp_name);
}

PyObject* pfpy_seq_count(PyObject* self, PyObject* x) {
  Py_ssize_t count = 0;
  for (Py_ssize_t i = 0; i < pfpy_seq_size(self); ++i) {
    PyObject* e = element(self, i);
    int eq = e ? PyObject_RichCompareBool(e, x, Py_EQ) : -1;
    Py_XDECREF(e);
    if (eq < 0) return NULL;
    count += eq;
  }
  return PyLong_FromSsize_t(count);
}

/* ---- comparison, hash, repr
 * ---------------------------------------------------------------------- */

static int comparable(PyObject* self, PyObject* other) {
  if (PyList_Check(other) || PyTuple_Check(other)) return 1;
  return PyObject_TypeCheck(other, &PFPyArray_Type) || PyObject_TypeCheck(other, &PFPyList_Type) ||
         PyObject_TypeCheck(other, &PFPyShape_Type) || (self == other);
}

PyObject* pfpy_seq_richcompare(PyObject* self, PyObject* other, int op) {
  if ((op != Py_EQ && op != Py_NE) || !comparable(self, other)) Py_RETURN_NOTIMPLEMENTED;
  PyObject* a = pfpy_seq_to_list(self);
  PyObject* b = a ? PySequence_List(other) : NULL;
  PyObject* r = b ? PyObject_RichCompare(a, b, op) : NULL;
  Py_XDECREF(a);
  Py_XDECREF(b);
  return r;
}

static Py_hash_t seq_hash(PyObject* self) {
  PyObject* list = pfpy_seq_to_list(self);
  PyObject* t = list ? PyList_AsTuple(list) : NULL;
  Py_XDECREF(list);
  Py_hash_t h = t ? PyObject_Hash(t) : -1;
  Py_XDECREF(t);
  return h;
}

/* The hash of the tuple of the items (an Array equals that tuple). A tuple's hash recurses on the
 * C stack without a check, and each nesting level here adds this frame too: a deep nest raises
 * RecursionError at Python's recursion limit instead of overflowing the stack. */
Py_hash_t pfpy_seq_hash(PyObject* self) {
  if (Py_EnterRecursiveCall(" while hashing a packedfun container")) return -1;
  Py_hash_t h = seq_hash(self);
  Py_LeaveRecursiveCall();
  return h;
}

/* The handles whose repr is being made on this thread (a set in the thread's state dict). Each
 * read of a container makes a new wrapper, so Py_ReprEnter, keyed by the Python object, would not
 * see a container met again inside itself. */
static PyObject* repr_open_set(void) {
  PyObject* state = PyThreadState_GetDict();
  if (state == NULL) return NULL;
  PyObject* set = PyDict_GetItemString(state, "packedfun.repr_open");
  if (set != NULL) return set;
  set = PySet_New(NULL);
  int rc = set != NULL ? PyDict_SetItemString(state, "packedfun.repr_open", set) : -1;
  Py_XDECREF(set); /* the state dict holds it */
  return rc == 0 ? set : NULL;
}

int pfpy_repr_enter(PyObject* self) {
  PyObject* set = repr_open_set();
  PyObject* key = set ? PyLong_FromVoidPtr(((PFPyObject*)self)->handle) : NULL;
  if (key == NULL) return -1;
  int rc = PySet_Contains(set, key);
  if (rc == 0 && PySet_Add(set, key) != 0) rc = -1;
  Py_DECREF(key);
  return rc;
}

void pfpy_repr_leave(PyObject* self) {
  PyObject* exc = pfpy_fetch_exception();
  PyObject* set = repr_open_set();
  PyObject* key = set ? PyLong_FromVoidPtr(((PFPyObject*)self)->handle) : NULL;
  if (key != NULL && PySet_Discard(set, key) < 0) PyErr_Clear();
  Py_XDECREF(key);
  PyErr_Clear();
  if (exc != NULL) pfpy_restore_exception(exc);
}

PyObject* pfpy_seq_repr(PyObject* self) {
  int open = pfpy_repr_enter(self);
  if (open != 0) return open < 0 ? NULL : PyUnicode_FromString("[...]"); /* as a list's */
  if (Py_EnterRecursiveCall(" while getting the repr of a container")) {
    pfpy_repr_leave(self);
    return NULL;
  }
  PyObject* list = pfpy_seq_to_list(self);
  PyObject* shown = list && is_shape(self) ? PyList_AsTuple(list) : (Py_XINCREF(list), list);
  Py_XDECREF(list);
  PyObject* r = shown ? PyObject_Repr(shown) : NULL;
  Py_XDECREF(shown);
  Py_LeaveRecursiveCall();
  pfpy_repr_leave(self);
  return r;
}

/* ---- iteration
 * ----------------------------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD PyObject* seq; /* owned; NULL once exhausted */
  Py_ssize_t index;
} SeqIter;

static void seqiter_dealloc(PyObject* self) {
  Py_XDECREF(((SeqIter*)self)->seq);
  PyObject_Free(self);
}

static PyObject* seqiter_next(PyObject* self) {
  SeqIter* it = (SeqIter*)self;
  if (it->seq == NULL) return NULL;
  if (it->index < pfpy_seq_size(it->seq)) return element(it->seq, it->index++);
  Py_CLEAR(it->seq);
  return NULL;
}

static PyTypeObject SeqIter_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "packedfun._core.SequenceIterator",
    .tp_basicsize = sizeof(SeqIter),
    .tp_dealloc = seqiter_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = seqiter_next,
};

PyObject* pfpy_seq_iter(PyObject* self) {
  SeqIter* it = PyObject_New(SeqIter, &SeqIter_Type);
  if (it == NULL) return NULL;
  Py_INCREF(self);
  it->seq = self;
  it->index = 0;
  return (PyObject*)it;
}

/* ---- construction
 * -------------------------------------------------------------------------------- */

/* Array(iterable=()) / List(iterable=()) / Shape(iterable=()). */
PyObject* pfpy_seq_new(PyTypeObject* type, PyObject* args, PyObject* kwds) {
  if (PyType_IsSubtype(type, &PFPyList_Type)) { /* empty: __init__ fills it, as a list's does */
    PFAny empty = {0};
    if (PFListCreate(NULL, 0, &empty) != 0) return pfpy_raise_native(NULL);
    return pfpy_wrap_as(type, empty.v_obj);
  }
  PyObject* src = NULL;
  if (!PyArg_ParseTuple(args, "|O", &src) || (kwds && PyDict_Size(kwds))) {
    if (!PyErr_Occurred()) pfpy_raise_message(PyExc_TypeError, "NO_KEYWORDS", "(s)", type->tp_name);
    return NULL;
  }
  PyObject* items = src ? PySequence_Tuple(src) : PyTuple_New(0);
  if (items == NULL) return NULL;
  PFAny made = {0};
  int rc;
  if (PyType_IsSubtype(type, &PFPyShape_Type)) {
    rc = pfpy_shape_from_py(items, &made);
  } else {
    int32_t kind = PyType_IsSubtype(type, &PFPyList_Type) ? kPFTypeList : kPFTypeArray;
    rc = pfpy_container_from_py(items, kind, &made, NULL, -1, 1);
  }
  Py_DECREF(items);
  if (rc != 0) return NULL;
  return pfpy_wrap_as(type, made.v_obj);
}

PyObject* pfpy_wrap_as(PyTypeObject* type, PFObject* obj) {
  PFPyObject* self = (PFPyObject*)type->tp_alloc(type, 0);
  if (self == NULL) {
    PFObjectDecRef(obj);
    return NULL;
  }
  self->handle = obj;
  return (PyObject*)self;
}

int pfpy_shape_from_py(PyObject* items, PFAny* out) {
  Py_ssize_t n = PyTuple_GET_SIZE(items);
  int64_t* dims = (int64_t*)PyMem_Malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
  if (dims == NULL) return PyErr_NoMemory(), -1;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* d = PyTuple_GET_ITEM(items, i);
    long long v = PyIndex_Check(d) && !PyBool_Check(d) ? PyLong_AsLongLong(d) : -1;
    if (v == -1 && (PyErr_Occurred() || !PyIndex_Check(d) || PyBool_Check(d))) {
      if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        pfpy_raise_message(PyExc_TypeError, "SHAPE_DIM_NOT_INT", "(ns)", i, Py_TYPE(d)->tp_name);
      } else if (PyErr_ExceptionMatches(PyExc_OverflowError)) { /* name the Shape and the range */
        PyObject* index = PyNumber_Index(d);
        int negative = index != NULL && PyObject_RichCompareBool(index, Py_False, Py_LT) == 1;
        Py_XDECREF(index);
        PyErr_Clear();
        pfpy_raise_message(PyExc_OverflowError, "SHAPE_DIM_OVERFLOW", "(ns)", i,
                           negative ? "small" : "large");
      }
      PyMem_Free(dims);
      return -1;
    }
    dims[i] = (int64_t)v;
  }
  PFObject* shape = NULL;
  int rc = PFShapeCreate(dims, (int64_t)n, &shape);
  PyMem_Free(dims);
  if (rc != 0) return pfpy_raise_native(NULL), -1;
  out->type_index = kPFTypeShape;
  out->zero_padding = 0;
  out->v_obj = shape;
  return 0;
}

/* ---- the types
 * ----------------------------------------------------------------------------------- */

PySequenceMethods pfpy_seq_as_sequence = {
    .sq_length = pfpy_seq_size,
    .sq_item = pfpy_seq_item,
    .sq_contains = pfpy_seq_contains,
};

static PyMappingMethods seq_as_mapping = {
    .mp_length = pfpy_seq_size,
    .mp_subscript = pfpy_seq_subscript,
};

PyMethodDef pfpy_seq_methods[] = {
    {"index", pfpy_seq_index, METH_O,
     "Position of the first element equal to `x` (ValueError if none)."},
    {"count", pfpy_seq_count, METH_O, "Number of elements equal to `x`."},
    {NULL, NULL, 0, NULL}};

#define SEQ_TYPE_COMMON                                                           \
  .tp_basicsize = sizeof(PFPyContainer), .tp_base = &PFPyObject_Type,             \
  .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, .tp_repr = pfpy_seq_repr, \
  .tp_richcompare = pfpy_seq_richcompare, .tp_iter = pfpy_seq_iter, .tp_new = pfpy_seq_new

PyTypeObject PFPyArray_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "packedfun.Array",
    SEQ_TYPE_COMMON,
    .tp_doc = "An immutable native array (kPFTypeArray); Array(iterable) converts each element.",
    .tp_as_sequence = &pfpy_seq_as_sequence,
    .tp_as_mapping = &seq_as_mapping,
    .tp_hash = pfpy_seq_hash,
    .tp_methods = pfpy_seq_methods,
};

PyTypeObject PFPyShape_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "packedfun.Shape",
    SEQ_TYPE_COMMON,
    .tp_doc = "An immutable tuple of int64 (kPFTypeShape), e.g. a tensor's shape.",
    .tp_as_sequence = &pfpy_seq_as_sequence,
    .tp_as_mapping = &seq_as_mapping,
    .tp_hash = pfpy_seq_hash,
    .tp_methods = pfpy_seq_methods,
};

int pfpy_seq_types_add(PyObject* m) {
  PyTypeObject* types[] = {&PFPyArray_Type, &PFPyList_Type, &PFPyShape_Type};
  const char* names[] = {"Array", "List", "Shape"};
  if (PyType_Ready(&SeqIter_Type) < 0) return -1;
  for (int i = 0; i < 3; ++i) {
    if (PyType_Ready(types[i]) < 0) return -1;
    Py_INCREF(types[i]);
    if (PyModule_AddObject(m, names[i], (PyObject*)types[i]) < 0) return -1;
  }
  return 0;
}
