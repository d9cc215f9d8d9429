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
PyObject* pfpy_seq_iter(PyObject* self);
PyObject* pfpy_seq_new(PyTypeObject* type, PyObject* args, PyObject* kwds);
PyObject* pfpy_seq_to_list(PyObject* self);
extern PySequenceMethods pfpy_seq_as_sequence;

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
