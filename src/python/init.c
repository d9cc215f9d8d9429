/* The packedfun._core module: initialization, module loading and the object factory. */
#include "core.h"
#include "object_system.h"
#include "tensor.h"

#include <dlfcn.h>

static PyObject* module_load(PyObject* mod, PyObject* path) {
  (void)mod;
  if (!PyUnicode_Check(path)) {
    PyObject* fs = NULL;
    if (!PyUnicode_FSDecoder(path, &fs)) return NULL;
    PyObject* r = module_load(mod, fs);
    Py_DECREF(fs);
    return r;
  }
  PFByteArray view;
  if (pfpy_str_view(path, &view) != 0) return NULL;
  PFObject* module = NULL;
  if (PFModuleLoadFromFile(&view, &module) != 0) return pfpy_raise_native(path);
  return pfpy_object_wrap(module);
}

static PyObject* module_get_function(PyObject* mod, PyObject* args, PyObject* kwargs) {
  (void)mod;
  static char* keywords[] = {"module", "name", "query_imports", NULL};
  PyObject *module, *name;
  int query_imports = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!U|p:module_get_function", keywords,
                                   &PFPyObject_Type, &module, &name, &query_imports)) {
    return NULL;
  }
  PFObject* h = ((PFPyObject*)module)->handle;
  if (h == NULL || h->type_index != kPFTypeModule) {
    return pfpy_raise_message(PyExc_TypeError, "MODULE_GET_FUNCTION_EXPECTED", "()");
  }
  PFByteArray view;
  if (pfpy_str_view(name, &view) != 0) return NULL;
  PFObject* func = NULL;
  if (PFModuleGetFunction(h, &view, query_imports, &func) != 0) return pfpy_raise_native(name);
  if (func == NULL) Py_RETURN_NONE;
  return pfpy_function_new(func, name);
}

static PyObject* set_object_factory(PyObject* mod, PyObject* factory) {
  (void)mod;
  if (factory != Py_None && !PyCallable_Check(factory)) {
    return pfpy_raise_message(PyExc_TypeError, "OBJECT_FACTORY_NOT_CALLABLE", "()");
  }
  PyObject* old = pfpy_object_factory;
  if (factory != Py_None) Py_INCREF(factory);
  pfpy_object_factory = factory == Py_None ? NULL : factory;
  Py_XDECREF(old);
  pfpy_object_factory_reset();
  Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"module_load", module_load, METH_O,
     "module_load(path)\n--\n\nLoads a shared library (running its static registrations) and "
     "returns its Module object."},
    {"module_get_function", (PyCFunction)(void (*)(void))module_get_function,
     METH_VARARGS | METH_KEYWORDS,
     "module_get_function(module, name, query_imports=False)\n--\n\nThe Function `name` of "
     "`module`, or None when it has none."},
    {"set_object_factory", set_object_factory, METH_O,
     "set_object_factory(factory)\n--\n\nInstalls factory(type_index) -> class or None, the "
     "Python class of returned objects. Answers are cached per type index until the next call "
     "of set_object_factory."},
    {NULL, NULL, 0, NULL}};

/* Path of the loaded libpackedfun (found through one of its symbols). */
static PyObject* runtime_path(void) {
  Dl_info info;
  if (dladdr((void*)&PFGetABIVersion, &info) != 0 && info.dli_fname != NULL) {
    return PyUnicode_DecodeFSDefault(info.dli_fname);
  }
  return PyUnicode_FromString("");
}

static int add_contents(PyObject* m) {
  uint32_t abi = PFGetABIVersion();
  if ((abi >> 16) != PACKEDFUN_ABI_VERSION_MAJOR) {
    pfpy_raise_message(PyExc_ImportError, "ABI_MISMATCH", "(siII)", "packedfun._core",
                       PACKEDFUN_ABI_VERSION_MAJOR, abi >> 16, abi & 0xFFFF);
    return -1;
  }
  if (PyType_Ready(&PFPyObject_Type) < 0 || pfpy_function_type_ready() < 0) return -1;
  if (PyModule_AddFunctions(m, pfpy_registry_methods) < 0 ||
      PyModule_AddFunctions(m, pfpy_error_methods) < 0 ||
      PyModule_AddFunctions(m, pfpy_convert_methods) < 0 ||
      PyModule_AddFunctions(m, pfpy_construct_methods) < 0 ||
      PyModule_AddFunctions(m, pfpy_module_methods) < 0 ||
      PyModule_AddFunctions(m, pfpy_stream_methods) < 0) {
    return -1;
  }
  Py_INCREF(&PFPyObject_Type);
  if (PyModule_AddObject(m, "Object", (PyObject*)&PFPyObject_Type) < 0) return -1;
  Py_INCREF(&PFPyFunction_Type);
  if (PyModule_AddObject(m, "Function", (PyObject*)&PFPyFunction_Type) < 0) return -1;
  if (pfpy_tensor_add_to_module(m) < 0 || pfpy_error_add_to_module(m) < 0) return -1;
  if (pfpy_object_system_add(m) < 0) return -1; /* objects and containers */
  if (PyModule_AddIntConstant(m, "ABI_VERSION", (long)abi) < 0) return -1;
  PyObject* path = runtime_path();
  if (path == NULL || PyModule_AddObject(m, "LIB_PATH", path) < 0) {
    Py_XDECREF(path);
    return -1;
  }
  return 0;
}

/* Multi-phase initialisation: the exec slot fills the module object the import system made. The
 * types are static and the runtime is one per process, so one interpreter only; and the GIL is
 * declared used: the free-threaded build has not been tested (see docs/threads.md). */
static int core_exec(PyObject* m) {
  if (add_contents(m) < 0) return -1;
  pfpy_gil_check_init();
  pfpy_install_env_hooks();
  return 0;
}

static PyModuleDef_Slot core_slots[] = {
    {Py_mod_exec, (void*)core_exec},
#if PY_VERSION_HEX >= 0x030C0000
    {Py_mod_multiple_interpreters, Py_MOD_MULTIPLE_INTERPRETERS_NOT_SUPPORTED},
#endif
#if PY_VERSION_HEX >= 0x030D0000
    {Py_mod_gil, Py_MOD_GIL_USED},
#endif
    {0, NULL}};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT,
    "packedfun._core",
    "The compiled backend of packedfun: Function and Object types and the C ABI bindings.",
    0,
    module_methods,
    core_slots,
    NULL,
    NULL,
    NULL};

PyMODINIT_FUNC PyInit__core(void) { return PyModuleDef_Init(&core_module); }
