/* Private header of packedfun._core's tensor support: the Tensor type, DLPack both ways, and the
 * conversion of array arguments (NumPy, PyTorch, any __dlpack__ producer), dtypes and devices. */
#ifndef PACKEDFUN_SRC_PYTHON_TENSOR_H_
#define PACKEDFUN_SRC_PYTHON_TENSOR_H_

#include "core.h"

/*! packedfun.Tensor: an Object of kPFTypeTensor (no extra fields). */
extern PyTypeObject PFPyTensor_Type;

/*! Readies the Tensor type and adds Tensor, from_dlpack and the private hooks to module `m`.
 *  Returns 0, or -1 with an exception set. */
int pfpy_tensor_add_to_module(PyObject* m);

/*! Wraps `obj` (stolen; a kPFTypeTensor object) as a packedfun.Tensor. NULL + exception on
 *  failure (obj released then too). */
PyObject* pfpy_tensor_wrap(PFObject* obj);

/*! Fast owned import of a NumPy array or exchange-API tensor: 0 with *out (new ref), -1 when `x`
 *  has no fast route (no exception), -2 on error (tensor_arg.c). */
int pfpy_tensor_fast_import(PyObject* x, PFObject** out);
/*! Converts `o` into `pack->args[pos]` when it is an array (NumPy array, torch tensor, any
 *  __dlpack__ producer), a packedfun.dtype or a packedfun.device. For pos >= 0 NumPy arrays and
 *  torch tensors travel as a borrowed DLTensor* filled in C (no Python-level DLPack call); for a
 *  return value (pos < 0) they become an owned Tensor object in `pack->temps`.
 *  Returns 1 when converted, 0 when `o` is none of these (nothing changed), -1 with an
 *  exception set (a BufferError naming the dtype for data DLPack cannot describe). */
int pfpy_tensor_try_arg(PyObject* o, PFPyArgs* pack, Py_ssize_t pos, PyObject* fname);

/*! The deleter of the record backing an array argument (a call's temp): recycles it. A temp whose
 *  count is 1 at the end of the call (no Tensor made from it outlives the call) is the call's
 *  alone, and pfpy_args_release calls this directly, sparing the runtime's release. */
void pfpy_tensor_scratch_release(PFObject* obj);

/*! NumPy's ndarray once an array was seen, and the last type seen with a DLPack C exchange API
 *  (a torch tensor): their arguments go to pfpy_tensor_try_arg before any other probe. */
extern PyTypeObject* pfpy_tensor_numpy_type;
extern PyTypeObject* pfpy_tensor_exchange_type;

/*! The DLPack C exchange API of pfpy_tensor_exchange_type (borrowed, process lifetime). */
extern const DLPackExchangeAPI* pfpy_tensor_exchange_api;
/*! For a call's temp that backs an array argument: the producer object it keeps (a torch tensor;
 *  borrowed, NULL for NumPy) and, in `*tensor`, the DLTensor the callee saw. NULL otherwise. */
PyObject* pfpy_tensor_temp_owner(PFObject* temp, const DLTensor** tensor);
/*! Which framework the tensor results of a call with these arguments go back to: 0 none (keep
 *  packedfun.Tensor), 1 NumPy, 2 the exchange-API type (torch). The first torch tensor, NumPy
 *  array or container that remembers a framework among `args` decides; else `nested`, the
 *  framework of the first array met inside a list/tuple/dict argument (pfpy_tensor_nested_take).
 */
int pfpy_tensor_result_framework(PyObject* const* args, Py_ssize_t n, int nested);
/*! Converts the owned result `*rv` (stolen) for framework `fw` (nonzero): a Tensor as the
 *  framework's tensor (the argument itself when the callee returned an argument's exact view;
 *  `pack` may be NULL), an Array/List/Map/Dict as itself, remembering `fw` for its elements. */
PyObject* pfpy_tensor_result_to_py(PFAny* rv, int fw, const PFPyArgs* pack);
/*! The result `*rv` (stolen; a Tensor or a container) of a call without array arguments: for the
 *  framework the first container argument that remembers one gives (`packed`: the arguments as
 *  converted, which tell the containers), else as usual. Cold: called by function.c only for
 *  those result kinds. */
PyObject* pfpy_tensor_result_from_containers(PFAny* rv, PyObject* const* args, const PFAny* packed,
                                             Py_ssize_t n);
/*! Nonzero once any container remembered a framework: until then no call result looks at its
 *  container arguments (a process that never returns containers to torch/NumPy callers pays
 *  nothing for the rule). */
extern int pfpy_tensor_containers_remember;
/*! `e` (stolen; NULL passes through) as read from a container that remembers framework `fw`: a
 *  packedfun.Tensor as the framework's tensor, a container remembering `fw` too. */
PyObject* pfpy_tensor_element_for(PyObject* e, int fw);
/*! An element `e` (stolen; NULL passes through) read from container `self` (a PFPyContainer). */
static inline PyObject* pfpy_container_element(PyObject* self, PyObject* e) {
  int fw = ((PFPyContainer*)self)->tensor_framework;
  return PFPY_UNLIKELY(fw != 0) ? pfpy_tensor_element_for(e, fw) : e;
}
/*! Notes that a list/tuple/dict argument being converted holds `type`'s array (the first note of
 *  a call is kept). */
void pfpy_tensor_nested_note(PyTypeObject* type);
/*! The framework noted since the last take (0 none), and forgets it. */
int pfpy_tensor_nested_take(void);
/*! Adds _keep_tensor_results to module `m`. Returns 0, or -1 with an exception. */
int pfpy_tensor_return_add_to_module(PyObject* m);
/*! What pfpy_tensor_env_enter replaced, for pfpy_tensor_env_exit to put back. */
typedef struct {
  PFEnvTensorAllocator allocator;
  DLDevice device;
  void* stream;
  int stream_set;
} PFPyTensorEnv;
/*! Before a call with temps: when a torch tensor or NumPy array is among `args` (or, failing
 *  that, `nested` names the framework of one inside a list/tuple/dict argument), installs that
 *  framework's allocator (torch's exchange-API allocator, or NumPy's numpy.empty) as the thread's
 *  PFEnvTensorAllocator and, for a torch tensor on a GPU, torch's current stream of its device as
 *  the thread's stream. Returns 1 when it changed something (call pfpy_tensor_env_exit after). */
int pfpy_tensor_env_enter(PyObject* const* args, Py_ssize_t n, const PFPyArgs* pack, int nested,
                          PFPyTensorEnv* saved);
void pfpy_tensor_env_exit(const PFPyTensorEnv* saved);
/*! Thread-local switch: nonzero keeps packedfun.Tensor results (set_tensor_return). */
extern _Thread_local int pfpy_keep_tensor_results;

/*! Whether `type` is one of those (never true for NULL). */
static inline int pfpy_tensor_known_type(PyTypeObject* type) {
  return type == pfpy_tensor_numpy_type || type == pfpy_tensor_exchange_type;
}

/*! Whether instances of `type` are taken by pfpy_tensor_try_arg (arrays, DLPack producers,
 *  packedfun.dtype and device): decided from the type alone, for the conversion rule. */
int pfpy_tensor_type_probe(PyTypeObject* type);

/*! _tensor_scratch_allocations(): the number of Scratch records (backing array arguments) ever
 *  allocated, as an int; the steady state reuses them from a free list. */
PyObject* pfpy_tensor_scratch_allocations(PyObject* self, PyObject* unused);

/*! Converts packedfun.dtype or packedfun.device `o` (its type checked by the caller) into `*out`
 *  (tensor_value.c). Returns 1, or -1 with an exception. */
int pfpy_tensor_pod_arg(PyObject* o, PFAny* out);

/*! A packedfun.dtype for `dtype` (a (code, bits, lanes) tuple before packedfun.tensor has
 *  registered its classes). New reference, or NULL with an exception. */
PyObject* pfpy_dtype_to_py(DLDataType dtype);

/*! A packedfun.device for `device` (a (device_type, device_id) tuple before registration). */
PyObject* pfpy_device_to_py(DLDevice device);

/*! from_dlpack(x): a new packedfun.Tensor sharing the memory of `x` (a __dlpack__ producer or a
 *  DLPack capsule). NULL with an exception on failure. */
PyObject* pfpy_from_dlpack(PyObject* x);

/*! The (dtype, device) classes registered by packedfun.tensor (borrowed; NULL before). */
extern PyObject* pfpy_dtype_class;
extern PyObject* pfpy_device_class;

#endif /* PACKEDFUN_SRC_PYTHON_TENSOR_H_ */
