# pickle, copy and deepcopy for packedfun values: one reducer per kind, attached to both backends.
"""Pickling support, installed on import of :mod:`packedfun` (both backends).

Containers and reflected objects pickle as a value graph (:mod:`packedfun._graph`): the native
object reached twice is one node, cycles through lists and dicts come back as cycles. An
``Array``, ``List``, ``Map`` or ``Dict`` holding only plain values (None, bool, int, float, str,
bytes) takes a shorter road: the runtime packs it into one byte string and rebuilds it in one pass
(``packedfun.container_pack_plain`` / ``container_unpack_plain``, src/runtime/plain_pack.cc).
CPU tensors pickle by value; with protocol 5 their bytes are a ``PickleBuffer`` that a
``buffer_callback`` can send out of band without a copy. Registry Functions pickle by name.
"""

from __future__ import annotations

import copy
import copyreg

from . import _graph
from . import object as _object
from ._backend import core
from .module import _module_function
from .tensor import device, dtype

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see __init__'s import cost)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["install"]


class _TensorData:
    """A tensor's bytes on their way into a pickle: out-of-band capable with protocol 5."""

    __slots__ = ("view", "tensor")

    def __init__(self, tensor: Any, view: memoryview) -> None:
        self.view, self.tensor = view, tensor  # the tensor keeps the memory alive

    def __reduce_ex__(self, protocol: Any) -> tuple:
        if protocol >= 5:
            import pickle

            return (_identity, (pickle.PickleBuffer(self.view),))
        data = self.view.tobytes()
        return (bytes, (data,)) if self.view.readonly else (bytearray, (data,))

    def __deepcopy__(self, memo: dict) -> bytes:
        return self.view.tobytes()


def _identity(x: Any) -> Any:
    return x


def _tensor_data(tensor: Any, meta: tuple) -> _TensorData:
    start, span = meta[5], meta[6]
    if span:
        import ctypes

        raw = (ctypes.c_char * span).from_address(tensor.data_ptr + start)
        view = memoryview(raw).cast("B")
    else:
        view = memoryview(b"")
    return _TensorData(tensor, view.toreadonly() if meta[4] else view)


def _check_layout(shape: tuple, strides: tuple, offset: int, item: int, nbytes: int) -> None:
    """ValueError unless every element of the layout lies inside the `nbytes` data bytes (NumPy
    does not check this for every buffer: a tensor that reads past its data must never be made)."""
    if len(shape) != len(strides) or any(d < 0 for d in shape) or offset < 0:
        raise ValueError(
            f"cannot rebuild a Tensor: shape {shape}, strides {strides} and offset {offset} "
            "do not describe a layout"
        )
    if 0 in shape:
        return
    low = high = offset
    for d, s in zip(shape, strides):
        step = s * item * (d - 1)
        low, high = (low + step, high) if step < 0 else (low, high + step)
    if low < 0 or high + item > nbytes:
        raise ValueError(
            f"cannot rebuild a Tensor: shape {shape}, strides {strides} and offset {offset} "
            f"reach bytes [{low}, {high + item}) outside its {nbytes} data bytes"
        )


def _make_tensor(meta: tuple, data: Any) -> Any:
    import numpy as np

    dtype, shape, strides, offset, readonly = meta
    if isinstance(data, _TensorData):  # copy.copy: the reduction's arguments are not pickled
        data = data.view.tobytes()
    np_dtype = np.dtype(_numpy_typestr(dtype))
    view = memoryview(data).cast("B")
    if view.readonly and not readonly:
        view = memoryview(bytearray(view))
    item = np_dtype.itemsize
    _check_layout(shape, strides, offset, item, view.nbytes)
    array = np.ndarray(
        shape, np_dtype, buffer=view, offset=offset, strides=[s * item for s in strides]
    )
    if readonly:
        array.flags.writeable = False
    return core.from_dlpack(array)


# The element types a tensor travels with: DLPack type code -> (NumPy kind, the sizes in bits
# NumPy has for it). Both ends check against this table, the reading one before NumPy sees the
# name: NumPy's parser takes far more (">i8", "datetime64", "U3", "O") than a tensor can hold,
# and reads some of the same names differently ("i8" is int8 here, int64 there).
_TRAVELLING_DTYPES = {
    0: ("i", (8, 16, 32, 64)),
    1: ("u", (8, 16, 32, 64)),
    2: ("f", (16, 32, 64)),
    5: ("c", (64, 128)),
    6: ("b", (8,)),
}
_TRAVELLING = "only int, uint, float, complex and bool dtypes of NumPy's sizes travel"


def _travelling_typestr(dt: Any) -> str | None:
    """NumPy's native-order typestr (``"i8"``) of a packedfun dtype; None if it cannot travel."""
    kind = _TRAVELLING_DTYPES.get(dt.type_code)
    if kind is None or dt.lanes != 1 or dt.bits not in kind[1]:
        return None
    return f"{kind[0]}{dt.bits // 8}"


def _numpy_typestr(name: Any) -> str:
    """The typestr of a dtype named in a pickle or JSON document; TypeError for one that no tensor
    written by packedfun has (a document can name anything)."""
    try:
        typestr = _travelling_typestr(dtype(name)) if isinstance(name, str) else None
    except (TypeError, ValueError):  # not a dtype name at all
        typestr = None
    if typestr is None:
        raise TypeError(f"cannot rebuild a Tensor of dtype {name!r}: {_TRAVELLING}")
    return typestr


def _check_tensor_dtype(tensor: Any) -> None:
    dt = tensor.dtype
    if _travelling_typestr(dt) is None:
        raise TypeError(f"cannot serialize a Tensor of dtype {dt}: {_TRAVELLING}")


def _tensor_data_checked(tensor: Any, meta: tuple) -> _TensorData:
    _check_tensor_dtype(tensor)
    return _tensor_data(tensor, meta)


def _load_graph(nodes: list, root: Any) -> Any:
    return _graph.rebuild(nodes, root, _make_tensor)


def _reduce_graph(obj: Any) -> tuple:
    nodes, root = _graph.flatten(obj, _tensor_data_checked)
    return (_load_graph, (nodes, root))


# None with an older runtime library: then every container takes the value-graph road.
_pack_plain = core.get_global_func("packedfun.container_pack_plain")
_unpack_plain = core.get_global_func("packedfun.container_unpack_plain")


def _load_plain(data: bytes) -> Any:
    if _unpack_plain is None:
        import pickle

        raise pickle.UnpicklingError(
            "cannot unpickle a packed packedfun container: this process's runtime library "
            "predates packedfun.container_unpack_plain"
        )
    return _unpack_plain(data)


def _reduce_array(self: Any, protocol: int = 2, kept: Any = None) -> tuple:
    # None when an element is not plain (an object, a tensor ...): sharing may then matter.
    data = _pack_plain(self) if _pack_plain is not None else None
    if data is not None:
        return (_load_plain, (data,))
    if isinstance(self, core.Shape):
        return (type(self), (list(self),))
    nodes, root = _graph.flatten(self, _tensor_data_checked, kept)
    return (_load_graph, (nodes, root))


def _deepcopy_container(self: Any, memo: dict) -> Any:
    """``copy.deepcopy`` of a container: what unpickling its pickle would give, except that an
    object of a tvm-ffi type in it (which packedfun cannot rebuild from its fields) is copied by
    its own ``__deepcopy__`` (tvm-ffi's ``DeepCopy``), once however often the graph holds it."""
    load, args = _reduce_array(self, 4, _is_tvm_ffi_object)
    result = load(*copy.deepcopy(args, memo))
    memo[id(self)] = result
    return result


_reduce_map = _reduce_array


def _reduce_object(self: Any, protocol: int = 2) -> tuple:
    return _reduce_graph(self)


def _copy_container(self: Any) -> Any:
    if isinstance(self, (core.Map, core.Dict)):
        return type(self)(self)  # entry by entry: equal Array keys stay distinct
    return type(self)(list(self))


def _copy_object(self: Any) -> Any:
    _, names, ctor, ctor_fields, setters = _graph.object_plan(self.type_index)
    values = [getattr(self, name) for name in names]
    obj = ctor(*[values[j] for j in ctor_fields])
    for name in setters:
        setattr(obj, name, values[names.index(name)])
    return obj


# The tvm-ffi bridge's reflection of a mirrored tvm-ffi type (None without the bridge): an object of
# such a type is copied by tvm-ffi's own machinery, which knows its C++ copy constructor.
_tvm_ffi_members = core.get_global_func("packedfun.tvm_ffi_type_metadata")
_tvm_ffi_type_attr = core.get_global_func("packedfun.tvm_ffi_type_attr")


def _mirrors_tvm_ffi_type(type_index: int) -> bool:
    return _tvm_ffi_members is not None and _tvm_ffi_members(type_index) is not None


def _is_tvm_ffi_object(obj: Any) -> bool:
    return _mirrors_tvm_ffi_type(obj.type_index)


def _copy_tvm_ffi_object(self: Any) -> Any:
    """``copy.copy`` of an object of a tvm-ffi type: its C++ copy constructor (tvm-ffi's
    ``__ffi_shallow_copy__``); ``TypeError`` for a type whose C++ class has none."""
    shallow = _tvm_ffi_type_attr(self.type_index, "__ffi_shallow_copy__")
    if shallow is None:
        raise TypeError(
            f"{type(self).__name__} does not support copy: its C++ type is not copy-constructible"
        )
    return shallow(self)


def _deepcopy_tvm_ffi_object(self: Any, memo: dict) -> Any:
    """``copy.deepcopy`` of an object of a tvm-ffi type: tvm-ffi's ``ffi.DeepCopy`` (every object
    of the graph copied once, sharing and cycles kept; ``RuntimeError`` for one that cannot be)."""
    return core.get_global_func("ffi.DeepCopy")(self)


_tvm_ffi_force_set_field = core.get_global_func("packedfun.tvm_ffi_force_set_field")


def _replace_tvm_ffi_object(self: Any, /, **changes: Any) -> Any:
    """``copy.replace`` of an object of a tvm-ffi type: a copy with ``changes`` stored into its
    fields through tvm-ffi's setters (read-only ones included, as tvm-ffi's ``__replace__`` does;
    its C++ constructor need not take the fields by keyword). ``AttributeError`` for a name that
    is no field of the type."""
    obj = copy.copy(self)
    for name, value in changes.items():
        _tvm_ffi_force_set_field(obj, name, value)
    return obj


class UnresolvedFunction:
    """A registry Function unpickled where no global function of its name is registered (yet).

    Loading does not fail: a value is often unpickled far from where it is used (a Dask worker
    unpickles a task's arguments before running it, and an error there never reaches the
    client). The name is looked up again at each call, which runs the function once it is
    registered and otherwise raises ``ValueError`` naming it; pickled again, it travels as the
    name, as the Function did.
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def resolve(self) -> Any:
        """The registered Function of this name; ``ValueError`` naming it when there is none."""
        func = core.get_global_func(self.name)
        if func is None:
            raise ValueError(
                f"global function {self.name!r} is not registered in this process: it was "
                "pickled where it was, and this process has not loaded the library (or run the "
                "code) that registers it"
            )
        return func

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.resolve()(*args, **kwargs)

    def __reduce__(self) -> tuple:
        return (_global_function, (self.name,))

    def __repr__(self) -> str:
        return f"<packedfun.UnresolvedFunction {self.name!r}: not registered in this process>"


def _global_function(name: str) -> Any:
    func = core.get_global_func(name)
    return UnresolvedFunction(name) if func is None else func


def _reduce_function(func: Any) -> tuple:
    origin = getattr(func, "__dict__", {}).get("_pf_module")
    if origin is not None:
        return (_module_function, origin)
    name = func.registry_name
    if name:
        return (_global_function, (name,))
    callable_ = func.py_callable
    if callable_ is not None:
        return (core.Function, (callable_,))
    raise TypeError(
        f"cannot pickle {func!r}: it is neither a registered global function, a module's "
        "function, nor a wrapped Python callable"
    )


def _reduce_tensor(tensor: Any) -> tuple:
    return _reduce_graph(tensor)


def _reduce_dtype(self: Any) -> tuple:
    return (type(self), (str(self),))


def _reduce_device(self: Any) -> tuple:
    return (type(self), (self.device_type, self.device_id))


def attach(cls: Any) -> None:
    """Gives ``cls`` (a Python subclass of a native type) its pickle and copy methods."""
    if issubclass(cls, (core.Array, core.List, core.Shape)):
        cls.__reduce_ex__, cls.__copy__ = _reduce_array, _copy_container
        cls.__deepcopy__ = _deepcopy_container
    elif issubclass(cls, (core.Map, core.Dict)):
        cls.__reduce_ex__, cls.__copy__ = _reduce_map, _copy_container
        cls.__deepcopy__ = _deepcopy_container
    elif issubclass(cls, core.Object) and not issubclass(cls, (core.Function, core.Tensor)):
        if "__reduce_ex__" not in cls.__dict__ and "__reduce__" not in cls.__dict__:
            cls.__reduce_ex__ = _reduce_object
        index = cls.__dict__.get("__pf_type_index__")
        if index is not None and _mirrors_tvm_ffi_type(index):
            for name, method in (("__copy__", _copy_tvm_ffi_object),
                                 ("__deepcopy__", _deepcopy_tvm_ffi_object),
                                 ("__replace__", _replace_tvm_ffi_object)):  # fmt: skip
                if name not in cls.__dict__:
                    setattr(cls, name, method)
        if "__copy__" not in cls.__dict__:
            cls.__copy__ = _copy_object


def install() -> None:
    """Registers the reducers of the backend's own types (which may be immutable types), and
    gives every Python class of a native type its pickle and copy methods."""
    copyreg.pickle(core.Tensor, _reduce_tensor)
    copyreg.pickle(core.Function, _reduce_function)
    copyreg.pickle(core.Object, _reduce_graph)
    dtype.__reduce__ = _reduce_dtype  # type: ignore[method-assign]
    device.__reduce__ = _reduce_device  # type: ignore[method-assign]
    _object.on_new_class(attach)
