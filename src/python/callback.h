/* The recycled callback wrapper of packedfun._core: its whole lifecycle (create, lend, recycle,
 * release), inline where the call path needs it; callback.c defines the slot and the cold steps. */
#ifndef PACKEDFUN_SRC_PYTHON_CALLBACK_H_
#define PACKEDFUN_SRC_PYTHON_CALLBACK_H_

#include "core.h"

/* A Python callable passed to a native function is wrapped for the duration of the call. Creating
 * and destroying that wrapper costs an allocation each time, so one wrapper is kept between calls:
 * it is taken out of the slot for a call (nested calls find the slot empty and create their own)
 * and put back afterwards only if the native side kept no reference to it (its reference count is
 * back to 1: nobody else can hold or gain one). A wrapper that was kept lives on as an ordinary
 * Function owning its callable. While in the slot a wrapper holds no callable (self == NULL). The
 * slot is guarded by the GIL (per thread where there is none).
 *
 * Two ways through it:
 * - owning (pfpy_callable_to_temp_function .. pfpy_temp_function_release): the wrapper owns a
 *   reference to its callable from the start; the rule's setter uses it, for arguments of the
 *   general call and for values that outlive the call;
 * - borrowing (pfpy_callback_lend .. pfpy_callback_return): the wrapper borrows the callable,
 *   which the caller's argument vector keeps alive, and takes a reference only if the native side
 *   keeps the wrapper; the positional fast path uses it. */

/*! The recycled wrapper waiting for the next callable argument, or NULL (callback.c). */
#ifdef Py_GIL_DISABLED
extern _Thread_local PFObject* pfpy_spare_callback;
#else
extern PFObject* pfpy_spare_callback;
#endif

/*! Wraps `callable` (borrowed) for an argument (`*out`, new ref): the spare wrapper when one is
 *  ready, else a new one (callback.c). Release with pfpy_temp_function_release. -1 + exception. */
int pfpy_callable_to_temp_function(PyObject* callable, PFObject** out);

/*! Puts a wrapper whose last reference is `fn` back in the slot. */
static inline void pfpy_recycle_callback(PFObject* fn) {
  PFFunctionObject* f = (PFFunctionObject*)fn;
  PyObject* callable = (PyObject*)f->self;
  f->self = NULL;
  pfpy_spare_callback = fn;
  Py_XDECREF(callable);
}

/*! Releases a Function made by pfpy_callable_to_temp_function (stolen reference): back to the
 *  slot if the slot is empty and the native side kept no reference to it. */
static inline void pfpy_temp_function_release(PFObject* fn) {
  if (pfpy_spare_callback == NULL && ((PFFunctionObject*)fn)->safe_call == &pfpy_callback_call &&
      __atomic_load_n(&fn->ref_count, __ATOMIC_ACQUIRE) == 1) {
    pfpy_recycle_callback(fn);
    return;
  }
  PFObjectDecRef(fn);
}

/*! The borrowing way in: the spare wrapper, now borrowing `callable` (the caller's argument vector
 *  keeps it alive for the whole call), or NULL when none is ready (the caller then takes the
 *  general path, which makes its own). Release with pfpy_callback_return. */
static inline PFObject* pfpy_callback_lend(PyObject* callable) {
  PFObject* fn = pfpy_spare_callback;
  if (PFPY_UNLIKELY(fn == NULL)) return NULL;
  pfpy_spare_callback = NULL;
  ((PFFunctionObject*)fn)->self = callable;
  return fn;
}

/*! Gives a lent wrapper that the native side kept (or that cannot go back) the reference to its
 *  callable it owns from now on, then drops the call's reference (callback.c). */
void pfpy_keep_borrowing_callback(PFObject* fn);

/*! The borrowing way out, after the call: back to the slot when the native side kept no
 *  reference (the count is back to 1: nobody else can hold or gain one) and the slot is empty,
 *  else the wrapper owns its callable from now on. */
static inline void pfpy_callback_return(PFObject* fn) {
  if (PFPY_LIKELY(__atomic_load_n(&fn->ref_count, __ATOMIC_ACQUIRE) == 1 &&
                  pfpy_spare_callback == NULL)) {
    ((PFFunctionObject*)fn)->self = NULL;
    pfpy_spare_callback = fn;
    return;
  }
  pfpy_keep_borrowing_callback(fn);
}

#endif /* PACKEDFUN_SRC_PYTHON_CALLBACK_H_ */
