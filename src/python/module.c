/* The packedfun._core bindings of the PFModule* entry points beyond load and get_function. */
#include "core.h"

/* The native Module of `o` (borrowed), or NULL with a TypeError naming `fn`. */
static PFObject* module_handle(PyObject* o, const char* fn) {
  if (PyObject_TypeCheck(o, &PFPyObject_Type)) {
    PFObject* h = ((PFPyObject*)o)->handle;
    if (h != NULL && h->type_index == kPFTypeModule) return h;
  }
  pfpy_raise_message(PyExc_TypeError, "MODULE_EXPECTED", "(ss)", fn, Py_TYPE(o)->tp_name);
  return NULL;
}

static PyObject* module_system_lib(PyObject* mod, PyObject* unused) {
  (void)mod;
  (void)unused;
  PFObject* module = NULL;
  if (PFModuleGetSystemLib(&module) != 0) return pfpy_raise_native(NULL);
  return pfpy_object_wrap(module);
}

static PyObject* module_get_path(PyObject* mod, PyObject* module) {
  (void)mod;
  PFObject* h = module_handle(module, "module_get_path");
  if (h == NULL) return NULL;
  PFAny out = {0};
  if (PFModuleGetPath(h, &out) != 0) return pfpy_raise_native(NULL);
  return pfpy_any_steal_to_py(&out);
}

static PyObject* module_get_entry_name(PyObject* mod, PyObject* module) {
  (void)mod;
  PFObject* h = module_handle(module, "module_get_entry_name");
  if (h == NULL) return NULL;
  PFAny out = {0};
  if (PFModuleGetEntryName(h, &out) != 0) return pfpy_raise_native(NULL);
  return pfpy_any_steal_to_py(&out);
}

static PyObject* module_set_tvm_ffi_library(PyObject* mod, PyObject* path) {
  (void)mod;
  PFByteArray view = {NULL, 0};
  if (path != Py_None && pfpy_str_view(path, &view) != 0) return NULL;
  if (PFModuleSetTVMFFILibrary(&view) != 0) return pfpy_raise_native(NULL);
  Py_RETURN_NONE;
}

static PyObject* module_list_functions(PyObject* mod, PyObject* args) {
  (void)mod;
  PyObject* module;
  int query_imports = 0;
  if (!PyArg_ParseTuple(args, "O|p:module_list_functions", &module, &query_imports)) return NULL;
  PFObject* h = module_handle(module, "module_list_functions");
  if (h == NULL) return NULL;
  PFAny out = {0};
  if (PFModuleListFunctions(h, query_imports, &out) != 0) return pfpy_raise_native(NULL);
  return pfpy_any_steal_to_py(&out);
}

static PyObject* module_get_function_doc(PyObject* mod, PyObject* args, PyObject* kwargs) {
  (void)mod;
  static char* keywords[] = {"module", "name", "query_imports", NULL};
  PyObject *module, *name;
  int query_imports = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OU|p:module_get_function_doc", keywords, &module,
                                   &name, &query_imports)) {
    return NULL;
  }
  PFObject* h = module_handle(module, "module_get_function_doc");
  if (h == NULL) return NULL;
  PFByteArray view;
  if (pfpy_str_view(name, &view) != 0) return NULL;
  PFAny out = {0};
  if (PFModuleGetFunctionDoc(h, &view, query_imports, &out) != 0) return pfpy_raise_native(name);
  return pfpy_any_steal_to_py(&out);
}

static PyObject* module_import(PyObject* mod, PyObject* args) {
  (void)mod;
  PyObject *module, *dependency;
  if (!PyArg_ParseTuple(args, "OO:module_import", &module, &dependency)) return NULL;
  PFObject* h = module_handle(module, "module_import");
  PFObject* d = h == NULL ? NULL : module_handle(dependency, "module_import");
  if (d == NULL) return NULL;
  if (PFModuleImport(h, d) != 0) return pfpy_raise_native(NULL);
  Py_RETURN_NONE;
}

/* The imports as a list of Module objects (read straight from the Array, no registry call). */
static PyObject* module_get_imports(PyObject* mod, PyObject* module) {
  (void)mod;
  PFObject* h = module_handle(module, "module_get_imports");
  if (h == NULL) return NULL;
  PFAny out = {0};
  if (PFModuleGetImports(h, &out) != 0) return pfpy_raise_native(NULL);
  PFSeqObject* seq = (PFSeqObject*)out.v_obj;
  PyObject* list = PyList_New(0);
  for (int64_t i = 0; list != NULL && i < seq->size; ++i) {
    PFObject* dep = seq->data[i].v_obj;
    PFObjectIncRef(dep);
    PyObject* item = pfpy_object_wrap(dep);
    if (item == NULL || PyList_Append(list, item) < 0) Py_CLEAR(list);
    Py_XDECREF(item);
  }
  PFAnyRelease(&out);
  return list;
}

PyMethodDef pfpy_module_methods[] = {
    {"module_system_lib", module_system_lib, METH_NOARGS,
     "module_system_lib()\n--\n\nThe Module object over the running program (the system "
     "library)."},
    {"module_get_path", module_get_path, METH_O,
     "module_get_path(module)\n--\n\nThe library path of `module` (\"\" for the system "
     "library)."},
    {"module_list_functions", module_list_functions, METH_VARARGS,
     "module_list_functions(module, query_imports=False)\n--\n\nThe sorted names of the "
     "functions `module` exports (with its imports'), or None when they cannot be listed."},
    {"module_get_entry_name", module_get_entry_name, METH_O,
     "module_get_entry_name(module)\n--\n\nThe name of the entry function of `module`, or None."},
    {"module_set_tvm_ffi_library", module_set_tvm_ffi_library, METH_O,
     "module_set_tvm_ffi_library(path)\n--\n\nWhere libtvm_ffi is, for libraries built for "
     "Apache TVM FFI (None clears it)."},
    {"module_get_function_doc", (PyCFunction)(void (*)(void))module_get_function_doc,
     METH_VARARGS | METH_KEYWORDS,
     "module_get_function_doc(module, name, query_imports=False)\n--\n\nThe docstring of the "
     "function `name` of `module`, or None."},
    {"module_import", module_import, METH_VARARGS,
     "module_import(module, dependency)\n--\n\nMakes `module` import `dependency`."},
    {"module_get_imports", module_get_imports, METH_O,
     "module_get_imports(module)\n--\n\nThe Module objects `module` imports, as a list."},
    {NULL, NULL, 0, NULL}};
