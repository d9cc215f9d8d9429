/* Method and constructor descriptors of packedfun._core: reflected methods bound like functions. */
#include "object_system.h"

#include <stddef.h>
#include <structmember.h>

/* MethodDescriptor(func, name, doc=None) and ConstructorDescriptor(ctor): callables taking the
 * instance first, with Py_TPFLAGS_METHOD_DESCRIPTOR so `obj.method(...)` calls them without
 * building a bound method. */
typedef struct {
  PyObject_HEAD vectorcallfunc vectorcall;
  PyObject* func; /* the Function */
  PyObject* name;
  PyObject* doc;
} MethodDescr;

static PyTypeObject CtorDescr_Type;

static PyObject* method_call(PyObject* self, PyObject* const* args, size_t nargsf,
                             PyObject* kwnames) {
  return PyObject_Vectorcall(((MethodDescr*)self)->func, args, nargsf, kwnames);
}

static PFPY_NOINLINE PyObject* ctor_result_error(MethodDescr* d, PyObject* made) {
  pfpy_raise_message(PyExc_TypeError, "CONSTRUCTOR_MADE_NO_OBJECT", "(Os)", d->name,
                     Py_TYPE(made)->tp_name);
  Py_DECREF(made);
  return NULL;
}

/* Calls the constructor Function with `args` (keywords, their values following the positional
 * ones, bind in the Function) and moves the handle of what it made into `target`. */
static PyObject* ctor_fill(MethodDescr* d, PFPyObject* target, PyObject* const* args, size_t nargsf,
                           PyObject* kwnames) {
  PyObject* made = PyObject_Vectorcall(d->func, args, nargsf, kwnames);
  if (made == NULL) return NULL;
  if (!PyObject_TypeCheck(made, &PFPyObject_Type) || ((PFPyObject*)made)->handle == NULL) {
    return ctor_result_error(d, made);
  }
  PFObject* h = ((PFPyObject*)made)->handle;
  PFObjectIncRef(h);
  Py_DECREF(made);
  PFObject* old = target->handle;
  target->handle = h;
  PFObjectDecRef(old);
  pfpy_object_bind(target);
  Py_RETURN_NONE;
}

/* ctor(*args[1:]) must return an object; args[0] (the instance) takes its handle. */
static PyObject* ctor_call(PyObject* self, PyObject* const* args, size_t nargsf,
                           PyObject* kwnames) {
  MethodDescr* d = (MethodDescr*)self;
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  if (n < 1 || !PyObject_TypeCheck(args[0], &PFPyObject_Type)) {
    return pfpy_raise_message(PyExc_TypeError, "METHOD_NEEDS_OBJECT", "(O)", d->name);
  }
  if (((PFPyObject*)args[0])->handle != NULL) return pfpy_already_initialized(args[0]);
  return ctor_fill(d, (PFPyObject*)args[0], args + 1, (size_t)(n - 1), kwnames);
}

/* ---- calling a reflected class: Cls(...) -------------------------------------------------------
 * Left to CPython, a call of a class with keywords packs them into a dict for __new__/__init__
 * and unpacks that dict again for the vectorcall of __init__: most of the cost of
 * `Pair(a=1, b=2)`. A class whose __init__ is its ConstructorDescriptor and whose __new__ is
 * Object's gets this vectorcall as its type's tp_vectorcall instead: the instance is allocated
 * and filled by the constructor with the caller's own argument vector and kwnames. Anything else
 * (an __init__ or __new__ set later, in Python) is seen at the call and goes the default way. */

static PyObject* init_name = NULL; /* interned "__init__" */

static PFPY_NOINLINE PyObject* construct_default(PyObject* type, PyObject* const* args,
                                                 size_t nargsf, PyObject* kwnames) {
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
  PyObject* tuple = PyTuple_New(n);
  PyObject* dict = nkw != 0 ? PyDict_New() : NULL;
  PyObject* result = NULL;
  if (tuple != NULL && (nkw == 0 || dict != NULL)) {
    for (Py_ssize_t i = 0; i < n; ++i) PyTuple_SET_ITEM(tuple, i, Py_NewRef(args[i]));
    int ok = 1;
    for (Py_ssize_t k = 0; ok && k < nkw; ++k) {
      ok = PyDict_SetItem(dict, PyTuple_GET_ITEM(kwnames, k), args[n + k]) == 0;
    }
    if (ok) result = PyType_Type.tp_call(type, tuple, dict);
  }
  Py_XDECREF(tuple);
  Py_XDECREF(dict);
  return result;
}

/* A class whose __init__ is a Python function (a py_class's generated one): the instance is
 * allocated and __init__ called with the caller's argument vector and kwnames, self put in the
 * slot before them when the caller lent it (PY_VECTORCALL_ARGUMENTS_OFFSET), as CPython's own
 * method calls do; no tuple or dict is made for the keywords. */
static PFPY_NOINLINE PyObject* construct_python_init(PyTypeObject* type, PyObject* init,
                                                     PyObject* const* args, size_t nargsf,
                                                     PyObject* kwnames) {
  PyObject* self = type->tp_alloc(type, 0);
  if (self == NULL) return NULL;
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  Py_ssize_t total = n + (kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames));
  PyObject* result;
  if (nargsf & PY_VECTORCALL_ARGUMENTS_OFFSET) {
    PyObject** slot = (PyObject**)args - 1;
    PyObject* saved = *slot;
    *slot = self;
    result = PyObject_Vectorcall(init, slot, (size_t)(n + 1), kwnames);
    *slot = saved;
  } else {
    PyObject* small[8];
    PyObject** vec = total + 1 <= 8 ? small : PyMem_Malloc(sizeof(PyObject*) * (size_t)(total + 1));
    if (vec == NULL) {
      Py_DECREF(self);
      return PyErr_NoMemory();
    }
    vec[0] = self;
    for (Py_ssize_t i = 0; i < total; ++i) vec[i + 1] = args[i];
    result = PyObject_Vectorcall(init, vec, (size_t)(n + 1), kwnames);
    if (vec != small) PyMem_Free(vec);
  }
  if (result == NULL) {
    Py_DECREF(self);
    return NULL;
  }
  if (result != Py_None) {
    Py_DECREF(result);
    Py_DECREF(self);
    return PyErr_Format(PyExc_TypeError, "__init__() should return None, not '%.200s'",
                        Py_TYPE(result)->tp_name);
  }
  Py_DECREF(result);
  return self;
}

static PyObject* construct_vectorcall(PyObject* type_obj, PyObject* const* args, size_t nargsf,
                                      PyObject* kwnames) {
  PyTypeObject* type = (PyTypeObject*)type_obj;
  PyObject* init = _PyType_Lookup(type, init_name); /* borrowed; the type's method cache */
  if (PFPY_UNLIKELY(init == NULL || !Py_IS_TYPE(init, &CtorDescr_Type) ||
                    type->tp_new != PFPyObject_Type.tp_new)) {
    if (init != NULL && PyFunction_Check(init) && type->tp_new == PFPyObject_Type.tp_new) {
      return construct_python_init(type, init, args, nargsf, kwnames);
    }
    return construct_default(type_obj, args, nargsf, kwnames);
  }
  PyObject* self = type->tp_alloc(type, 0);
  if (self == NULL) return NULL;
  PyObject* none = ctor_fill((MethodDescr*)init, (PFPyObject*)self, args, nargsf, kwnames);
  if (none == NULL) {
    Py_DECREF(self);
    return NULL;
  }
  Py_DECREF(none);
  return self;
}

/* packedfun._core.fast_construct(cls): installs construct_vectorcall on a reflected class. */
static PyObject* fast_construct(PyObject* mod, PyObject* cls) {
  (void)mod;
  if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject*)cls, &PFPyObject_Type)) {
    return pfpy_raise_message(PyExc_TypeError, "FAST_CONSTRUCT_NOT_A_CLASS", "()");
  }
  if (init_name == NULL && (init_name = PyUnicode_InternFromString("__init__")) == NULL) {
    return NULL;
  }
  ((PyTypeObject*)cls)->tp_vectorcall = construct_vectorcall;
  Py_RETURN_NONE;
}

PyMethodDef pfpy_construct_methods[] = {
    {"fast_construct", fast_construct, METH_O,
     "fast_construct(cls)\n--\n\nCalls of `cls` (a reflected class whose __init__ is its "
     "ConstructorDescriptor) go straight to the constructor, keywords included."},
    {NULL, NULL, 0, NULL}};

/* func(*args[1:]): `mod.fn(...)` loads the descriptor as a method and passes the Module first. */
static PyObject* module_function_call(PyObject* self, PyObject* const* args, size_t nargsf,
                                      PyObject* kwnames) {
  MethodDescr* d = (MethodDescr*)self;
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  if (PFPY_UNLIKELY(n < 1)) {
    return pfpy_raise_message(PyExc_TypeError, "MODULE_FUNCTION_NEEDS_MODULE", "(O)", d->name);
  }
  /* args[0] (the Module) is the slot in front of the arguments the callee may borrow. The
   * caller checks the result, so the Function's vectorcall is called directly. */
  size_t rest = (size_t)(n - 1) | PY_VECTORCALL_ARGUMENTS_OFFSET;
  vectorcallfunc call = PyVectorcall_Function(d->func);
  if (PFPY_LIKELY(call != NULL)) return call(d->func, args + 1, rest, kwnames);
  return PyObject_Vectorcall(d->func, args + 1, rest, kwnames);
}

static PyObject* module_function_get(PyObject* self, PyObject* obj, PyObject* type) {
  (void)obj;
  (void)type;
  PyObject* func = ((MethodDescr*)self)->func;
  return Py_INCREF(func), func;
}

static PyObject* method_get(PyObject* self, PyObject* obj, PyObject* type) {
  (void)type;
  if (obj == NULL || obj == Py_None) return Py_INCREF(self), self;
  return PyMethod_New(self, obj);
}

static PyObject* descr_make(PyTypeObject* type, PyObject* func, PyObject* name, PyObject* doc,
                            vectorcallfunc call) {
  if (!PyObject_TypeCheck(func, &PFPyFunction_Type)) {
    return pfpy_raise_message(PyExc_TypeError, "DESCRIPTOR_NEEDS_FUNCTION", "(ss)", type->tp_name,
                              Py_TYPE(func)->tp_name);
  }
  MethodDescr* d = (MethodDescr*)type->tp_alloc(type, 0);
  if (d == NULL) return NULL;
  d->vectorcall = call;
  Py_INCREF(func);
  d->func = func;
  Py_INCREF(name);
  d->name = name;
  Py_INCREF(doc);
  d->doc = doc;
  return (PyObject*)d;
}

static PyObject* method_new(PyTypeObject* type, PyObject* args, PyObject* kwds) {
  PyObject *func, *name, *doc = Py_None;
  static char* keywords[] = {"func", "name", "doc", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "OU|O:MethodDescriptor", keywords, &func, &name,
                                   &doc)) {
    return NULL;
  }
  return descr_make(type, func, name, doc, method_call);
}

static PyObject* module_function_new(PyTypeObject* type, PyObject* args, PyObject* kwds) {
  PyObject *func, *name;
  static char* keywords[] = {"func", "name", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "OU:ModuleFunctionDescriptor", keywords, &func,
                                   &name)) {
    return NULL;
  }
  return descr_make(type, func, name, Py_None, module_function_call);
}

/* packedfun._rules.signature.<what>(args...): the shared Python layer for the cold introspection of
 * descriptors (docstrings, signatures), as the ctypes backend calls it. */
static PFPY_NOINLINE PyObject* call_signature_helper(const char* what, const char* format,
                                                     PyObject* a, PyObject* b) {
  PyObject* mod = PyImport_ImportModule("packedfun._rules.signature");
  if (mod == NULL) return NULL;
  PyObject* r = PyObject_CallMethod(mod, what, format, a, b);
  Py_DECREF(mod);
  return r;
}

static PyObject* ctor_new(PyTypeObject* type, PyObject* args, PyObject* kwds) {
  PyObject* func;
  static char* keywords[] = {"ctor", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "O:ConstructorDescriptor", keywords, &func)) {
    return NULL;
  }
  if (!PyObject_TypeCheck(func, &PFPyFunction_Type))
    return descr_make(type, func, NULL, NULL, NULL);
  PyObject* name = PyUnicode_FromString("__init__");
  PyObject* doc = name != NULL ? call_signature_helper("function_doc", "(O)", func, NULL) : NULL;
  PyObject* r = doc != NULL ? descr_make(type, func, name, doc, ctor_call) : NULL;
  Py_XDECREF(name);
  Py_XDECREF(doc);
  return r;
}

static void method_dealloc(PyObject* self) {
  MethodDescr* d = (MethodDescr*)self;
  Py_XDECREF(d->func);
  Py_XDECREF(d->name);
  Py_XDECREF(d->doc);
  Py_TYPE(self)->tp_free(self);
}

static PyObject* method_repr(PyObject* self) {
  return pfpy_message("METHOD_REPR", "(OO)", ((MethodDescr*)self)->name,
                      ((MethodDescr*)self)->func);
}

static PyObject* method_get_signature(PyObject* self, void* closure) {
  (void)closure;
  PyObject* ctor = Py_TYPE(self) == &CtorDescr_Type ? Py_True : Py_False;
  return call_signature_helper("method_signature", "(OO)", ((MethodDescr*)self)->func, ctor);
}

static PyGetSetDef method_getset[] = {{"__signature__", method_get_signature, NULL,
                                       "self, then the metadata record's parameters.", NULL},
                                      {NULL, NULL, NULL, NULL, NULL}};

static PyMemberDef method_members[] = {
    {"__name__", T_OBJECT, offsetof(MethodDescr, name), READONLY, NULL},
    {"__doc__", T_OBJECT, offsetof(MethodDescr, doc), READONLY, NULL},
    {"__func__", T_OBJECT, offsetof(MethodDescr, func), READONLY, NULL},
    {NULL, 0, 0, 0, NULL}};

#define METHOD_TYPE_COMMON                                                                    \
  .tp_basicsize = sizeof(MethodDescr), .tp_dealloc = method_dealloc, .tp_repr = method_repr,  \
  .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_METHOD_DESCRIPTOR | Py_TPFLAGS_HAVE_VECTORCALL, \
  .tp_vectorcall_offset = offsetof(MethodDescr, vectorcall), .tp_call = PyVectorcall_Call,    \
  .tp_members = method_members, .tp_getset = method_getset, .tp_descr_get = method_get

static PyTypeObject MethodDescr_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "packedfun._core.MethodDescriptor",
    METHOD_TYPE_COMMON,
    .tp_doc = "MethodDescriptor(func, name, doc=None): a reflected instance method.",
    .tp_new = method_new,
};

static PyTypeObject CtorDescr_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "packedfun._core.ConstructorDescriptor",
    METHOD_TYPE_COMMON,
    .tp_doc = "ConstructorDescriptor(ctor): an __init__ that fills the instance from ctor(*args).",
    .tp_new = ctor_new,
};

/* Not METHOD_TYPE_COMMON: reading it gives the Function itself, never a bound method. */
static PyTypeObject ModuleFunctionDescr_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "packedfun._core.ModuleFunctionDescriptor",
    .tp_basicsize = sizeof(MethodDescr),
    .tp_dealloc = method_dealloc,
    .tp_repr = method_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_METHOD_DESCRIPTOR | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(MethodDescr, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_members = method_members,
    .tp_descr_get = module_function_get,
    .tp_doc =
        "ModuleFunctionDescriptor(func, name): a module's function as a class attribute of "
        "its Module; reading it gives func, and `mod.name(...)` calls func without a bound "
        "method or an instance-dict lookup.",
    .tp_new = module_function_new,
};

int pfpy_method_types_add(PyObject* m) {
  if (PyType_Ready(&MethodDescr_Type) < 0 || PyType_Ready(&CtorDescr_Type) < 0) return -1;
  if (PyType_Ready(&ModuleFunctionDescr_Type) < 0) return -1;
  Py_INCREF(&ModuleFunctionDescr_Type);
  if (PyModule_AddObject(m, "ModuleFunctionDescriptor", (PyObject*)&ModuleFunctionDescr_Type) < 0)
    return -1;
  Py_INCREF(&MethodDescr_Type);
  if (PyModule_AddObject(m, "MethodDescriptor", (PyObject*)&MethodDescr_Type) < 0) return -1;
  Py_INCREF(&CtorDescr_Type);
  if (PyModule_AddObject(m, "ConstructorDescriptor", (PyObject*)&CtorDescr_Type) < 0) return -1;
  return 0;
}
