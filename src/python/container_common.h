/* Private header shared by the container files of packedfun._core (sequences, lists, maps). */
#ifndef PACKEDFUN_SRC_PYTHON_CONTAINER_COMMON_H_
#define PACKEDFUN_SRC_PYTHON_CONTAINER_COMMON_H_

#include "object_system.h"

/* Sequence protocol shared by Array, List and Shape (container.c). */
Py_ssize_t pfpy_seq_size(PyObject* self);
PyObject* pfpy_seq_item(PyObject* self, Py_ssize_t i);
PyObject* pfpy_seq_subscript(PyObject* self, PyObject* key);
int pfpy_seq_contains(PyObject* self, PyObject* x);
PyObject* pfpy_seq_index(PyObject* self, PyObject* x);
PyObject* pfpy_seq_count(PyObject* self, PyObject* x);
PyObject* pfpy_seq_richcompare(PyObject* self, PyObject* other, int op);
PyObject* pfpy_seq_repr(PyObject* self);

/*! Marks the repr of `self`'s native object as being made on this thread: 0, or 1 when it
 *  already is (a container met again inside itself: print "[...]" / "{...}" as list and dict do),
 *  or -1 with an exception. pfpy_repr_leave (after a 0) unmarks it, keeping any pending error. */
int pfpy_repr_enter(PyObject* self);
void pfpy_repr_leave(PyObject* self);
PyObject* pfpy_seq_iter(PyObject* self);
PyObject* pfpy_seq_new(PyTypeObject* type, PyObject* args, PyObject* kwds);
PyObject* pfpy_seq_to_list(PyObject* self);
extern PySequenceMethods pfpy_seq_as_sequence;

/*! Boxed ints for container elements in [0, PFPY_INT_CACHE_SIZE): reads hand out one shared object
 *  per value instead of allocating (CPython itself caches only -5..256). Filled lazily, kept for
 * the life of the process (32 KiB at most). */
#define PFPY_INT_CACHE_SIZE 1024
extern PyObject* pfpy_int_cache[PFPY_INT_CACHE_SIZE];
PyObject* pfpy_int_cache_fill(int64_t v);

/*! A new reference to the Python int `v`, from the cache when it is small. */
static inline PyObject* pfpy_int_element(int64_t v) {
  if ((uint64_t)v < PFPY_INT_CACHE_SIZE) {
    PyObject* o = pfpy_int_cache[v];
    if (PFPY_UNLIKELY(o == NULL)) return pfpy_int_cache_fill(v);
    Py_INCREF(o);
    return o;
  }
  return PyLong_FromLongLong(v);
}

/*! Stores `key` in `*i` when it is an exact int of one machine digit (no call, no error); 0 else.
 *  The read itself is the binding's one small-int read, pfpy_compact_int. */
static inline int pfpy_compact_index(PyObject* key, Py_ssize_t* i) {
  int64_t value;
  if (!PyLong_CheckExact(key) || !pfpy_compact_int(key, &value)) return 0;
  *i = (Py_ssize_t)value;
  return 1;
}

/*! Wraps `obj` (stolen) in a new instance of `type` (allocated without __init__). */
PyObject* pfpy_wrap_as(PyTypeObject* type, PFObject* obj);

/*! Builds a Shape from a tuple of ints (`*out`, new ref); TypeError names a bad dimension. */
int pfpy_shape_from_py(PyObject* items, PFAny* out);

/*! One borrowed argument converted for a native call (values stored into containers). */
typedef struct {
  PFAny arg;
  PFByteArray view;
  PFObject* temp;
  PFPyArgs pack;
} PFPyOneArg;

/*! Converts `o` into `a->arg` (as argument 0 of `what`); release with pfpy_one_arg_release. */
static inline int pfpy_one_arg(PFPyOneArg* a, PyObject* o, PyObject* what) {
  a->temp = NULL;
  a->pack.args = &a->arg;
  a->pack.views = &a->view;
  a->pack.temps = &a->temp;
  a->pack.num_temps = 0;
  a->pack.num_views = 0;
  a->pack.view_args = 0; /* stored values must be real containers */
  a->pack.func = NULL;
  if (PyList_Check(o) || PyTuple_Check(o) || PyDict_Check(o)) { /* Python reads it: python_keys */
    int32_t kind = PyDict_Check(o) ? kPFTypeMap : kPFTypeArray;
    if (pfpy_container_from_py(o, kind, &a->arg, what, 0, 1) != 0) return -1;
    a->temp = a->arg.v_obj;
    a->pack.num_temps = 1;
    return 0;
  }
  if (pfpy_arg_from_py(o, &a->pack, 0, what) != 0) return -1;
  if (PFPY_UNLIKELY(a->arg.type_index == kPFTypeDLTensorPtr)) { /* stored: must own the data */
    pfpy_args_release(&a->pack);
    if (pfpy_any_from_py(o, &a->arg) != 0) return -1;
    a->temp = a->arg.v_obj;
    a->pack.num_temps = 1;
  }
  return 0;
}

static inline void pfpy_one_arg_release(PFPyOneArg* a) { pfpy_args_release(&a->pack); }

/*! Raises the pending native error (naming nothing) and returns -1. */
static inline int pfpy_native_fail(void) {
  pfpy_raise_native(NULL);
  return -1;
}

#endif /* PACKEDFUN_SRC_PYTHON_CONTAINER_COMMON_H_ */
