/* packedfun.Object: the base Python type of every wrapper of a native object, and object wrapping.
 */
#include "core.h"
#include "object_system.h"
#include "tensor.h"

#include <stdint.h>

PyObject* pfpy_object_factory = NULL;

/* Classes found by the object factory, indexed by type index (owned references). Only positive
 * answers are cached; set_object_factory clears the cache. */
#define CLASS_CACHE_SIZE 1024
static PyObject* class_cache[CLASS_CACHE_SIZE];

void pfpy_object_factory_reset(void) {
  for (int i = 0; i < CLASS_CACHE_SIZE; ++i) Py_CLEAR(class_cache[i]);
}

/* The Python class for objects of `tindex` (borrowed), or NULL with an exception. */
static PyTypeObject* class_for(int32_t tindex) {
  if (pfpy_object_factory == NULL) return pfpy_default_class(tindex);
  if (tindex >= 0 && tindex < CLASS_CACHE_SIZE && class_cache[tindex] != NULL) {
    return (PyTypeObject*)class_cache[tindex];
  }
  PyObject* cls = PyObject_CallFunction(pfpy_object_factory, "i", (int)tindex);
  if (cls == NULL) return NULL;
  if (cls == Py_None) {
    Py_DECREF(cls);
    return pfpy_default_class(tindex);
  }
  if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject*)cls, &PFPyObject_Type)) {
    pfpy_raise_message(PyExc_TypeError, "OBJECT_FACTORY_RESULT", "(Oi)", cls, (int)tindex);
    Py_DECREF(cls);
    return NULL;
  }
  if (tindex >= 0 && tindex < CLASS_CACHE_SIZE) {
    class_cache[tindex] = cls; /* keeps the reference */
  } else {
    Py_DECREF(cls); /* still referenced by the factory's own table */
  }
  return (PyTypeObject*)cls;
}

PyObject* pfpy_object_wrap(PFObject* obj) {
  if (obj == NULL) Py_RETURN_NONE;
  if (obj->type_index == kPFTypeFunction) return pfpy_function_new(obj, NULL);
  if (obj->type_index == kPFTypeTensor) return pfpy_tensor_wrap(obj);
  if (pfpy_is_own_opaque(obj)) {
    PyObject* o = (PyObject*)((PFOpaqueObject*)obj)->handle;
    Py_INCREF(o);
    PFObjectDecRef(obj);
    return o;
  }
  /* A Python-defined instance (a slot object) that has a live wrapper comes back as that wrapper.
   * A wrapper whose count is 0 is being deallocated (its dealloc may run Python code before it
   * clears the reference): a new wrapper takes its place. */
  void* known = PFObjectGetBindingRef(obj);
  if (known != NULL && Py_REFCNT((PyObject*)known) > 0) {
    Py_INCREF((PyObject*)known);
    PFObjectDecRef(obj);
    return (PyObject*)known;
  }
  PyTypeObject* cls = class_for(obj->type_index);
  PFPyObject* self = cls ? (PFPyObject*)cls->tp_alloc(cls, 0) : NULL;
  if (self == NULL) {
    PFObjectDecRef(obj);
    return NULL;
  }
  self->handle = obj;
  PFObjectExchangeBindingRef(obj, known, self); /* 0 (nothing to do) for other objects */
  return (PyObject*)self;
}

void pfpy_object_bind(PFPyObject* self) {
  PFObject* h = self->handle;
  if (h == NULL) return;
  void* known = PFObjectGetBindingRef(h);
  if (known == NULL || Py_REFCNT((PyObject*)known) == 0) PFObjectExchangeBindingRef(h, known, self);
}

/* ---- garbage collection -------------------------------------------------------------------------
 * A wrapper is the only owner of its native object when that object's reference count is 1; then
 * the Python objects the native object keeps alive are kept alive through this wrapper alone, and
 * the GC may follow them (and break a cycle by dropping the native object). The walk goes on
 * through children that are themselves solely owned (count 1: held only by their parent) and stops
 * at any shared one, whose other holders the GC cannot see: a visit is sound only when it stands
 * for a reference that exists once, through this path, so each Python object is visited once per
 * reference its solely owned holder has (a Function's callable, an Opaque's object). Depth is
 * capped: past it nothing is visited, which can only keep garbage, never free what is live. */
#define GC_MAX_DEPTH 64

typedef struct {
  visitproc visit;
  void* arg;
  int depth;
} GCWalk;

static int gc_walk(PFObject* obj, GCWalk* w);

static int gc_child(PFObject* child, void* ctx) {
  if (__atomic_load_n(&child->ref_count, __ATOMIC_ACQUIRE) != 1) return 0; /* shared: stop */
  return gc_walk(child, (GCWalk*)ctx);
}

/* `obj` is solely owned along the path walked so far. */
static int gc_walk(PFObject* obj, GCWalk* w) {
  if (obj->type_index == kPFTypeFunction) {
    PFFunctionObject* f = (PFFunctionObject*)obj;
    if (f->safe_call != &pfpy_callback_call || f->self == NULL) return 0;
    return w->visit((PyObject*)f->self, w->arg);
  }
  if (pfpy_is_own_opaque(obj)) return w->visit((PyObject*)((PFOpaqueObject*)obj)->handle, w->arg);
  if (obj->type_index == kPFTypeString || obj->type_index == kPFTypeBytes) return 0;
  if (w->depth >= GC_MAX_DEPTH) return 0;
  ++w->depth;
  int rc = PFObjectVisitChildren(obj, &gc_child, w);
  --w->depth;
  return rc;
}

int pfpy_visit_owned(PFObject* obj, visitproc visit, void* arg) {
  if (obj == NULL || __atomic_load_n(&obj->ref_count, __ATOMIC_ACQUIRE) != 1) return 0;
  GCWalk w = {visit, arg, 0};
  return gc_walk(obj, &w);
}

void pfpy_clear_owned(PFPyObject* self) {
  PFObject* h = self->handle;
  if (h == NULL || __atomic_load_n(&h->ref_count, __ATOMIC_ACQUIRE) != 1) return;
  self->handle = NULL; /* before the release, which may run Python code that sees this wrapper */
  PFObjectExchangeBindingRef(h, self, NULL);
  PFObjectDecRef(h);
}

static int object_traverse(PyObject* self, visitproc visit, void* arg) {
  /* The class is not visited: static here, and subtype_traverse visits heap subclasses' own. */
  return pfpy_visit_owned(((PFPyObject*)self)->handle, visit, arg);
}

static int object_clear(PyObject* self) {
  pfpy_clear_owned((PFPyObject*)self);
  return 0;
}

/* ---- the type ----------------------------------------------------------------------------------
 */

static PyObject* object_new(PyTypeObject* type, PyObject* args, PyObject* kwds) {
  (void)args;
  (void)kwds;
  return type->tp_alloc(type, 0); /* empty; subclasses fill it in __init__ */
}

static void object_dealloc(PyObject* self) {
  PFPyObject* o = (PFPyObject*)self;
  PyObject_GC_UnTrack(self);
  if (o->weakrefs != NULL) PyObject_ClearWeakRefs(self);
  PFObject* h = o->handle;
  o->handle = NULL;
  if (h != NULL) PFObjectExchangeBindingRef(h, self, NULL);
  PFObjectDecRef(h);
  Py_TYPE(self)->tp_free(self);
}

static PyObject* object_get_handle(PyObject* self, void* closure) {
  (void)closure;
  return PyLong_FromVoidPtr(((PFPyObject*)self)->handle);
}

static PyObject* object_get_type_index(PyObject* self, void* closure) {
  (void)closure;
  PFObject* h = ((PFPyObject*)self)->handle;
  return PyLong_FromLong(h ? (long)h->type_index : (long)kPFTypeNone);
}

/* The type key of `self` as a new str ("None" when empty). */
static PyObject* object_type_key_str(PFObject* h) {
  if (h == NULL) return PyUnicode_FromString("None");
  const PFTypeInfo* info = NULL;
  if (PFTypeGetInfo(h->type_index, &info) != 0 || info == NULL) {
    PFObject* err = NULL;
    PFErrorMoveFromRaised(&err);
    PFObjectDecRef(err);
    return PyUnicode_FromFormat("<type %d>", (int)h->type_index);
  }
  return PyUnicode_DecodeUTF8(info->type_key.data, (Py_ssize_t)info->type_key.size, "replace");
}

static PyObject* object_get_type_key(PyObject* self, void* closure) {
  (void)closure;
  return object_type_key_str(((PFPyObject*)self)->handle);
}

static PyObject* object_repr(PyObject* self) {
  PFObject* h = ((PFPyObject*)self)->handle;
  PyObject* key = object_type_key_str(h);
  if (key == NULL) return NULL;
  PyObject* r = PyUnicode_FromFormat("<%s %U at %p>", Py_TYPE(self)->tp_name, key, (void*)h);
  Py_DECREF(key);
  return r;
}

static Py_hash_t object_hash(PyObject* self) {
  PFObject* h = ((PFPyObject*)self)->handle;
  uintptr_t addr = (uintptr_t)(h != NULL ? (void*)h : (void*)self);
  Py_hash_t x = (Py_hash_t)((addr >> 4) | (addr << (8 * sizeof(uintptr_t) - 4)));
  return x == -1 ? -2 : x;
}

static int same_as(PyObject* a, PyObject* b) {
  if (a == b) return 1;
  if (!PyObject_TypeCheck(b, &PFPyObject_Type)) return 0;
  PFObject* ha = ((PFPyObject*)a)->handle;
  return ha != NULL && ha == ((PFPyObject*)b)->handle;
}

static PyObject* object_richcompare(PyObject* a, PyObject* b, int op) {
  if ((op != Py_EQ && op != Py_NE) || !PyObject_TypeCheck(b, &PFPyObject_Type)) {
    Py_RETURN_NOTIMPLEMENTED;
  }
  int eq = same_as(a, b);
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

/* __chandle__(): the native object's address (apache-tvm-ffi's protocol method; the handle). */
static PyObject* object_chandle(PyObject* self, PyObject* unused) {
  (void)unused;
  return object_get_handle(self, NULL);
}

static PyObject* object_same_as(PyObject* self, PyObject* other) {
  return PyBool_FromLong(same_as(self, other));
}

PyObject* pfpy_already_initialized(PyObject* self) {
  PyObject* key = object_type_key_str(((PFPyObject*)self)->handle);
  if (key == NULL) return NULL;
  pfpy_raise_message(PyExc_TypeError, "ALREADY_INITIALIZED", "(sO)", Py_TYPE(self)->tp_name, key);
  Py_DECREF(key);
  return NULL;
}

/* __init_handle_by_constructor__(ctor, *args): self takes the object that ctor(*args) returns.
 * A wrapper that already holds an object refuses: rebinding it would silently change what every
 * other reference to this Python object sees. */
static PyObject* object_init_by_ctor(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 1 || !PyObject_TypeCheck(args[0], &PFPyFunction_Type)) {
    return pfpy_raise_message(PyExc_TypeError, "INIT_HANDLE_NEEDS_FUNCTION", "()");
  }
  if (((PFPyObject*)self)->handle != NULL) return pfpy_already_initialized(self);
  PyObject* result = PyObject_Vectorcall(args[0], args + 1, (size_t)(nargs - 1), NULL);
  if (result == NULL) return NULL;
  if (!PyObject_TypeCheck(result, &PFPyObject_Type) || ((PFPyObject*)result)->handle == NULL) {
    pfpy_raise_message(PyExc_TypeError, "CONSTRUCTOR_RETURNED_NO_OBJECT", "(Os)", args[0],
                       Py_TYPE(result)->tp_name);
    Py_DECREF(result);
    return NULL;
  }
  PFObject* h = ((PFPyObject*)result)->handle;
  PFObjectIncRef(h);
  Py_DECREF(result);
  PFObject* old = ((PFPyObject*)self)->handle;
  ((PFPyObject*)self)->handle = h;
  PFObjectDecRef(old);
  pfpy_object_bind((PFPyObject*)self);
  Py_RETURN_NONE;
}

static PyGetSetDef object_getset[] = {
    {"handle", object_get_handle, NULL, "Address of the native object (0 when empty).", NULL},
    {"id_", object_get_handle, NULL, "The native object's address (apache-tvm-ffi's name).", NULL},
    {"type_index", object_get_type_index, NULL, "Run-time type index of the native object.", NULL},
    {"type_key", object_get_type_key, NULL, "Type key of the native object.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef object_methods[] = {
    {"same_as", object_same_as, METH_O, "Whether `other` wraps the same native object."},
    {"is_", object_same_as, METH_O, "same_as (apache-tvm-ffi's name)."},
    {"__chandle__", object_chandle, METH_NOARGS, "The native object's address (as handle)."},
    {"__init_handle_by_constructor__", (PyCFunction)(void (*)(void))object_init_by_ctor,
     METH_FASTCALL, "Fills this wrapper with the object returned by ctor(*args)."},
    {NULL, NULL, 0, NULL}};

PyTypeObject PFPyObject_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "packedfun.Object",
    .tp_basicsize = sizeof(PFPyObject),
    .tp_dealloc = object_dealloc,
    .tp_repr = object_repr,
    .tp_hash = object_hash,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc =
        "Base class of every packedfun object wrapper: owns one reference to a native "
        "object.",
    .tp_traverse = object_traverse,
    .tp_clear = object_clear,
    .tp_richcompare = object_richcompare,
    .tp_weaklistoffset = offsetof(PFPyObject, weakrefs),
    .tp_methods = object_methods,
    .tp_getset = object_getset,
    .tp_new = object_new,
};
