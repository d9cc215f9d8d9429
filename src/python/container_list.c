/* packedfun.List: the mutable native sequence, changed through the PFList* entry points. */
#include "container_common.h"
#include "tensor.h"

static PyObject* list_name(void) {
  static PyObject* name = NULL;
  if (name == NULL) name = PyUnicode_InternFromString("packedfun.List");
  return name;
}

static PFObject* list_handle(PyObject* self) {
  PFObject* h = ((PFPyObject*)self)->handle;
  if (h == NULL) pfpy_raise_message(PyExc_ValueError, "EMPTY_WRAPPER", "(s)", "packedfun.List");
  return h;
}

static int list_ass_index(PyObject* self, Py_ssize_t i, PyObject* value) {
  PFObject* h = list_handle(self);
  if (h == NULL) return -1;
  if (value == NULL) return PFListPop(h, (int64_t)i, NULL) == 0 ? 0 : pfpy_native_fail();
  PFPyOneArg a;
  if (pfpy_one_arg(&a, value, list_name()) != 0) return -1;
  int rc = PFListSetItem(h, (int64_t)i, &a.arg);
  pfpy_one_arg_release(&a);
  return rc == 0 ? 0 : pfpy_native_fail();
}

static int list_ass_subscript(PyObject* self, PyObject* key, PyObject* value) {
  if (!PyIndex_Check(key)) {
    pfpy_raise_message(PyExc_TypeError, "LIST_BAD_INDEX", "(s)", Py_TYPE(key)->tp_name);
    return -1;
  }
  Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
  if (i == -1 && PyErr_Occurred()) return -1;
  return list_ass_index(self, i, value);
}

static PyObject* list_append(PyObject* self, PyObject* value) {
  PFObject* h = list_handle(self);
  if (h == NULL) return NULL;
  PFPyOneArg a;
  if (pfpy_one_arg(&a, value, list_name()) != 0) return NULL;
  int rc = PFListAppend(h, &a.arg);
  pfpy_one_arg_release(&a);
  if (rc != 0) return pfpy_raise_native(NULL);
  Py_RETURN_NONE;
}

static PyObject* list_insert(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2) return PyErr_Format(PyExc_TypeError, "insert expected 2 arguments");
  Py_ssize_t i = PyNumber_AsSsize_t(args[0], PyExc_OverflowError);
  if (i == -1 && PyErr_Occurred()) return NULL;
  PFObject* h = list_handle(self);
  if (h == NULL) return NULL;
  PFPyOneArg a;
  if (pfpy_one_arg(&a, args[1], list_name()) != 0) return NULL;
  int rc = PFListInsert(h, (int64_t)i, &a.arg);
  pfpy_one_arg_release(&a);
  if (rc != 0) return pfpy_raise_native(NULL);
  Py_RETURN_NONE;
}

static PyObject* list_pop(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  Py_ssize_t i = -1;
  if (nargs > 1) return PyErr_Format(PyExc_TypeError, "pop expected at most 1 argument");
  if (nargs == 1 && (i = PyNumber_AsSsize_t(args[0], PyExc_IndexError)) == -1 && PyErr_Occurred()) {
    return NULL;
  }
  PFObject* h = list_handle(self);
  if (h == NULL) return NULL;
  PFAny out = {0};
  if (PFListPop(h, (int64_t)i, &out) != 0) return pfpy_raise_native(NULL);
  return pfpy_container_element(self, pfpy_any_steal_to_py(&out));
}

static PyObject* list_clear(PyObject* self, PyObject* unused) {
  (void)unused;
  PFObject* h = list_handle(self);
  if (h == NULL) return NULL;
  if (PFListClear(h) != 0) return pfpy_raise_native(NULL);
  Py_RETURN_NONE;
}

static PyObject* list_extend(PyObject* self, PyObject* iterable) {
  PyObject* items = PySequence_Tuple(iterable); /* a snapshot: extending by itself terminates */
  if (items == NULL) return NULL;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(items); ++i) {
    PyObject* r = list_append(self, PyTuple_GET_ITEM(items, i));
    if (r == NULL) {
      Py_DECREF(items);
      return NULL;
    }
    Py_DECREF(r);
  }
  Py_DECREF(items);
  Py_RETURN_NONE;
}

static PyObject* list_inplace_concat(PyObject* self, PyObject* other) {
  PyObject* r = list_extend(self, other);
  if (r == NULL) return NULL;
  Py_DECREF(r);
  Py_INCREF(self);
  return self;
}

/* Puts `made` (stolen) in place of the list's contents. A list no one else holds (this wrapper has
 * its only reference: List(...) itself) takes `made` outright; a shared one is cleared and refilled
 * in place, so every holder sees the change. */
static int list_replace(PyObject* self, PFObject* made) {
  PFObject* h = ((PFPyObject*)self)->handle;
  if (h == NULL || __atomic_load_n(&h->ref_count, __ATOMIC_ACQUIRE) == 1) {
    ((PFPyObject*)self)->handle = made;
    if (h != NULL) PFObjectDecRef(h);
    return 0;
  }
  PFSeqObject* items = (PFSeqObject*)made;
  int rc = PFListClear(h);
  for (int64_t i = 0; rc == 0 && i < items->size; ++i) rc = PFListAppend(h, &items->data[i]);
  PFObjectDecRef(made);
  return rc == 0 ? 0 : pfpy_native_fail();
}

/* List.__init__(iterable=()): as list.__init__, the list then holds the elements of `iterable`
 * (converted first: a bad element leaves it unchanged). List(...) fills its empty list here, so
 * calling __init__ again on a live List does what it does on a list, not nothing. */
static int list_init(PyObject* self, PyObject* args, PyObject* kwds) {
  PyObject* src = NULL;
  if (kwds != NULL && PyDict_GET_SIZE(kwds) != 0) {
    pfpy_raise_message(PyExc_TypeError, "NO_KEYWORDS", "(s)", Py_TYPE(self)->tp_name);
    return -1;
  }
  if (PyTuple_GET_SIZE(args) > 1) {
    pfpy_raise_message(PyExc_TypeError, "AT_MOST_ONE_ARGUMENT", "(sn)", Py_TYPE(self)->tp_name,
                       PyTuple_GET_SIZE(args));
    return -1;
  }
  if (PyTuple_GET_SIZE(args) == 1) src = PyTuple_GET_ITEM(args, 0); /* checked above: no parse */
  PyObject* items = src ? PySequence_Tuple(src) : PyTuple_New(0);
  if (items == NULL) return -1;
  PFAny made = {0};
  int rc = pfpy_container_from_py(items, kPFTypeList, &made, NULL, -1, 1);
  Py_DECREF(items);
  return rc != 0 ? -1 : list_replace(self, made.v_obj);
}

static PyMethodDef list_methods[] = {
    {"index", pfpy_seq_index, METH_O, "Position of the first element equal to `x`."},
    {"count", pfpy_seq_count, METH_O, "Number of elements equal to `x`."},
    {"append", list_append, METH_O, "Appends `value` (converted like an argument)."},
    {"insert", (PyCFunction)(void (*)(void))list_insert, METH_FASTCALL,
     "insert(index, value): inserts before `index` (clamped like list.insert)."},
    {"pop", (PyCFunction)(void (*)(void))list_pop, METH_FASTCALL,
     "pop(index=-1): removes and returns an element (IndexError when out of range)."},
    {"clear", list_clear, METH_NOARGS, "Removes every element."},
    {"extend", list_extend, METH_O, "Appends every element of `iterable`."},
    {NULL, NULL, 0, NULL}};

static PySequenceMethods list_as_sequence = {
    .sq_length = pfpy_seq_size,
    .sq_item = pfpy_seq_item,
    .sq_contains = pfpy_seq_contains,
    .sq_inplace_concat = list_inplace_concat,
};

static PyMappingMethods list_as_mapping = {
    .mp_length = pfpy_seq_size,
    .mp_subscript = pfpy_seq_subscript,
    .mp_ass_subscript = list_ass_subscript,
};

PyTypeObject PFPyList_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "packedfun.List",
    .tp_basicsize = sizeof(PFPyContainer),
    .tp_base = &PFPyObject_Type,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "A mutable native list (kPFTypeList); List(iterable) converts each element.",
    .tp_repr = pfpy_seq_repr,
    .tp_richcompare = pfpy_seq_richcompare,
    .tp_hash = PyObject_HashNotImplemented,
    .tp_iter = pfpy_seq_iter,
    .tp_new = pfpy_seq_new,
    .tp_init = list_init,
    .tp_as_sequence = &list_as_sequence,
    .tp_as_mapping = &list_as_mapping,
    .tp_methods = list_methods,
};
