/* packedfun's Map and Dict types: Python mappings over the native hash maps, no copy. */
#include "container_common.h"
#include "tensor.h"

static PyObject* map_name(void) {
  static PyObject* name = NULL;
  if (name == NULL) name = PyUnicode_InternFromString("packedfun.Map");
  return name;
}

static PFObject* map_handle(PyObject* self) {
  PFObject* h = ((PFPyObject*)self)->handle;
  if (h == NULL)
    pfpy_raise_message(PyExc_ValueError, "EMPTY_WRAPPER", "(s)", Py_TYPE(self)->tp_name);
  return h;
}

static Py_ssize_t map_len(PyObject* self) {
  PFObject* h = ((PFPyObject*)self)->handle;
  int64_t n = 0;
  if (h != NULL && PFMapSize(h, &n) != 0) return pfpy_native_fail();
  return (Py_ssize_t)n;
}

/* A key a dict refuses (a list, a dict, a tuple holding one...) is refused with the dict's own
 * TypeError: converted, it would become a new Array or Map, equal to no stored key, so a Dict would
 * keep an entry no lookup finds. str and int, the common keys, skip the hash. */
static int map_key_hashable(PyObject* key) {
  if (PyUnicode_CheckExact(key) || PyLong_CheckExact(key)) return 0;
  return PyObject_Hash(key) == -1 && PyErr_Occurred() ? -1 : 0;
}

/* Looks `key` up: 1 with `*out` a new reference, 0 when absent, -1 with an exception. */
static int map_lookup(PyObject* self, PyObject* key, PyObject** out) {
  PFObject* h = map_handle(self);
  if (h == NULL || map_key_hashable(key) != 0) return -1;
  PFPyOneArg a;
  if (pfpy_one_arg(&a, key, map_name()) != 0) return -1;
  if (!pfpy_map_key_is_itself(key) && pfpy_map_key_refused(key, &a.arg, map_name())) {
    pfpy_one_arg_release(&a);
    return -1;
  }
  PFAny value = {0};
  int found = 0;
  int rc = PFMapGetItem(h, &a.arg, &value, &found);
  pfpy_one_arg_release(&a);
  if (rc != 0) return pfpy_native_fail();
  if (!found) return 0;
  *out = pfpy_container_element(self, pfpy_any_steal_to_py(&value));
  return *out == NULL ? -1 : 1;
}

static PyObject* map_subscript(PyObject* self, PyObject* key) {
  PyObject* value = NULL;
  int rc = map_lookup(self, key, &value);
  if (rc == 0) PyErr_SetObject(PyExc_KeyError, key);
  return rc == 1 ? value : NULL;
}

static int map_contains(PyObject* self, PyObject* key) {
  PyObject* value = NULL;
  int rc = map_lookup(self, key, &value);
  Py_XDECREF(value);
  return rc;
}

static PyObject* map_get(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 1 || nargs > 2) return PyErr_Format(PyExc_TypeError, "get expected 1 or 2 arguments");
  PyObject* value = NULL;
  int rc = map_lookup(self, args[0], &value);
  if (rc != 0) return rc == 1 ? value : NULL;
  PyObject* dflt = nargs == 2 ? args[1] : Py_None;
  Py_INCREF(dflt);
  return dflt;
}

/* A list of the keys (which 0), values (1) or (key, value) tuples (2), in iteration order. */
static PyObject* map_listing(PyObject* self, int which) {
  PFObject* h = map_handle(self);
  if (h == NULL) return NULL;
  PFAny items = {0};
  if (PFMapItems(h, &items) != 0) return pfpy_raise_native(NULL);
  PFSeqObject* kv = (PFSeqObject*)items.v_obj;
  Py_ssize_t n = (Py_ssize_t)(kv->size / 2);
  PyObject* list = PyList_New(n);
  for (Py_ssize_t i = 0; list != NULL && i < n; ++i) {
    PyObject* e;
    if (which == 2) {
      PyObject* k = pfpy_container_element(self, pfpy_any_view_to_py(&kv->data[2 * i]));
      PyObject* v =
          k ? pfpy_container_element(self, pfpy_any_view_to_py(&kv->data[2 * i + 1])) : NULL;
      e = v ? PyTuple_Pack(2, k, v) : NULL;
      Py_XDECREF(k);
      Py_XDECREF(v);
    } else {
      e = pfpy_container_element(self, pfpy_any_view_to_py(&kv->data[2 * i + which]));
    }
    if (e == NULL)
      Py_CLEAR(list);
    else
      PyList_SET_ITEM(list, i, e);
  }
  PFAnyRelease(&items);
  return list;
}

static PyObject* map_keys(PyObject* self, PyObject* unused) {
  (void)unused;
  return map_listing(self, 0);
}

static PyObject* map_values(PyObject* self, PyObject* unused) {
  (void)unused;
  return map_listing(self, 1);
}

static PyObject* map_items(PyObject* self, PyObject* unused) {
  (void)unused;
  return map_listing(self, 2);
}

/* ---- iteration straight over the native entries
 * ---------------------------------------------------------------- */

/* An iterator over a Map or Dict's keys (which 0), values (1) or (key, value) tuples (2). It walks
 * the entries in place (PFMapIterNext), so iterating costs O(1) per entry and nothing up front. */
typedef struct {
  PyObject_HEAD PyObject* map; /* owned; NULL once exhausted */
  int64_t cursor;
  int64_t size; /* at the start: a Dict that changes size meanwhile raises, as a dict does */
  int which;
} PFPyMapIter;

static void map_iter_dealloc(PyObject* self) {
  Py_XDECREF(((PFPyMapIter*)self)->map);
  PyObject_Free(self);
}

static PFPY_NOINLINE PyObject* map_iter_changed(PFPyMapIter* it) {
  it->size = -1; /* keeps raising, as a dict iterator does */
  return pfpy_raise_message(PyExc_RuntimeError, "MAP_CHANGED_SIZE", "(s)",
                            Py_TYPE(it->map)->tp_name);
}

static PyObject* map_iter_pair(PyObject* map, const PFAny* key, const PFAny* value) {
  PyObject* k = pfpy_container_element(map, pfpy_any_view_to_py(key));
  PyObject* v = k ? pfpy_container_element(map, pfpy_any_view_to_py(value)) : NULL;
  PyObject* t = v ? PyTuple_New(2) : NULL;
  if (t == NULL) {
    Py_XDECREF(k);
    Py_XDECREF(v);
    return NULL;
  }
  PyTuple_SET_ITEM(t, 0, k);
  PyTuple_SET_ITEM(t, 1, v);
  return t;
}

static PyObject* map_iter_next(PyObject* self) {
  PFPyMapIter* it = (PFPyMapIter*)self;
  if (it->map == NULL) return NULL;
  PFObject* h = map_handle(it->map);
  if (h == NULL) return NULL;
  if (h->type_index == kPFTypeDict) { /* a Map never changes */
    int64_t n = 0;
    if (PFMapSize(h, &n) != 0) return pfpy_raise_native(NULL);
    if (n != it->size) return map_iter_changed(it);
  }
  PFAny key, value;
  int found = 0;
  if (PFMapIterNext(h, &it->cursor, &key, &value, &found) != 0) return pfpy_raise_native(NULL);
  if (!found) {
    Py_CLEAR(it->map);
    return NULL;
  }
  if (it->which == 2) return map_iter_pair(it->map, &key, &value);
  return pfpy_container_element(it->map, pfpy_any_view_to_py(it->which == 0 ? &key : &value));
}

static PyTypeObject PFPyMapIter_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "packedfun.MapIterator",
    .tp_basicsize = sizeof(PFPyMapIter),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An iterator over a Map or Dict's entries, in iteration order.",
    .tp_dealloc = map_iter_dealloc,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = map_iter_next,
};

static PyObject* map_iter_new(PyObject* self, int which) {
  PFObject* h = map_handle(self);
  if (h == NULL) return NULL;
  int64_t n = 0;
  if (PFMapSize(h, &n) != 0) return pfpy_raise_native(NULL);
  PFPyMapIter* it = PyObject_New(PFPyMapIter, &PFPyMapIter_Type);
  if (it == NULL) return NULL;
  Py_INCREF(self);
  it->map = self;
  it->cursor = 0;
  it->size = n;
  it->which = which;
  return (PyObject*)it;
}

static PyObject* map_iter(PyObject* self) { return map_iter_new(self, 0); }

static PyObject* map_iter_values(PyObject* self, PyObject* unused) {
  (void)unused;
  return map_iter_new(self, 1);
}

static PyObject* map_iter_items(PyObject* self, PyObject* unused) {
  (void)unused;
  return map_iter_new(self, 2);
}

/* A Python dict holding the entries (a snapshot). */
static PyObject* map_to_dict(PyObject* self) {
  PyObject* items = map_listing(self, 2);
  if (items == NULL) return NULL;
  PyObject* d = PyDict_New();
  for (Py_ssize_t i = 0; d != NULL && i < PyList_GET_SIZE(items); ++i) {
    PyObject* kv = PyList_GET_ITEM(items, i);
    if (PyDict_SetItem(d, PyTuple_GET_ITEM(kv, 0), PyTuple_GET_ITEM(kv, 1)) != 0) Py_CLEAR(d);
  }
  Py_DECREF(items);
  return d;
}

static PyObject* map_richcompare(PyObject* self, PyObject* other, int op) {
  int is_map =
      PyObject_TypeCheck(other, &PFPyMap_Type) || PyObject_TypeCheck(other, &PFPyDict_Type);
  if ((op != Py_EQ && op != Py_NE) || !(is_map || PyDict_Check(other))) Py_RETURN_NOTIMPLEMENTED;
  PyObject* a = map_to_dict(self);
  PyObject* b = a == NULL ? NULL : is_map ? map_to_dict(other) : (Py_INCREF(other), other);
  PyObject* r = b ? PyObject_RichCompare(a, b, op) : NULL;
  Py_XDECREF(a);
  Py_XDECREF(b);
  return r;
}

static PyObject* map_repr(PyObject* self) {
  int open = pfpy_repr_enter(self);
  if (open != 0) return open < 0 ? NULL : PyUnicode_FromString("{...}"); /* as a dict's */
  if (Py_EnterRecursiveCall(" while getting the repr of a container")) {
    pfpy_repr_leave(self);
    return NULL;
  }
  PyObject* d = map_to_dict(self);
  PyObject* r = d ? PyObject_Repr(d) : NULL;
  Py_XDECREF(d);
  Py_LeaveRecursiveCall();
  pfpy_repr_leave(self);
  return r;
}

/* The entries of a Map/Dict constructor's arguments as a dict: `src` (a mapping or an iterable of
 * pairs, may be NULL) then the keywords, as dict(src, **kwds) takes them. New ref, or NULL. */
static PyObject* map_source(PyObject* src, PyObject* kwds) {
  PyObject* d = PyDict_New();
  if (d != NULL && src != NULL) {
    /* A mapping is what has keys(), as for dict(src); only anything else is read as pairs, so an
     * error raised while merging a mapping (one changed by its own keys' __hash__) stays its own.
     */
    int mapping = PyDict_Check(src);
    if (!mapping) {
      PyObject* keys = PyObject_GetAttrString(src, "keys");
      mapping = keys != NULL;
      Py_XDECREF(keys);
      if (!mapping && PyErr_ExceptionMatches(PyExc_AttributeError)) PyErr_Clear();
    }
    if (PyErr_Occurred() ||
        (mapping ? PyDict_Merge(d, src, 1) : PyDict_MergeFromSeq2(d, src, 1)) != 0) {
      Py_CLEAR(d);
    }
  }
  if (d != NULL && kwds != NULL && PyDict_Merge(d, kwds, 1) != 0) Py_CLEAR(d);
  return d;
}

/* A copy of the Map or Dict `src`, entry by entry: through a Python dict, two keys equal in Python
 * but distinct natively (two Arrays with the same elements) would merge into one. */
static int map_copy(PFObject* src, int32_t kind, PFAny* out) {
  int64_t n = 0;
  if (PFMapSize(src, &n) != 0) return pfpy_native_fail();
  PFAny* kv = (PFAny*)PyMem_Malloc((size_t)(2 * n + 1) * sizeof(PFAny));
  if (kv == NULL) return PyErr_NoMemory(), -1;
  int64_t cursor = 0, got = 0;
  int found = 1, rc = 0;
  while (rc == 0 && found && got < n) {
    rc = PFMapIterNext(src, &cursor, &kv[2 * got], &kv[2 * got + 1], &found);
    got += rc == 0 && found;
  }
  if (rc == 0) rc = kind == kPFTypeDict ? PFDictCreate(kv, got, out) : PFMapCreate(kv, got, out);
  PyMem_Free(kv);
  return rc == 0 ? 0 : pfpy_native_fail();
}

/* The native container (`kind`) of a Map/Dict constructor's arguments in `*made` (new ref; left
 * empty when they hold no entry). 0, or -1 with an exception. The one optional argument is read
 * by hand: PyArg_ParseTuple costs as much as converting two entries. */
static int map_made(PyObject* args, PyObject* kwds, int32_t kind, PFAny* made) {
  Py_ssize_t n = PyTuple_GET_SIZE(args);
  if (n > 1) {
    pfpy_raise_message(PyExc_TypeError, "AT_MOST_ONE_ARGUMENT", "(sn)",
                       kind == kPFTypeDict ? "Dict" : "Map", n);
    return -1;
  }
  PyObject* src = n == 1 ? PyTuple_GET_ITEM(args, 0) : NULL;
  if (src != NULL && (kwds == NULL || PyDict_GET_SIZE(kwds) == 0) &&
      (PyObject_TypeCheck(src, &PFPyMap_Type) || PyObject_TypeCheck(src, &PFPyDict_Type)) &&
      ((PFPyObject*)src)->handle != NULL) {
    return map_copy(((PFPyObject*)src)->handle, kind, made);
  }
  PyObject* d = map_source(src, kwds);
  if (d == NULL) return -1;
  int rc = kind == kPFTypeDict && PyDict_GET_SIZE(d) == 0
               ? 0
               : pfpy_container_from_py(d, kind, made, NULL, -1, 1);
  Py_DECREF(d);
  return rc;
}

/* Map(mapping_or_pairs={}, **kwargs); Dict(...) makes an empty Dict that __init__ fills. */
static PyObject* map_new(PyTypeObject* type, PyObject* args, PyObject* kwds) {
  PFAny made = {0};
  if (PyType_IsSubtype(type, &PFPyDict_Type)) {
    if (PFDictCreate(NULL, 0, &made) != 0) return pfpy_raise_native(NULL);
    return pfpy_wrap_as(type, made.v_obj);
  }
  if (map_made(args, kwds, kPFTypeMap, &made) != 0) return NULL;
  return pfpy_wrap_as(type, made.v_obj);
}

/* Dict.__init__(mapping_or_pairs={}, **kwargs): as dict.__init__, adds the entries (converted
 * first: a bad one leaves the Dict unchanged). Dict(...) fills its empty Dict here, so calling
 * __init__ again on a live Dict updates it, as on a dict, instead of doing nothing. A Dict no one
 * else holds and still empty (Dict(...) itself) takes the converted Dict outright. */
static int dict_init(PyObject* self, PyObject* args, PyObject* kwds) {
  PFAny made = {0};
  int rc = map_made(args, kwds, kPFTypeDict, &made);
  if (rc != 0 || made.v_obj == NULL) return rc;
  PFObject* h = ((PFPyObject*)self)->handle;
  int64_t n = 0;
  if (h == NULL ||
      (__atomic_load_n(&h->ref_count, __ATOMIC_ACQUIRE) == 1 && PFMapSize(h, &n) == 0 && n == 0)) {
    ((PFPyObject*)self)->handle = made.v_obj;
    if (h != NULL) PFObjectDecRef(h);
    return 0;
  }
  int64_t cursor = 0;
  int found = 1;
  while (rc == 0) {
    PFAny key, value;
    rc = PFMapIterNext(made.v_obj, &cursor, &key, &value, &found);
    if (rc != 0 || !found) break;
    rc = PFDictSetItem(h, &key, &value);
  }
  PFObjectDecRef(made.v_obj);
  return rc == 0 ? 0 : pfpy_native_fail();
}

/* ---- Dict mutation
 * ------------------------------------------------------------------------------- */

static int dict_ass_subscript(PyObject* self, PyObject* key, PyObject* value) {
  PFObject* h = map_handle(self);
  if (h == NULL || map_key_hashable(key) != 0) return -1;
  PFPyOneArg k, v;
  if (pfpy_one_arg(&k, key, map_name()) != 0) return -1;
  if (!pfpy_map_key_is_itself(key) && pfpy_map_key_refused(key, &k.arg, map_name())) {
    pfpy_one_arg_release(&k);
    return -1;
  }
  int rc;
  if (value == NULL) {
    rc = PFDictDelItem(h, &k.arg);
  } else if (pfpy_one_arg(&v, value, map_name()) != 0) {
    pfpy_one_arg_release(&k);
    return -1;
  } else {
    rc = PFDictSetItem(h, &k.arg, &v.arg);
    pfpy_one_arg_release(&v);
  }
  pfpy_one_arg_release(&k);
  if (rc == 0) return 0;
  if (value == NULL) { /* the runtime's KeyError names the key natively; Python's names it as is */
    PFObject* err = NULL;
    PFErrorMoveFromRaised(&err);
    PFObjectDecRef(err);
    PyErr_SetObject(PyExc_KeyError, key);
    return -1;
  }
  return pfpy_native_fail();
}

static PyObject* dict_clear(PyObject* self, PyObject* unused) {
  (void)unused;
  PFObject* h = map_handle(self);
  if (h == NULL) return NULL;
  if (PFDictClear(h) != 0) return pfpy_raise_native(NULL);
  Py_RETURN_NONE;
}

static PyObject* dict_pop(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 1 || nargs > 2) return pfpy_raise_message(PyExc_TypeError, "POP_ARGUMENTS", "()");
  PyObject* value = NULL;
  int rc = map_lookup(self, args[0], &value);
  if (rc < 0) return NULL;
  if (rc == 0) {
    if (nargs == 2) return Py_INCREF(args[1]), args[1];
    PyErr_SetObject(PyExc_KeyError, args[0]);
    return NULL;
  }
  if (dict_ass_subscript(self, args[0], NULL) != 0) {
    Py_DECREF(value);
    return NULL;
  }
  return value;
}

/* ---- the types
 * ----------------------------------------------------------------------------------- */

static PySequenceMethods map_as_sequence = {.sq_contains = map_contains};
static PyMappingMethods map_as_mapping = {.mp_length = map_len, .mp_subscript = map_subscript};
static PyMappingMethods dict_as_mapping = {
    .mp_length = map_len, .mp_subscript = map_subscript, .mp_ass_subscript = dict_ass_subscript};

#define MAP_METHODS                                                                           \
  {"get", (PyCFunction)(void (*)(void))map_get, METH_FASTCALL,                                \
   "get(key, default=None): the value of `key`, or `default`."},                              \
      {"keys", map_keys, METH_NOARGS, "A list of the keys, in iteration order."},             \
      {"values", map_values, METH_NOARGS, "A list of the values, in iteration order."},       \
      {"items", map_items, METH_NOARGS, "A list of (key, value) pairs, in iteration order."}, \
      {"_pf_iter_values", map_iter_values, METH_NOARGS,                                       \
       "An iterator over the values, in iteration order (no copy)."},                         \
      {"_pf_iter_items", map_iter_items, METH_NOARGS,                                         \
       "An iterator over the (key, value) pairs, in iteration order (no copy)."}

static PyMethodDef map_methods[] = {MAP_METHODS, {NULL, NULL, 0, NULL}};
static PyMethodDef dict_methods[] = {MAP_METHODS,
                                     {"clear", dict_clear, METH_NOARGS, "Removes every entry."},
                                     {"pop", (PyCFunction)(void (*)(void))dict_pop, METH_FASTCALL,
                                      "pop(key[, default]): removes `key` and returns its value."},
                                     {NULL, NULL, 0, NULL}};

PyTypeObject PFPyMap_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "packedfun.Map",
    .tp_basicsize = sizeof(PFPyContainer),
    .tp_base = &PFPyObject_Type,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "An immutable native map (kPFTypeMap); Map(mapping) converts keys and values.",
    .tp_repr = map_repr,
    .tp_richcompare = map_richcompare,
    .tp_hash = PyObject_HashNotImplemented,
    .tp_iter = map_iter,
    .tp_new = map_new,
    .tp_as_sequence = &map_as_sequence,
    .tp_as_mapping = &map_as_mapping,
    .tp_methods = map_methods,
};

PyTypeObject PFPyDict_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "packedfun.Dict",
    .tp_basicsize = sizeof(PFPyContainer),
    .tp_base = &PFPyObject_Type,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "A mutable native dict (kPFTypeDict); Dict(mapping) converts keys and values.",
    .tp_repr = map_repr,
    .tp_richcompare = map_richcompare,
    .tp_hash = PyObject_HashNotImplemented,
    .tp_iter = map_iter,
    .tp_new = map_new,
    .tp_init = dict_init,
    .tp_as_sequence = &map_as_sequence,
    .tp_as_mapping = &dict_as_mapping,
    .tp_methods = dict_methods,
};

int pfpy_map_types_add(PyObject* m) {
  if (PyType_Ready(&PFPyMapIter_Type) < 0) return -1;
  PyTypeObject* types[] = {&PFPyMap_Type, &PFPyDict_Type};
  const char* names[] = {"Map", "Dict"};
  for (int i = 0; i < 2; ++i) {
    if (PyType_Ready(types[i]) < 0) return -1;
    Py_INCREF(types[i]);
    if (PyModule_AddObject(m, names[i], (PyObject*)types[i]) < 0) return -1;
  }
  return 0;
}
