/* A fake array framework for the stream benchmark: tensors that claim any device (CUDA on a
 * CPU-only machine) and a DLPack C exchange API whose current_work_stream answers a fixed fake
 * stream per device, so that a call with a "CUDA tensor" takes packedfun's real stream path. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlpack/dlpack.h>
#include <stdint.h>

typedef struct {
  PyObject_HEAD int32_t device_type;
  int32_t device_id;
  int64_t shape[1];
  float data[4];
} FakeTensor;

static int dltensor_from(void* py_object, DLTensor* out) {
  FakeTensor* t = (FakeTensor*)py_object;
  out->data = t->data; /* never dereferenced for a non-CPU device */
  out->device.device_type = (DLDeviceType)t->device_type;
  out->device.device_id = t->device_id;
  out->ndim = 1;
  out->dtype.code = kDLFloat;
  out->dtype.bits = 32;
  out->dtype.lanes = 1;
  out->shape = t->shape;
  out->strides = NULL;
  out->byte_offset = 0;
  return 0;
}

static int current_work_stream(DLDeviceType type, int32_t id, void** out) {
  (void)type;
  *out = (void*)(uintptr_t)(0xC0DE00 + id);
  return 0;
}

static int no_allocator(DLTensor* proto, DLManagedTensorVersioned** out, void* ctx,
                        void (*set_error)(void*, const char*, const char*)) {
  (void)proto;
  (void)out;
  set_error(ctx, "RuntimeError", "the fake framework allocates nothing");
  return -1;
}

static int no_managed_from(void* py_object, DLManagedTensorVersioned** out) {
  (void)py_object;
  (void)out;
  PyErr_SetString(PyExc_BufferError, "the fake framework exports views only");
  return -1;
}

static int no_managed_to(DLManagedTensorVersioned* tensor, void** out) {
  (void)tensor;
  (void)out;
  PyErr_SetString(PyExc_BufferError, "the fake framework imports nothing");
  return -1;
}

static DLPackExchangeAPI api = {
    {{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION}, NULL},
    no_allocator,
    no_managed_from,
    no_managed_to,
    dltensor_from,
    current_work_stream,
};

static int fake_init(PyObject* self, PyObject* args, PyObject* kwds) {
  FakeTensor* t = (FakeTensor*)self;
  static char* names[] = {"device_type", "device_id", NULL};
  t->device_type = kDLCPU;
  t->device_id = 0;
  t->shape[0] = 4;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "|ii", names, &t->device_type, &t->device_id)) {
    return -1;
  }
  return 0;
}

static PyTypeObject FakeTensorType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pf_bench_fake_device.FakeTensor",
    .tp_basicsize = sizeof(FakeTensor),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = fake_init,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "pf_bench_fake_device", NULL, -1, NULL};

PyMODINIT_FUNC PyInit_pf_bench_fake_device(void) {
  if (PyType_Ready(&FakeTensorType) < 0) return NULL;
  PyObject* cap = PyCapsule_New(&api, "dlpack_exchange_api", NULL);
  if (cap == NULL ||
      PyDict_SetItemString(FakeTensorType.tp_dict, "__dlpack_c_exchange_api__", cap) != 0) {
    Py_XDECREF(cap);
    return NULL;
  }
  Py_DECREF(cap);
  PyType_Modified(&FakeTensorType);
  PyObject* m = PyModule_Create(&module);
  if (m == NULL) return NULL;
  Py_INCREF(&FakeTensorType);
  if (PyModule_AddObject(m, "FakeTensor", (PyObject*)&FakeTensorType) != 0) return NULL;
  return m;
}
