/* Private header of packedfun._core: container views (container_view.c). */
#ifndef PACKEDFUN_SRC_PYTHON_CONTAINER_VIEW_H_
#define PACKEDFUN_SRC_PYTHON_CONTAINER_VIEW_H_

#include "core.h"

/*! One view: the record the callee reads (first), and what materialize needs to convert it as
 *  the call would have (view_materialize finds them from the record). A view made by
 *  pfpy_container_view_arg travels in the call's temps (the PFObject header, never handed out),
 *  so pfpy_args_release recycles it with the Array temps; one made by pfpy_stack_view_arg lives
 *  in its caller's frame for the call and is in no pack. Always under the GIL. */
typedef struct PFPyViewTemp {
  PFObject header;
  PFContainerView view;
  PyObject* func; /* the PFPyFunction called (borrowed for the call) */
  PyObject* fname;
  Py_ssize_t pos;
  struct PFPyViewTemp* next; /* in the free list */
} PFPyViewTemp;

/*! The readers of every view of this binding (container_view.c). */
extern const PFContainerViewVTable pfpy_view_vtable;

/*! Lends the exact list `o` (borrowed; the caller's args keep it alive) as argument `pos` of the
 *  call of `func` (a PFPyFunction that keeps the GIL held and asked for a view there) through
 *  `*t`, a record in the caller's frame that outlives the call: no temp, no free list, nothing to
 *  release. Cannot fail. */
static inline __attribute__((always_inline)) void pfpy_stack_view_arg(PyObject* o, PyObject* func,
                                                                      Py_ssize_t pos,
                                                                      PFPyViewTemp* t, PFAny* out) {
  t->view.vtable = &pfpy_view_vtable;
  t->view.kind = kPFTypeArray;
  t->view.reserved = 0;
  t->view.size = PyList_GET_SIZE(o);
  t->view.handle = o;
  t->func = func;
  t->fname = ((PFPyFunction*)func)->name;
  t->pos = pos;
  PFPY_SET_POD(out, kPFTypeContainerView, v_ptr, &t->view);
}

/*! Whether argument `pos` of the call `pack` is for may travel as a container view: its Function
 *  declared it (PACKEDFUN_FUNCTION_VIEW_ARGS_SHIFT) and keeps the GIL held (call_packed fills
 *  pack->view_args only then). */
static inline int pfpy_view_arg_wanted(const PFPyArgs* pack, Py_ssize_t pos) {
  return pos >= 0 && pos < PACKEDFUN_FUNCTION_MAX_VIEW_ARGS && ((pack->view_args >> pos) & 1u);
}

/*! Passes the list, tuple or dict `o` (borrowed; the caller's args keep it alive) as argument
 *  `pos`: a kPFTypeContainerView whose record is one of `pack`'s temporaries. Returns 0, or -1
 *  with MemoryError. */
int pfpy_container_view_arg(PyObject* o, PFPyArgs* pack, Py_ssize_t pos, PyObject* fname);

/*! Replaces each view among the `n` arguments of `pack` with the Array/Map it stands for (a
 *  Function whose GIL policy changed to "release" while its arguments converted). Returns 0, or
 *  -1 with the conversion's Python exception. */
int pfpy_container_views_settle(PFPyArgs* pack, Py_ssize_t n);

/*! The deleter of a view's temp: back to the free list. A view never leaves the call as an object
 *  (the callee gets the PFContainerView record, not its header), so its count is 1 until then and
 *  pfpy_args_release calls this directly, sparing the runtime's release. */
void pfpy_view_recycle(PFObject* obj);

#endif /* PACKEDFUN_SRC_PYTHON_CONTAINER_VIEW_H_ */
