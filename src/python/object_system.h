/* Private header of packedfun._core's object system: reflected classes, containers, conversions. */
#ifndef PACKEDFUN_SRC_PYTHON_OBJECT_SYSTEM_H_
#define PACKEDFUN_SRC_PYTHON_OBJECT_SYSTEM_H_

#include "core.h"

/* ---- containers (container.c, container_map.c) ------------------------------------------------
 */

extern PyTypeObject PFPyArray_Type;
extern PyTypeObject PFPyList_Type;
extern PyTypeObject PFPyMap_Type;
extern PyTypeObject PFPyDict_Type;
extern PyTypeObject PFPyShape_Type;

/*! Readies the sequence types (container.c) / map types (container_map.c) and adds them to `m`. */
int pfpy_seq_types_add(PyObject* m);
int pfpy_map_types_add(PyObject* m);

/*! Converts a Python list/tuple (kind kPFTypeArray or kPFTypeList) or dict (kPFTypeMap or
 *  kPFTypeDict) `o` (borrowed) into a new native container in `*out` (new ref). Elements convert
 *  like arguments, nested lists/tuples/dicts become Arrays/Maps. Errors name `fname` (may be NULL),
 *  argument `pos` and the element's path. `python_keys` 1: the result is for Python (convert(), a
 *  constructor, a value stored in a container), so a dict key that would become a new object is
 *  refused (pfpy_map_key_refused); 0 for function arguments, which go to native code whose typed
 *  parameters may read keys by content (std::map<std::tuple<...>, V>). Returns 0, or -1 with a
 *  Python exception set. */
int pfpy_container_from_py(PyObject* o, int32_t kind, PFAny* out, PyObject* fname, Py_ssize_t pos,
                           int python_keys);

/*! Applies packedfun._rules.map_keys.refusal, the one rule (shared with the ctypes backend) for
 * dict keys no lookup would treat as a dict does: conversion made the key `key` (borrowed) into a
 * new object (a tuple's Array, a callable's Function, another object's Opaque), or the number rule
 *  made it a value not equal to it (Decimal("0.1") -> 0.1). `converted`: what conversion made of
 *  it (borrowed; NULL: a tuple not converted yet, refused as its Array would be). 1 with the
 *  TypeError that says so set (`what`, may be NULL, names the container in it), or with the
 *  rule's own exception; else 0. Callers skip the keys pfpy_map_key_is_itself accepts. */
int pfpy_map_key_refused(PyObject* key, const PFAny* converted, PyObject* what);

/*! Whether `key` is of a kind that converts to itself (exact str, int, float, bool, bytes, None,
 *  a packedfun object), which the refusal rule always keeps: the common keys skip the call into
 *  Python. */
static inline int pfpy_map_key_is_itself(PyObject* key) {
  PyTypeObject* t = Py_TYPE(key);
  return t == &PyUnicode_Type || t == &PyLong_Type || t == &PyFloat_Type || t == &PyBool_Type ||
         t == &PyBytes_Type || key == Py_None || PyObject_TypeCheck(key, &PFPyObject_Type);
}

/*! The argument conversion of a list/tuple/dict: an Array/Map owned by `pack`'s temporaries. */
int pfpy_container_arg(PyObject* o, PFPyArgs* pack, Py_ssize_t pos, PyObject* fname);

/* ---- reflection (object_class.c) ------------------------------------------------------------- */

/*! Sets the TypeError of an `__init__` called on a wrapper that already holds an object (naming
 *  its class and type key) and returns NULL. */
PyObject* pfpy_already_initialized(PyObject* self);

/*! The class of a native object when the object factory has none: the container types for
 *  container type indices, packedfun.Object otherwise (borrowed). */
PyTypeObject* pfpy_default_class(int32_t type_index);

/*! Readies FieldDescriptor/MethodDescriptor/ConstructorDescriptor and adds them and the type-table
 *  functions to `m`; also calls the container add functions. 0, or -1 with an exception. */
int pfpy_object_system_add(PyObject* m);

#endif /* PACKEDFUN_SRC_PYTHON_OBJECT_SYSTEM_H_ */
