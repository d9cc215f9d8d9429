/* Private header of the packedfun._core extension: its types and the helpers its files share. */
#ifndef PACKEDFUN_SRC_PYTHON_CORE_H_
#define PACKEDFUN_SRC_PYTHON_CORE_H_

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#include <packedfun/c_api.h>
#if defined(__linux__)
#include <pthread.h>
#endif
#if PY_VERSION_HEX < 0x030B0000
#include <longintrepr.h> /* PyLongObject's digits (3.11+ includes it from Python.h) */
#endif

#if defined(__GNUC__)
#define PFPY_LIKELY(x) __builtin_expect(!!(x), 1)
#define PFPY_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define PFPY_NOINLINE __attribute__((noinline))
#else
#define PFPY_LIKELY(x) (x)
#define PFPY_UNLIKELY(x) (x)
#define PFPY_NOINLINE
#endif

/* Arguments up to this count are converted into stack arrays (no heap allocation). */
#define PFPY_STACK_ARGS 8

/* ---- types (object.c, function.c) ------------------------------------------------------------ */

/*! packedfun.Object: a Python wrapper owning one reference to a native object. */
typedef struct {
  PyObject_HEAD PFObject* handle; /* owned reference; NULL for an empty wrapper */
  PyObject* weakrefs;             /* weak reference list */
} PFPyObject;

/*! packedfun.Array, List, Shape, Map and Dict: an Object that remembers the framework its tensor
 *  elements are read back as (tensor_return.c): 0 for packedfun.Tensor, else that of the call
 *  with a torch/NumPy argument that returned it (or of the container it was read from). */
typedef struct {
  PFPyObject base;
  int tensor_framework;
} PFPyContainer;

/*! packedfun.Function: an Object of kPFTypeFunction that is called through vectorcall. */
typedef struct {
  PFPyObject base;
  vectorcallfunc vectorcall; /* function_vectorcall, or the metadata-aware one */
  PyObject* name;            /* str, or NULL when unknown */
  PyObject* dict;            /* instance __dict__ (for __doc__, __qualname__, ...) */
  Py_ssize_t nparams;        /* parameters in `table`; -1 not loaded yet, -2 no table */
  Py_ssize_t nrequired;      /* leading parameters without a default (when nparams >= 0) */
  PyObject* table;           /* (names, defaults) from the metadata record, or NULL */
} PFPyFunction;

/*! Loads the (names, defaults) parameter table of `f` from its metadata record (function_kw.c):
 *  nparams becomes its size, or -2 when the record names no parameters. 0, or -1 + exception. */
int pfpy_function_load_table(PFPyFunction* f);

/*! Fills `full` (f->nparams borrowed slots; the table is loaded) from `args`, the keywords and
 *  the defaults (function_kw.c). 0, or -1 with Python's own TypeError (unknown keyword, ...). */
int pfpy_function_bind(PFPyFunction* f, PyObject* const* args, Py_ssize_t n, PyObject* kwnames,
                       PyObject** full);
/*! Tables up to this many parameters bind on the C stack, in the caller of the positional call. */
#define PFPY_BOUND_STACK 8

/*! Raises the TypeError for keyword `key`, which names no parameter of `f`; returns NULL. */
PyObject* pfpy_function_unexpected_keyword(PFPyFunction* f, PyObject* key);

/*! Puts "<where>: " in front of the reason of `exc` when it is a UnicodeEncodeError; 1 if so. */
int pfpy_prefix_unicode_reason(PyObject* exc, PyObject* where);
/*! Rewords the pending error of converting argument `pos` of `f` to name the parameter. */
void pfpy_function_name_argument_error(PFPyFunction* f, Py_ssize_t pos);
/*! Raises the native error of a failed call of `f` with arguments `args` (its full positional
 *  vector), naming a NumPy scalar argument by its type (function_kw.c). Returns NULL. */
PyObject* pfpy_function_call_error(PFPyFunction* f, PyObject* const* args, Py_ssize_t n);
/*! Drops the cached parameter table of `f` after its metadata changed. */
void pfpy_function_forget_signature(PFPyFunction* f);

extern PyTypeObject PFPyObject_Type;
extern PyTypeObject PFPyFunction_Type;
/*! Readies PFPyFunction_Type and installs its __signature__ descriptor (function.c). */
int pfpy_function_type_ready(void);

/*! Wraps `obj` (stolen; must be a Function) as a packedfun.Function named `name` (borrowed, may be
 *  NULL). Returns a new reference or NULL with an exception set (obj is released then too). */
PyObject* pfpy_function_new(PFObject* obj, PyObject* name);

/*! Wraps any native object (stolen): Functions as Function, Opaque objects made by this backend as
 *  the Python object they hold, others through the object factory or as plain Object. */
PyObject* pfpy_object_wrap(PFObject* obj);

/*! Makes `self` the wrapper that its (Python-defined, slot-type) object comes back as from native
 *  code, unless another live wrapper already is; nothing for other objects. */
void pfpy_object_bind(PFPyObject* self);

/*! Visits, for the GC, the Python objects that native object `obj` (borrowed, may be NULL) keeps
 *  alive when the calling wrapper is its only owner (object.c): none when it is shared. */
int pfpy_visit_owned(PFObject* obj, visitproc visit, void* arg);

/*! Drops `self`'s native object if `self` is its only owner (tp_clear: breaks a cycle through it).
 */
void pfpy_clear_owned(PFPyObject* self);

/*! Forgets the object-factory cache (object.c). */
void pfpy_object_factory_reset(void);

/*! The object factory (borrowed, may be NULL); set by set_object_factory. */
extern PyObject* pfpy_object_factory;

/* ---- conversion (convert.c) ------------------------------------------------------------------ */

/*! Scratch space for one call's arguments. `temps` collects owned objects made for the call. */
typedef struct {
  PFAny* args;
  PFByteArray* views; /* backing PFByteArray for StrView/BytesView args, one slot per arg */
  PFObject** temps;   /* objects to release after the call */
  int num_temps;
  int num_views;      /* container views among the args (container_view.c) */
  uint32_t view_args; /* arguments that may be container views (bit i: argument i); 0: none */
  PyObject* func;     /* the PFPyFunction called, when view_args is not 0 (borrowed) */
} PFPyArgs;

/*! Converts a Python int (borrowed) into kPFTypeInt, or kPFTypeUInt64 in [2**63, 2**64): 0 when
 *  converted, -1 with a Python exception, or PFPY_INT_TOO_LARGE / PFPY_INT_TOO_SMALL (no
 *  exception set; the messages INT_TOO_LARGE / INT_TOO_SMALL word it) when it fits neither. */
int pfpy_long_to_any(PyObject* o, PFAny* out);
#define PFPY_INT_TOO_LARGE 1
#define PFPY_INT_TOO_SMALL 2

/*! Stores a POD value in a PFAny (zero padding included). */
#define PFPY_SET_POD(any, tindex, field, value) \
  do {                                          \
    (any)->type_index = (tindex);               \
    (any)->zero_padding = 0;                    \
    (any)->field = (value);                     \
  } while (0)

/*! Stores a StrView/BytesView over `view` whose bytes the caller knows to end in a NUL (a str's
 *  UTF-8 or ASCII buffer, a bytes object's): a callee's c_str() then needs no copy. */
#define PFPY_SET_NUL_VIEW(any, tindex, view)             \
  do {                                                   \
    (any)->type_index = (tindex);                        \
    (any)->zero_padding = PACKEDFUN_VIEW_NUL_TERMINATED; \
    (any)->v_ptr = (view);                               \
  } while (0)

/*! A packedfun object argument (a PFPyObject or subtype, borrowed): its handle travels borrowed,
 *  the caller's reference keeping it alive for the call; an empty wrapper travels as None. */
static inline void pfpy_object_arg(PyObject* o, PFAny* out) {
  PFObject* h = ((PFPyObject*)o)->handle;
  if (h == NULL) {
    PFPY_SET_POD(out, kPFTypeNone, v_int64, 0);
  } else {
    out->type_index = h->type_index;
    out->zero_padding = 0;
    out->v_obj = h;
  }
}

/*! Reads an int of at most one internal digit (|value| < 2**30 before 3.12, a compact int after:
 *  nearly every int passed) straight from the object, sparing the call into
 *  PyLong_AsLongLongAndOverflow. 1 when it did. The one place the small-int read is written. */
static inline __attribute__((always_inline)) int pfpy_compact_int(PyObject* o, int64_t* out) {
#if PY_VERSION_HEX >= 0x030C0000
  if (!PyUnstable_Long_IsCompact((PyLongObject*)o)) return 0;
  *out = (int64_t)PyUnstable_Long_CompactValue((PyLongObject*)o);
  return 1;
#else
  Py_ssize_t size = Py_SIZE(o); /* digit count, negative for negative values */
  if (size < -1 || size > 1) return 0;
  *out = (int64_t)size * (int64_t)((PyLongObject*)o)->ob_digit[0];
  return 1;
#endif
}

/* ---- the conversion rule (convert.c) ------------------------------------------------------------
 * Every Python -> PFAny conversion of the binding (positional and keyword arguments, container
 * elements and keys, container views, callback and convert() results) is this one rule, in two
 * steps: the exact-type checks below, inline, then one setter per Python type, chosen by
 * pfpy_kind_of once per type and cached. What differs between those contexts is a flag or the
 * position passed to the setter, never the order of the types. */

/*! pfpy_exact_from_py flag: a short ASCII str (up to 7 bytes) becomes its own inline copy
 *  (kPFTypeSmallStr) rather than a view, for values that are stored (container elements) and must
 *  own their text anyway; arguments of a call take the view. */
#define PFPY_EXACT_SMALL_STR 1

/*! The first step of the rule: the exact types whose conversion runs no Python code, takes no
 *  reference and cannot fail (a compact int, float, ASCII str as a view over `view`, None, bool),
 *  tested by exact type in the order of their frequency. 1 when `o` was converted into `*out`, 0 to
 *  go on with pfpy_kind_of's setter (nothing was written then). `flags` is a constant at each
 *  call, so each inlined copy keeps only its own branches. */
static inline __attribute__((always_inline)) int pfpy_exact_from_py(PyObject* o, PFAny* out,
                                                                    PFByteArray* view, int flags) {
  PyTypeObject* t = Py_TYPE(o);
  if (t == &PyLong_Type) {
    int64_t value;
    if (PFPY_UNLIKELY(!pfpy_compact_int(o, &value))) return 0;
    PFPY_SET_POD(out, kPFTypeInt, v_int64, value);
  } else if (t == &PyFloat_Type) {
    PFPY_SET_POD(out, kPFTypeFloat, v_float64, PyFloat_AS_DOUBLE(o));
  } else if (t == &PyUnicode_Type && PyUnicode_IS_COMPACT_ASCII(o)) { /* ASCII is UTF-8 as is */
    const char* data = (const char*)PyUnicode_DATA(o);
    Py_ssize_t size = PyUnicode_GET_LENGTH(o);
    if ((flags & PFPY_EXACT_SMALL_STR) && size <= 7) {
      out->type_index = kPFTypeSmallStr;
      out->small_len = (uint32_t)size;
      out->v_int64 = 0;
      memcpy(out->v_bytes, data, (size_t)size);
      return 1;
    }
    view->data = data;
    view->size = (size_t)size;
    PFPY_SET_NUL_VIEW(out, kPFTypeStrView, view); /* the ASCII buffer ends in a NUL */
  } else if (o == Py_None) {
    PFPY_SET_POD(out, kPFTypeNone, v_int64, 0);
  } else if (t == &PyBool_Type) {
    PFPY_SET_POD(out, kPFTypeBool, v_int64, o == Py_True);
  } else {
    return 0;
  }
  return 1;
}

/*! The kinds of Python type the rule knows; pfpy_kind_of picks one per type. */
enum {
  PFPY_KIND_NONE,
  PFPY_KIND_BOOL,
  PFPY_KIND_INT,       /* int and subclasses (IntEnum) */
  PFPY_KIND_FLOAT,     /* float and subclasses */
  PFPY_KIND_STR,       /* str and subclasses, but packedfun.dtype */
  PFPY_KIND_BYTES,     /* bytes and bytearray, and subclasses */
  PFPY_KIND_OBJECT,    /* packedfun.Object and subclasses: the handle */
  PFPY_KIND_CONTAINER, /* list, tuple, dict and subclasses: Array / Map */
  PFPY_KIND_CALLABLE,  /* anything callable (not the above): a Function */
  PFPY_KIND_TENSOR,    /* arrays (NumPy, DLPack, torch), packedfun.dtype and device */
  PFPY_KIND_VOID_P,    /* ctypes.c_void_p: an opaque pointer */
  PFPY_KIND_NUMBER,    /* __index__ / numpy.bool_ / __float__ (NumPy scalars) */
  PFPY_KIND_OPAQUE,    /* everything else: an Opaque object holding it */
  PFPY_KIND_PROTOCOL,  /* a tvm-ffi conversion method (__tvm_ffi_object__, ...): _rules.protocols */
  PFPY_KIND_COUNT
};

/*! The kind of `t`: looked up in a small cache keyed on the type and its version tag (so a class
 *  changed after its first use is looked at again), decided on a miss. Never fails. */
int pfpy_kind_of(PyTypeObject* t);

/*! Forgets the decided kinds: called when the classes the rule tests by identity are set. */
void pfpy_kind_cache_reset(void);

/*! pfpy_arg_from_py_slow's `pos` for a container element: a stored value (owned results) whose
 *  errors carry a bare message that the container conversion prefixes with the element's path. */
#define PFPY_POS_ELEMENT ((Py_ssize_t) - 2)
/*! What a setter returns for PFPY_POS_ELEMENT when it raised a bare message (see above). */
#define PFPY_BARE_ERROR (-2)

/*! The second step: converts `o` (borrowed) into `pack->args[pos]` with the setter of its type's
 *  kind (the exact types of step one are taken too). `fname` (borrowed, may be NULL) names the
 *  function in error messages; `pos` -1 means a return value, PFPY_POS_ELEMENT an element. Returns
 *  0, or -1 (or PFPY_BARE_ERROR) with a Python exception. */
int pfpy_arg_from_py_slow(PyObject* o, PFPyArgs* pack, Py_ssize_t pos, PyObject* fname);

/*! The rule for one argument of a call: the exact types inline, the rest through its setter. */
static inline __attribute__((always_inline)) int pfpy_arg_from_py(PyObject* o, PFPyArgs* pack,
                                                                  Py_ssize_t pos, PyObject* fname) {
  Py_ssize_t slot = pos < 0 ? 0 : pos;
  if (PFPY_LIKELY(pfpy_exact_from_py(o, &pack->args[slot], &pack->views[slot], 0))) return 0;
  return pfpy_arg_from_py_slow(o, pack, pos, fname);
}

/*! Converts `o` (borrowed) by the rule into a value that outlives the call (`*out` owns what it
 *  holds), except that a str or bytes may stay a view over `view`, borrowing `o`'s buffer, when
 *  `keep_views` is set (the caller then owns it before `o` may go). `pos` as for the setters. */
int pfpy_value_from_py(PyObject* o, PFAny* out, PFByteArray* view, Py_ssize_t pos, int keep_views);

/*! Releases the temporaries of a call. */
void pfpy_args_release(PFPyArgs* pack);

/*! Converts an owned PFAny (stolen: `*v` is released and reset to None) into a new Python object.
 */
PyObject* pfpy_any_steal_to_py(PFAny* v);

/*! Converts a borrowed PFAny into a new Python object. */
PyObject* pfpy_any_view_to_py(const PFAny* v);

/*! Converts `o` (borrowed) into an owned PFAny (`*out` receives a new ref). Returns 0 or -1 with a
 *  Python exception set. */
int pfpy_any_from_py(PyObject* o, PFAny* out);

/*! The ctypes.c_void_p type if ctypes is imported, else NULL (borrowed). */
PyObject* pfpy_ctypes_void_p(void);

/* ---- callbacks and opaque objects (callback.c) ----------------------------------------------- */

/*! Wraps a Python callable (borrowed) as a new Function object (`*out`, new ref). -1 + exception.
 */
int pfpy_callable_to_function(PyObject* callable, PFObject** out);

/*! The safe_call of Functions wrapping Python callables; `self` is the callable. */
int pfpy_callback_call(void* self, const PFAny* args, int32_t num_args, PFAny* result);

/*! Makes an Opaque object owning a new reference to `o`. -1 with a Python exception on failure. */
int pfpy_opaque_new(PyObject* o, PFObject** out);

/*! The free_handle of Opaque objects made by this backend (identifies them). */
void pfpy_opaque_free(void* handle);

/*! Whether `obj` is an Opaque object made by this backend. */
static inline int pfpy_is_own_opaque(PFObject* obj) {
  return obj != NULL && obj->type_index == kPFTypeOpaque &&
         ((PFOpaqueObject*)obj)->free_handle == &pfpy_opaque_free;
}

/* ---- errors (error.c) ------------------------------------------------------------------------ */

/*! Raises the pending native error as a Python exception and returns NULL. `fname` (borrowed,
 *  may be NULL) is the function that failed. */
PyObject* pfpy_raise_native(PyObject* fname);

/* ---- message wording (messages.c): packedfun._rules.messages, shared with the ctypes binding --
 */

/*! The message template `name` of packedfun._rules.messages filled (str.format) with the values
 *  of the tuple Py_BuildValue makes of `format` ("()" for none, "(O)", "(si)", ...): a new str, or
 *  NULL with an exception set. */
PyObject* pfpy_message(const char* name, const char* format, ...);
/*! Raises `exc` (borrowed) with pfpy_message(name, format, ...); always returns NULL. */
PyObject* pfpy_raise_message(PyObject* exc, const char* name, const char* format, ...);

/*! Moves the current Python exception into the native error slot; returns -1. */
int pfpy_raise_python_as_native(void);

/*! The error factory (borrowed, may be NULL). */
extern PyObject* pfpy_error_factory;

/*! Raises TypeError/ValueError-style exceptions for argument `pos` of `fname`. */
PFPY_NOINLINE void pfpy_arg_error(PyObject* exc_type, PyObject* fname, Py_ssize_t pos,
                                  const char* what);

/* ---- strings --------------------------------------------------------------------------------- */

/*! Borrowed UTF-8 view of a str (cached in the str object). -1 with an exception on failure. */
static inline int pfpy_str_view(PyObject* s, PFByteArray* out) {
  Py_ssize_t size;
  const char* data = PyUnicode_AsUTF8AndSize(s, &size);
  if (data == NULL) return -1;
  out->data = data;
  out->size = (size_t)size;
  return 0;
}

/* ---- Python-version shims ---------------------------------------------------------------------
 */

/* CPython 3.11 keeps the GIL holder's thread state in a global read by a function and compares its
 * thread id with pthread_self(): two calls through the PLT on every callback. On x86-64 glibc
 * both are a load: the holder's slot (found once, gil_check.c) and the thread pointer. */
#if PY_VERSION_HEX < 0x030C0000 && defined(__x86_64__) && defined(__GLIBC__) && \
    (defined(__GNUC__) || defined(__clang__))
#define PFPY_INLINE_GIL_CHECK 1
/*! &_PyRuntime.gilstate.tstate_current, or NULL where it could not be verified (then not used). */
extern void* const volatile* pfpy_gil_holder_slot;

/*! pthread_self() on x86-64 glibc: the thread control block's address, read from %fs. */
static inline unsigned long pfpy_thread_pointer(void) {
  unsigned long tp;
  __asm__("mov %%fs:0, %0" : "=r"(tp));
  return tp;
}
#else
#define PFPY_INLINE_GIL_CHECK 0
#endif

/*! Looks up where the GIL holder is kept, for pfpy_gil_held (module init, the GIL held). */
void pfpy_gil_check_init(void);

#if PY_VERSION_HEX < 0x030C0000
/*! pfpy_gil_held through CPython's calls (gil_check.c): where the inline check is not available. */
int pfpy_gil_held_by_call(void);
#endif

/*! Whether the calling thread holds the GIL, without the thread-specific-storage lookups of
 *  PyGILState_Ensure/Check (callbacks called from Python code, the common case, hold it). */
static inline int pfpy_gil_held(void) {
#if PY_VERSION_HEX >= 0x030D0000
  return PyThreadState_GetUnchecked() != NULL; /* thread-local: NULL unless attached */
#elif PY_VERSION_HEX >= 0x030C0000
  return _PyThreadState_UncheckedGet() != NULL;
#else
#if PFPY_INLINE_GIL_CHECK
  void* const volatile* slot = pfpy_gil_holder_slot;
  if (PFPY_UNLIKELY(slot == NULL)) return pfpy_gil_held_by_call();
  PyThreadState* holder = (PyThreadState*)*slot;
  return holder != NULL && holder->thread_id == pfpy_thread_pointer();
#else
  return pfpy_gil_held_by_call();
#endif
#endif
}

/* ---- the GIL from any thread (gil.c) ----------------------------------------------------------
 */

/*! Whether Python can still run code (not finalizing, not finalized). */
int pfpy_python_alive(void);

/*! What pfpy_gil_enter took, for pfpy_gil_exit. */
typedef struct PFPyGil {
  PyThreadState* pinned;  /*!< the native thread's kept thread state, or NULL */
  PyGILState_STATE state; /*!< PyGILState_Ensure's answer when not pinned */
} PFPyGil;

/*! The thread state a native call on this thread released the GIL from (NULL when none): a
 *  callback made on the same thread takes the GIL straight back with it. */
extern _Thread_local PyThreadState* pfpy_released_tstate;

/*! Takes the GIL on a thread that does not hold it (a native thread, or a caller that released
 *  it). Returns 0, taking nothing, once the interpreter is finalizing: waiting then would end the
 *  thread inside native code. */
int pfpy_gil_enter(PFPyGil* gil);

/*! Gives back what pfpy_gil_enter took. */
void pfpy_gil_exit(PFPyGil* gil);

/*! Installs the runtime's lock and signal hooks (PFEnvSetLockHooks) backed by the GIL. */
void pfpy_install_env_hooks(void);

/*! Adds NativeNote, the C base of packedfun.error.NativeBacktrace, to the module (error.c). */
int pfpy_error_add_to_module(PyObject* m);

/*! Fetches and clears the current exception as one normalized object with its traceback set. */
PyObject* pfpy_fetch_exception(void);

/*! Raises `exc` (stolen) as the current exception, keeping its traceback. */
void pfpy_restore_exception(PyObject* exc);

/*! Module-level method tables of each file, merged by module.c. */
extern PyMethodDef pfpy_registry_methods[];
extern PyMethodDef pfpy_error_methods[];
extern PyMethodDef pfpy_convert_methods[];
/*! fast_construct (object_method.c). */
extern PyMethodDef pfpy_construct_methods[];
extern PyMethodDef pfpy_module_methods[]; /* module.c */
extern PyMethodDef pfpy_stream_methods[]; /* stream.c */

#endif /* PACKEDFUN_SRC_PYTHON_CORE_H_ */
