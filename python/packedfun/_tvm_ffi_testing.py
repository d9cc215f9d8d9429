# tvm_ffi.testing under the switch: packedfun's testing names and apache-tvm-ffi's C++ test classes.
"""``tvm_ffi.testing`` (and ``tvm_ffi.testing.testing``) when packedfun is ``tvm_ffi``.

apache-tvm-ffi's ``import tvm_ffi`` loads its C++ testing library (``libtvm_ffi_testing.so``) and
its ``tvm_ffi.testing`` declares Python classes for the object types of that library
(``testing.TestObjectBase``, ``testing.TestCompare``, ...). Under the switch the library is loaded
through packedfun's tvm-ffi bridge (:mod:`packedfun.tvm_ffi_compat`), its types are mirrored into
packedfun's type table, and this module declares the same class names over them with packedfun's
own :func:`packedfun.dataclasses.c_class` (one registry: an object of such a type that a function
returns comes back as an instance of the class declared here).

Every other name is packedfun's :mod:`packedfun.testing` (its functions, ``library_path``,
``run_with_gpu_lock``). ``TestIntPair`` is tvm-ffi's: both testing libraries register a type of
that key, and this module is tvm-ffi's testing library (the switch's ``c_class`` declares a class
for tvm-ffi's type of a key); :class:`packedfun.testing.TestIntPair` stays packedfun's own.

A type of tvm-ffi's library that has no reflected constructor (``__ffi_init__``; apache-tvm-ffi
generates one from its fields' init traits, which its reflection tables do not export) is built
here through tvm-ffi's ``ffi.MakeObjectFromPackedArgs``: keyword arguments by field name,
positional arguments in the order of the reflected fields; fields left out take their C++
defaults, and a required one left out raises ``TypeError``.
"""

from __future__ import annotations

import sys
from typing import Any, ClassVar

from . import _tvm_ffi_core, _tvm_ffi_init
from . import object as _object
from . import testing as _pf_testing
from ._tvm_ffi_dataclasses import c_class
from .object import Object, type_info
from .registry import get_global_func

# apache-tvm-ffi's testing library, loaded once (a no-op when apache-tvm-ffi is not installed).
from .tvm_ffi_compat import _load_tvm_ffi_testing  # noqa: E402

_load_tvm_ffi_testing()

#: A package for the import system: ``tvm_ffi.testing.testing`` resolves (to this module again).
__path__: list = []

library_path = _pf_testing.library_path
run_with_gpu_lock = _pf_testing.run_with_gpu_lock


def _marker(version: tuple) -> Any:
    import pytest

    return pytest.mark.skipif(
        sys.version_info < version, reason=f"requires Python {version[0]}.{version[1]}+"
    )


def __getattr__(name: str) -> Any:
    if name.startswith("requires_py3"):  # tvm-ffi's pytest markers (pytest only when asked)
        return _marker((3, int(name[len("requires_py3") :])))
    return getattr(_pf_testing, name)


def _packed(type_key: str, args: tuple, kwargs: dict) -> list:
    """The arguments of tvm-ffi's ``ffi.MakeObjectFromPackedArgs`` for an object of ``type_key``:
    positional arguments name the reflected fields in order (ancestors' first)."""
    if args:
        info = type_info(_object._declared_type_index(type_key))  # tvm-ffi's type of the key
        names = [f["name"] for a in info["ancestors"][1:] for f in type_info(a)["fields"]]
        if len(args) > len(names):
            raise TypeError(
                f"{type_key} takes at most {len(names)} positional arguments ({len(args)} given)"
            )
        for name, value in zip(names, args):
            if name in kwargs:
                raise TypeError(f"{type_key} got multiple values for argument {name!r}")
            kwargs[name] = value
    flat: list = [type_key]
    for name, value in kwargs.items():
        flat += [name, value]
    return flat


def _make(type_key: str, *args: Any, **kwargs: Any) -> Any:
    return get_global_func("ffi.MakeObjectFromPackedArgs")(*_packed(type_key, args, kwargs))


def _reflection_init(self: Any, *args: Any, **kwargs: Any) -> None:
    """``__init__`` of a tvm-ffi type without a reflected constructor (see the module's doc)."""
    key = type_info(type(self).__pf_type_index__)["type_key"]
    ctor = get_global_func("ffi.MakeObjectFromPackedArgs")
    self.__init_handle_by_constructor__(ctor, *_packed(key, args, kwargs))


def create_object(type_key: str, **kwargs: Any) -> Object:
    """An object of the native type ``type_key`` with the given fields, built by reflection
    (apache-tvm-ffi's testing helper)."""
    return _make(type_key, **kwargs)


def make_unregistered_object() -> Object:
    """An object of a tvm-ffi type that no Python class is registered for."""
    return get_global_func("testing.make_unregistered_object")()


def add_one(x: int) -> int:
    """``x + 1``, computed by tvm-ffi's testing library."""
    return get_global_func("testing.add_one")(x)


def _declare(type_key: str, **options: Any) -> Any:
    """The switch's ``c_class(type_key, **options)`` (tvm-ffi's constructors over reflection),
    with :func:`_reflection_init` as ``__init__`` when the type has no constructor at all (no
    ``__ffi_init__`` method or attribute) and the class defines none."""

    def wrap(cls: Any) -> Any:
        own_init = "__init__" in cls.__dict__
        cls = c_class(type_key, **options)(cls)
        index = cls.__pf_type_index__
        ctor = _tvm_ffi_init._ffi_init_of(index, _tvm_ffi_core.TypeInfo(index, cls))
        if options.get("init", True) and ctor is None:
            for f in cls.__pf_py_spec__.own:  # every reflected field is a keyword of the builder
                f.init = True
            if not own_init:
                cls.__init__ = _reflection_init
        return cls

    return wrap


@_declare("testing.TestObjectBase")
class TestObjectBase(Object):
    """tvm-ffi's test object: ``v_i64``, ``v_f64``, ``v_str`` and a method ``add_i64``."""

    __test__: ClassVar[bool] = False
    v_i64: int
    v_f64: float
    v_str: str


@_declare("testing.TestObjectDerived")
class TestObjectDerived(TestObjectBase):
    """A :class:`TestObjectBase` with a map ``v_map`` and an array ``v_array``."""

    __test__: ClassVar[bool] = False
    v_map: Any
    v_array: Any


@_declare("testing.TestIntPair")
class TestIntPair(Object):
    """tvm-ffi's pair of integers ``a`` and ``b`` with a method ``sum`` (packedfun's testing
    library has a type of that key too: :class:`packedfun.testing.TestIntPair`, another type)."""

    __test__: ClassVar[bool] = False
    a: int
    b: int


@_declare("testing.TestFrozenCxx", frozen=True)
class TestFrozenCxx(Object):
    """A C++ object frozen from Python (this release's library reflects no fields on it)."""

    __test__: ClassVar[bool] = False


@_declare("testing.TestObjectPtrHolder")
class TestObjectPtrHolder(Object):
    """Holds a :class:`TestObjectBase` (``value``) and an optional one (``optional_value``)."""

    __test__: ClassVar[bool] = False
    value: Any
    optional_value: Any


@_declare("testing.TestNonCopyable")
class TestNonCopyable(Object):
    """A C++ object whose type cannot be copied."""

    __test__: ClassVar[bool] = False
    value: int


@_declare("testing.SchemaAllTypes")
class _SchemaAllTypes(Object):
    """tvm-ffi's object with a field of each schema type."""


@_declare("testing.TestCompare")
class TestCompare(Object):
    """``ignored_field`` takes no part in comparisons."""

    __test__: ClassVar[bool] = False
    key: int
    name: str
    ignored_field: int


@_declare("testing.TestHash")
class TestHash(Object):
    """``hash_ignored`` takes no part in hashing."""

    __test__: ClassVar[bool] = False
    key: int
    name: str
    hash_ignored: int


@_declare("testing.TestCustomHash")
class TestCustomHash(Object):
    """A C++ hash hook that hashes ``key`` only."""

    __test__: ClassVar[bool] = False
    key: int
    label: str


@_declare("testing.TestCustomCompare")
class TestCustomCompare(Object):
    """C++ equality and comparison hooks that look at ``key`` only."""

    __test__: ClassVar[bool] = False
    key: int
    label: str


@_declare("testing.TestEqWithoutHash")
class TestEqWithoutHash(Object):
    """A C++ equality hook without a hash hook."""

    __test__: ClassVar[bool] = False
    key: int
    label: str


@_declare("testing.TestCxxClassBase")
class _TestCxxClassBase(Object):
    """Its ``__init__`` adds 1 to ``v_i64`` and 2 to ``v_i32`` before building the object."""

    v_i64: int
    v_i32: int
    not_field_1 = 1
    not_field_2: ClassVar[int] = 2

    def __init__(self, v_i64: int, v_i32: int) -> None:
        _reflection_init(self, v_i64 + 1, v_i32 + 2)


@_declare("testing.TestCxxClassDerived", eq=True, order=True, unsafe_hash=True)
class _TestCxxClassDerived(_TestCxxClassBase):
    v_f64: float
    v_f32: float

    __init__ = _reflection_init


@_declare("testing.TestCxxClassDerivedDerived")
class _TestCxxClassDerivedDerived(_TestCxxClassDerived):
    v_str: str
    v_bool: bool


@_declare("testing.TestCxxInitSubset")
class _TestCxxInitSubset(Object):
    required_field: int
    optional_field: int
    note: str


@_declare("testing.TestCxxKwOnly")
class _TestCxxKwOnly(Object):
    x: int
    y: int
    z: int
    w: int


@_declare("testing.TestCxxAutoInit")
class _TestCxxAutoInit(Object):
    __test__: ClassVar[bool] = False
    a: int
    b: int
    c: int
    d: int


@_declare("testing.TestCxxAutoInitSimple")
class _TestCxxAutoInitSimple(Object):
    __test__: ClassVar[bool] = False
    x: int
    y: int


@_declare("testing.TestCxxAutoInitAllInitOff")
class _TestCxxAutoInitAllInitOff(Object):
    __test__: ClassVar[bool] = False
    x: int
    y: int
    z: int


@_declare("testing.TestCxxAutoInitKwOnlyDefaults")
class _TestCxxAutoInitKwOnlyDefaults(Object):
    __test__: ClassVar[bool] = False
    p_required: int
    p_default: int
    k_required: int
    k_default: int
    hidden: int


@_declare("testing.TestCxxNoAutoInit", init=False)
class _TestCxxNoAutoInit(Object):
    __test__: ClassVar[bool] = False
    x: int
    y: int


@_declare("testing.TestCxxAutoInitParent")
class _TestCxxAutoInitParent(Object):
    __test__: ClassVar[bool] = False
    parent_required: int
    parent_default: int


@_declare("testing.TestCxxAutoInitChild")
class _TestCxxAutoInitChild(_TestCxxAutoInitParent):
    __test__: ClassVar[bool] = False
    child_required: int
    child_kw_only: int


@_declare("testing.TestCxxIntEnum")
class _TestCxxIntEnum(Object):
    """tvm-ffi's C++ integer enum type (its Python enum class is not reproduced: tvm-ffi's enums
    over C++ types are not provided)."""

    __test__: ClassVar[bool] = False


@_declare("testing.TestCxxStrEnum")
class _TestCxxStrEnum(Object):
    """tvm-ffi's C++ string enum type (see :class:`_TestCxxIntEnum`)."""

    __test__: ClassVar[bool] = False


@_declare("testing.TestCxxEnumHolder")
class _TestCxxEnumHolder(Object):
    """Holds a ``priority`` (a :class:`_TestCxxIntEnum`) and an ``opcode`` (a
    :class:`_TestCxxStrEnum`)."""

    __test__: ClassVar[bool] = False
    priority: Any
    opcode: Any
