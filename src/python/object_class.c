/* Reflection in packedfun._core: the type table as Python data, and field/method descriptors. */
#include "container_common.h"

#include <stddef.h>
#include <structmember.h>
#include <string.h>

PyTypeObject* pfpy_default_class(int32_t type_index) {
  switch (type_index) {
    case kPFTypeArray:
      return &PFPyArray_Type;
    case kPFTypeList:
      return &PFPyList_Type;
    case kPFTypeMap:
      return &PFPyMap_Type;
    case kPFTypeDict:
      return &PFPyDict_Type;
    case kPFTypeShape:
      return &PFPyShape_Type;
    default:
      return &PFPyObject_Type;
  }
}

static PyObject* str_of(PFByteArray b) {
  return PyUnicode_DecodeUTF8(b.data ? b.data : "", (Py_ssize_t)b.size, "replace");
}

/* "type_key.member" as a new str. */
static PyObject* qualified(const PFTypeInfo* info, PFByteArray member) {
  PyObject* key = str_of(info->type_key);
  PyObject* name = key ? str_of(member) : NULL;
  PyObject* r = name ? PyUnicode_FromFormat("%U.%U", key, name) : NULL;
  Py_XDECREF(key);
  Py_XDECREF(name);
  return r;
}

static const PFTypeInfo* info_of(int32_t type_index) {
  const PFTypeInfo* info = NULL;
  if (PFTypeGetInfo(type_index, &info) != 0) return pfpy_raise_native(NULL), NULL;
  return info;
}

/* ---- the type table
 * ------------------------------------------------------------------------------ */

static PyObject* type_key_to_index(PyObject* mod, PyObject* key) {
  (void)mod;
  if (!PyUnicode_Check(key)) return pfpy_raise_message(PyExc_TypeError, "TYPE_KEY_NOT_STR", "()");
  PFByteArray view;
  int32_t index = 0;
  if (pfpy_str_view(key, &view) != 0) return NULL;
  if (PFTypeKeyToIndex(&view, &index) != 0) {
    PFObject* err = NULL;
    PFErrorMoveFromRaised(&err);
    PFObjectDecRef(err);
    return pfpy_raise_message(PyExc_KeyError, "TYPE_KEY_UNKNOWN", "(O)", key);
  }
  return PyLong_FromLong((long)index);
}

static PyObject* field_dict(const PFFieldInfo* f) {
  return Py_BuildValue(
      "{s:N,s:N,s:O,s:i,s:L}", "name", str_of(f->name), "doc", str_of(f->doc), "readonly",
      (f->flags & PACKEDFUN_FIELD_READONLY) || !f->setter ? Py_True : Py_False, "static_type_index",
      (int)f->static_type_index, "offset", (long long)f->offset);
}

static PyObject* method_dict(const PFTypeInfo* info, const PFMethodInfo* m) {
  PyObject* qualname = qualified(info, m->name);
  if (qualname == NULL) return NULL;
  PFObjectIncRef(m->method);
  PyObject* func = pfpy_function_new(m->method, qualname);
  Py_DECREF(qualname);
  if (func == NULL) return NULL;
  return Py_BuildValue("{s:N,s:N,s:O,s:N}", "name", str_of(m->name), "doc", str_of(m->doc),
                       "is_static", (m->flags & PACKEDFUN_METHOD_STATIC) ? Py_True : Py_False,
                       "func", func);
}

static PyObject* type_info(PyObject* mod, PyObject* arg) {
  (void)mod;
  int index = (int)PyLong_AsLong(arg);
  if (index == -1 && PyErr_Occurred()) return NULL;
  const PFTypeInfo* info = info_of(index);
  if (info == NULL) return NULL;
  PyObject* ancestors = PyTuple_New(info->depth + 1);
  PyObject* fields = PyList_New(info->num_fields);
  PyObject* methods = PyList_New(info->num_methods);
  int ok = ancestors && fields && methods;
  for (int i = 0; ok && i <= info->depth; ++i) {
    PyObject* a = PyLong_FromLong(info->ancestors ? (long)info->ancestors[i] : (long)index);
    ok = a != NULL;
    if (ok) PyTuple_SET_ITEM(ancestors, i, a);
  }
  for (int i = 0; ok && i < info->num_fields; ++i) {
    PyObject* f = field_dict(&info->fields[i]);
    ok = f != NULL;
    if (ok) PyList_SET_ITEM(fields, i, f);
  }
  for (int i = 0; ok && i < info->num_methods; ++i) {
    PyObject* m = method_dict(info, &info->methods[i]);
    ok = m != NULL;
    if (ok) PyList_SET_ITEM(methods, i, m);
  }
  if (!ok) {
    Py_XDECREF(ancestors);
    Py_XDECREF(fields);
    Py_XDECREF(methods);
    return NULL;
  }
  return Py_BuildValue("{s:i,s:N,s:i,s:N,s:N,s:N,s:N}", "type_index", info->type_index, "type_key",
                       str_of(info->type_key), "depth", (int)info->depth, "ancestors", ancestors,
                       "doc", str_of(info->doc), "fields", fields, "methods", methods);
}

static PyObject* type_is_instance(PyObject* mod, PyObject* const* args, Py_ssize_t nargs) {
  (void)mod;
  if (nargs != 2) return PyErr_Format(PyExc_TypeError, "type_is_instance expects 2 arguments");
  long a = PyLong_AsLong(args[0]), b = PyLong_AsLong(args[1]);
  if ((a == -1 || b == -1) && PyErr_Occurred()) return NULL;
  return PyBool_FromLong(PFTypeIsInstance((int32_t)a, (int32_t)b));
}

/* ---- FieldDescriptor
 * ----------------------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD int32_t owner; /* type index declaring the field */
  char readonly;
  int64_t offset;
  PFFieldGetter getter;
  PFFieldSetter setter;
  PyObject* name;     /* field name */
  PyObject* qualname; /* "type_key.name", names the field in errors */
  PyObject* doc;
  /* A field of a slot type (a Python-defined class): the field is the PFAny at `offset` (the C
   * ABI's slot-type layout), so an int or float is read, and written when the declared type is
   * `slot_type`, without the getter/setter calls; other values take them. */
  char slot;
  int32_t slot_type; /* the declared type index (kPFTypeAny: none) */
  /* The last Python type seen to be a packedfun.Object subclass, with its version tag: a type that
   * is freed (or modified) and whose address comes back carries a new tag, so a match is proof. */
  PyTypeObject* seen_type;
  unsigned int seen_tag;
} FieldDescr;

/* Whether `type`'s version tag names its current state. 3.13 no longer sets
 * Py_TPFLAGS_VALID_VERSION_TAG (the cache of known types never hit there, and every read paid the
 * subtype walk); it clears the tag to 0 when the type changes instead. */
static inline int version_tag_valid(PyTypeObject* type) {
#if PY_VERSION_HEX >= 0x030D0000
  return type->tp_version_tag != 0;
#else
  return PyType_HasFeature(type, Py_TPFLAGS_VALID_VERSION_TAG) && type->tp_version_tag != 0;
#endif
}

/* The native object behind `obj` if it has the field's type, else NULL with an exception. */
static PFPY_NOINLINE int check_object_type(FieldDescr* d, PyObject* obj) {
  PyTypeObject* type = Py_TYPE(obj);
  if (!PyObject_TypeCheck(obj, &PFPyObject_Type)) {
    pfpy_raise_message(PyExc_TypeError, "FIELD_NOT_AN_OBJECT", "(Os)", d->qualname, type->tp_name);
    return -1;
  }
  if (version_tag_valid(type)) {
    d->seen_type = type;
    d->seen_tag = type->tp_version_tag;
  }
  return 0;
}

static PFObject* field_target(FieldDescr* d, PyObject* obj) {
  PyTypeObject* type = Py_TYPE(obj);
  int known =
      type == d->seen_type && type->tp_version_tag == d->seen_tag && version_tag_valid(type);
  if (PFPY_UNLIKELY(!known) && check_object_type(d, obj) != 0) return NULL;
  PFObject* h = ((PFPyObject*)obj)->handle;
  if (PFPY_UNLIKELY(h == NULL)) {
    pfpy_raise_message(PyExc_ValueError, "FIELD_OBJECT_EMPTY", "(O)", d->qualname);
    return NULL;
  }
  if (PFPY_UNLIKELY(h->type_index != d->owner && !PFTypeIsInstance(h->type_index, d->owner))) {
    pfpy_raise_message(PyExc_TypeError, "FIELD_WRONG_TYPE", "(Oi)", d->qualname,
                       (int)h->type_index);
    return NULL;
  }
  return h;
}

static PyObject* field_get(PyObject* self, PyObject* obj, PyObject* type) {
  (void)type;
  FieldDescr* d = (FieldDescr*)self;
  if (obj == NULL || obj == Py_None) return Py_INCREF(self), self;
  PFObject* h = field_target(d, obj);
  if (h == NULL) return NULL;
  if (d->slot) {
    const PFAny* slot = (const PFAny*)((char*)h + d->offset);
    if (slot->type_index == kPFTypeInt) return pfpy_int_element(slot->v_int64);
    if (slot->type_index == kPFTypeFloat) return PyFloat_FromDouble(slot->v_float64);
  }
  PFAny v;
  PFPY_SET_POD(&v, kPFTypeNone, v_int64, 0);
  if (PFPY_UNLIKELY(d->getter((char*)h + d->offset, &v) != 0))
    return pfpy_raise_native(d->qualname);
  if (PFPY_LIKELY(v.type_index == kPFTypeInt)) return pfpy_int_element(v.v_int64);
  return pfpy_any_steal_to_py(&v);
}

/* A setter's TypeError/OverflowError says what it expected; name the field in front of it. */
static PFPY_NOINLINE void prefix_field_error(PyObject* qualname) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  if (value != NULL && (type == PyExc_TypeError || type == PyExc_OverflowError)) {
    PyObject* renamed = PyUnicode_FromFormat("%U: %S", qualname, value);
    if (renamed != NULL) {
      Py_DECREF(value);
      value = PyObject_CallOneArg(type, renamed);
      Py_DECREF(renamed);
      if (value == NULL) {
        Py_XDECREF(type);
        Py_XDECREF(tb);
        return;
      }
    }
  }
  PyErr_Restore(type, value, tb);
}

/* Stores an exact int (in int64) or float `value` into a slot declared int or float, as the
 * runtime's checked setter would (an int into a float field becomes a float); 1 when stored, 0
 * when the value needs the setter. The old value of such a slot is an int, float or None. */
static inline int slot_store_pod(FieldDescr* d, PFAny* slot, PyObject* value) {
  PyTypeObject* t = Py_TYPE(value);
  if (t == &PyLong_Type && (d->slot_type == kPFTypeInt || d->slot_type == kPFTypeFloat)) {
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (overflow != 0 || (x == -1 && PyErr_Occurred())) {
      PyErr_Clear();
      return 0;
    }
    if (d->slot_type == kPFTypeInt) {
      PFPY_SET_POD(slot, kPFTypeInt, v_int64, (int64_t)x);
    } else {
      PFPY_SET_POD(slot, kPFTypeFloat, v_float64, (double)x);
    }
    return 1;
  }
  if (t == &PyFloat_Type && d->slot_type == kPFTypeFloat) {
    PFPY_SET_POD(slot, kPFTypeFloat, v_float64, PyFloat_AS_DOUBLE(value));
    return 1;
  }
  return 0;
}

static int field_set(PyObject* self, PyObject* obj, PyObject* value) {
  FieldDescr* d = (FieldDescr*)self;
  if (value == NULL || d->readonly) {
    pfpy_raise_message(PyExc_AttributeError,
                       value == NULL ? "FIELD_NOT_DELETABLE" : "FIELD_READONLY", "(Os)", d->name,
                       Py_TYPE(obj)->tp_name);
    return -1;
  }
  PFObject* h = field_target(d, obj);
  if (h == NULL) return -1;
  if (d->slot && slot_store_pod(d, (PFAny*)((char*)h + d->offset), value)) return 0;
  PFPyOneArg a;
  if (pfpy_one_arg(&a, value, d->qualname) != 0) return -1;
  int rc = d->setter((char*)h + d->offset, &a.arg);
  pfpy_one_arg_release(&a);
  if (rc != 0) {
    pfpy_raise_native(d->qualname);
    prefix_field_error(d->qualname);
    return -1;
  }
  return 0;
}

static PyObject* field_new(PyTypeObject* type, PyObject* args, PyObject* kwds) {
  int index;
  PyObject* name;
  static char* keywords[] = {"type_index", "name", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "iU:FieldDescriptor", keywords, &index, &name)) {
    return NULL;
  }
  const PFTypeInfo* info = info_of(index);
  if (info == NULL) return NULL;
  for (int i = 0; i < info->num_fields; ++i) {
    const PFFieldInfo* f = &info->fields[i];
    PyObject* fname = str_of(f->name);
    int same = fname ? PyUnicode_Compare(fname, name) == 0 : -1;
    Py_XDECREF(fname);
    if (same < 0) return NULL;
    if (!same) continue;
    FieldDescr* d = (FieldDescr*)type->tp_alloc(type, 0);
    if (d == NULL) return NULL;
    d->owner = index;
    d->readonly = (char)((f->flags & PACKEDFUN_FIELD_READONLY) || f->setter == NULL);
    d->offset = f->offset;
    d->getter = f->getter;
    d->setter = f->setter;
    int32_t num_slots = 0;
    d->slot = (char)(PFTypeGetNumSlots(index, &num_slots) == 0);
    if (!d->slot) { /* not a slot type: drop the TypeError the query raised */
      PFObject* err = NULL;
      PFErrorMoveFromRaised(&err);
      PFObjectDecRef(err);
    }
    d->slot_type = f->static_type_index;
    Py_INCREF(name);
    d->name = name;
    d->qualname = qualified(info, f->name);
    /* a field without a docstring documents nothing: None, as a Python attribute's __doc__ */
    d->doc = f->doc.size != 0 ? str_of(f->doc) : Py_NewRef(Py_None);
    if (d->qualname == NULL || d->doc == NULL) return Py_DECREF(d), NULL;
    return (PyObject*)d;
  }
  PyObject* key = str_of(info->type_key);
  if (key != NULL) pfpy_raise_message(PyExc_KeyError, "TYPE_HAS_NO_FIELD", "(OO)", key, name);
  Py_XDECREF(key);
  return NULL;
}

static void field_dealloc(PyObject* self) {
  FieldDescr* d = (FieldDescr*)self;
  Py_XDECREF(d->name);
  Py_XDECREF(d->qualname);
  Py_XDECREF(d->doc);
  Py_TYPE(self)->tp_free(self);
}

static PyObject* field_repr(PyObject* self) {
  return PyUnicode_FromFormat("<packedfun field %U>", ((FieldDescr*)self)->qualname);
}

static PyMemberDef field_members[] = {
    {"__name__", T_OBJECT, offsetof(FieldDescr, name), READONLY, NULL},
    {"__qualname__", T_OBJECT, offsetof(FieldDescr, qualname), READONLY, NULL},
    {"__doc__", T_OBJECT, offsetof(FieldDescr, doc), READONLY, NULL},
    {"readonly", T_BOOL, offsetof(FieldDescr, readonly), READONLY, NULL},
    {"type_index", T_INT, offsetof(FieldDescr, owner), READONLY, NULL},
    {NULL, 0, 0, 0, NULL}};

static PyTypeObject FieldDescr_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "packedfun._core.FieldDescriptor",
    .tp_basicsize = sizeof(FieldDescr),
    .tp_dealloc = field_dealloc,
    .tp_repr = field_repr,
    /* subclassable: a Python-defined class's fields add the shared layer's `set`/`fset` */
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "FieldDescriptor(type_index, name): reads/writes a reflected field of an object.",
    .tp_members = field_members,
    .tp_descr_get = field_get,
    .tp_descr_set = field_set,
    .tp_new = field_new,
};

/* ---- class names
 * --------------------------------------------------------------------------------- */

/* set_type_name(cls, name): points the tp_name of `cls` (a class statement's heap type) at a copy
 * of `name`, the native type key, so that CPython's own messages name the native type the way they
 * name a C extension's types ("'mylib.Point' object has no attribute 'x'"). __name__, __qualname__
 * and __module__ read ht_name, ht_qualname and the class dict, so they stay the class's own. No
 * attribute hook is needed, which keeps LOAD_ATTR/LOAD_METHOD specialized (CPython only
 * specializes types whose tp_getattro is the generic one). The copy lives where PyType_FromSpec
 * keeps its own: _ht_tpname (3.11+), which type_dealloc frees with PyMem_Free. `cls.__name__ = x`
 * later points tp_name back into the new ht_name (type_set_name); the copy stays owned by
 * _ht_tpname until the class goes. Before 3.11 (no _ht_tpname) the class keeps its name. */
static PyObject* set_type_name(PyObject* mod, PyObject* const* args, Py_ssize_t nargs) {
  (void)mod;
  if (nargs != 2) return PyErr_Format(PyExc_TypeError, "set_type_name expects 2 arguments");
  PyObject *cls = args[0], *name = args[1];
  if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject*)cls, &PFPyObject_Type) ||
      !PyType_HasFeature((PyTypeObject*)cls, Py_TPFLAGS_HEAPTYPE)) {
    return pfpy_raise_message(PyExc_TypeError, "SET_TYPE_NAME_NOT_A_CLASS", "()");
  }
  if (!PyUnicode_Check(name)) return pfpy_raise_message(PyExc_TypeError, "TYPE_NAME_NOT_STR", "()");
#if PY_VERSION_HEX >= 0x030B0000 && !defined(Py_LIMITED_API)
  Py_ssize_t size = 0;
  const char* utf8 = PyUnicode_AsUTF8AndSize(name, &size);
  if (utf8 == NULL) return NULL;
  if ((size_t)size != strlen(utf8)) {
    return pfpy_raise_message(PyExc_ValueError, "TYPE_NAME_NUL", "()");
  }
  char* copy = (char*)PyMem_Malloc((size_t)size + 1);
  if (copy == NULL) return PyErr_NoMemory();
  memcpy(copy, utf8, (size_t)size + 1);
  PyHeapTypeObject* heap = (PyHeapTypeObject*)cls;
  char* old = heap->_ht_tpname; /* a previous copy (registered twice), never ht_name's buffer */
  heap->ht_type.tp_name = copy;
  heap->_ht_tpname = copy;
  PyMem_Free(old);
#endif
  Py_RETURN_NONE;
}

/* ---- registration in the module
 * ------------------------------------------------------------------ */

int pfpy_method_types_add(PyObject* m); /* object_method.c */

static PyMethodDef object_system_functions[] = {
    {"type_key_to_index", type_key_to_index, METH_O,
     "type_key_to_index(type_key)\n--\n\nThe type index of `type_key` (KeyError when unknown)."},
    {"type_info", type_info, METH_O,
     "type_info(type_index)\n--\n\nEverything the type table knows of a type, as a dict."},
    {"type_is_instance", (PyCFunction)(void (*)(void))type_is_instance, METH_FASTCALL,
     "type_is_instance(type_index, base_index)\n--\n\nWhether the type derives from base."},
    {"set_type_name", (PyCFunction)(void (*)(void))set_type_name, METH_FASTCALL,
     "set_type_name(cls, name)\n--\n\nMakes `name` the name CPython prints for instances of "
     "`cls` (its tp_name)."},
    {NULL, NULL, 0, NULL}};

int pfpy_object_system_add(PyObject* m) {
  if (PyType_Ready(&FieldDescr_Type) < 0) return -1;
  Py_INCREF(&FieldDescr_Type);
  if (PyModule_AddObject(m, "FieldDescriptor", (PyObject*)&FieldDescr_Type) < 0) return -1;
  if (PyModule_AddFunctions(m, object_system_functions) < 0) return -1;
  if (pfpy_method_types_add(m) < 0) return -1;
  if (pfpy_seq_types_add(m) < 0 || pfpy_map_types_add(m) < 0) return -1;
  return 0;
}
