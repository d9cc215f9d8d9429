/* packedfun.Function: calls a native Function through vectorcall (the hot path of the package). */
#include "callback.h"
#include "container_view.h"
#include "core.h"
#include "tensor.h"

static PyObject* function_vectorcall(PyObject* self, PyObject* const* args, size_t nargsf,
                                     PyObject* kwnames);
static PyObject* function_vectorcall_meta(PyObject* self, PyObject* const* args, size_t nargsf,
                                          PyObject* kwnames);

/* Functions that describe themselves get the entry point that knows keywords and defaults; the
 * others keep the plain one, whose positional path has nothing to check. */
static vectorcallfunc vectorcall_for(const PFObject* obj) {
  unsigned flags = __atomic_load_n(&obj->flags, __ATOMIC_ACQUIRE);
  return (flags & PACKEDFUN_FUNCTION_FLAG_HAS_METADATA) ? function_vectorcall_meta
                                                        : function_vectorcall;
}

void pfpy_function_forget_signature(PFPyFunction* f) {
  f->nparams = -1;
  Py_CLEAR(f->table);
  if (f->base.handle != NULL) f->vectorcall = vectorcall_for(f->base.handle);
}

PyObject* pfpy_function_new(PFObject* obj, PyObject* name) {
  PFPyFunction* f = PyObject_GC_New(PFPyFunction, &PFPyFunction_Type);
  if (f == NULL) {
    PFObjectDecRef(obj);
    return NULL;
  }
  f->base.handle = obj;
  f->base.weakrefs = NULL;
  f->vectorcall = vectorcall_for(obj);
  Py_XINCREF(name);
  f->name = name;
  f->dict = NULL;
  f->nparams = -1;
  f->nrequired = 0;
  f->table = NULL;
  PyObject_GC_Track(f);
  return (PyObject*)f;
}

static PFPY_NOINLINE PyObject* kwargs_error(PFPyFunction* f) {
  if (f->name != NULL) {
    return pfpy_raise_message(PyExc_TypeError, "FUNCTION_NO_KEYWORD_ARGUMENTS", "(O)", f->name);
  }
  return pfpy_raise_message(PyExc_TypeError, "FUNCTION_NO_KEYWORD_ARGUMENTS_UNNAMED", "()");
}

/* ---- the GIL policy ----------------------------------------------------------------------------
 * A Function releases the GIL for its call unless its author declared it trivial (kPFGILHold), so
 * other Python threads run meanwhile and native threads it starts can call back into Python. The
 * flag is one load from the header the call reads anyway; the policy may change between calls. */

/* PFObjectIncRef/PFObjectDecRef inline, by the protocol c_api.h documents for PFObject (ref_count
 * touched only atomically, the deleter run at zero): the released call takes and drops a few
 * references on every call, and the exported functions cost a call each through the PLT. */
static inline __attribute__((always_inline)) void obj_incref(PFObject* obj) {
  __atomic_fetch_add(&obj->ref_count, 1, __ATOMIC_RELAXED);
}

static inline __attribute__((always_inline)) void obj_decref(PFObject* obj) {
  if (__atomic_sub_fetch(&obj->ref_count, 1, __ATOMIC_ACQ_REL) == 0 && obj->deleter != NULL) {
    obj->deleter(obj);
  }
}

/* Adds (+1) or drops (-1) a reference to each object argument. */
static void pin_args(const PFAny* args, int32_t n, int add) {
  for (int32_t i = 0; i < n; ++i) {
    if (args[i].type_index < kPFTypeStaticObjectBegin || args[i].v_obj == NULL) continue;
    if (add) {
      obj_incref(args[i].v_obj);
    } else {
      obj_decref(args[i].v_obj);
    }
  }
}

/* The released call: out of line, so the held path keeps few live registers. The Function is
 * kept alive across the call, since without the GIL another thread may clear `f`'s handle. Each
 * object argument gains a reference too: native code may mutate it while another thread's cycle
 * collection runs, and the collector walks only solely owned native objects (object.c), so an
 * argument counted twice is never read under the callee's feet. */
static PFPY_NOINLINE int call_released(PFFunctionObject* fo, const PFAny* args, int32_t n,
                                       PFAny* rv) {
  obj_incref(&fo->header);
  pin_args(args, n, 1);
  PyThreadState* ts = PyEval_SaveThread();
  PyThreadState* outer = pfpy_released_tstate; /* a callback on this thread takes `ts` back */
  pfpy_released_tstate = ts;
  int rc = fo->safe_call(fo->self, args, n, rv);
  pfpy_released_tstate = outer;
  PyEval_RestoreThread(ts);
  pin_args(args, n, 0);
  obj_decref(&fo->header);
  return rc;
}

/* Calls `fo` under its GIL policy. */
static inline __attribute__((always_inline)) int call_native(PFFunctionObject* fo,
                                                             const PFAny* args, int32_t n,
                                                             PFAny* rv) {
  if (__atomic_load_n(&fo->header.flags, __ATOMIC_RELAXED) & PACKEDFUN_FUNCTION_FLAG_GIL_HOLD) {
    return fo->safe_call(fo->self, args, n, rv);
  }
  return call_released(fo, args, n, rv);
}

/* The common POD results inline, the rest through pfpy_any_steal_to_py. */
static inline __attribute__((always_inline)) PyObject* result_to_py(PFAny* rv,
                                                                    PyObject* const* args,
                                                                    const PFAny* packed,
                                                                    Py_ssize_t n) {
  switch (rv->type_index) {
    case kPFTypeNone:
      Py_RETURN_NONE;
    case kPFTypeInt:
      return PyLong_FromLongLong(rv->v_int64);
    case kPFTypeFloat:
      return PyFloat_FromDouble(rv->v_float64);
    default:
      /* A Tensor or container result of a call that may pass a container remembering a
       * framework (an element read through a function): the arguments are looked at, cold. */
      if (PFPY_UNLIKELY((uint32_t)(rv->type_index - kPFTypeTensor) <=
                        (uint32_t)(kPFTypeDict - kPFTypeTensor)) &&
          pfpy_tensor_containers_remember && n != 0) {
        return pfpy_tensor_result_from_containers(rv, args, packed, n);
      }
      return pfpy_any_steal_to_py(rv);
  }
}

/* Container views read the caller's list or dict during the call, so no Python code may run
 * between a view's argument and the call: an argument whose conversion may run some (an
 * `__index__` that changes the list) first turns the views before it into the Arrays/Maps they
 * stand for. Every argument is then read as it was when its turn came, left to right, as under
 * the "release" policy (which takes no views) and on the ctypes backend. Cold: views are rare. */
static PFPY_NOINLINE int settle_before(PyObject* o, PFPyArgs* pack, Py_ssize_t i) {
  switch (pfpy_kind_of(Py_TYPE(o))) { /* the rule's own classification, cached per type */
    case PFPY_KIND_NONE:
    case PFPY_KIND_BOOL:
    case PFPY_KIND_INT:
    case PFPY_KIND_FLOAT:
    case PFPY_KIND_STR:
    case PFPY_KIND_BYTES:
    case PFPY_KIND_OBJECT:
      return 0; /* their setters read the object's own fields: no Python code runs */
    case PFPY_KIND_CONTAINER:
      if (pfpy_view_arg_wanted(pack, i)) return 0; /* another view: read later, like the first */
      break;
    default:
      break;
  }
  return pfpy_container_views_settle(pack, i);
}

/* Converts the arguments into `pack`, calls, releases the temporaries and converts the result. */
static inline __attribute__((always_inline)) PyObject* call_packed(PFPyFunction* f,
                                                                   PyObject* const* args,
                                                                   Py_ssize_t n, PFPyArgs* pack) {
  PFFunctionObject* fo = (PFFunctionObject*)f->base.handle;
  uint32_t flags = __atomic_load_n(&fo->header.flags, __ATOMIC_RELAXED);
  if (flags & PACKEDFUN_FUNCTION_FLAG_GIL_HOLD) { /* views are read under the GIL only */
    pack->view_args = flags >> PACKEDFUN_FUNCTION_VIEW_ARGS_SHIFT;
    pack->func = (PyObject*)f;
  }
  (void)pfpy_tensor_nested_take(); /* a note left by a conversion that failed is not this call's */
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (PFPY_UNLIKELY(pack->num_views != 0) && settle_before(args[i], pack, i) != 0) {
      pfpy_args_release(pack);
      return NULL;
    }
    if (PFPY_UNLIKELY(pfpy_arg_from_py(args[i], pack, i, f->name) != 0)) {
      pfpy_function_name_argument_error(f, i);
      pfpy_args_release(pack);
      return NULL;
    }
  }
  if (PFPY_UNLIKELY(pack->num_views != 0) &&
      !(__atomic_load_n(&fo->header.flags, __ATOMIC_RELAXED) & PACKEDFUN_FUNCTION_FLAG_GIL_HOLD)) {
    if (pfpy_container_views_settle(pack, n) != 0) { /* the policy changed meanwhile: cold */
      pfpy_args_release(pack);
      return NULL;
    }
  }
  PFAny rv;
  PFPY_SET_POD(&rv, kPFTypeNone, v_int64, 0);
  /* Tensor arguments (NumPy, DLPack, torch: always temps, never container views): their
   * framework's allocator and stream, and tensor results returned as they came. A call whose
   * temps are all views (a list read in place) has none: it skips both scans. */
  int tensors = pack->num_temps != pack->num_views;
  int nested = pfpy_tensor_nested_take(); /* an array met inside a list/dict argument */
  PFPyTensorEnv env;
  int has_env = tensors && pfpy_tensor_env_enter(args, n, pack, nested, &env);
  int rc = call_native(fo, pack->args, (int32_t)n, &rv);
  if (has_env) pfpy_tensor_env_exit(&env);
  if (PFPY_LIKELY(pack->num_temps == 0)) {
    if (PFPY_UNLIKELY(rc != 0)) return pfpy_function_call_error(f, args, n);
  } else {
    PyObject* failed = rc != 0 ? pfpy_function_call_error(f, args, n) : NULL;
    int fw = rc == 0 && tensors ? pfpy_tensor_result_framework(args, n, nested) : 0;
    PyObject* out = fw != 0 ? pfpy_tensor_result_to_py(&rv, fw, pack) : NULL;
    pfpy_args_release(pack);
    if (rc != 0 || fw != 0) return rc != 0 ? failed : out;
  }
  return result_to_py(&rv, args, pack->args, n);
}

/* A Function whose native function the GC cleared while breaking a cycle. */
static PFPY_NOINLINE PyObject* released_error(void) {
  return pfpy_raise_message(PyExc_ValueError, "FUNCTION_RELEASED", "()");
}

/* The general call: every call the positional path below leaves out (keywords to a Function
 * that takes none, many arguments, arguments that need temporaries, views of tuples and dicts, or
 * can fail to convert), through the conversion rule into a pack. One of the two ways into a native
 * call. */
static PFPY_NOINLINE PyObject* call_general(PFPyFunction* f, PyObject* const* args, Py_ssize_t n,
                                            PyObject* kwnames) {
  if (PFPY_UNLIKELY(f->base.handle == NULL)) return released_error();
  if (PFPY_UNLIKELY(kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0)) return kwargs_error(f);
  if (n <= PFPY_STACK_ARGS) {
    PFAny stack[PFPY_STACK_ARGS];
    PFByteArray views[PFPY_STACK_ARGS];
    PFObject* temps[PFPY_STACK_ARGS];
    PFPyArgs pack = {stack, views, temps, 0, 0, 0, NULL};
    return call_packed(f, args, n, &pack);
  }
  size_t bytes = (size_t)n * (sizeof(PFAny) + sizeof(PFByteArray) + sizeof(PFObject*));
  char* block = (char*)PyMem_Malloc(bytes);
  if (block == NULL) return PyErr_NoMemory();
  PFPyArgs pack = {(PFAny*)block,
                   (PFByteArray*)(block + (size_t)n * sizeof(PFAny)),
                   (PFObject**)(block + (size_t)n * (sizeof(PFAny) + sizeof(PFByteArray))),
                   0,
                   0,
                   0,
                   NULL};
  PyObject* result = call_packed(f, args, n, &pack);
  PyMem_Free(block);
  return result;
}

/* Up to this many arguments, calls whose arguments are all int/float/None/bool/ASCII str (and at
 * most one Python function, when a recycled wrapper is ready) take the fast path: no conversion
 * can fail there, hence few live registers and little cleanup. */
#define PFPY_FAST_ARGS 4

/* Whether `o` is a packedfun.Object (any subclass): PyObject_TypeCheck's walk of the MRO, inline,
 * so the caller's loop makes no call (its values stay in scratch registers). The MRO of an
 * instance's type is always set; a type without one is simply not taken here. */
static inline __attribute__((always_inline)) int is_object(PyObject* o) {
  PyTypeObject* t = Py_TYPE(o);
  if (t == &PFPyObject_Type || t == &PFPyFunction_Type) return 1;
  PyObject* mro = t->tp_mro;
  if (mro == NULL) return 0;
  for (Py_ssize_t k = 1; k < PyTuple_GET_SIZE(mro); ++k) {
    if (PyTuple_GET_ITEM(mro, k) == (PyObject*)&PFPyObject_Type) return 1;
  }
  return 0;
}

/* The fast path of one argument: 1 when `o` was converted into `out`, 0 to leave the call to
 * call_with_(lone_)object(s) or call_general (nothing was allocated, so starting over there is
 * free of side effects). The rule's exact types, then a packedfun object (a Tensor, a reflected
 * object, a Function made by convert(): borrowed, no temp, cannot fail), tested after the POD
 * kinds so that their path is unchanged. A Python function goes to call_with_objects, which lends
 * it the recycled wrapper; a Tensor whose handle was cleared to call_general. */
static inline __attribute__((always_inline)) int fast_arg(PyObject* o, PFAny* out,
                                                          PFByteArray* view) {
  if (PFPY_LIKELY(pfpy_exact_from_py(o, out, view, 0))) return 1;
  PyTypeObject* t = Py_TYPE(o);
  if (t == &PyFunction_Type) return 0;
  if (t == &PFPyTensor_Type ? ((PFPyObject*)o)->handle == NULL : !is_object(o)) return 0;
  pfpy_object_arg(o, out);
  return 1;
}

/* The native call of call_with_objects and call_with_lone_object once their pack is made: the
 * release of the lent callback `temp` (NULL when none), and the result (None, what callbacks
 * return, without the generic converter). `views`: the pack lends lists in place (stack views),
 * which are read under the GIL only, so the call keeps it whatever the policy became meanwhile
 * (views were made only under "hold"), and a failure is reported as call_general reports it.
 * Inlined into both. */
static inline __attribute__((always_inline)) PyObject* call_packed_objects(
    PFPyFunction* f, PyObject* const* args, PFAny* packed, int32_t n, PFObject* temp, int views) {
  PFFunctionObject* fo = (PFFunctionObject*)f->base.handle;
  if (PFPY_UNLIKELY(fo == NULL)) {
    if (temp != NULL) pfpy_callback_return(temp);
    return released_error();
  }
  PFAny rv;
  PFPY_SET_POD(&rv, kPFTypeNone, v_int64, 0);
  int rc = views ? fo->safe_call(fo->self, packed, n, &rv) : call_native(fo, packed, n, &rv);
  if (temp != NULL) pfpy_callback_return(temp);
  if (PFPY_UNLIKELY(rc != 0)) {
    return views ? pfpy_function_call_error(f, args, n) : pfpy_raise_native(f->name);
  }
  if (PFPY_LIKELY(rv.type_index == kPFTypeNone)) Py_RETURN_NONE;
  return result_to_py(&rv, args, packed, n);
}

/* Whether the exact list `o` goes as argument `i` as a view in the caller's frame: its Function
 * keeps the GIL held (read once, here: no Python code runs between this and the call) and asked
 * for a view there. */
static inline __attribute__((always_inline)) int stack_view_wanted(PyObject* o, uint32_t views,
                                                                   Py_ssize_t i) {
  return Py_IS_TYPE(o, &PyList_Type) && ((views >> i) & 1u);
}

/* The arguments that may be views in the caller's frame: bit i for argument i, none unless the
 * Function keeps the GIL held. */
static inline __attribute__((always_inline)) uint32_t stack_views_allowed(PFPyFunction* f) {
  PFObject* h = f->base.handle;
  if (h == NULL) return 0;
  uint32_t flags = __atomic_load_n(&h->flags, __ATOMIC_RELAXED);
  return (flags & PACKEDFUN_FUNCTION_FLAG_GIL_HOLD) ? flags >> PACKEDFUN_FUNCTION_VIEW_ARGS_SHIFT
                                                    : 0;
}

/* A call with a Python function or a list among its arguments (C++ calling a callback it
 * receives; a list read in place by a std::vector or Array of numbers): the function travels in
 * the recycled wrapper when one is ready, a list as a view whose record is in this frame (the
 * Function asked for one and keeps the GIL held), the other arguments as on the fast path;
 * anything else (a second function, an argument fast_arg does not take) starts over in
 * call_general. The pack is redone here from the first argument (those before were POD or
 * objects, cheap), so the entry point hands over nothing but its own arguments. */
static PFPY_NOINLINE PyObject* call_with_objects(PFPyFunction* f, PyObject* const* args,
                                                 Py_ssize_t n) {
  PFAny packed[PFPY_FAST_ARGS];
  PFByteArray views[PFPY_FAST_ARGS];
  PFPyViewTemp lists[PFPY_FAST_ARGS];
  if (n < 1 || n > PFPY_FAST_ARGS) __builtin_unreachable(); /* one of them did not pass fast_arg */
  uint32_t allowed = stack_views_allowed(f);
  int any_view = 0;
  PFObject* temp = NULL; /* at most one Python function argument */
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* o = args[i];
    if (Py_IS_TYPE(o, &PyFunction_Type)) {
      if (temp != NULL || (temp = pfpy_callback_lend(o)) == NULL) goto general;
      packed[i].type_index = kPFTypeFunction;
      packed[i].zero_padding = 0;
      packed[i].v_obj = temp;
    } else if (stack_view_wanted(o, allowed, i)) {
      pfpy_stack_view_arg(o, (PyObject*)f, i, &lists[i], &packed[i]);
      any_view = 1;
    } else if (!fast_arg(o, &packed[i], &views[i])) {
      goto general;
    }
  }
  return call_packed_objects(f, args, packed, (int32_t)n, temp, any_view);
general:
  if (temp != NULL) pfpy_callback_return(temp);
  return call_general(f, args, n, NULL);
}

/* A lone argument the plain fast path does not take: a Python function (C++ calling the callback
 * it receives) lent the recycled wrapper, or a list lent in place (a std::vector or Array of
 * numbers), in a small frame; anything else to call_general. */
static PFPY_NOINLINE PyObject* call_with_lone_object(PFPyFunction* f, PyObject* const* args) {
  PyObject* o = args[0];
  PFAny arg;
  if (stack_view_wanted(o, stack_views_allowed(f), 0)) {
    PFPyViewTemp list;
    pfpy_stack_view_arg(o, (PyObject*)f, 0, &list, &arg);
    return call_packed_objects(f, args, &arg, 1, NULL, 1);
  }
  PFObject* temp;
  if (!Py_IS_TYPE(o, &PyFunction_Type) || PFPY_UNLIKELY((temp = pfpy_callback_lend(o)) == NULL)) {
    return call_general(f, args, 1, NULL);
  }
  arg.type_index = kPFTypeFunction;
  arg.zero_padding = 0;
  arg.v_obj = temp;
  return call_packed_objects(f, args, &arg, 1, temp, 0);
}

/* The positional call, the other way into a native call: POD arguments and packedfun objects
 * straight into a stack pack, a lent callback through call_with_(lone_)object(s), anything else
 * to call_general.
 * Inlined into both vectorcall entries below and into the binder. */
static inline __attribute__((always_inline)) PyObject* positional_call(PFPyFunction* f,
                                                                       PyObject* const* args,
                                                                       Py_ssize_t n) {
  if (PFPY_UNLIKELY(n > PFPY_FAST_ARGS)) return call_general(f, args, n, NULL);
  PFAny packed[PFPY_FAST_ARGS];
  PFByteArray views[PFPY_FAST_ARGS];
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (PFPY_UNLIKELY(!fast_arg(args[i], &packed[i], &views[i]))) {
      return n == 1 ? call_with_lone_object(f, args) : call_with_objects(f, args, n);
    }
  }
  /* Checked after the conversions (which own nothing): fewer registers live across the loop. */
  PFFunctionObject* fo = (PFFunctionObject*)f->base.handle;
  if (PFPY_UNLIKELY(fo == NULL)) return released_error();
  PFAny rv;
  PFPY_SET_POD(&rv, kPFTypeNone, v_int64, 0);
  if (PFPY_UNLIKELY(call_native(fo, packed, (int32_t)n, &rv) != 0)) {
    return pfpy_raise_native(f->name);
  }
  return result_to_py(&rv, args, packed, n);
}

static PyObject* function_vectorcall(PyObject* self, PyObject* const* args, size_t nargsf,
                                     PyObject* kwnames) {
  PFPyFunction* f = (PFPyFunction*)self;
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  if (PFPY_UNLIKELY(kwnames != NULL)) return call_general(f, args, n, kwnames);
  return positional_call(f, args, n);
}

/* The binder: keywords, defaults to fill, and the first call of a described Function (nparams
 * still -1: its table is loaded here) become the full positional vector, bound in function_kw.c
 * on the C stack (the heap past PFPY_BOUND_STACK parameters), then the positional call inline.
 * Out of line, so that the exact positional call keeps its registers. The table (and the
 * defaults the vector borrows) is held across the call, which may run Python code that replaces
 * the metadata. */
static PFPY_NOINLINE PyObject* call_bound(PFPyFunction* f, PyObject* const* args, Py_ssize_t n,
                                          PyObject* kwnames) {
  if (PFPY_UNLIKELY(f->base.handle == NULL)) return released_error();
  if (f->nparams == -1 && pfpy_function_load_table(f) != 0) return NULL;
  Py_ssize_t np = f->nparams;
  if (np < 0) { /* a record without parameters: positional calls as they come */
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0) {
      return pfpy_function_unexpected_keyword(f, PyTuple_GET_ITEM(kwnames, 0));
    }
    return positional_call(f, args, n);
  }
  if (kwnames == NULL && n == np) return positional_call(f, args, n);
  PyObject* stack[PFPY_BOUND_STACK];
  PyObject** full = np <= PFPY_BOUND_STACK ? stack : PyMem_Malloc((size_t)np * sizeof(PyObject*));
  if (full == NULL) return PyErr_NoMemory();
  PyObject* table = Py_NewRef(f->table);
  int bound;
  if (kwnames == NULL && n >= f->nrequired && n < np) { /* trailing defaults only */
    PyObject* defaults = PyTuple_GET_ITEM(table, 1);
    Py_ssize_t i = 0;
    for (; i < n; ++i) full[i] = args[i];
    for (; i < np; ++i) full[i] = PyTuple_GET_ITEM(defaults, i);
    bound = 0;
  } else {
    bound = pfpy_function_bind(f, args, n, kwnames, full);
  }
  PyObject* result = bound == 0 ? positional_call(f, full, np) : NULL;
  Py_DECREF(table);
  if (full != stack) PyMem_Free(full);
  return result;
}

/* The entry point of a described Function: a call passing exactly its parameters positionally is
 * the plain one; everything else goes through the binder. */
static PyObject* function_vectorcall_meta(PyObject* self, PyObject* const* args, size_t nargsf,
                                          PyObject* kwnames) {
  PFPyFunction* f = (PFPyFunction*)self;
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  if (PFPY_LIKELY(kwnames == NULL && n == f->nparams)) return positional_call(f, args, n);
  return call_bound(f, args, n, kwnames);
}

/* ---- the type ----------------------------------------------------------------------------------
 */

/* Function(callable): wraps a Python callable (a Function comes back as itself). */
/* An instance of a subclass of Function: empty (calls raise "released") until its __init__ gives
 * it a native Function with __move_handle_from__; the subclass's own __init__ takes the arguments.
 */
static PFPY_NOINLINE PyObject* function_new_empty(PyTypeObject* type) {
  PFPyFunction* f = (PFPyFunction*)type->tp_alloc(type, 0); /* zeroed: no handle, no name */
  if (f == NULL) return NULL;
  f->vectorcall = function_vectorcall;
  f->nparams = -1;
  return (PyObject*)f;
}

static PyObject* function_new(PyTypeObject* type, PyObject* args, PyObject* kwds) {
  if (type != &PFPyFunction_Type) return function_new_empty(type);
  PyObject* callable;
  if ((kwds != NULL && PyDict_Size(kwds) != 0) ||
      !PyArg_ParseTuple(args, "O:Function", &callable)) {
    if (!PyErr_Occurred()) pfpy_raise_message(PyExc_TypeError, "NO_KEYWORDS", "(s)", "Function");
    return NULL;
  }
  if (PyObject_TypeCheck(callable, &PFPyFunction_Type)) {
    Py_INCREF(callable);
    return callable;
  }
  if (!PyCallable_Check(callable)) {
    return pfpy_raise_message(PyExc_TypeError, "FUNCTION_NOT_CALLABLE", "(s)",
                              Py_TYPE(callable)->tp_name);
  }
  PFObject* obj = NULL;
  if (pfpy_callable_to_function(callable, &obj) != 0) return NULL;
  return pfpy_function_new(obj, NULL);
}

static int function_traverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(((PFPyFunction*)self)->dict);
  Py_VISIT(((PFPyFunction*)self)->table);
  return pfpy_visit_owned(((PFPyFunction*)self)->base.handle, visit, arg);
}

static int function_clear(PyObject* self) {
  PFPyFunction* f = (PFPyFunction*)self;
  Py_CLEAR(f->dict);
  Py_CLEAR(f->table);
  pfpy_clear_owned(&f->base); /* breaks a cycle through the callable */
  return 0;
}

static void function_dealloc(PyObject* self) {
  PFPyFunction* f = (PFPyFunction*)self;
  PyObject_GC_UnTrack(self);
  if (f->base.weakrefs != NULL) PyObject_ClearWeakRefs(self);
  Py_CLEAR(f->dict);
  Py_CLEAR(f->table);
  Py_CLEAR(f->name);
  PFObject* h = f->base.handle;
  f->base.handle = NULL;
  PFObjectDecRef(h);
  Py_TYPE(self)->tp_free(self); /* a subclass's type reference: subtype_dealloc drops it */
}

/* The Python callable wrapped by `f`, if it wraps one (borrowed), else NULL. */
static PyObject* wrapped_callable(PFPyFunction* f) {
  PFFunctionObject* fo = (PFFunctionObject*)f->base.handle;
  return fo != NULL && fo->safe_call == &pfpy_callback_call ? (PyObject*)fo->self : NULL;
}

static PyObject* function_repr(PyObject* self) {
  PFPyFunction* f = (PFPyFunction*)self;
  unsigned long long at = (unsigned long long)(uintptr_t)f->base.handle;
  if (f->name != NULL) return pfpy_message("FUNCTION_REPR_NAMED", "(OK)", f->name, at);
  PyObject* callable = wrapped_callable(f);
  if (callable != NULL) return pfpy_message("FUNCTION_REPR_WRAPPING", "(OK)", callable, at);
  return pfpy_message("FUNCTION_REPR", "(K)", at);
}

static PyObject* function_get_name(PyObject* self, void* closure) {
  (void)closure;
  PFPyFunction* f = (PFPyFunction*)self;
  if (f->dict != NULL) {
    PyObject* name = PyDict_GetItemString(f->dict, "__name__");
    if (name != NULL) {
      Py_INCREF(name);
      return name;
    }
  }
  if (f->name != NULL) {
    Py_INCREF(f->name);
    return f->name;
  }
  PyObject* callable = wrapped_callable(f);
  if (callable != NULL) return PyObject_GetAttrString(callable, "__name__");
  return PyUnicode_FromString("Function");
}

static int function_set_name(PyObject* self, PyObject* value, void* closure) {
  (void)closure;
  PFPyFunction* f = (PFPyFunction*)self;
  if (value != NULL && !PyUnicode_Check(value)) {
    pfpy_raise_message(PyExc_TypeError, "FUNCTION_NAME_NOT_STR", "()");
    return -1;
  }
  if (f->dict == NULL) {
    f->dict = PyDict_New();
    if (f->dict == NULL) return -1;
  }
  if (value == NULL) return PyDict_DelItemString(f->dict, "__name__");
  return PyDict_SetItemString(f->dict, "__name__", value);
}

/* __doc__ of an instance: what it was given (init_ffi_api, Module), else what
 * packedfun._rules.signature.function_doc finds (registry docstring, metadata record, wrapped
 * callable), else the class docstring. Cold: help() and autodoc read it, calls never do. */
static PFPY_NOINLINE PyObject* function_get_doc(PyObject* self, void* closure) {
  (void)closure;
  PFPyFunction* f = (PFPyFunction*)self;
  if (f->dict != NULL) {
    PyObject* doc = PyDict_GetItemString(f->dict, "__doc__");
    if (doc != NULL) return Py_NewRef(doc);
  }
  PyObject* mod = PyImport_ImportModule("packedfun._rules.signature");
  PyObject* doc = mod != NULL ? PyObject_CallMethod(mod, "function_doc", "O", self) : NULL;
  Py_XDECREF(mod);
  if (doc != Py_None) return doc;
  Py_DECREF(doc);
  return PyObject_GetAttrString((PyObject*)Py_TYPE(self), "__doc__");
}

static int function_set_doc(PyObject* self, PyObject* value, void* closure) {
  (void)closure;
  PFPyFunction* f = (PFPyFunction*)self;
  if (f->dict == NULL) {
    f->dict = PyDict_New();
    if (f->dict == NULL) return -1;
  }
  if (value == NULL) {
    if (PyDict_DelItemString(f->dict, "__doc__") != 0) PyErr_Clear();
    return 0;
  }
  return PyDict_SetItemString(f->dict, "__doc__", value);
}

static PyObject* function_get_registry_name(PyObject* self, void* closure) {
  (void)closure;
  PyObject* name = ((PFPyFunction*)self)->name;
  if (name == NULL) Py_RETURN_NONE;
  Py_INCREF(name);
  return name;
}

static PyObject* function_get_py_callable(PyObject* self, void* closure) {
  (void)closure;
  PyObject* callable = wrapped_callable((PFPyFunction*)self);
  if (callable == NULL) Py_RETURN_NONE;
  Py_INCREF(callable);
  return callable;
}

/* packedfun._rules.signature.<helper>(self): the signature attributes are derived in Python from
 * the metadata record, once per access (tools read them, calls never do). */
static PyObject* signature_helper(PyObject* self, const char* helper) {
  PyObject* mod = PyImport_ImportModule("packedfun._rules.signature");
  if (mod == NULL) return NULL;
  PyObject* result = PyObject_CallMethod(mod, helper, "O", self);
  Py_DECREF(mod);
  return result;
}

static PyObject* function_get_signature(PyObject* self, void* closure) {
  (void)closure;
  return signature_helper(self, "function_signature");
}

static PyObject* function_get_text_signature(PyObject* self, void* closure) {
  (void)closure;
  return signature_helper(self, "text_signature_of");
}

/* Function.__signature__ is this descriptor rather than a getset: read on the class, a getset
 * returns itself, and inspect.signature(Function) (help(), Sphinx autodoc) then fails on that
 * object. Read on the class it gives None, so inspect falls back to the constructor's text
 * signature; read on an instance, the signature from the metadata record ((*args) without one:
 * packedfun._rules.signature.function_signature). Read-only either way. */
static PyObject* signature_descr_get(PyObject* self, PyObject* obj, PyObject* type) {
  (void)self;
  (void)type;
  if (obj == NULL || obj == Py_None) Py_RETURN_NONE;
  return function_get_signature(obj, NULL);
}

static int signature_descr_set(PyObject* self, PyObject* obj, PyObject* value) {
  (void)self;
  (void)obj;
  (void)value;
  pfpy_raise_message(PyExc_AttributeError, "FUNCTION_SIGNATURE_READ_ONLY", "()");
  return -1;
}

static PyTypeObject signature_descr_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "packedfun._core._SignatureDescriptor",
    .tp_basicsize = sizeof(PyObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The inspect.Signature from the metadata record, or None.",
    .tp_descr_get = signature_descr_get,
    .tp_descr_set = signature_descr_set,
    .tp_new = PyType_GenericNew,
};

int pfpy_function_type_ready(void) {
  if (PyType_Ready(&signature_descr_type) < 0 || PyType_Ready(&PFPyFunction_Type) < 0) return -1;
  PyObject* descr = PyObject_CallNoArgs((PyObject*)&signature_descr_type);
  if (descr == NULL) return -1;
  int rc = PyDict_SetItemString(PFPyFunction_Type.tp_dict, "__signature__", descr);
  Py_DECREF(descr);
  PyType_Modified(&PFPyFunction_Type);
  return rc;
}

static PyObject* function_get_gil_policy(PyObject* self, void* closure) {
  (void)closure;
  PFObject* h = ((PFPyFunction*)self)->base.handle;
  if (h == NULL) return released_error();
  int32_t policy = kPFGILRelease;
  if (PFFunctionGetGILPolicy(h, &policy) != 0) return pfpy_raise_native(NULL);
  return PyUnicode_FromString(policy == kPFGILHold ? "hold" : "release");
}

static int function_set_gil_policy(PyObject* self, PyObject* value, void* closure) {
  (void)closure;
  PFObject* h = ((PFPyFunction*)self)->base.handle;
  if (value == NULL || !PyUnicode_Check(value)) {
    pfpy_raise_message(PyExc_TypeError, "GIL_POLICY_NOT_STR", "()");
    return -1;
  }
  int32_t policy = PyUnicode_CompareWithASCIIString(value, "hold") == 0      ? kPFGILHold
                   : PyUnicode_CompareWithASCIIString(value, "release") == 0 ? kPFGILRelease
                                                                             : -1;
  if (policy < 0) {
    pfpy_raise_message(PyExc_ValueError, "GIL_POLICY_UNKNOWN", "(O)", value);
    return -1;
  }
  if (h == NULL) {
    released_error();
    return -1;
  }
  if (PFFunctionSetGILPolicy(h, policy) != 0) {
    pfpy_raise_native(NULL);
    return -1;
  }
  return 0;
}

static PyGetSetDef function_getset[] = {
    {"gil_policy", function_get_gil_policy, function_set_gil_policy,
     "What a call does with the GIL: 'release' (the default: other threads run, native threads "
     "may call back) or 'hold' (trivial functions). Setting it changes the native Function for "
     "every holder.",
     NULL},
    {"__text_signature__", function_get_text_signature, NULL,
     "'(a, b=2)' from the metadata record, '(*args)' without one.", NULL},
    {"__name__", function_get_name, function_set_name, "Name of the function.", NULL},
    {"__doc__", function_get_doc, function_set_doc, NULL, NULL},
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {"registry_name", function_get_registry_name, NULL,
     "The global name this Function was looked up by, or None.", NULL},
    {"py_callable", function_get_py_callable, NULL,
     "The Python callable this Function wraps, or None.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

/* same_as(other): the same native Function, or `other` is the Python callable this Function wraps
 * (a function registered from Python is the same function as the one it was registered from). */
static PyObject* function_same_as(PyObject* self, PyObject* other) {
  if (!PyObject_TypeCheck(other, &PFPyObject_Type)) {
    PyObject* callable = wrapped_callable((PFPyFunction*)self);
    return PyBool_FromLong(callable != NULL && callable == other);
  }
  PFObject* h = ((PFPyObject*)self)->handle;
  return PyBool_FromLong(self == other || (h != NULL && h == ((PFPyObject*)other)->handle));
}

/* A Function over a tvm-ffi C function's address, built by the runtime's global `global` (the
 * tvm-ffi bridge): the binding only hands it the address and keep_alive_object as an Opaque, which
 * the Function then owns (a list would otherwise convert to an Array, a copy kept alive). */
static PyObject* function_from_address(PyObject* args, PyObject* kwargs, const char* global,
                                       const char* format) {
  static char* keywords[] = {"", "keep_alive_object", NULL};
  PyObject *address, *keep = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, keywords, &address, &keep)) return NULL;
  PFAny argv[2] = {{0}, {0}};
  PFObject* func = NULL;
  PFByteArray key = {global, strlen(global)};
  if (PFFunctionGetGlobal(&key, &func) != 0) return pfpy_raise_native(NULL);
  if (func == NULL) return pfpy_raise_message(PyExc_RuntimeError, "TVM_FFI_INTEROP_MISSING", "()");
  PyObject* out = NULL;
  if (pfpy_any_from_py(address, &argv[0]) == 0 &&
      (keep == Py_None || pfpy_opaque_new(keep, &argv[1].v_obj) == 0)) {
    if (keep != Py_None) argv[1].type_index = kPFTypeOpaque;
    PFAny result = {0};
    if (PFFunctionCall(func, argv, 2, &result) != 0) {
      pfpy_raise_native(NULL);
    } else {
      out = pfpy_any_steal_to_py(&result);
    }
  }
  PFAnyRelease(&argv[0]);
  PFAnyRelease(&argv[1]);
  PFObjectDecRef(func);
  return out;
}

static PyObject* function_from_extern_c(PyObject* cls, PyObject* args, PyObject* kwargs) {
  (void)cls;
  return function_from_address(args, kwargs, "packedfun.tvm_ffi_function_from_safe_call",
                               "O|$O:__from_extern_c__");
}

static PyObject* function_from_mlir_packed(PyObject* cls, PyObject* args, PyObject* kwargs) {
  (void)cls;
  return function_from_address(args, kwargs, "packedfun.tvm_ffi_function_from_mlir_packed",
                               "O|$O:__from_mlir_packed_safe_call__");
}

/* __move_handle_from__(other): `self` takes `other`'s native Function (and the name it was looked
 * up by); `other` is left empty. How a subclass instance (function_new_empty) gets its function. */
static PyObject* function_move_handle_from(PyObject* self, PyObject* other) {
  if (!PyObject_TypeCheck(other, &PFPyFunction_Type)) {
    return pfpy_raise_message(PyExc_TypeError, "MOVE_HANDLE_NOT_FUNCTION", "(s)",
                              Py_TYPE(other)->tp_name);
  }
  if (other == self) Py_RETURN_NONE;
  PFPyFunction *f = (PFPyFunction*)self, *o = (PFPyFunction*)other;
  PFObject* old = f->base.handle;
  f->base.handle = o->base.handle;
  o->base.handle = NULL;
  Py_XSETREF(f->name, o->name);
  o->name = NULL;
  pfpy_function_forget_signature(o);
  pfpy_function_forget_signature(f); /* the vectorcall of its new function's metadata */
  if (f->base.handle == NULL) f->vectorcall = function_vectorcall;
  PFObjectDecRef(old);
  Py_RETURN_NONE;
}

static PyMethodDef function_methods[] = {
    {"__move_handle_from__", function_move_handle_from, METH_O,
     "Takes `other`'s native Function: this Function calls it from now on, `other` is left "
     "empty. A subclass's __init__ gives its instance a function this way."},
    {"same_as", function_same_as, METH_O,
     "Whether `other` is the same native Function, or the Python callable it wraps."},
    {"is_", function_same_as, METH_O, "same_as (apache-tvm-ffi's name)."},
    {"__from_extern_c__", (PyCFunction)(void (*)(void))function_from_extern_c,
     METH_CLASS | METH_VARARGS | METH_KEYWORDS,
     "__from_extern_c__(c_symbol, *, keep_alive_object=None)\n--\n\n"
     "A Function calling the tvm-ffi safe call at address `c_symbol` (which ignores its handle "
     "argument); the Function keeps `keep_alive_object` alive."},
    {"__from_mlir_packed_safe_call__", (PyCFunction)(void (*)(void))function_from_mlir_packed,
     METH_CLASS | METH_VARARGS | METH_KEYWORDS,
     "__from_mlir_packed_safe_call__(mlir_packed_symbol, *, keep_alive_object=None)\n--\n\n"
     "A Function calling the MLIR packed call at address `mlir_packed_symbol` (a tvm-ffi safe "
     "call's arguments and return code as one array of pointers); the Function keeps "
     "`keep_alive_object` alive."},
    {NULL, NULL, 0, NULL}};

PyTypeObject PFPyFunction_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "packedfun.Function",
    .tp_basicsize = sizeof(PFPyFunction),
    .tp_dealloc = function_dealloc,
    .tp_vectorcall_offset = offsetof(PFPyFunction, vectorcall),
    .tp_repr = function_repr,
    .tp_call = PyVectorcall_Call,
    .tp_flags =
        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_BASETYPE,
    .tp_doc =
        "Function(callable)\n--\n\nA packed function: a native function of any language "
        "called with positional arguments. Function(callable) wraps a Python callable.",
    .tp_traverse = function_traverse,
    .tp_clear = function_clear,
    .tp_weaklistoffset = offsetof(PFPyFunction, base.weakrefs),
    .tp_getset = function_getset,
    .tp_methods = function_methods,
    .tp_base = &PFPyObject_Type,
    .tp_dictoffset = offsetof(PFPyFunction, dict),
    .tp_new = function_new,
};
