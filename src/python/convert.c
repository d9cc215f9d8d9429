/* Conversion between Python objects and PFAny values, in both directions. */
#include "callback.h"
#include "container_view.h"

#include <string.h>
#include "object_system.h"
#include "tensor.h"

/* ---- Python -> PFAny ----------------------------------------------------------------------------
 */

static PyObject* ctypes_void_p = NULL; /* owned; looked up once ctypes is imported */

PyObject* pfpy_ctypes_void_p(void) {
  static PyObject* key = NULL; /* interned "ctypes", so the lookup below hashes nothing */
  if (ctypes_void_p != NULL) return ctypes_void_p;
  if (key == NULL && (key = PyUnicode_InternFromString("ctypes")) == NULL) {
    PyErr_Clear();
    return NULL;
  }
  PyObject* ctypes = PyDict_GetItemWithError(PyImport_GetModuleDict(), key); /* no import */
  if (ctypes == NULL) {
    PyErr_Clear();
    return NULL;
  }
  ctypes_void_p = PyObject_GetAttrString(ctypes, "c_void_p");
  if (ctypes_void_p == NULL) PyErr_Clear();
  return ctypes_void_p;
}

/* Where argument `pos` of `fname` is, worded by packedfun._rules.messages: "f: argument 0",
 * "f: return value" (pos < 0). A new str, or NULL with an exception. */
static PyObject* arg_where(PyObject* fname, Py_ssize_t pos) {
  if (pos < 0) return pfpy_message("RETURN_WHERE", "(O)", fname ? fname : Py_None);
  if (fname != NULL) return pfpy_message("ARG_WHERE", "(On)", fname, pos);
  return pfpy_message("ARG_WHERE_UNNAMED", "(n)", pos);
}

PFPY_NOINLINE void pfpy_arg_error(PyObject* exc_type, PyObject* fname, Py_ssize_t pos,
                                  const char* what) {
  PyObject* where = arg_where(fname, pos);
  if (where == NULL) return;
  pfpy_raise_message(exc_type, "AT_WHERE", "(Os)", where, what);
  Py_DECREF(where);
}

int pfpy_prefix_unicode_reason(PyObject* exc, PyObject* where) {
  if (where == NULL || !PyErr_GivenExceptionMatches(exc, PyExc_UnicodeEncodeError)) return 0;
  PyObject* reason = PyObject_GetAttrString(exc, "reason");
  PyObject* text = reason != NULL ? PyUnicode_FromFormat("%U: %S", where, reason) : NULL;
  int ok = text != NULL && PyObject_SetAttrString(exc, "reason", text) == 0;
  Py_XDECREF(text);
  Py_XDECREF(reason);
  PyErr_Clear();
  return ok;
}

/* Names the argument in the exception being raised: a UnicodeEncodeError's reason gets "F:
 * argument N: " in front (its message is made from the reason), others a note "while converting
 * argument N of F" (3.11+). */
static PFPY_NOINLINE void add_arg_note(PyObject* fname, Py_ssize_t pos) {
  PyObject* exc = pfpy_fetch_exception();
  if (exc == NULL) return;
  if (pos >= 0) {
    PyObject* where = arg_where(fname, pos);
    int done = pfpy_prefix_unicode_reason(exc, where);
    Py_XDECREF(where);
    PyErr_Clear();
    if (done) {
      pfpy_restore_exception(exc);
      return;
    }
  }
#if PY_VERSION_HEX >= 0x030B0000
  PyObject* note =
      pos < 0 ? pfpy_message("NOTE_RETURN", "()")
              : pfpy_message("NOTE_ARGUMENT", "(nO)", pos, fname ? fname : (PyObject*)Py_None);
  if (note != NULL) {
    PyObject* r = PyObject_CallMethod(exc, "add_note", "O", note);
    Py_XDECREF(r);
    Py_DECREF(note);
  }
  PyErr_Clear();
#endif
  pfpy_restore_exception(exc);
}

static int push_temp(PFPyArgs* pack, PFObject* obj, PFAny* out) {
  pack->temps[pack->num_temps++] = obj;
  out->type_index = obj->type_index;
  out->zero_padding = 0;
  out->v_obj = obj;
  return 0;
}

/* ---- the setters: one per kind of Python type -----------------------------------------------
 * Each converts `o` into `pack->args[slot]`, `pos` and `fname` naming it in errors. */

#define SLOT(pack, pos) (&(pack)->args[(pos) < 0 ? 0 : (pos)])

/* An int beyond int64: [2**63, 2**64) travels as kPFTypeUInt64. Cold. */
static PFPY_NOINLINE int long_beyond_int64(PyObject* o, int overflow, PFAny* out) {
  if (overflow < 0) return PFPY_INT_TOO_SMALL;
  unsigned long long value = PyLong_AsUnsignedLongLong(o);
  if (value == (unsigned long long)-1 && PyErr_Occurred()) {
    if (!PyErr_ExceptionMatches(PyExc_OverflowError)) return -1;
    PyErr_Clear();
    return PFPY_INT_TOO_LARGE;
  }
  PFPY_SET_POD(out, kPFTypeUInt64, v_uint64, (uint64_t)value);
  return 0;
}

int pfpy_long_to_any(PyObject* o, PFAny* out) {
  int overflow;
  long long value = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (value == -1 && PyErr_Occurred()) return -1;
  if (overflow != 0) return long_beyond_int64(o, overflow, out);
  PFPY_SET_POD(out, kPFTypeInt, v_int64, (int64_t)value);
  return 0;
}

/* An int out of range: named by argument, or bare for an element (its path is put in front). */
static PFPY_NOINLINE int int_range_error(int rc, Py_ssize_t pos, PyObject* fname) {
  const char* name = rc == PFPY_INT_TOO_LARGE ? "INT_TOO_LARGE" : "INT_TOO_SMALL";
  if (pos == PFPY_POS_ELEMENT) {
    pfpy_raise_message(PyExc_OverflowError, name, "()");
    return PFPY_BARE_ERROR;
  }
  PyObject* what = pfpy_message(name, "()");
  if (what != NULL) {
    pfpy_arg_error(PyExc_OverflowError, fname, pos, PyUnicode_AsUTF8(what));
    Py_DECREF(what);
  }
  return -1;
}

static int set_none(PyObject* o, PFPyArgs* pack, Py_ssize_t pos, PyObject* fname) {
  (void)o, (void)fname;
  PFPY_SET_POD(SLOT(pack, pos), kPFTypeNone, v_int64, 0);
  return 0;
}

static int set_bool(PyObject* o, PFPyArgs* pack, Py_ssize_t pos, PyObject* fname) {
  (void)fname;
  PFPY_SET_POD(SLOT(pack, pos), kPFTypeBool, v_int64, o == Py_True);
  return 0;
}

static int set_int(PyObject* o, PFPyArgs* pack, Py_ssize_t pos, PyObject* fname) {
  int rc = pfpy_long_to_any(o, SLOT(pack, pos));
  if (PFPY_LIKELY(rc == 0) || rc < 0) return rc;
  return int_range_error(rc, pos, fname);
}

static int set_float(PyObject* o, PFPyArgs* pack, Py_ssize_t pos, PyObject* fname) {
  (void)fname;
  PFPY_SET_POD(SLOT(pack, pos), kPFTypeFloat, v_float64, PyFloat_AS_DOUBLE(o));
  return 0;
}

static int set_str(PyObject* o, PFPyArgs* pack, Py_ssize_t pos, PyObject* fname) {
  PFByteArray* view = &pack->views[pos < 0 ? 0 : pos];
  if (pfpy_str_view(o, view) != 0) {
    if (pos != PFPY_POS_ELEMENT) add_arg_note(fname, pos); /* an element's path names it */
    return -1;
  }
  PFPY_SET_NUL_VIEW(SLOT(pack, pos), kPFTypeStrView, view); /* the UTF-8 ends in a NUL */
  return 0;
}

static int set_bytes(PyObject* o, PFPyArgs* pack, Py_ssize_t pos, PyObject* fname) {
  (void)fname;
  PFByteArray* view = &pack->views[pos < 0 ? 0 : pos];
  PFAny* out = SLOT(pack, pos);
  if (PyBytes_Check(o)) { /* a bytes object's buffer always ends in a NUL */
    view->data = PyBytes_AS_STRING(o);
    view->size = (size_t)PyBytes_GET_SIZE(o);
    PFPY_SET_NUL_VIEW(out, kPFTypeBytesView, view);
  } else {
    view->data = PyByteArray_AS_STRING(o);
    view->size = (size_t)PyByteArray_GET_SIZE(o);
    PFPY_SET_POD(out, kPFTypeBytesView, v_ptr, view);
  }
  return 0;
}

static int set_object(PyObject* o, PFPyArgs* pack, Py_ssize_t pos, PyObject* fname) {
  (void)fname;
  pfpy_object_arg(o, SLOT(pack, pos));
  return 0;
}

static int set_container(PyObject* o, PFPyArgs* pack, Py_ssize_t pos, PyObject* fname) {
  return pfpy_container_arg(o, pack, pos, fname); /* -> Array / Map (convert_container.c) */
}

static int set_callable(PyObject* o, PFPyArgs* pack, Py_ssize_t pos, PyObject* fname) {
  (void)fname;
  PFObject* obj = NULL;
  if (pfpy_callable_to_temp_function(o, &obj) != 0) return -1;
  return push_temp(pack, obj, SLOT(pack, pos));
}

static int set_opaque(PyObject* o, PFPyArgs* pack, Py_ssize_t pos, PyObject* fname) {
  (void)fname;
  PFObject* obj = NULL;
  if (pfpy_opaque_new(o, &obj) != 0) return -1;
  return push_temp(pack, obj, SLOT(pack, pos));
}

static int set_tensor(PyObject* o, PFPyArgs* pack, Py_ssize_t pos, PyObject* fname) {
  int rc = pfpy_tensor_try_arg(o, pack, pos, fname); /* arrays, dtypes, devices */
  if (rc != 0) return rc < 0 ? -1 : 0;
  return set_opaque(o, pack, pos, fname); /* not reached: the kind was read from the type */
}

static int set_void_p(PyObject* o, PFPyArgs* pack, Py_ssize_t pos, PyObject* fname) {
  (void)fname;
  PyObject* value = PyObject_GetAttrString(o, "value");
  if (value == NULL) return -1;
  void* ptr = NULL;
  if (value != Py_None) {
    ptr = PyLong_AsVoidPtr(value);
    if (ptr == NULL && PyErr_Occurred()) {
      Py_DECREF(value);
      return -1;
    }
  }
  Py_DECREF(value);
  PFPY_SET_POD(SLOT(pack, pos), kPFTypeOpaquePtr, v_ptr, ptr);
  return 0;
}

static int is_numpy_bool(PyTypeObject* t) {
  return strcmp(t->tp_name, "numpy.bool_") == 0 || strcmp(t->tp_name, "numpy.bool") == 0;
}

/* NumPy scalars whose nb_float is no float value: complex (it drops the imaginary part),
 * datetime64 and timedelta64 (it drops the unit), void. Left out of the number rule, they travel
 * as the objects they are (Opaque), as a Python complex does. */
static int is_numpy_not_real(PyTypeObject* t) {
  const char* name = t->tp_name;
  if (strncmp(name, "numpy.", 6) != 0) return 0;
  name += 6;
  return strncmp(name, "complex", 7) == 0 || strcmp(name, "clongdouble") == 0 ||
         strncmp(name, "datetime64", 10) == 0 || strncmp(name, "timedelta64", 11) == 0 ||
         strcmp(name, "void") == 0;
}

/* The number rule (docs/calling.md): an object whose type has nb_index (NumPy integer scalars)
 * travels as int, numpy.bool_ as bool, one with nb_float (NumPy float scalars) as float.
 * Recognised by type slots and name: NumPy is never imported. */
static int set_number(PyObject* o, PFPyArgs* pack, Py_ssize_t pos, PyObject* fname) {
  PyTypeObject* t = Py_TYPE(o);
  PyNumberMethods* nb = t->tp_as_number;
  if (nb != NULL && nb->nb_index != NULL) {
    PyObject* index = PyNumber_Index(o);
    if (index == NULL) return -1;
    int rc = set_int(index, pack, pos, fname);
    Py_DECREF(index);
    return rc;
  }
  if (is_numpy_bool(t)) {
    int truth = PyObject_IsTrue(o);
    if (truth < 0) return -1;
    PFPY_SET_POD(SLOT(pack, pos), kPFTypeBool, v_int64, truth);
    return 0;
  }
  double value = PyFloat_AsDouble(o);
  if (value == -1.0 && PyErr_Occurred()) return -1;
  PFPY_SET_POD(SLOT(pack, pos), kPFTypeFloat, v_float64, value);
  return 0;
}

/* packedfun._rules.protocols.<name> (a new reference), or NULL with an exception. */
static PyObject* protocols_attr(const char* name) {
  PyObject* module = PyImport_ImportModule("packedfun._rules.protocols");
  if (module == NULL) return NULL;
  PyObject* attr = PyObject_GetAttrString(module, name);
  Py_DECREF(module);
  return attr;
}

/* Whether `t` defines one of tvm-ffi's conversion methods (asked once per type, by classify). */
static int has_protocol(PyTypeObject* t) {
  PyObject* check = protocols_attr("has_protocol");
  PyObject* found = check != NULL ? PyObject_CallOneArg(check, (PyObject*)t) : NULL;
  Py_XDECREF(check);
  int yes = found != NULL && PyObject_IsTrue(found) == 1;
  Py_XDECREF(found);
  if (PyErr_Occurred()) PyErr_Clear(); /* not a protocol class then: the rule goes on */
  return yes;
}

/* The shared rule _rules.protocols.protocol_value, looked up on the first protocol value and kept
 * for the process (as the DLPack producer rule is, tensor.c): every argument, element and
 * callback result of such a class goes through it. */
static PyObject* protocol_value_rule = NULL; /* owned */

static PFPY_NOINLINE PyObject* load_protocol_value_rule(void) {
  PyObject* rule = protocols_attr("protocol_value");
  if (rule != NULL) protocol_value_rule = rule;
  return rule;
}

/* A value of a class with a tvm-ffi conversion method: converted as what the shared rule
 * (_rules.protocols.protocol_value) gives. That value is a temporary: a view of its text is made
 * an owned string, and an object it is gets a reference of its own, so the slot outlives it. */
static PFPY_NOINLINE int set_protocol(PyObject* o, PFPyArgs* pack, Py_ssize_t pos,
                                      PyObject* fname) {
  PyObject* rule = protocol_value_rule;
  if (PFPY_UNLIKELY(rule == NULL) && (rule = load_protocol_value_rule()) == NULL) return -1;
  PyObject* value = PyObject_CallOneArg(rule, o);
  if (value == NULL) return -1;
  int temps = pack->num_temps;
  int rc = pfpy_arg_from_py(value, pack, pos, fname);
  PFAny* slot = SLOT(pack, pos);
  if (rc == 0 && pack->num_temps == temps) { /* no temporary made: the slot may borrow `value` */
    if (slot->type_index == kPFTypeStrView || slot->type_index == kPFTypeBytesView) {
      PFAny owned;
      int made = slot->type_index == kPFTypeStrView ? PFStringCreate(slot->v_ptr, &owned)
                                                    : PFBytesCreate(slot->v_ptr, &owned);
      if (made != 0) {
        pfpy_raise_native(NULL);
        rc = -1;
      } else if (owned.type_index >= kPFTypeStaticObjectBegin) {
        rc = push_temp(pack, owned.v_obj, slot);
      } else {
        *slot = owned; /* an inline small string */
      }
    } else if (slot->type_index >= kPFTypeStaticObjectBegin) {
      PFObjectIncRef(slot->v_obj);
      rc = push_temp(pack, slot->v_obj, slot);
    }
  }
  Py_DECREF(value);
  return rc;
}

typedef int (*Setter)(PyObject* o, PFPyArgs* pack, Py_ssize_t pos, PyObject* fname);

static const Setter setters[PFPY_KIND_COUNT] = {
    [PFPY_KIND_NONE] = set_none,         [PFPY_KIND_BOOL] = set_bool,
    [PFPY_KIND_INT] = set_int,           [PFPY_KIND_FLOAT] = set_float,
    [PFPY_KIND_STR] = set_str,           [PFPY_KIND_BYTES] = set_bytes,
    [PFPY_KIND_OBJECT] = set_object,     [PFPY_KIND_CONTAINER] = set_container,
    [PFPY_KIND_CALLABLE] = set_callable, [PFPY_KIND_TENSOR] = set_tensor,
    [PFPY_KIND_VOID_P] = set_void_p,     [PFPY_KIND_NUMBER] = set_number,
    [PFPY_KIND_OPAQUE] = set_opaque,     [PFPY_KIND_PROTOCOL] = set_protocol,
};

/* ---- choosing the setter: once per type ------------------------------------------------------ */

/* The kind of `t`, in the order the rule is documented (docs/calling.md): the cheap, common and
 * unambiguous kinds first; a str subclass that is callable is a str, a list subclass a list;
 * the probes for arrays and numbers last. Decided from the type alone. */
static int classify(PyTypeObject* t) {
  if (pfpy_tensor_known_type(t)) return PFPY_KIND_TENSOR; /* NumPy/torch: before every probe */
  if (t == &PyFunction_Type || t == &PyCFunction_Type || t == &PyMethod_Type) {
    return PFPY_KIND_CALLABLE;
  }
  if ((PyObject*)t == pfpy_dtype_class) return PFPY_KIND_TENSOR; /* a str subclass, not text */
  if (t == Py_TYPE(Py_None)) return PFPY_KIND_NONE;
  if (PyType_IsSubtype(t, &PyUnicode_Type)) return PFPY_KIND_STR;
  if (t == &PyBool_Type) return PFPY_KIND_BOOL;
  if (PyType_IsSubtype(t, &PyLong_Type)) return PFPY_KIND_INT;
  if (PyType_IsSubtype(t, &PyFloat_Type)) return PFPY_KIND_FLOAT;
  if (PyType_IsSubtype(t, &PFPyObject_Type)) return PFPY_KIND_OBJECT;
  if (PyType_IsSubtype(t, &PyBytes_Type) || PyType_IsSubtype(t, &PyByteArray_Type)) {
    return PFPY_KIND_BYTES;
  }
  if (PyType_IsSubtype(t, &PyList_Type) || PyType_IsSubtype(t, &PyTuple_Type) ||
      PyType_IsSubtype(t, &PyDict_Type)) {
    return PFPY_KIND_CONTAINER;
  }
  if (has_protocol(t)) return PFPY_KIND_PROTOCOL;    /* before callable: packedfun.Module is one */
  if (t->tp_call != NULL) return PFPY_KIND_CALLABLE; /* before the array probes: not callable */
  if (pfpy_tensor_type_probe(t)) return PFPY_KIND_TENSOR;
  PyObject* void_p = pfpy_ctypes_void_p(); /* c_void_p instances are not callable */
  if (void_p != NULL && PyType_IsSubtype(t, (PyTypeObject*)void_p)) return PFPY_KIND_VOID_P;
  PyNumberMethods* nb = t->tp_as_number;
  if (is_numpy_not_real(t)) return PFPY_KIND_OPAQUE;
  if ((nb != NULL && (nb->nb_index != NULL || nb->nb_float != NULL)) || is_numpy_bool(t)) {
    return PFPY_KIND_NUMBER;
  }
  return PFPY_KIND_OPAQUE;
}

/* The cache of decided kinds: direct-mapped on the type's address. An entry is valid while the
 * type's version tag is the one it was decided under: CPython gives a type a new tag whenever it
 * (or a base) changes, and never reuses one, so neither a class given __call__ later nor a new
 * type at a freed one's address can meet a stale entry. Guarded by the GIL (per thread without). */
#define KIND_CACHE_SIZE 64
typedef struct {
  PyTypeObject* type;
  unsigned int version;
  int kind;
} KindEntry;
#ifdef Py_GIL_DISABLED
static _Thread_local KindEntry kind_cache[KIND_CACHE_SIZE];
#else
static KindEntry kind_cache[KIND_CACHE_SIZE];
#endif

static inline KindEntry* kind_entry(PyTypeObject* t) {
  return &kind_cache[((uintptr_t)t >> 4) % KIND_CACHE_SIZE];
}

/* The type's version tag, assigned if it has none yet; 0 when it has no valid one. */
static unsigned int version_of(PyTypeObject* t) {
#if PY_VERSION_HEX >= 0x030C0000
  if (t->tp_version_tag == 0) PyUnstable_Type_AssignVersionTag(t);
#endif
#ifdef Py_TPFLAGS_VALID_VERSION_TAG
  if (!PyType_HasFeature(t, Py_TPFLAGS_VALID_VERSION_TAG)) return 0;
#endif
  return t->tp_version_tag;
}

static PFPY_NOINLINE int kind_miss(PyTypeObject* t) {
  int kind = classify(t);
  unsigned int version = version_of(t);
  if (version != 0) {
    KindEntry* e = kind_entry(t);
    e->type = t;
    e->version = version;
    e->kind = kind;
  }
  return kind;
}

int pfpy_kind_of(PyTypeObject* t) {
  KindEntry* e = kind_entry(t);
  if (PFPY_LIKELY(e->type == t && e->version == t->tp_version_tag && e->version != 0)) {
    return e->kind;
  }
  return kind_miss(t);
}

void pfpy_kind_cache_reset(void) { memset(kind_cache, 0, sizeof(kind_cache)); }

int pfpy_arg_from_py_slow(PyObject* o, PFPyArgs* pack, Py_ssize_t pos, PyObject* fname) {
  /* A list lent to a parameter that reads it in place (std::vector, Array of numbers): the
   * container setter's view, without the kind lookup and the two calls on the way to it. */
  if (Py_IS_TYPE(o, &PyList_Type) && pfpy_view_arg_wanted(pack, pos)) {
    return pfpy_container_view_arg(o, pack, pos, fname);
  }
  return setters[pfpy_kind_of(Py_TYPE(o))](o, pack, pos, fname);
}

void pfpy_args_release(PFPyArgs* pack) {
  for (int i = 0; i < pack->num_temps; ++i) {
    PFObject* temp = pack->temps[i];
    if (temp->type_index == kPFTypeFunction) { /* a wrapped callable: recycled when not kept */
      pfpy_temp_function_release(temp);
    } else if (temp->deleter == &pfpy_view_recycle) { /* a container view: never shared */
      pfpy_view_recycle(temp);
    } else if (temp->deleter == &pfpy_tensor_scratch_release &&
               __atomic_load_n(&temp->ref_count, __ATOMIC_ACQUIRE) == 1) { /* not kept */
      pfpy_tensor_scratch_release(temp);
    } else {
      PFObjectDecRef(temp);
    }
  }
  pack->num_temps = 0;
}

int pfpy_value_from_py(PyObject* o, PFAny* out, PFByteArray* view, Py_ssize_t pos, int keep_views) {
  PFObject* temp = NULL;
  PFPyArgs pack = {out, view, &temp, 0, 0, 0, NULL};
  int rc = pfpy_arg_from_py(o, &pack, pos, NULL);
  if (rc != 0) return rc;
  if (pack.num_temps != 0) return 0; /* the temporary's reference moves into *out */
  int32_t kind = out->type_index;
  if (kind == kPFTypeStrView || kind == kPFTypeBytesView) {
    if (keep_views) return 0;
    PFAny owned;
    rc = kind == kPFTypeStrView ? PFStringCreate(view, &owned) : PFBytesCreate(view, &owned);
    if (rc != 0) {
      pfpy_raise_native(NULL);
      return -1;
    }
    *out = owned;
  } else if (kind >= kPFTypeStaticObjectBegin) {
    PFObjectIncRef(out->v_obj); /* a packedfun object's handle: the value owns one of its own */
  }
  return 0;
}

int pfpy_any_from_py(PyObject* o, PFAny* out) {
  PFByteArray view;
  return pfpy_value_from_py(o, out, &view, -1, 0) == 0 ? 0 : -1;
}

/* ---- PFAny -> Python ----------------------------------------------------------------------------
 */

static PyObject* void_p_from(void* ptr) {
  if (ptr == NULL) Py_RETURN_NONE;
  PyObject* void_p = pfpy_ctypes_void_p();
  if (void_p == NULL) {
    PyObject* ctypes = PyImport_ImportModule("ctypes");
    if (ctypes == NULL) return NULL;
    Py_DECREF(ctypes);
    void_p = pfpy_ctypes_void_p();
    if (void_p == NULL) return pfpy_raise_message(PyExc_ImportError, "CTYPES_VOID_P_MISSING", "()");
  }
  PyObject* addr = PyLong_FromVoidPtr(ptr);
  if (addr == NULL) return NULL;
  PyObject* result = PyObject_CallOneArg(void_p, addr);
  Py_DECREF(addr);
  return result;
}

static PyObject* pod_to_py(const PFAny* v) {
  switch (v->type_index) {
    case kPFTypeNone:
      Py_RETURN_NONE;
    case kPFTypeInt:
      return PyLong_FromLongLong(v->v_int64);
    case kPFTypeUInt64:
      return PyLong_FromUnsignedLongLong(v->v_uint64);
    case kPFTypeBool:
      return PyBool_FromLong((long)v->v_int64);
    case kPFTypeFloat:
      return PyFloat_FromDouble(v->v_float64);
    case kPFTypeOpaquePtr:
      return void_p_from(v->v_ptr);
    case kPFTypeDataType:
      return pfpy_dtype_to_py(v->v_dtype);
    case kPFTypeDevice:
      return pfpy_device_to_py(v->v_device);
    case kPFTypeSmallStr:
      return PyUnicode_DecodeUTF8(v->v_bytes, (Py_ssize_t)v->small_len, NULL);
    case kPFTypeSmallBytes:
      return PyBytes_FromStringAndSize(v->v_bytes, (Py_ssize_t)v->small_len);
    case kPFTypeRawStr:
      return PyUnicode_DecodeUTF8(v->v_c_str, (Py_ssize_t)strlen(v->v_c_str), NULL);
    case kPFTypeStrView: {
      const PFByteArray* b = (const PFByteArray*)v->v_ptr;
      return PyUnicode_DecodeUTF8(b->data, (Py_ssize_t)b->size, NULL);
    }
    case kPFTypeBytesView: {
      const PFByteArray* b = (const PFByteArray*)v->v_ptr;
      return PyBytes_FromStringAndSize(b->data, (Py_ssize_t)b->size);
    }
    default:
      return NULL;
  }
}

static PFPY_NOINLINE PyObject* unknown_kind(const PFAny* v) {
  if (v->type_index == kPFTypeDLTensorPtr) {
    PFAny owned = {0};
    if (PFAnyViewToOwned(v, &owned) != 0) return pfpy_raise_native(NULL);
    return pfpy_any_steal_to_py(&owned);
  }
  return pfpy_raise_message(PyExc_TypeError, "VALUE_UNKNOWN_TYPE_INDEX", "(i)", (int)v->type_index);
}

/* Strings and bytes objects become plain str/bytes; `obj` is borrowed. */
static PyObject* bytes_object_to_py(PFObject* obj) {
  const PFByteArray* b = &((PFBytesObject*)obj)->bytes;
  if (obj->type_index == kPFTypeString) {
    return PyUnicode_DecodeUTF8(b->data, (Py_ssize_t)b->size, NULL);
  }
  return PyBytes_FromStringAndSize(b->data, (Py_ssize_t)b->size);
}

PyObject* pfpy_any_steal_to_py(PFAny* v) {
  int32_t tindex = v->type_index;
  if (tindex < kPFTypeStaticObjectBegin) {
    PyObject* r = pod_to_py(v);
    if (r == NULL && !PyErr_Occurred()) r = unknown_kind(v);
    return r; /* POD results own nothing */
  }
  PFObject* obj = v->v_obj;
  v->type_index = kPFTypeNone;
  v->v_int64 = 0;
  if (tindex == kPFTypeString || tindex == kPFTypeBytes) {
    PyObject* r = bytes_object_to_py(obj);
    PFObjectDecRef(obj);
    return r;
  }
  return pfpy_object_wrap(obj);
}

PyObject* pfpy_any_view_to_py(const PFAny* v) {
  int32_t tindex = v->type_index;
  if (tindex < kPFTypeStaticObjectBegin) {
    PyObject* r = pod_to_py(v);
    if (r == NULL && !PyErr_Occurred()) r = unknown_kind(v);
    return r;
  }
  if (tindex == kPFTypeString || tindex == kPFTypeBytes) return bytes_object_to_py(v->v_obj);
  PFObjectIncRef(v->v_obj);
  return pfpy_object_wrap(v->v_obj);
}

/* ---- module functions
 * ----------------------------------------------------------------------------- */

static PyObject* convert_value(PyObject* mod, PyObject* value) {
  (void)mod;
  PFAny owned;
  if (PyList_Check(value) || PyTuple_Check(value) || PyDict_Check(value)) { /* Python reads it */
    int32_t kind = PyDict_Check(value) ? kPFTypeMap : kPFTypeArray;
    if (pfpy_container_from_py(value, kind, &owned, NULL, -1, 1) != 0) return NULL;
  } else if (pfpy_any_from_py(value, &owned) != 0) {
    return NULL;
  }
  return pfpy_any_steal_to_py(&owned);
}

PyMethodDef pfpy_convert_methods[] = {
    {"convert", convert_value, METH_O,
     "convert(value)\n--\n\nThe FFI form of `value`: callables become Functions, str/int/float/"
     "bytes/Objects come back unchanged in kind, other objects come back as themselves."},
    {NULL, NULL, 0, NULL}};
