/* Container views: a list, tuple or dict argument lent to a C++ parameter that reads it
 * in place (std::vector, std::map, ...), instead of an Array or Map built for the call. */
#include "container_view.h"

#include "core.h"
#include "object_system.h"

static PFPyViewTemp* view_free_list;

void pfpy_view_recycle(PFObject* obj) {
  PFPyViewTemp* t = (PFPyViewTemp*)obj;
  t->next = view_free_list;
  view_free_list = t;
}

/* Items [start, start + n) of a sequence view, or NULL when there is nothing to read: an empty or
 * out-of-bounds range (an empty list's items may be NULL itself), or a list that changed size
 * since the call began (Python code run by a later argument's conversion), where the callee
 * then falls back to materialize. */
static PyObject* const* view_items(const PFContainerView* view, int64_t start, int64_t n) {
  PyObject* o = (PyObject*)view->handle;
  if (view->kind != kPFTypeArray || start < 0 || n <= 0 || start + n > view->size) return NULL;
  if (PyList_Check(o)) {
    return PyList_GET_SIZE(o) == view->size ? ((PyListObject*)o)->ob_item + start : NULL;
  }
  return ((PyTupleObject*)o)->ob_item + start;
}

/* An exact int that fits int64, read without calling Python code. */
static inline int exact_int64(PyObject* o, int64_t* out) {
  if (!PyLong_CheckExact(o)) return 0;
  if (PFPY_LIKELY(pfpy_compact_int(o, out))) return 1;
  int overflow = 0;
  long long big = PyLong_AsLongLongAndOverflow(o, &overflow); /* cannot fail for an exact int */
  if (overflow != 0) return 0;
  *out = (int64_t)big;
  return 1;
}

/* One cell of an entry: the rule's exact step, limited to the kinds read_entries promises (int,
 * float, SmallStr, StrView): None and bool stop the read, and the callee materializes. */
static inline int plain_cell(PyObject* o, PFAny* out, PFByteArray* view) {
  return pfpy_exact_from_py(o, out, view, PFPY_EXACT_SMALL_STR) && out->type_index != kPFTypeNone &&
         out->type_index != kPFTypeBool;
}

static int64_t view_read_int64(const PFContainerView* view, int64_t start, int64_t* out,
                               int64_t n) {
  PyObject* const* src = view_items(view, start, n);
  if (src == NULL) return 0;
  int64_t i = 0;
  for (; i < n; ++i) {
    if (!exact_int64(src[i], &out[i])) break;
  }
  return i;
}

static int64_t view_read_float64(const PFContainerView* view, int64_t start, double* out,
                                 int64_t n) {
  PyObject* const* src = view_items(view, start, n);
  if (src == NULL) return 0;
  int64_t i = 0;
  for (; i < n; ++i) {
    PyObject* o = src[i];
    int64_t whole;
    if (Py_IS_TYPE(o, &PyFloat_Type)) {
      out[i] = PyFloat_AS_DOUBLE(o);
    } else if (exact_int64(o, &whole)) {
      out[i] = (double)whole;
    } else {
      break;
    }
  }
  return i;
}

static int64_t view_read_entries(const PFContainerView* view, int64_t* cursor, PFAny* kv,
                                 PFByteArray* views, int64_t max_items) {
  PyObject* o = (PyObject*)view->handle;
  if (view->kind != kPFTypeMap || PyDict_GET_SIZE(o) != view->size) return 0;
  Py_ssize_t pos = (Py_ssize_t)*cursor;
  int64_t got = 0;
  PyObject *key, *value;
  while (got < max_items) {
    Py_ssize_t at = pos;
    if (!PyDict_Next(o, &pos, &key, &value)) break;
    if (!plain_cell(key, &kv[2 * got], &views[2 * got]) ||
        !plain_cell(value, &kv[2 * got + 1], &views[2 * got + 1])) {
      pos = at; /* not plain: stop before it */
      break;
    }
    ++got;
  }
  *cursor = (int64_t)pos;
  return got;
}

/* The conversion the call would have made without the view; its errors read the same, reworded
 * for a Function that names its parameters as its argument errors are. */
static int view_materialize(const PFContainerView* view, PFAny* out) {
  const PFPyViewTemp* t = (const PFPyViewTemp*)((const char*)view - offsetof(PFPyViewTemp, view));
  if (pfpy_container_from_py((PyObject*)view->handle, view->kind, out, t->fname, t->pos, 0) == 0) {
    return 0;
  }
  if (t->func != NULL) pfpy_function_name_argument_error((PFPyFunction*)t->func, t->pos);
  return pfpy_raise_python_as_native();
}

const PFContainerViewVTable pfpy_view_vtable = {
    view_read_int64,
    view_read_float64,
    view_read_entries,
    view_materialize,
};

int pfpy_container_view_arg(PyObject* o, PFPyArgs* pack, Py_ssize_t pos, PyObject* fname) {
  PFPyViewTemp* t = view_free_list;
  if (t != NULL) {
    view_free_list = t->next;
  } else {
    t = (PFPyViewTemp*)PyMem_Calloc(1, sizeof(PFPyViewTemp));
    if (t == NULL) {
      PyErr_NoMemory();
      return -1;
    }
    t->header.type_index = kPFTypeObject;
    t->header.deleter = pfpy_view_recycle;
    t->view.vtable = &pfpy_view_vtable;
  }
  t->header.ref_count = 1;
  int is_dict = PyDict_Check(o);
  t->view.kind = is_dict ? kPFTypeMap : kPFTypeArray;
  t->view.size = is_dict           ? PyDict_GET_SIZE(o)
                 : PyList_Check(o) ? PyList_GET_SIZE(o)
                                   : PyTuple_GET_SIZE(o);
  t->view.handle = o;
  t->func = pack->func;
  t->fname = fname;
  t->pos = pos;
  pack->temps[pack->num_temps++] = &t->header;
  ++pack->num_views;
  PFPY_SET_POD(&pack->args[pos], kPFTypeContainerView, v_ptr, &t->view);
  return 0;
}

int pfpy_container_views_settle(PFPyArgs* pack, Py_ssize_t n) {
  for (Py_ssize_t i = 0; i < n; ++i) {
    PFAny* cell = &pack->args[i];
    if (cell->type_index != kPFTypeContainerView) continue;
    const PFPyViewTemp* t =
        (const PFPyViewTemp*)((const char*)cell->v_ptr - offsetof(PFPyViewTemp, view));
    PFAny made;
    if (pfpy_container_from_py((PyObject*)t->view.handle, t->view.kind, &made, t->fname, i, 0) !=
        0) {
      return -1;
    }
    for (int k = 0; k < pack->num_temps; ++k) { /* the Array/Map takes the view's temp slot */
      if (pack->temps[k] == &t->header) pack->temps[k] = made.v_obj;
    }
    pfpy_view_recycle((PFObject*)&t->header);
    *cell = made;
  }
  pack->num_views = 0;
  return 0;
}
