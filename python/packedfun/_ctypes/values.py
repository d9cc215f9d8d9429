# Object wrappers, native -> Python conversion and Python callbacks of the ctypes backend.
"""The core of :mod:`packedfun._ctypes.backend`: wrappers owning native objects (``Object``,
``Function``), unpacking of results into Python values, and Python callables and objects handed
to native code. Packing arguments lives in :mod:`packedfun._ctypes.pack`, error translation in
:mod:`packedfun._ctypes.errors`.

Python objects handed to native code (callables behind a Function, any other object behind an
Opaque) are kept in ``_handles`` under an integer id; that id is the native ``self``/``handle`` and
the one ``free_handle`` callback drops the entry when the native object dies, so each Python
object lives exactly as long as the native object that owns it.
"""

from __future__ import annotations

import ctypes
import itertools
import struct
import sys
import time
import weakref
from ctypes import addressof, byref, c_int32, c_uint32, c_uint64, c_void_p, string_at

from .._rules import messages as _msg
from .._rules import signature as _signature
from . import abi as abi
from .abi import LIB, PFAny

_IncRef = LIB.PFObjectIncRef
_DecRef = LIB.PFObjectDecRef
_GetBindingRef = LIB.PFObjectGetBindingRef
_ExchangeBindingRef = LIB.PFObjectExchangeBindingRef
#: type index -> whether its instances come back from native code as their live wrapper (a slot
#: type, i.e. a Python-defined class, or a tvm-ffi type's mirror): the runtime keeps a weak
#: reference to the wrapper in the object.
_slot_types: dict[int, bool] = {}


def is_slot_type(tindex: int, handle: int) -> bool:
    """Whether objects of ``tindex`` keep a binding reference (asked once per type, of ``handle``,
    an instance: the type is fully registered)."""
    known = _slot_types.get(tindex)
    if known is None:
        n = c_int32()
        known = LIB.PFTypeGetNumSlots(tindex, byref(n)) == 0
        if not known:
            err = c_void_p()
            LIB.PFErrorMoveFromRaised(byref(err))
            _DecRef(err.value)
            # An object that keeps one accepts an exchange of NULL for NULL, or holds one already.
            known = bool(_GetBindingRef(handle)) or _ExchangeBindingRef(handle, None, None) == 1
        _slot_types[tindex] = known
    return known


def bind(obj) -> None:
    """Makes ``obj`` the wrapper its slot object comes back as, unless another live one is."""
    if is_slot_type(obj._pf_tindex, obj._pf_handle):
        _ExchangeBindingRef(obj._pf_handle, None, id(obj))


_CallRaw = abi.CALL_RAW
_CallReleased = abi.CALL_RELEASED
_ViewToOwned = LIB.PFAnyViewToOwned

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1
_UINT64_MAX = (1 << 64) - 1

_pack_int = struct.Struct("=iIq").pack
_pack_float = struct.Struct("=iId").pack
_pack_ptr = struct.Struct("=iIQ").pack
_unpack_int = struct.Struct("=iIq").unpack_from
_unpack_ptr = struct.Struct("=iIQ").unpack_from
_unpack_float = struct.Struct("=iId").unpack_from
_unpack_view = struct.Struct("=QQ").unpack_from
_NONE = _pack_int(abi.kPFTypeNone, 0, 0)
_TRUE = _pack_int(abi.kPFTypeBool, 0, 1)
_FALSE = _pack_int(abi.kPFTypeBool, 0, 0)

# ---- Python objects owned by native objects ------------------------------------------------------
_handles: dict = {}
_next_id = itertools.count(1)

# Every wrapper made here, ``id`` -> weak reference, for the lending around full collections
# (cycles.py). That walk must not look for wrappers in ``gc.get_objects()``: the list it returns
# holds a reference to every tracked object of every thread, and another thread that runs while
# the walk is in Python code can find one of its own objects under construction counted twice
# (``tuple(generator)`` then fails with "SystemError: bad argument to internal function").
# ``Object.__del__`` removes the entry; one left by a wrapper resurrected and then freed without a
# second ``__del__`` is only a dead reference, overwritten by the next wrapper at that address.
_wrappers: dict = {}
_ref = weakref.ref


def _free_handle(key):
    try:
        _handles.pop(key, None)
    except Exception:  # interpreter shutdown: module globals may already be gone
        pass


_free_handle_c = abi.FreeHandle(_free_handle)
#: address of the free_handle callback; an Opaque whose free_handle is this one is ours.
FREE_HANDLE_ADDR = ctypes.cast(_free_handle_c, c_void_p).value


def hold(obj) -> int:
    """Stores ``obj`` under a fresh id (the native ``self``/``handle``) and returns the id."""
    key = next(_next_id)
    _handles[key] = obj
    return key


def make_opaque(obj) -> int:
    """A new Opaque object (new ref, as an address) owning a reference to ``obj``."""
    key = hold(obj)
    out = c_void_p()
    if LIB.PFOpaqueObjectCreate(key, _free_handle_c, byref(out)):
        _handles.pop(key, None)
        raise_last_error()
    return out.value or 0


def opaque_payload(handle: int):
    """``(True, obj)`` when ``handle`` is an Opaque made by this backend, else ``(False, None)``."""
    if c_int32.from_address(handle + 8).value != abi.kPFTypeOpaque:
        return False, None
    op = abi.PFOpaqueObject.from_address(handle)
    if op.free_handle != FREE_HANDLE_ADDR:
        return False, None
    return True, held_object(op.handle)


# ---- object wrappers -----------------------------------------------------------------------------
#: Byte order of a pointer in memory, for ``Object._pf_raw``.
RAW_ORDER = sys.byteorder


class Object:
    """Base class of every FFI object wrapper; holds one reference to the native object."""

    __slots__ = ("_pf_handle", "_pf_tindex", "_pf_gc_lent", "_pf_raw", "__weakref__")
    _pf_handle: int  # address of the owned PFObject, 0 when empty
    _pf_tindex: int  # its type index (kPFTypeNone when empty)
    _pf_gc_lent: dict | None  # {key: object} lent by _handles during a full collection (cycles)
    # The same address as 8 raw bytes in memory order. A Python int keeps its value in 30-bit
    # digits, which no leak checker reads as a pointer: without these bytes, a wrapper that
    # CPython never frees (in a reference cycle alive at exit) would hide the native object it
    # owns from LeakSanitizer, which then reports it as leaked (_core's C field is a pointer).
    _pf_raw: bytes

    def __new__(cls, *args, **kwargs):
        self = object.__new__(cls)
        self._pf_handle = 0
        self._pf_tindex = abi.kPFTypeNone
        _wrappers[id(self)] = _ref(self)
        return self

    # Only default arguments and attributes until the native reference is dropped: at exit this
    # may run after the interpreter wiped this module's globals (and its builtins are no longer
    # found either), and a failed lookup here used to leave the native object unreleased. The
    # slots are read past any __getattr__ (_get), which a subclass may define to answer any name.
    def __del__(
        self,
        _DecRef=_DecRef,
        _Unset=AttributeError,
        _get=object.__getattribute__,
        _slots=_slot_types,
        _unbind=_ExchangeBindingRef,
        _id=id,
        _wrappers=_wrappers,
    ):
        _wrappers.pop(_id(self), None)
        try:
            handle = _get(self, "_pf_handle")
        except _Unset:  # made without __new__
            return
        if handle:
            self._pf_handle = 0
            if _slots.get(_get(self, "_pf_tindex")):
                _unbind(handle, _id(self), None)  # before the release: no stale reference
            _DecRef(handle)
        try:
            lent = _get(self, "_pf_gc_lent")
        except _Unset:
            return
        if lent is not None:
            give_back(self)

    @property
    def handle(self) -> int:
        """Address of the native PFObject (0 when empty)."""
        return self._pf_handle

    @property
    def type_index(self) -> int:
        """The native object's most derived type index."""
        return self._pf_tindex

    @property
    def type_key(self) -> str:
        """Type key of the native object ("None" when empty)."""
        return type_key_of(self._pf_handle)

    def same_as(self, other) -> bool:
        """Whether ``other`` wraps the same native object."""
        if self is other:
            return True
        if not isinstance(other, Object):
            return False
        return self._pf_handle != 0 and self._pf_handle == other._pf_handle

    #: apache-tvm-ffi's names for ``handle`` and ``same_as``.
    id_ = handle
    is_ = same_as

    def __chandle__(self) -> int:
        """The native object's address (apache-tvm-ffi's protocol method; ``handle``)."""
        return self._pf_handle

    def __eq__(self, other):
        if not isinstance(other, Object):
            return NotImplemented
        return self.same_as(other)

    def __ne__(self, other):
        if not isinstance(other, Object):
            return NotImplemented
        return not self.same_as(other)

    def __hash__(self):
        addr = self._pf_handle or id(self)
        rotated = ((addr >> 4) | (addr << 60)) & 0xFFFFFFFFFFFFFFFF
        if rotated >= 1 << 63:
            rotated -= 1 << 64
        return -2 if rotated == -1 else rotated

    def __repr__(self):
        return f"<{tp_name(type(self))} {type_key_of(self._pf_handle)} at {self._pf_handle:#x}>"

    def __init_handle_by_constructor__(self, ctor, *args):
        """Fills this wrapper with the object that ``ctor(*args)`` returns."""
        if not isinstance(ctor, Function):
            raise TypeError(_msg.text("INIT_HANDLE_NEEDS_FUNCTION"))
        if self._pf_handle:
            raise already_initialized(self)
        result = ctor(*args)
        if not isinstance(result, Object) or not result._pf_handle:
            raise TypeError(
                _msg.text("CONSTRUCTOR_RETURNED_NO_OBJECT", ctor, tp_name(type(result)))
            )
        handle = result._pf_handle
        _IncRef(handle)
        del result
        old = self._pf_handle
        self._pf_handle = handle
        self._pf_raw = handle.to_bytes(8, RAW_ORDER)
        self._pf_tindex = c_int32.from_address(handle + 8).value
        if old:
            _DecRef(old)
        bind(self)


def already_initialized(obj) -> TypeError:
    """The error of an ``__init__`` called again on a wrapper that already holds an object."""
    return TypeError(
        _msg.text("ALREADY_INITIALIZED", tp_name(type(obj)), type_key_of(obj._pf_handle))
    )


_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE


def tp_name(cls: type) -> str:
    """What ``Py_TYPE(o)->tp_name`` is in C: the bare name of classes defined in Python, the
    dotted name of types defined in C (builtins bare); packedfun's wrappers count as C types.
    A class named by ``set_type_name`` goes by its type key until it is renamed, as on ``_core``."""
    named = cls.__dict__.get("_pf_tp_name")  # (class name when named, type key)
    if named is not None and named[0] == cls.__name__:
        return named[1]
    if cls in C_TYPES:
        return f"packedfun.{cls.__name__}"
    if cls.__flags__ & _HEAPTYPE or cls.__module__ == "builtins":
        return cls.__name__
    return f"{cls.__module__}.{cls.__name__}"


def type_key_of(handle: int) -> str:
    """The type key of the object at ``handle`` ("None" for 0)."""
    if not handle:
        return "None"
    tindex = c_int32.from_address(handle + 8).value
    info = ctypes.POINTER(abi.PFTypeInfo)()
    if LIB.PFTypeGetInfo(tindex, byref(info)) or not info:
        err = c_void_p()
        LIB.PFErrorMoveFromRaised(byref(err))
        _DecRef(err.value)
        return f"<type {tindex}>"
    return abi.read_bytes(info.contents.type_key).decode("utf-8", "replace")


#: PACKEDFUN_FUNCTION_FLAG_HAS_METADATA of PFObject.flags.
_HAS_METADATA = 1
#: PACKEDFUN_FUNCTION_FLAG_GIL_HOLD: the call keeps the GIL (PyDLL), else CDLL drops it.
_GIL_HOLD = 2
#: Result kinds a framework applies to: Tensor, then Array, Map, List, Dict (kPFTypeTensor..Dict).
_TENSOR_FIRST = abi.kPFTypeTensor
_CONTAINER_LAST = abi.kPFTypeDict
#: The GIL policies by their Python names (kPFGILRelease, kPFGILHold).
GIL_POLICIES = {"release": 0, "hold": 1}


class _SignatureDescriptor:
    """``Function.__signature__`` (``_core`` has the same in C): on an instance, the signature from
    the metadata record, ``(*args)`` without one; on the class, None, so that
    ``inspect.signature(Function)`` falls back to the constructor instead of failing on the
    descriptor itself (as on a plain property).
    """

    def __get__(self, obj, objtype=None):
        if obj is None:
            return None
        return _signature.function_signature(obj)

    def __set__(self, obj, value):
        raise AttributeError(_msg.text("FUNCTION_SIGNATURE_READ_ONLY"))


class Function(Object):
    """Function(callable)

    A packed function: a native function of any language called with positional arguments.
    Function(callable) wraps a Python callable."""

    __slots__ = ("_pf_name", "_pf_cptr", "_pf_lent", "__dict__")
    _pf_name: str | None  # registry (or module) name it was looked up by
    _pf_cptr: c_void_p  # the handle, pre-converted for the argtypes-free PFFunctionCall
    _pf_lent: object  # the wrapped callable while this wrapper holds it (see _Lent)

    def __new__(cls, *args, **kwargs):
        if cls is not Function:  # a subclass: empty until its __init__ calls __move_handle_from__
            return make_function(0, cls=cls)
        if kwargs or len(args) != 1:
            if not kwargs:
                raise TypeError(f"Function() takes exactly 1 argument ({len(args)} given)")
            raise TypeError(_msg.text("NO_KEYWORDS", "Function"))
        callable_ = args[0]
        if isinstance(callable_, Function):
            return callable_
        if not callable(callable_):
            raise TypeError(_msg.text("FUNCTION_NOT_CALLABLE", tp_name(type(callable_))))
        return to_function(callable_)

    def __call__(self, *args, **kwargs):
        flags = self._pf_flags
        if kwargs or flags & _HAS_METADATA:
            args = self._pf_bind(args, kwargs)
        call = _CallRaw if flags & _GIL_HOLD else _CallReleased  # the Function's GIL policy
        result = PFAny()
        if args:
            temps: list = []
            packed = _pack.pack_args(self, args, temps)
            allocator = _tensor_return.call_allocator(args) if temps else None
            pinned = _pin(args) if call is _CallReleased else ()
            if allocator is not None:  # array arguments: their framework allocates outputs
                previous = c_void_p()
                LIB.PFEnvSetTensorAllocator(allocator, byref(previous))
                failed = call(self._pf_cptr, packed, len(args), byref(result))
                LIB.PFEnvSetTensorAllocator(previous, None)
            else:
                failed = call(self._pf_cptr, packed, len(args), byref(result))
            for handle in pinned:
                _DecRef(handle)
            if failed:
                exc = _errors.take_raised(self._pf_name)
                if not self._pf_handle:  # an empty subclass instance: as _core words it
                    exc = ValueError(_msg.text("FUNCTION_RELEASED"))
                _signature.name_argument_types(exc, self, args)  # a NumPy scalar's own type
                del temps  # released before raising, as _core does: the traceback keeps frames
                try:
                    raise exc
                finally:
                    exc = None
            del temps
            # Array arguments (or a container remembering one's framework): a Tensor result
            # goes back in that framework, a container result remembers it for its elements.
            if _TENSOR_FIRST <= result.type_index <= _CONTAINER_LAST:
                framework = _tensor_return.result_framework(args)
                if framework is not None:
                    return _tensor_return.convert_result(take_any(result), framework)
        elif call(self._pf_cptr, None, 0, byref(result)):
            if not self._pf_handle:  # an empty subclass instance: as _core words it
                _errors.take_raised(None)
                raise ValueError(_msg.text("FUNCTION_RELEASED"))
            raise_last_error(self._pf_name)
        return take_any(result)

    __signature__ = _SignatureDescriptor()

    @property
    def __text_signature__(self):
        return _signature.text_signature_of(self)

    @property
    def gil_policy(self) -> str:
        """What a call does with the GIL: 'release' (the default) or 'hold' (trivial functions).

        Setting it changes the native Function for every holder."""
        if not self._pf_handle:
            raise ValueError(_msg.text("FUNCTION_RELEASED"))
        return "hold" if self._pf_flags & _GIL_HOLD else "release"

    @gil_policy.setter
    def gil_policy(self, value: str) -> None:
        if not isinstance(value, str):
            raise TypeError(_msg.text("GIL_POLICY_NOT_STR"))
        if value not in GIL_POLICIES:
            raise ValueError(_msg.text("GIL_POLICY_UNKNOWN", value))
        if not self._pf_handle:
            raise ValueError(_msg.text("FUNCTION_RELEASED"))
        if LIB.PFFunctionSetGILPolicy(self._pf_handle, GIL_POLICIES[value]):
            raise_last_error()

    @property
    def _pf_flags(self) -> int:
        return c_uint32.from_address(self._pf_handle + 12).value if self._pf_handle else 0

    def _pf_bind(self, args: tuple, kwargs: dict) -> tuple:
        """The full positional arguments of a call with keywords or defaults to fill."""
        table = self.__dict__.get("_pf_table")
        if table is None:
            text = function_metadata(self._pf_handle) if self._pf_handle else None
            table = _signature.param_table(text) if text is not None else ((), (), 0)
            self.__dict__["_pf_table"] = table
        if not table[0]:
            if kwargs:
                raise _kwargs_error(self._pf_name)
            return args
        if not kwargs and len(args) == len(table[0]):
            return args
        return _signature.bind(self._pf_name or self.__name__, table, args, kwargs)

    def __repr__(self):
        name = self._pf_name
        at = self._pf_handle or 0
        if name is not None:
            return _msg.text("FUNCTION_REPR_NAMED", name, at)
        ours, callable_ = wrapped_callable(self._pf_handle)
        if ours:
            return _msg.text("FUNCTION_REPR_WRAPPING", callable_, at)
        return _msg.text("FUNCTION_REPR", at)

    @property
    def __name__(self):
        name = self.__dict__.get("__name__")
        if name is not None:
            return name
        if self._pf_name is not None:
            return self._pf_name
        ours, callable_ = wrapped_callable(self._pf_handle)
        if ours:
            return callable_.__name__
        return "Function"

    @__name__.setter
    def __name__(self, value):
        if not isinstance(value, str):
            raise TypeError(_msg.text("FUNCTION_NAME_NOT_STR"))
        self.__dict__["__name__"] = value

    @__name__.deleter
    def __name__(self):
        del self.__dict__["__name__"]

    def same_as(self, other) -> bool:
        """Whether ``other`` is the same native Function, or the Python callable it wraps."""
        if not isinstance(other, Object):
            ours, callable_ = wrapped_callable(self._pf_handle)
            return bool(ours) and callable_ is other
        return Object.same_as(self, other)

    is_ = same_as

    def __move_handle_from__(self, other) -> None:
        """Takes ``other``'s native Function: this Function calls it from now on, ``other`` is
        left empty. A subclass's ``__init__`` gives its instance a function this way."""
        if not isinstance(other, Function):
            raise TypeError(_msg.text("MOVE_HANDLE_NOT_FUNCTION", tp_name(type(other))))
        if other is self:
            return
        handle = other._pf_handle
        lent = getattr(other, "_pf_lent", None)
        if lent is not None and handle:  # the callable goes back to _handles, as in __del__
            _handles[abi.PFFunctionObject.from_address(handle).self] = lent
            other._pf_lent = None
        old, name = self._pf_handle, other._pf_name
        other._pf_handle, other._pf_cptr, other._pf_name = 0, c_void_p(0), None
        other.__dict__.pop("_pf_table", None)
        self._pf_handle, self._pf_cptr, self._pf_name = handle, c_void_p(handle), name
        self.__dict__.pop("_pf_table", None)
        if old:
            _DecRef(old)

    @classmethod
    def __from_extern_c__(cls, c_symbol, *, keep_alive_object=None):
        """A Function calling the tvm-ffi safe call at address ``c_symbol`` (which ignores its
        handle argument); the Function keeps ``keep_alive_object`` alive."""
        return _from_address(
            "packedfun.tvm_ffi_function_from_safe_call", c_symbol, keep_alive_object
        )

    @classmethod
    def __from_mlir_packed_safe_call__(cls, mlir_packed_symbol, *, keep_alive_object=None):
        """A Function calling the MLIR packed call at address ``mlir_packed_symbol`` (a tvm-ffi
        safe call's arguments and return code as one array of pointers); the Function keeps
        ``keep_alive_object`` alive."""
        return _from_address(
            "packedfun.tvm_ffi_function_from_mlir_packed", mlir_packed_symbol, keep_alive_object
        )

    @property
    def py_callable(self):
        """The Python callable this Function wraps, or None."""
        ours, callable_ = wrapped_callable(self._pf_handle)
        return callable_ if ours else None

    # As Object.__del__: only default arguments and attributes (this may run at exit).
    def __del__(
        self,
        _release=Object.__del__,
        _count=c_uint64.from_address,
        _function=abi.PFFunctionObject.from_address,
        _handles=_handles,
        _Unset=AttributeError,
    ):
        try:
            lent, handle = self._pf_lent, self._pf_handle
        except _Unset:
            lent = handle = None
        if lent is not None and handle:
            # _handles first, then the wrapper: another thread may call the Function in between
            # (any line here may switch threads), and it must find the callable in one of them.
            if _count(handle).value > 1:  # native code keeps the Function
                _handles[_function(handle).self] = lent
            self._pf_lent = None
        _release(self)

    @property
    def registry_name(self):
        """The global name this Function was looked up by, or None."""
        return self._pf_name


class _FunctionDoc:
    """``Function.__doc__``: the class docstring on the class; on an instance what it was given,
    else what ``packedfun._rules.signature.function_doc`` finds (as _core's getter)."""

    def __init__(self, class_doc):
        self.class_doc = class_doc

    def __get__(self, obj, owner=None):
        if obj is None:
            return self.class_doc
        doc = obj.__dict__.get("__doc__", self)
        if doc is not self:
            return doc
        doc = _signature.function_doc(obj)
        return type(obj).__doc__ if doc is None else doc

    def __set__(self, obj, value):
        obj.__dict__["__doc__"] = value

    def __delete__(self, obj):
        obj.__dict__.pop("__doc__", None)


Function.__doc__ = _FunctionDoc(Function.__doc__)  # type: ignore[assignment]


def _pin(args: tuple) -> tuple:
    """The handles of the wrapper arguments, each given a reference for a call that releases the
    GIL: native code may mutate an argument while another thread's full collection walks solely
    owned native objects (``cycles.py``), and an argument counted twice is never walked."""
    handles = tuple(a._pf_handle for a in args if isinstance(a, Object) and a._pf_handle)
    for handle in handles:
        _IncRef(handle)
    return handles


def _kwargs_error(name) -> TypeError:
    if name is not None:
        return TypeError(_msg.text("FUNCTION_NO_KEYWORD_ARGUMENTS", name))
    return TypeError(_msg.text("FUNCTION_NO_KEYWORD_ARGUMENTS_UNNAMED"))


def wrapped_callable(handle: int):
    """``(True, callable)`` when the Function at ``handle`` wraps a Python callable of ours."""
    if not handle:
        return False, None
    func = abi.PFFunctionObject.from_address(handle)
    if func.safe_call != SAFE_CALL_ADDR:
        return False, None
    return True, held_object(func.self)


class _Lent:
    """The ``_handles`` entry of a Python object held by a wrapper instead of by ``_handles``, so
    that Python's GC sees cycles through it and frees them. Two lenders: the Function wrapper
    that ``to_function`` made holds its callable (``wrapper._pf_lent``, ``key`` None) for its
    whole life, and during a full collection a wrapper that solely owns its native object holds
    the objects reachable through it (``wrapper._pf_gc_lent[key]``, see ``cycles.py``). A
    wrapper's ``__del__`` moves what it holds back into ``_handles`` if native code still holds
    the owner then (also when the GC finalizes a cycle: the object is resurrected)."""

    __slots__ = ("ref", "key")

    def __init__(self, wrapper, key=None) -> None:
        self.ref = weakref.ref(wrapper)
        self.key = key

    def get(self):
        """The lent object, or ``_GIVEN_BACK`` once the lender let it go."""
        wrapper = self.ref()
        if wrapper is None:
            return _GIVEN_BACK
        if self.key is None:
            lent = wrapper._pf_lent
            return _GIVEN_BACK if lent is None else lent
        lent = getattr(wrapper, "_pf_gc_lent", None)
        return _GIVEN_BACK if lent is None else lent.get(self.key, _GIVEN_BACK)


_GIVEN_BACK = object()


def held_object(key):
    """The Python object stored under ``key`` (None when there is none), wherever it is now.

    A lender hands its object back in Python code (``__del__``, ``give_back``), so another thread
    may see a ``_Lent`` whose lender has already let go while ``_handles`` does not hold the object
    yet: that thread lets the lender finish and reads again. Lenders write ``_handles`` before
    they let go, so this only happens to a reader that took the ``_Lent`` just before."""
    for _ in range(10000):
        entry = _handles.get(key)
        if type(entry) is not _Lent:
            return entry
        value = entry.get()
        if value is not _GIVEN_BACK:
            return value
        time.sleep(0)  # the GIL goes to the lender, which is mid-way through handing it back
    return None


def give_back(wrapper) -> None:
    """Moves the objects ``wrapper`` holds for a collection back into ``_handles``, for those
    whose native holder is still alive (its ``_Lent`` entry is still there: free_handle drops
    the entry of a holder that died). ``_handles`` first: see ``held_object``."""
    lent = wrapper._pf_gc_lent
    for key, value in lent.items():
        entry = _handles.get(key)
        if type(entry) is _Lent and entry.key == key:
            _handles[key] = value
    wrapper._pf_gc_lent = None


Function.__module__ = Object.__module__ = "packedfun"
#: The backend's classes that stand for _core's C types (named "packedfun.X" in messages);
#: the container and descriptor modules add theirs.
C_TYPES: set[type] = {Object, Function}

_object_factory = None
_class_cache: dict = {}


def set_object_factory(factory) -> None:
    """Installs ``factory(type_index) -> class | None`` used to wrap returned objects."""
    global _object_factory
    if factory is not None and not callable(factory):
        raise TypeError(_msg.text("OBJECT_FACTORY_NOT_CALLABLE"))
    _object_factory = factory
    _class_cache.clear()


def class_for(tindex: int) -> type:
    """The Python class for objects of ``tindex`` (positive answers of the factory cached)."""
    cls = _class_cache.get(tindex)
    if cls is not None:
        return cls
    factory = _object_factory
    if factory is None:
        return _objects.default_class(tindex)
    cls = factory(tindex)
    if cls is None:
        return _objects.default_class(tindex)
    if not (isinstance(cls, type) and issubclass(cls, Object)):
        raise TypeError(_msg.text("OBJECT_FACTORY_RESULT", cls, tindex))
    _class_cache[tindex] = cls
    return cls


def wrap(handle: int, tindex: int, cls=None):
    """A wrapper of the registered class for ``tindex`` taking over one reference to ``handle``."""
    if cls is None:
        if tindex == abi.kPFTypeFunction:
            return make_function(handle)
        if tindex == abi.kPFTypeTensor:
            return _tensor.wrap_tensor(handle)
        try:
            cls = class_for(tindex)
        except BaseException:
            _DecRef(handle)
            raise
    slot = is_slot_type(tindex, handle)
    if slot:
        known = _GetBindingRef(handle)
        if known:  # a live wrapper: its __del__ clears the reference before it dies
            _DecRef(handle)
            return ctypes.cast(known, ctypes.py_object).value
    obj = object.__new__(cls)
    obj._pf_handle = handle
    obj._pf_raw = handle.to_bytes(8, RAW_ORDER)
    obj._pf_tindex = tindex
    _wrappers[id(obj)] = _ref(obj)
    if slot:
        _ExchangeBindingRef(handle, None, id(obj))
    return obj


def make_function(handle: int, name=None, cls=None) -> Function:
    """A Function wrapper (of ``cls``, a subclass, if given) taking over one reference to
    ``handle`` (0: an empty one, whose calls raise)."""
    func = object.__new__(Function if cls is None else cls)
    _wrappers[id(func)] = _ref(func)
    func._pf_handle = handle
    func._pf_tindex = abi.kPFTypeFunction
    func._pf_name = name
    func._pf_cptr = c_void_p(handle)
    return func


def to_function(value) -> Function:
    """``value`` as a Function: a Function unchanged, a Python callable wrapped."""
    if isinstance(value, Function):
        return value
    if not callable(value):
        raise TypeError(f"expected a callable, got {tp_name(type(value))}")
    key = hold(value)
    out = c_void_p()
    if LIB.PFFunctionCreate(key, _guarded_call, _free_handle_c, byref(out)):
        _handles.pop(key, None)
        raise_last_error()
    func = make_function(out.value or 0)
    LIB.PFFunctionSetGILPolicy(out.value, 1)  # called from Python it holds the GIL anyway
    func._pf_lent = value
    _handles[key] = _Lent(func)
    return func


# ---- results ------------------------------------------------------------------------------------
def function_metadata(handle: int):
    """The JSON metadata record of the Function ``handle`` (this binding's, also beside _core)."""
    out = PFAny()
    if LIB.PFFunctionGetMetadata(handle, byref(out)):
        raise_last_error()
    return take_any(out)


def take_any(value: PFAny):
    """The Python value of an owned PFAny (its reference is consumed)."""
    tindex, _, payload = _unpack_int(value)
    if tindex == abi.kPFTypeInt:
        return payload
    if tindex == abi.kPFTypeNone:
        return None
    if tindex >= abi.kPFTypeStaticObjectBegin:
        return take_object(payload & 0xFFFFFFFFFFFFFFFF, tindex)
    if tindex == abi.kPFTypeFloat:
        return _unpack_float(value)[2]
    if tindex == abi.kPFTypeBool:
        return payload != 0
    return _pod_to_python(value, tindex)


def take_object(handle: int, tindex: int):
    """The Python value of an object, consuming one reference to ``handle``."""
    if tindex == abi.kPFTypeString or tindex == abi.kPFTypeBytes:
        try:
            data = string_at(*_unpack_view(string_at(handle + 24, 16)))
        finally:
            _DecRef(handle)
        return data.decode("utf-8") if tindex == abi.kPFTypeString else data
    if tindex == abi.kPFTypeOpaque:
        ours, payload = opaque_payload(handle)
        if ours:
            _DecRef(handle)
            return payload
    return wrap(handle, tindex)


def _pod_to_python(value: PFAny, tindex: int):
    if tindex == abi.kPFTypeUInt64:
        return _unpack_ptr(value)[2]
    if tindex == abi.kPFTypeSmallStr or tindex == abi.kPFTypeSmallBytes:
        data = string_at(addressof(value) + 8, value.small_len)
        return data.decode("utf-8") if tindex == abi.kPFTypeSmallStr else data
    if tindex == abi.kPFTypeOpaquePtr:
        ptr = value.v_ptr
        return c_void_p(ptr) if ptr else None
    if tindex in (abi.kPFTypeRawStr, abi.kPFTypeStrView, abi.kPFTypeBytesView):
        return _borrowed_text(value, tindex)
    if tindex == abi.kPFTypeDataType:
        dtype = value.v_dtype
        return _tensor.dtype_to_py(dtype.code, dtype.bits, dtype.lanes)
    if tindex == abi.kPFTypeDevice:
        device = value.v_device
        return _tensor.device_to_py(device.device_type, device.device_id)
    if tindex == abi.kPFTypeDLTensorPtr:
        owned = PFAny()
        if _ViewToOwned(byref(value), byref(owned)):
            raise_last_error()
        return take_any(owned)
    raise TypeError(_msg.text("VALUE_UNKNOWN_TYPE_INDEX", tindex))


def _borrowed_text(value: PFAny, tindex: int):
    if tindex == abi.kPFTypeRawStr:
        return string_at(value.v_ptr).decode("utf-8")
    data = string_at(*_unpack_view(string_at(value.v_ptr, 16))) if value.v_ptr else b""
    return data.decode("utf-8") if tindex == abi.kPFTypeStrView else data


def borrow_any(address: int):
    """The Python value of a borrowed PFAny at ``address`` (objects gain a reference)."""
    value = PFAny.from_address(address)
    tindex = value.type_index
    if tindex >= abi.kPFTypeStaticObjectBegin:
        handle = value.v_obj
        _IncRef(handle)
        return take_object(handle, tindex)
    return take_any(value)


# ---- Python callables called from native code ---------------------------------------------------
def _safe_call(key, args, num_args, result):
    try:
        func = _handles[key]
        if type(func) is _Lent:
            func = held_object(key)
        pyargs = [borrow_any(args + 16 * i) for i in range(num_args)]
        ret = func(*pyargs)
        if ret is not None:
            store_result(ret, result)
        return 0
    except BaseException as exc:  # noqa: B036 - every exception must cross as an Error
        func = pyargs = None  # the traceback keeps this frame: hold nothing beyond the call
        return _errors.raise_into_native(exc)


#: ctypes' trampoline into _safe_call. It takes the GIL before any code of ours runs, so native
#: code never calls it directly: Functions wrapping a Python callable have the runtime's
#: PFEnvGuardedCall as their body, which refuses the call once the interpreter is shutting down
#: (entering the trampoline then would crash or end the thread) and otherwise calls this one.
_safe_call_c = abi.SafeCall(_safe_call)
#: address of the body of every Function that wraps a Python callable (``self`` is the key).
SAFE_CALL_ADDR: int = ctypes.cast(LIB.PFEnvGuardedCall, c_void_p).value or 0
_guarded_call = abi.SafeCall(SAFE_CALL_ADDR)


def store_result(value, result: int) -> None:
    """Writes ``value`` as an owned PFAny at address ``result`` (which holds None)."""
    temps: list = []
    packed = _pack.pack_value(value, temps)
    if _ViewToOwned(packed, result):
        del temps
        raise_last_error()


def _from_address(global_name: str, address, keep) -> Function:
    """A Function over a tvm-ffi C function's address, built by the runtime's global
    ``global_name`` (the tvm-ffi bridge); ``keep`` travels as an Opaque the Function owns (a list
    would otherwise convert to an Array, a copy kept alive)."""
    key = abi.byte_array(global_name.encode("utf-8"))
    func = c_void_p()
    if LIB.PFFunctionGetGlobal(byref(key), byref(func)):
        raise_last_error()
    if not func.value:
        raise RuntimeError(_msg.text("TVM_FFI_INTEROP_MISSING"))
    temps: list = []
    argv = (PFAny * 2)()
    try:
        ctypes.memmove(argv, _pack.pack_value(address, temps), ctypes.sizeof(PFAny))
        if keep is not None:
            argv[1].type_index = abi.kPFTypeOpaque
            argv[1].v_obj = make_opaque(keep)
        result = PFAny()
        if LIB.PFFunctionCall(func.value, argv, 2, byref(result)):
            raise_last_error()
        return take_any(result)
    finally:
        if argv[1].type_index == abi.kPFTypeOpaque:
            _DecRef(argv[1].v_obj)
        _DecRef(func.value)


def raise_last_error(fname=None):
    """Raises the pending native error (see :func:`packedfun._ctypes.errors.raise_last_error`)."""
    _errors.raise_last_error(fname)


# Packing and errors live in their own modules, which import from this one: bound last.
from . import errors as _errors  # noqa: E402
from . import objects as _objects  # noqa: E402
from . import pack as _pack  # noqa: E402
from . import tensor as _tensor  # noqa: E402
from . import tensor_return as _tensor_return  # noqa: E402
