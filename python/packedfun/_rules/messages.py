# The wording of the user-facing messages both bindings raise: one template per message.
"""Message templates shared by the compiled binding (``_core``) and the ctypes binding.

Each constant is a :meth:`str.format` template; a binding fills the fields with the same values
(``{}`` in order, ``{!r}`` for a repr) and raises the exception type the template's comment names.
``_core`` reads them from C with ``pfpy_raise_message`` / ``pfpy_message``
(``src/python/messages.c``); the ctypes binding with :func:`text`. A type named in a message is
named as CPython's own messages name it (:func:`type_name`). Changing a text here changes it for
both bindings; ``docs/`` and ``tests/`` pin several of them (grep before rewording).
"""

from __future__ import annotations

_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE


def text(name: str, *values: object) -> str:
    """The message ``name`` filled with ``values``."""
    return globals()[name].format(*values)


def type_name(cls: type) -> str:
    """The type's ``tp_name``, as C error messages print it: the bare name of builtins and of
    classes defined in Python, the dotted name of types defined in C (``numpy.ndarray``)."""
    if cls.__flags__ & _HEAPTYPE or cls.__module__ == "builtins":
        return cls.__name__
    return f"{cls.__module__}.{cls.__name__}"


# ---- tensors and DLPack (src/python/tensor.c, tensor_arg.c; _ctypes/tensor.py) -----------------

#: ValueError: a Tensor whose native object is gone.
TENSOR_EMPTY = "the packedfun.Tensor is empty"
#: TypeError: __dlpack__(max_version=...) that is not None or two ints.
DLPACK_MAX_VERSION = (
    "packedfun.Tensor.__dlpack__: max_version must be None or a (major, minor) tuple of two "
    "ints, got {!r}"
)
#: BufferError: __dlpack__(copy=True).
DLPACK_COPY = (
    "packedfun.Tensor.__dlpack__: copy=True is not supported (packedfun only shares memory)"
)
#: TypeError: __dlpack__(dl_device=...) that is not a pair of ints.
DLPACK_DEVICE_ARG = "__dlpack__: dl_device must be a (type, id) tuple"
#: BufferError: __dlpack__(dl_device=...) naming another device (the tensor's, the requested).
DLPACK_OTHER_DEVICE = (
    "packedfun.Tensor.__dlpack__: the tensor lives on device {}, not on the requested {}"
)
#: BufferError: a read-only tensor asked for as an unversioned capsule.
DLPACK_READONLY_LEGACY = (
    "packedfun.Tensor.__dlpack__: a read-only tensor cannot be exported as legacy DLPack "
    "(ask for max_version=(1, 0))"
)
#: BufferError: __dlpack__(stream=...) for a CPU tensor.
DLPACK_CPU_STREAM = "__dlpack__: stream must be None for a CPU tensor"
#: ValueError: a DLPack capsule imported a second time (its name).
CAPSULE_CONSUMED = (
    "from_dlpack: the DLPack capsule was consumed already (capsule '{}'); a capsule can be "
    "imported only once"
)
#: ValueError: a capsule of another kind (its name).
CAPSULE_NOT_DLPACK = "from_dlpack: capsule '{}' is not a DLPack tensor"
#: TypeError: from_dlpack of something that is neither a producer nor a capsule (its type).
FROM_DLPACK_NO_PRODUCER = (
    "from_dlpack: expected an object implementing __dlpack__ or a DLPack capsule, got {}"
)
#: TypeError: a producer whose __dlpack__ returned no capsule (producer type, returned type).
FROM_DLPACK_NOT_A_CAPSULE = "from_dlpack: {}.__dlpack__ returned {}, not a capsule"
#: TypeError: dtype(x) of a non-str (its type).
DTYPE_NOT_STR = "dtype expects a str, got {}"
#: ValueError: a (code, bits, lanes) triple out of DLDataType's ranges.
DTYPE_INVALID = "not a valid DLPack data type: code={} bits={} lanes={}"
#: BufferError (after the argument's name): a NumPy array DLPack cannot describe (dtype, why).
NUMPY_ARRAY_REFUSED = "cannot pass a NumPy array of dtype '{}' ({})"
#: ... why: big-endian data.
NUMPY_BYTE_SWAPPED = "byte-swapped data: DLPack only describes native byte order"
#: ... why: an element type with no DLPack code.
NUMPY_NO_DLPACK_TYPE = "DLPack cannot describe this element type"
#: ... why: a stride that is not a whole number of elements.
NUMPY_ODD_STRIDE = "a stride is not a multiple of the item size"


# ---- objects, fields, methods (src/python/object*.c; _ctypes/objects.py, values.py) -----------

#: TypeError: type_key_to_index of a non-str.
TYPE_KEY_NOT_STR = "type key must be a str"
#: KeyError: a type key no library registered (the key).
TYPE_KEY_UNKNOWN = "unknown type key {!r}"
#: KeyError: FieldDescriptor for a field the type does not have (type key, field name).
TYPE_HAS_NO_FIELD = "type {} has no field {!r}"
#: TypeError: a field read/written on a non-object (field's qualified name, the value's type).
FIELD_NOT_AN_OBJECT = "{}: expected a packedfun.Object, got {}"
#: ValueError: a field of a wrapper that holds no object yet (field's qualified name).
FIELD_OBJECT_EMPTY = "{}: the object is empty (not constructed)"
#: TypeError: a field read on an object of an unrelated type (qualified name, type index).
FIELD_WRONG_TYPE = "{}: object of type index {} does not have this field"
#: AttributeError: a read-only field assigned (field name, object's type).
FIELD_READONLY = "field '{}' of {} is read-only"
#: AttributeError: a field deleted (field name, object's type).
FIELD_NOT_DELETABLE = "field '{}' of {} is read-only (cannot be deleted)"
#: TypeError: set_type_name of something that is not a Python subclass of packedfun.Object.
SET_TYPE_NAME_NOT_A_CLASS = "set_type_name expects a packedfun.Object subclass"
#: TypeError / ValueError: set_type_name's name.
TYPE_NAME_NOT_STR = "type name must be a str"
TYPE_NAME_NUL = "type name must not contain null characters"
#: TypeError: fast_construct of something that is not a packedfun.Object subclass.
FAST_CONSTRUCT_NOT_A_CLASS = "fast_construct expects a packedfun.Object subclass"
#: TypeError: a constructor descriptor whose function made no object (its name, result type).
CONSTRUCTOR_MADE_NO_OBJECT = "{} returned {}, expected an object"
#: TypeError: a method descriptor called without the object first (its name).
METHOD_NEEDS_OBJECT = "{}: expected a packedfun.Object first"
#: TypeError: a module-function descriptor called without the module first (its name).
MODULE_FUNCTION_NEEDS_MODULE = "{}: expected the module first"
#: TypeError: a descriptor made of a non-Function (descriptor type, value's type).
DESCRIPTOR_NEEDS_FUNCTION = "{} expects a packedfun.Function, got {}"
#: TypeError: the object factory's answer (its repr, the type index).
OBJECT_FACTORY_RESULT = (
    "object factory returned {!r} for type index {}, expected a subclass of packedfun.Object"
)
#: TypeError: __init__ called again on a wrapper (wrapper's type, the object's type key).
ALREADY_INITIALIZED = (
    "{}.__init__: this {} object is already initialized; create a new one instead of calling "
    "__init__ again"
)
#: TypeError: __init_handle_by_constructor__ without a Function first.
INIT_HANDLE_NEEDS_FUNCTION = "__init_handle_by_constructor__ expects a packedfun.Function first"
#: TypeError: a constructor that returned no object (the constructor's repr, result type).
CONSTRUCTOR_RETURNED_NO_OBJECT = "constructor {!r} returned {}, expected an object"


# ---- errors, registry, modules, the binding itself (src/python/error.c, registry.c, module.c,
# init.c; _ctypes/errors.py, backend.py, modules.py, values.py) --------------------------------

#: TypeError: NativeBacktrace._error set to something else.
BACKTRACE_NEEDS_ERROR = "NativeBacktrace._error must be an Error object"
#: TypeError: the error factory's result (its type).
ERROR_FACTORY_RESULT = "packedfun error factory returned {}, not an exception"
#: RuntimeError: a native call reported failure but left no error (the function's name).
NATIVE_FAILED_WITHOUT_ERROR = "{}: native call failed without an error"
#: RuntimeError: a native call raised something that is not an Error object (the function).
NATIVE_RAISED_NON_ERROR = "{}: native call raised a non-Error object"
#: TypeError: set_error_factory / set_object_factory of a non-callable.
ERROR_FACTORY_NOT_CALLABLE = "error factory must be callable or None"
OBJECT_FACTORY_NOT_CALLABLE = "object factory must be callable or None"
#: TypeError: error_get_backtrace of something that is not an Error.
BACKTRACE_OF_NON_ERROR = "error_get_backtrace expects an Error object"
#: TypeError: a module entry point given something else (entry point, the value's type).
MODULE_EXPECTED = "{} expects a Module object, got {}"
#: TypeError: module_get_function of something that is not a Module.
MODULE_GET_FUNCTION_EXPECTED = "module_get_function expects a Module object"
#: ImportError: a binding loaded over a runtime of another major ABI version (the binding,
#: its major version, the runtime's major and minor).
ABI_MISMATCH = "{} was built for ABI {}.x but the runtime is {}.{}"
#: TypeError: a registry name that is not a str (what it names, the value's type).
NAME_NOT_STR = "{} must be a str, got {}"
#: TypeError: register a non-callable as a global function (the value's type).
REGISTER_NOT_CALLABLE = "expected a callable, got {}"
#: RuntimeError: the runtime's list of global names was not an array.
GLOBAL_NAMES_NOT_AN_ARRAY = "PFFunctionListGlobalNames returned no array"
#: TypeError: a function entry point given something else (entry point, the value's type).
FUNCTION_EXPECTED = "{}: expected a Function, got {}"


# ---- containers (src/python/container*.c; _ctypes/containers.py) -------------------------------

#: IndexError: an Array/List/Shape index outside it (the container's type).
SEQ_INDEX_OUT_OF_RANGE = "{} index out of range"
#: TypeError: an index that is neither an int nor a slice (container's type, the index's type).
SEQ_BAD_INDEX = "{} indices must be integers or slices, not {}"
#: TypeError: a List index that is not an int, in an assignment (the index's type).
LIST_BAD_INDEX = "packedfun.List indices must be integers, not {}"
#: ValueError: index() of a value not in the sequence (the value, the container's type).
SEQ_NOT_IN = "{!r} is not in {}"
#: TypeError: a container constructor given keywords (its name).
NO_KEYWORDS = "{}() takes no keywords"
#: TypeError: a container constructor given more than one argument (its name, how many).
AT_MOST_ONE_ARGUMENT = "{}() takes at most 1 argument ({} given)"
#: TypeError / OverflowError: a Shape dimension (its position; its type, or "large"/"small").
SHAPE_DIM_NOT_INT = "Shape: dimension {}: expected int, got {}"
SHAPE_DIM_OVERFLOW = "Shape: dimension {}: int too {} for int64"
#: RuntimeError: a Map/Dict changed while iterated (its type).
MAP_CHANGED_SIZE = "{} changed size during iteration"
#: TypeError: Map/Dict.pop's arity.
POP_ARGUMENTS = "pop expected 1 or 2 arguments"
#: ValueError: a container wrapper that holds no native object (its name).
EMPTY_WRAPPER = "{}: empty wrapper"


# ---- reprs -------------------------------------------------------------------------------------

#: repr of a Tensor wrapper that holds no tensor.
TENSOR_REPR_EMPTY = "<packedfun.Tensor empty>"
#: repr of a Tensor (shape, dtype, device, the native object's address as an int).
TENSOR_REPR = "<packedfun.Tensor shape={!r} dtype={} device={} at {:#x}>"
#: repr of a method descriptor (its name, the Function).
METHOD_REPR = "<packedfun method {} of {!r}>"


# ---- keyword binding (src/python/function_kw.c; _rules/signature.py's bind) -------------------

#: TypeError: more positional arguments than parameters (function, parameters, "" or "s",
#: arguments, "was" or "were"), as CPython words it.
ARGS_TOO_MANY_POSITIONAL = "{}() takes {} positional argument{} but {} {} given"
#: TypeError: a keyword naming no parameter (function, keyword).
ARGS_UNEXPECTED_KEYWORD = "{}() got an unexpected keyword argument '{}'"
#: TypeError: a parameter given by position and by keyword (function, keyword).
ARGS_MULTIPLE_VALUES = "{}() got multiple values for argument '{}'"
#: TypeError: a positional-only parameter (declared before ``/``) given by keyword (function,
#: keyword), as CPython words it.
ARGS_POSITIONAL_ONLY = "{}() got some positional-only arguments passed as keyword arguments: '{}'"
#: ValueError: a call of a Function whose native function was released.
FUNCTION_RELEASED = "packedfun.Function: the function was released"
#: TypeError: Function.__move_handle_from__ given something else than a Function (its type name).
MOVE_HANDLE_NOT_FUNCTION = "__move_handle_from__ expects a Function, got {}"
#: RuntimeError: Function.__from_extern_c__ / __from_mlir_packed_safe_call__ in a runtime built
#: without the Apache TVM FFI interop (CMake option PACKEDFUN_WITH_TVM_FFI=OFF).
TVM_FFI_INTEROP_MISSING = (
    "this packedfun runtime is built without the Apache TVM FFI interop "
    "(PACKEDFUN_WITH_TVM_FFI=OFF), so it cannot call tvm-ffi functions"
)


# ---- converting a value (src/python/convert.c, convert_container.c; _ctypes/pack.py,
# ---- containers.py)

#: Where an argument is: the function and the position ("f: argument 0", an element's path after
#: the position: "f: argument 0[1]['k']").
ARG_WHERE = "{}: argument {}"
#: The same when the function has no name.
ARG_WHERE_UNNAMED = "packedfun.Function argument {}"
#: Where a return value is (the function, or None).
RETURN_WHERE = "{}: return value"
#: Where an element of a value that is no argument is (its path): convert(), a constructor.
VALUE_WHERE = "value{}"
#: Where an element of a return value is (its path).
RETURN_VALUE_WHERE = "return value{}"
#: An error's message with its place in front (the place, then the reason).
AT_WHERE = "{}: {}"
#: Note added to an exception raised while converting a return value.
NOTE_RETURN = "while converting a return value"
#: Note added to an exception raised while converting an element of a value (its path).
NOTE_VALUE = "while converting value{}"
#: Note added to an exception raised while converting an argument (position and path, function).
NOTE_ARGUMENT = "while converting argument {} of {}"
#: OverflowError: an int beyond uint64 (the place is put in front).
INT_TOO_LARGE = "int too large for uint64"
#: OverflowError: an int below int64 (the place is put in front).
INT_TOO_SMALL = "int too small for int64"
#: ValueError: a list or dict that holds itself (the place is put in front).
CONTAINER_CONTAINS_ITSELF = "container contains itself"
#: RuntimeError: a list or dict changed while converted ("list" or "dict").
CONTAINER_CHANGED_SIZE = "{} changed size during conversion"
#: RecursionError: containers nested deeper than the recursion limit.
CONTAINER_TOO_DEEP = "maximum recursion depth exceeded while converting a nested container"
#: TypeError: a value of a type index no Python type stands for.
VALUE_UNKNOWN_TYPE_INDEX = "packedfun: cannot convert a value of type index {}"


# ---- packedfun.Function (src/python/function.c; _ctypes/values.py) ----------------------------

#: TypeError: keywords passed to a Function without a parameter table (its name).
FUNCTION_NO_KEYWORD_ARGUMENTS = "{}() takes no keyword arguments"
#: The same for a Function without a name.
FUNCTION_NO_KEYWORD_ARGUMENTS_UNNAMED = "packedfun.Function takes no keyword arguments"
#: TypeError: Function(x) of something not callable (its type).
FUNCTION_NOT_CALLABLE = "Function() expects a callable, got {}"
#: repr of a named Function (name, the native object's address as an int).
FUNCTION_REPR_NAMED = "<packedfun.Function '{}' at {:#x}>"
#: repr of a Function wrapping a Python callable (the callable, the address).
FUNCTION_REPR_WRAPPING = "<packedfun.Function wrapping {!r} at {:#x}>"
#: repr of any other Function (the address).
FUNCTION_REPR = "<packedfun.Function at {:#x}>"
#: TypeError: Function.__name__ set to something not a str.
FUNCTION_NAME_NOT_STR = "__name__ must be a str"
#: AttributeError: Function.__signature__ assigned.
FUNCTION_SIGNATURE_READ_ONLY = "Function.__signature__ is read-only"
#: TypeError: Function.gil_policy set to something not a str.
GIL_POLICY_NOT_STR = "gil_policy must be 'release' or 'hold' (a str)"
#: ValueError: Function.gil_policy set to an unknown policy (the value).
GIL_POLICY_UNKNOWN = "gil_policy must be 'release' or 'hold', got {!r}"
#: ImportError: an opaque pointer result, and ctypes has no c_void_p.
CTYPES_VOID_P_MISSING = "ctypes.c_void_p not found"
