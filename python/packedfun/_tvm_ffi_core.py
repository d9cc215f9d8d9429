# `tvm_ffi.core` under the switch: the names of tvm-ffi's compiled core module, on packedfun's own.
"""What ``import tvm_ffi.core`` gives under :mod:`packedfun.tvm_ffi_compat`.

apache-tvm-ffi's ``tvm_ffi.core`` is its compiled (Cython) module; packages and tests import
public names from it (``Object``, ``Function``, ``MISSING``, ``TypeInfo``, ``TypeSchema``,
``String``, ``Bytes``, ...). Here each name is packedfun's own class or value where packedfun has
one (the same classes, the same registry), and a small stand-in where it has not. Any other name
is looked up in packedfun's backend module (``packedfun.core``), so code that reached the backend
through ``packedfun.core`` keeps working when the switch's ``tvm_ffi.core`` takes that attribute.
"""

from __future__ import annotations

import collections.abc
import copy
import dataclasses
import itertools
import json
import threading
import typing

from . import _py_class
from . import registry as _registry
from ._backend import core as _backend
from ._missing import MISSING
from ._py_enum import Enum as _Enum
from ._rules import signature as _signature
from ._tvm_ffi_error import Error
from .container import Array, Dict, List, Map, Shape
from .module import Module
from .object import Object as _Object
from .object import _automatic, _class_for, _class_hooks, _registered, on_new_class
from .tensor import Device, Tensor
from .tensor import dtype as _dtype

__all__ = [
    "MISSING",
    "Array",
    "Bytes",
    "DataType",
    "Device",
    "Dict",
    "Error",
    "FFIProperty",
    "Function",
    "List",
    "Map",
    "Module",
    "Object",
    "Shape",
    "String",
    "Tensor",
    "TypeField",
    "TypeInfo",
    "TypeMethod",
    "TypeSchema",
]

#: Base class of every object wrapper (packedfun's).
Object = _backend.Object
#: A packed function (packedfun's).
Function = _backend.Function
#: The descriptor of a reflected field on an object class (tvm-ffi: ``FFIProperty``).
FFIProperty = _backend.FieldDescriptor
#: The data type class: packedfun's ``dtype`` (tvm-ffi keeps a ``DataType`` beside ``dtype``).
DataType = _dtype


class String(str):
    """tvm-ffi's ``String``: a ``str`` that may cache the native string object.

    packedfun returns plain ``str`` for every native string, so nothing is ever cached here
    (``_tvm_ffi_cached_object`` is None); the class exists so that ``String("...")`` builds a
    ``str`` that every function accepts. It pickles as a plain ``str``.
    """

    __slots__ = ()
    _tvm_ffi_cached_object = None

    def __reduce__(self):
        return (str, (str(self),))


class Bytes(bytes):
    """tvm-ffi's ``Bytes``: a ``bytes`` that may cache the native bytes object (never, here; see
    :class:`String`). It pickles as plain ``bytes``."""

    __slots__ = ()
    _tvm_ffi_cached_object = None

    def __reduce__(self):
        return (bytes, (bytes(self),))


#: tvm-ffi's field flags (TVMFFIFieldFlagBitMask) that the switch reads.
_FIELD_WRITABLE = 1 << 0
_FIELD_HAS_DEFAULT = 1 << 1
_FIELD_SEQ_HASH_IGNORE = 1 << 3
_FIELD_SEQ_HASH_DEF = 1 << 4
_FIELD_DEFAULT_FROM_FACTORY = 1 << 5
_FIELD_REPR_OFF = 1 << 6
_FIELD_COMPARE_OFF = 1 << 7
_FIELD_HASH_OFF = 1 << 8
_FIELD_INIT_OFF = 1 << 9
_FIELD_KW_ONLY = 1 << 10
_FIELD_SEQ_HASH_DEF_SIMPLE = 1 << 12


@dataclasses.dataclass(eq=False)
class TypeField:
    """One reflected field of an object type (tvm-ffi's ``TypeField``, read-only here).

    For a type of a library built for tvm-ffi the ``c_*`` traits are tvm-ffi's reflection's (the
    field's ``refl::init``, ``kw_only``, ``default_value``, ``repr``, ``compare``, ``hash`` and
    structural-equality flags); for packedfun's own types they keep their defaults.
    """

    name: str
    doc: str | None
    readonly: bool
    metadata: dict
    offset: int = 0  #: byte offset of the field from the start of the object
    #: bytes the field takes: a Python-defined type's field is one Any slot (16 bytes); None for a
    #: C++ type's field, whose size the type table does not record
    size: int | None = None
    ty: TypeSchema | None = None
    c_init: bool = True
    c_kw_only: bool = False
    c_has_default: bool = False
    c_default: typing.Any = MISSING
    c_default_factory: typing.Any = MISSING
    c_repr: bool = True
    c_compare: bool = True
    c_hash: bool = True
    c_structural_eq: str | None = None
    dataclass_field: typing.Any = None  #: a py_class/c_class field's Field (defaults, type, ...)

    @property
    def frozen(self) -> bool:
        """Whether Python may not assign the field (tvm-ffi's name for ``readonly``)."""
        return self.readonly


def _decode_traits(field: TypeField, flags: int, default: typing.Any) -> None:
    """Fills ``field``'s tvm-ffi traits from its flags and default (and its type schema from its
    metadata record)."""
    field.c_init = not flags & _FIELD_INIT_OFF
    field.c_kw_only = bool(flags & _FIELD_KW_ONLY)
    field.c_has_default = bool(flags & _FIELD_HAS_DEFAULT)
    if field.c_has_default:
        if flags & _FIELD_DEFAULT_FROM_FACTORY:
            field.c_default_factory = default
        else:
            field.c_default = default
    field.c_repr = not flags & _FIELD_REPR_OFF
    field.c_compare = not flags & _FIELD_COMPARE_OFF
    field.c_hash = not flags & _FIELD_HASH_OFF
    if flags & _FIELD_SEQ_HASH_IGNORE:
        field.c_structural_eq = "ignore"
    elif flags & _FIELD_SEQ_HASH_DEF:
        field.c_structural_eq = "def-pattern"
    elif flags & _FIELD_SEQ_HASH_DEF_SIMPLE:
        field.c_structural_eq = "def-simple"
    schema = field.metadata.get("type_schema")
    if isinstance(schema, str):
        try:
            field.ty = TypeSchema.from_json_str(schema)
        except (ValueError, TypeError):  # a schema this switch cannot read: no ty, as none given
            field.ty = None


def _traits_of_field(field: TypeField, declared: typing.Any, own_type: bool) -> None:
    """Fills ``field``'s traits from the dataclass :class:`Field` that declared it, as tvm-ffi's
    ``py_class`` registration does: its type schema is the Field's ``_ty_schema`` (the same
    object), and for a type of packedfun's own (whose reflection keeps no tvm-ffi flags) the
    ``c_*`` traits are the Field's options."""
    schema = getattr(declared, "_ty_schema", None)
    if schema is not None:
        field.ty = schema
    if not own_type:
        return
    field.c_init = bool(declared.init)
    field.c_kw_only = declared.kw_only is True
    field.c_default, field.c_default_factory = declared.default, declared.default_factory
    field.c_has_default = declared.default is not MISSING or declared.default_factory is not MISSING
    field.c_repr, field.c_compare = bool(declared.repr), bool(declared.compare)
    field.c_hash = bool(declared.compare if declared.hash is None else declared.hash)
    field.c_structural_eq = declared.structural_eq


class TypeMethod(typing.NamedTuple):
    """One reflected method of an object type (tvm-ffi's ``TypeMethod``, read-only here)."""

    name: str
    doc: str | None
    is_static: bool
    func: typing.Any
    metadata: dict


class TypeInfo:
    """What the runtime's type table knows of an object type (tvm-ffi's ``TypeInfo``), built from
    packedfun's reflection (``packedfun.core.type_info``)."""

    def __init__(self, type_index: int, type_cls: type | None = None) -> None:
        info = _backend.type_info(type_index)
        self.type_index: int = info["type_index"]
        self.type_key: str = _TVM_FFI_KEYS.get(str(info["type_key"]), str(info["type_key"]))
        self.type_cls = type_cls
        self.type_ancestors: list[int] = list(info["ancestors"])
        self.doc = info.get("doc")
        spec = type_cls.__dict__.get("__pf_py_spec__") if type_cls is not None else None
        declared = {f.name: f for f in spec.own} if spec is not None else {}
        meta = _member_metadata(self.type_index)
        self.fields = [
            TypeField(
                f["name"],
                f.get("doc") or None,
                bool(f.get("readonly")),
                meta["fields"].get(f["name"], {}),
                offset=f.get("offset", 0),
                dataclass_field=declared.get(f["name"]),
            )
            for f in info["fields"]
        ]
        layout = _backend.get_global_func("packedfun.slot_type_layout")(self.type_index)
        #: bytes from the start of an instance to the end of its last field, for a Python-defined
        #: type; None for a C++ type (the type table does not record its size)
        self.total_size: int | None = int(layout[0]) if layout is not None else None
        for field in self.fields if layout is not None else ():
            field.size = int(layout[1])
        records = _bridge_query("packedfun.tvm_ffi_field_flags", self.type_index)
        if records is not None:  # a tvm-ffi type: its own fields, in the same order
            for field, (_, flags, default) in zip(self.fields, records):
                _decode_traits(field, flags, default)
        for field in self.fields:
            if field.dataclass_field is not None:
                _traits_of_field(field, field.dataclass_field, own_type=records is None)
        self.methods = [
            TypeMethod(
                m["name"],
                m.get("doc"),
                bool(m.get("is_static")),
                m.get("func"),
                meta["methods"].get(m["name"], {}),
            )
            for m in info["methods"]
        ]
        if records is None:  # packedfun's constructor is tvm-ffi's __ffi_init__ method
            self.methods += [
                m._replace(name="__ffi_init__") for m in self.methods if m.name == "__create__"
            ]

    @property
    def _decorator_args(self) -> dict:
        """The options a ``py_class`` was defined with (empty for other types)."""
        cls = self.type_cls
        return dict(cls.__dict__.get("__pf_dataclass_params__", {})) if cls is not None else {}

    @property
    def parent_type_info(self) -> TypeInfo | None:
        """The parent type's info; None for the root ``Object``."""
        if len(self.type_ancestors) < 2:
            return None
        parent = self.type_ancestors[-2]
        return TypeInfo(parent, _class_of_index(parent))

    def __repr__(self) -> str:
        return f"TypeInfo({self.type_key!r}, type_index={self.type_index})"


def _bridge_query(builtin: str, arg: typing.Any) -> typing.Any:
    """Calls one of the tvm-ffi bridge's builtin globals; None when packedfun was built without
    the bridge (``-DPACKEDFUN_WITH_TVM_FFI=OFF``)."""
    func = _backend.get_global_func(builtin)
    return None if func is None else func(arg)


def _parse_metadata(text: str | None) -> dict:
    """A tvm-ffi metadata record (JSON text, empty when it has none) as a dict, as tvm-ffi's
    ``TypeField.metadata`` and ``get_global_func_metadata`` give it."""
    if not text:
        return {}
    value = json.loads(text)
    return value if isinstance(value, dict) else {}


def _member_metadata(type_index: int) -> dict:
    """``{"fields": {name: record}, "methods": {name: record}}``: what tvm-ffi's reflection keeps
    for the own fields and methods of the tvm-ffi type that ``type_index`` mirrors (empty for a
    type of packedfun's own)."""
    text = _bridge_query("packedfun.tvm_ffi_type_metadata", type_index)
    raw = json.loads(text) if text else {}
    return {
        kind: {name: _parse_metadata(md) for name, md in raw.get(kind, {}).items()}
        for kind in ("fields", "methods")
    }


def get_global_func_metadata(name: str) -> dict:
    """tvm-ffi's ``get_global_func_metadata`` under the switch: the metadata tvm-ffi keeps for a
    global function, as a dict (its ``type_schema`` key a JSON string: see :class:`TypeSchema`).

    For a function of tvm-ffi's registry, tvm-ffi's own record; for one of packedfun's own (a
    name both registries hold is packedfun's), the ``type_schema`` of a tvm-ffi library's
    function when its record keeps one, else ``{}``, as tvm-ffi gives for a function registered
    from Python.

    Raises
    ------
    ValueError
        When ``name`` is not registered (packedfun's rule; tvm-ffi raises ``RuntimeError``).
    """
    func = _registry.get_global_func(name)
    text = _bridge_query("packedfun.tvm_ffi_global_metadata", name)
    if text is not None:
        return _parse_metadata(text)
    return _library_metadata(func) or {}


def _library_metadata(func: typing.Any) -> dict | None:
    """The metadata record a tvm-ffi library exported for ``func`` (kept in packedfun's record of
    the Function, see ``docs/tvm-ffi-kernels.md``), or None."""
    record = _signature.metadata_of(func) or {}
    text = record.get("tvm_ffi_metadata")
    return _parse_metadata(text) if isinstance(text, str) else None


def _module_function_metadata(self: Module, name: str, query_imports: bool = False) -> dict | None:
    """tvm-ffi's ``Module.get_function_metadata`` under the switch: the metadata record a
    tvm-ffi library exports for function ``name`` (its ``type_schema`` key a JSON string), or None
    when it exports none.

    Raises
    ------
    AttributeError
        When the module has no function ``name`` (packedfun's rule).
    """
    return _library_metadata(self.get_function(name, query_imports))


#: Spellings of the type schema JSON that tvm-ffi renders under a Python-facing name.
_SCHEMA_ORIGINS = {
    "Variant": "Union",
    "std::variant": "Union",
    "std::optional": "Optional",
    "Tuple": "tuple",
    "std::tuple": "tuple",
    "ffi.Function": "Callable",
    "std::function": "Callable",
    "ffi.Array": "Array",
    "std::vector": "Array",
    "ffi.List": "List",
    "ffi.Map": "Map",
    "std::map": "Map",
    "std::unordered_map": "Map",
    "ffi.Dict": "Dict",
    "ffi.Object": "Object",
    "ObjectRValueRef": "Object",
    "ffi.OpaquePyObject": "Any",
    "ffi.Tensor": "Tensor",
    "DLTensor*": "Tensor",
    "ffi.BigInt": "int",
    "void*": "ctypes.c_void_p",
    "ffi.String": "str",
    "ffi.SmallStr": "str",
    "std::string": "str",
    "const char*": "str",
    "ffi.Bytes": "bytes",
    "ffi.SmallBytes": "bytes",
    "TVMFFIByteArray*": "bytes",
    "DataType": "dtype",
}

#: Type keys that a schema keeps (``TypeSchema.type_key``) because its origin folds them into a
#: Python type that other keys fold into too.
_KEPT_TYPE_KEYS = frozenset({"ffi.BigInt"})


class TypeSchema:
    """A type as tvm-ffi's metadata describes it (the ``type_schema`` JSON of a function, field or
    method), rendered in Python typing syntax: ``str(schema)`` is e.g. ``"Callable[[int], str]"``.

    Parameters
    ----------
    origin : str
        The type's name (``"int"``, ``"Array"``, ``"Optional"``, ``"Callable"``, a type key).
    args : tuple of TypeSchema, optional
        Its type arguments; for ``"Callable"`` the return type first, then the parameters.
    """

    def __init__(
        self,
        origin: str,
        args: typing.Iterable[TypeSchema] = (),
        origin_type_index: int = -1,
        type_key: str | None = None,
    ) -> None:
        if not isinstance(origin, str) or not origin:
            raise ValueError("a type schema's origin must be a non-empty str")
        self.origin = origin
        self.origin_type_index = origin_type_index  # the type's index where known, else -1
        self.args = tuple(args)
        #: The key the schema was read from when it names a native type that ``origin`` folds
        #: away (``"ffi.BigInt"`` for ``int``); None otherwise. Not part of equality.
        self.type_key = type_key
        if any(not isinstance(a, TypeSchema) for a in self.args):
            raise TypeError("a type schema's arguments must be TypeSchema instances")
        if origin in ("Array", "List") and not self.args:
            self.args = (TypeSchema("Any"),)
        elif origin in ("Map", "Dict") and not self.args:
            self.args = (TypeSchema("Any"), TypeSchema("Any"))

    @staticmethod
    def from_json_obj(obj: dict) -> TypeSchema:
        """The schema of a parsed ``type_schema`` JSON object (``{"type": ..., "args": [...]}``).

        Raises
        ------
        TypeError
            When ``obj`` is not such an object.
        """
        if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
            raise TypeError(f"expected a type schema object with a 'type' str, got {obj!r}")
        origin = _SCHEMA_ORIGINS.get(obj["type"], obj["type"])
        raw = obj.get("args", ())
        named = obj.get("named_args")
        if isinstance(named, dict) and origin == "Callable":  # {"return": [R], "params": [...]}
            ret = named.get("return") or [{"type": "Any"}]
            raw = [ret[0], *(named.get("params") or ())]
        if origin == "Callable" and len(raw) == 2 and isinstance(raw[1], list):  # (ret, [params])
            raw = [raw[0], *raw[1]]
        args = [TypeSchema.from_json_obj(a) for a in raw if isinstance(a, dict)]
        kept = obj["type"] if obj["type"] in _KEPT_TYPE_KEYS else None
        return TypeSchema(origin, args, type_key=kept)

    @staticmethod
    def from_json_str(text: str) -> TypeSchema:
        """The schema of a ``type_schema`` JSON string (``ValueError`` for text that is no JSON)."""
        return TypeSchema.from_json_obj(json.loads(text))

    @property
    def named_args(self) -> dict[str, tuple[TypeSchema, ...]] | None:
        """A function type's groups, ``{"return": (R,), "params": (A, ...)}``; None for any other
        type and for a function whose parameters are unknown (``Callable[..., Any]``)."""
        if self.origin != "Callable" or not self.args:
            return None
        return {"return": self.args[:1], "params": self.args[1:]}

    def repr(self, ty_map: typing.Callable[[str], str] | None = None) -> str:
        """The schema in Python typing syntax, each origin first passed through ``ty_map``."""
        origin = self.origin if ty_map is None else ty_map(self.origin)
        args = [a.repr(ty_map) for a in self.args]
        if self.origin == "Callable":
            if not args:
                return "Callable[..., Any]"
            return f"Callable[[{', '.join(args[1:])}], {args[0]}]"
        if self.origin == "Union":
            return " | ".join(args)
        if self.origin == "Optional":
            return f"{args[0]} | None"
        return f"{origin}[{', '.join(args)}]" if args else origin

    @staticmethod
    def from_annotation(annotation: typing.Any) -> TypeSchema:
        """The schema of a Python annotation (``int``, ``Optional[str]``, ``list[int]``, an
        object class, ...); ``Any`` for what has no closer schema."""
        simple = {bool: "bool", int: "int", float: "float", str: "str", bytes: "bytes"}
        if annotation is None or annotation is type(None):
            return TypeSchema("None")
        if isinstance(annotation, type) and annotation in simple:
            return TypeSchema(simple[annotation])
        origin, args = typing.get_origin(annotation), typing.get_args(annotation)
        if origin is typing.Union or type(annotation).__name__ == "UnionType":
            members = [a for a in args if a is not type(None)]
            inner = [TypeSchema.from_annotation(a) for a in members]
            union = inner[0] if len(inner) == 1 else TypeSchema("Union", inner)
            return TypeSchema("Optional", (union,)) if len(members) < len(args) else union
        if origin is list or annotation is list:
            return TypeSchema("List", [TypeSchema.from_annotation(a) for a in args])
        if origin is dict or annotation is dict:
            return TypeSchema("Dict", [TypeSchema.from_annotation(a) for a in args])
        if origin is tuple or annotation is tuple:
            return TypeSchema("tuple", [TypeSchema.from_annotation(a) for a in args])
        if origin is collections.abc.Callable or annotation is collections.abc.Callable:
            return TypeSchema("Callable")
        if isinstance(annotation, type) and issubclass(annotation, _Object):
            index = annotation.__dict__.get("__pf_type_index__")
            if annotation is _Object:
                return TypeSchema("Object")
            if index is not None:
                return TypeSchema(_backend.type_info(index)["type_key"], origin_type_index=index)
        return TypeSchema("Any")

    def convert(self, value: typing.Any) -> typing.Any:
        """``value`` as a field of this type holds it (``TypeError`` when it does not fit): the
        check a ``py_class`` field of this schema applies when assigned."""
        if not _py_class._annotation_fits(_annotation(self, "TypeSchema.convert"), value):
            raise TypeError(f"cannot convert {value!r} ({type(value).__name__}) to {self}")
        return value

    def __str__(self) -> str:
        return self.repr()

    __repr__ = __str__

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TypeSchema):
            return NotImplemented
        return (self.origin, self.args) == (other.origin, other.args)

    def __hash__(self) -> int:
        return hash((self.origin, self.args))


#: packedfun's built-in type keys under tvm-ffi's names: the same types (the bridge translates
#: one into the other at the boundary), so ``TypeInfo`` reads them as tvm-ffi spells them.
_TVM_FFI_KEYS = {
    **{f"packedfun.{n}": f"ffi.{n}" for n in ("Object", "String", "Bytes", "Error", "Function")},
    **{f"packedfun.{n}": f"ffi.{n}" for n in ("Shape", "Tensor", "Array", "Map", "List", "Dict")},
    "packedfun.Module": "ffi.Module",
    "packedfun.Opaque": "ffi.OpaquePyObject",
}
_PF_KEYS = {tvm: pf for pf, tvm in _TVM_FFI_KEYS.items()}


def _builtin_classes() -> dict[int, type]:
    """The type index of each built-in class that carries none itself -> the class (the classes
    tvm-ffi gives a type info: its core object classes, ``DataType``, ``Device``)."""
    if not _BUILTIN_CLASSES:
        keys = {
            "packedfun.Object": Object, "packedfun.String": String, "packedfun.Bytes": Bytes,
            "packedfun.Error": Error, "packedfun.Function": Function, "packedfun.Shape": Shape,
            "packedfun.Tensor": Tensor, "packedfun.Array": Array, "packedfun.Map": Map,
            "packedfun.List": List, "packedfun.Dict": Dict, "packedfun.Module": Module,
            "DataType": DataType, "Device": Device,
        }  # fmt: skip
        for key, cls in keys.items():
            _BUILTIN_CLASSES[_backend.type_key_to_index(key)] = cls
    return _BUILTIN_CLASSES


_BUILTIN_CLASSES: dict[int, type] = {}


def _class_of_index(type_index: int) -> type | None:
    """The Python class of objects of ``type_index`` (built-in, registered, or made for it), or
    None."""
    builtin = _builtin_classes().get(type_index)
    return builtin if builtin is not None else _class_for(type_index)


def _index_of_class(cls: type) -> int | None:
    """The type index a class stands for, or None."""
    index = cls.__dict__.get("__pf_type_index__") if isinstance(cls, type) else None
    if index is None:
        index = next((i for i, c in _builtin_classes().items() if c is cls), None)
    return index


def _type_cls_to_type_info(cls: type) -> TypeInfo | None:
    """The :class:`TypeInfo` of an object class (or of ``DataType``, ``Device``, ``String``,
    ``Bytes``, ``Error``); None for a class that stands for no type."""
    index = _index_of_class(cls)
    return None if index is None else TypeInfo(index, cls)


#: TypeSchema origins (tvm-ffi's spellings) -> the annotation py_class maps.
_SIMPLE_ORIGINS: dict[str, typing.Any] = {
    "int": int,
    "float": float,
    "bool": bool,
    "str": str,
    "bytes": bytes,
    "Any": typing.Any,
    "None": type(None),
    "Object": _Object,
    "dtype": _dtype,
    "Device": Device,
    "Tensor": Tensor,
    "Callable": collections.abc.Callable,
}
_SEQUENCE_ORIGINS = ("Array", "List", "list", "tuple", "Sequence")
_MAPPING_ORIGINS = ("Map", "Dict", "dict", "Mapping")
#: tvm-ffi's type keys of built-in types whose packedfun class has another key
_BUILTIN_KEYS: dict[str, typing.Any] = {"ffi.Shape": Shape}


def _annotation(schema: typing.Any, where: str) -> typing.Any:
    """The Python annotation a ``TypeSchema`` stands for (``TypeError`` naming ``where`` for a
    schema that names no known type)."""
    if not isinstance(schema, TypeSchema):
        raise TypeError(f"{where}: expected a TypeSchema, got {type(schema).__name__}")
    origin, args = schema.origin, schema.args
    if origin in _SIMPLE_ORIGINS and (origin != "Callable" or not args):
        return _SIMPLE_ORIGINS[origin]
    if origin == "Callable":
        return collections.abc.Callable
    if origin == "Optional" and len(args) == 1:
        return typing.Optional[_annotation(args[0], where)]  # noqa: UP045 (built at run time)
    if origin == "Union" and args:
        return typing.Union[tuple(_annotation(a, where) for a in args)]  # noqa: UP007
    if origin in _SEQUENCE_ORIGINS:
        return list[_annotation(args[0], where)] if args else list  # type: ignore[misc]
    if origin in _MAPPING_ORIGINS:
        if len(args) == 2:
            return dict[_annotation(args[0], where), _annotation(args[1], where)]  # type: ignore[misc]
        return dict
    if origin in _BUILTIN_KEYS:
        return _BUILTIN_KEYS[origin]
    cls = _class_of_key(origin)
    if cls is None:
        raise TypeError(f"{where}: the type schema {schema} names no registered type")
    return cls


def _class_of_key(key: str) -> type | None:
    """The class registered (or reserved by :func:`_register_py_class`) for a type key."""
    pending = _reserved.get(key)
    if pending is not None:
        return pending
    try:
        info = _lookup_or_register_type_info_from_type_key(key)
    except (KeyError, ValueError):
        return None
    return info.type_cls


#: type key -> the class that _register_py_class reserved it for, until its fields register
_reserved: dict[str, type] = {}


def _lookup_or_register_type_info_from_type_key(type_key: str) -> TypeInfo:
    """The :class:`TypeInfo` of a registered type key, tvm-ffi's names of the built-in types
    (``ffi.Array``) included (``ValueError`` for an unknown key)."""
    index = _backend.type_key_to_index(_PF_KEYS.get(type_key, type_key))
    return TypeInfo(index, _class_of_index(index))


def _type_keys_of(indices: typing.Iterable[int]) -> typing.Iterator[str]:
    """The type keys of ``indices`` in packedfun's type table, built-in ones as tvm-ffi spells
    them, up to the first index the table lacks."""
    for index in indices:
        try:
            key = str(_backend.type_info(index)["type_key"])
        except IndexError:
            return
        yield _TVM_FFI_KEYS.get(key, key)


def get_registered_type_keys() -> list[str]:
    """tvm-ffi's ``registry.get_registered_type_keys`` under the switch: every key of the one type
    table, tvm-ffi's (when its library is in the process) and packedfun's, built-in types under
    tvm-ffi's names (``ffi.Array``). packedfun's own value kinds that tvm-ffi lacks (``StrView``,
    ``uint64``, ...) are left out: keys name what both sides know. So are the abstract bases of
    packedfun's Python-defined enums (``packedfun.Enum``, ``IntEnum``, ``StrEnum``), types of the
    table only so that enums can derive from them: tvm-ffi's enum bases are plain Python classes,
    so no tvm-ffi code names a type of theirs. A concrete enum's own key is listed."""
    keys: dict[str, None] = {}
    tvm_ffi_keys = _backend.get_global_func("ffi.GetRegisteredTypeKeys")
    if tvm_ffi_keys is not None:
        keys.update(dict.fromkeys(str(k) for k in tvm_ffi_keys()))
    # The kinds 0-8 mean the same in both ABIs; object types from kPFTypeObject on, densely.
    for run in (range(0, 9), range(64, 128), itertools.count(128)):
        keys.update(dict.fromkeys(_type_keys_of(run)))
    return [k for k in keys if k not in _ENUM_BASE_KEYS]


_ENUM_BASE_KEYS = frozenset(("packedfun.Enum", "packedfun.IntEnum", "packedfun.StrEnum"))


#: tvm-ffi's per-type attribute names (its ``TypeAttrColumn``s) that a ``py_class`` body fills
#: (the hooks tvm-ffi's C++ dispatches to: repr, hashing, comparison, conversion, structural
#: equality and visiting, JSON), besides the names a class lists in ``__ffi_type_attr_names__``.
TYPE_ATTR_NAMES = frozenset(
    {
        "__ffi_repr__", "__ffi_hash__", "__ffi_eq__", "__ffi_compare__", "__ffi_convert__",
        "__ffi_convert_type_schema__", "__any_hash__", "__any_equal__", "__s_equal__",
        "__s_hash__", "__s_visit__", "__s_mutate__", "__s_maybe_inplace_mutate__",
        "__data_to_json__", "__data_from_json__",
    }
)  # fmt: skip
#: The attributes a ``py_class`` takes from its nearest ancestor that has them, unless it lists
#: others in ``__ffi_inherit_type_attrs__`` (an empty tuple: none).
INHERITED_TYPE_ATTRS = ("__s_equal__", "__s_hash__", "__s_visit__", "__data_to_json__",
                        "__data_from_json__")  # fmt: skip
#: type index -> {name: value}: the attribute columns of the types ``py_class`` defines under the
#: switch (a tvm-ffi library's types keep theirs in tvm-ffi's table, read through the bridge).
_py_type_attrs: dict[int, dict[str, typing.Any]] = {}


def type_attr_options(cls: type) -> tuple[frozenset, tuple]:
    """The attribute names a ``py_class`` registers, and those it inherits (``TypeError`` when
    ``__ffi_type_attr_names__`` or ``__ffi_inherit_type_attrs__`` is no tuple or list of str)."""
    extra = getattr(cls, "__ffi_type_attr_names__", ())
    inherited = getattr(cls, "__ffi_inherit_type_attrs__", INHERITED_TYPE_ATTRS)
    for value in (extra, inherited):
        if not isinstance(value, (tuple, list)) or not all(isinstance(n, str) for n in value):
            raise TypeError(
                f"py_class {cls.__qualname__}: __ffi_type_attr_names__ and "
                f"__ffi_inherit_type_attrs__ must be tuples or lists of str, got {value!r}"
            )
    return TYPE_ATTR_NAMES | frozenset(extra) | frozenset(inherited), tuple(inherited)


def register_type_attrs(cls: type, type_index: int) -> None:
    """Fills the attribute columns of ``type_index``, a ``py_class`` just registered for ``cls``:
    each value its body gives a name of :func:`type_attr_options` (a static method's function;
    ``None`` gives none, for its subclasses too), then each inherited name it does not define,
    from its nearest ancestor that has it; ``__ffi_shallow_copy__`` is :func:`copy.copy`."""
    names, inherited = type_attr_options(cls)
    attrs: dict[str, typing.Any] = {"__ffi_shallow_copy__": copy.copy}
    for name, value in cls.__dict__.items():
        if name in names:
            attrs[name] = value.__func__ if isinstance(value, staticmethod) else value
    ancestors = list(reversed(_backend.type_info(type_index)["ancestors"][:-1]))
    for name in inherited:
        if name in cls.__dict__:
            continue
        for parent in ancestors:
            value = _lookup_type_attr(parent, name)
            if value is not None:
                attrs[name] = value
                break
            parent_cls = _class_of_index(parent)
            if parent_cls is not None and name in parent_cls.__dict__:
                break  # an ancestor's explicit None: none for its descendants either
    _py_type_attrs[type_index] = {k: v for k, v in attrs.items() if v is not None}
    params = cls.__dict__.get("__pf_dataclass_params__", {})
    user = cls.__dict__.get("__pf_user__", ())
    if "__ffi_repr__" in _py_type_attrs[type_index] and params.get("repr", True):
        if "__repr__" not in user:  # repr() prints through the hook, as tvm-ffi's object_repr
            cls.__repr__ = _repr_through_hook  # type: ignore[method-assign,assignment]


_printing = threading.local()  # handles of the objects print_fields is printing (a cycle: "...")


def print_fields(value: typing.Any, fn_repr: typing.Any) -> str | None:
    """tvm-ffi's printed form of an object of a ``py_class`` defined under the switch (or by its
    low-level steps): its type key, then each field shown in repr as ``name=fn_repr(value)``;
    ``...`` for an object met again inside itself. None for any other value (an enum's too)."""
    if not isinstance(value, _Object):
        return None
    if value.type_index not in _py_type_attrs:  # or made by the low-level steps (_tvm_ffi_private)
        spec = type(value).__dict__.get("__pf_py_spec__")
        if spec is None or spec.native or isinstance(value, _Enum):  # native: a c_class
            return None
    open_handles = getattr(_printing, "handles", None)
    if open_handles is None:
        open_handles = _printing.handles = set()
    if value.handle in open_handles:
        return "..."
    open_handles.add(value.handle)
    try:
        shown = [f.name for f in _py_class._all_fields(type(value)) if f.repr]
        parts = ", ".join(f"{name}={fn_repr(getattr(value, name))}" for name in shown)
    finally:
        open_handles.discard(value.handle)
    return f"{_backend.type_info(value.type_index)['type_key']}({parts})"


def repr_hook(value: typing.Any) -> typing.Any:
    """The ``__ffi_repr__`` hook of ``value``'s ``py_class`` (its exact type), or None."""
    if not isinstance(value, _Object):
        return None
    attrs = _py_type_attrs.get(value.type_index)
    return None if attrs is None else attrs.get("__ffi_repr__")


def _repr_through_hook(self: typing.Any) -> str:
    return repr_print(self) if repr_hook(self) is not None else _Object.__repr__(self)


def repr_print(value: typing.Any) -> str:
    """``tvm_ffi._ffi_api.ReprPrint``: the printed form of ``value`` as tvm-ffi's printer writes
    it (its ``ffi.ReprPrint``, when apache-tvm-ffi's library is in the process and the value can
    go to it); otherwise, and for a value of packedfun's own types, which have no tvm-ffi form,
    ``repr(value)``. An object of a ``py_class`` whose body defines ``__ffi_repr__(self,
    fn_repr)`` prints as that hook returns, given this function to print the parts it chooses
    (tvm-ffi's printer dispatches the same); one without prints as tvm-ffi prints it:
    ``type.key(field=..., ...)``, each field printed by this function."""
    hook = repr_hook(value)
    if hook is not None:
        text = hook(value, repr_print)
        if not isinstance(text, str):
            raise TypeError(
                f"__ffi_repr__ of {type(value).__qualname__} returned "
                f"{type(text).__name__}, expected str"
            )
        return text
    text = print_fields(value, repr_print)
    if text is not None:
        return text
    printer = _backend.get_global_func("ffi.ReprPrint")
    if printer is not None:
        try:
            if isinstance(value, Tensor):
                # An argument tensor reaches tvm-ffi as a DLTensor* view, which its printer names
                # only by kind; an item of an Array is a Tensor object: print "(<item>,)" and cut.
                text = printer(Array([value]))
                return text[1 : text.rindex(",)")]
            return printer(value)
        except TypeError as exc:
            if "no tvm-ffi equivalent" not in str(exc):  # the printer's own error
                raise
    return repr(value)


def _lookup_type_attr(type_index: int, attr_key: str, ancestor: bool = False) -> typing.Any:
    """The value of tvm-ffi's per-type attribute ``attr_key`` for ``type_index``; None when the
    type has none (with ``ancestor``, the nearest ancestor's value is looked up then).

    A type of a library built for tvm-ffi has tvm-ffi's attribute columns (its generated
    ``__ffi_init__``, ``__ffi_shallow_copy__``, ...); a type of packedfun's own has one attribute,
    ``__ffi_init__``: its constructor (``__create__``); a ``py_class`` defined under the switch
    has those its body gives (:func:`register_type_attrs`).
    """
    chain = [type_index]
    if ancestor:
        chain += reversed(_backend.type_info(type_index)["ancestors"][:-1])
    lookup = _backend.get_global_func("packedfun.tvm_ffi_type_attr")
    for index in chain:
        value = _py_type_attrs.get(index, {}).get(attr_key)
        if value is None and lookup is not None:
            value = lookup(index, attr_key)
        if value is None and attr_key == "__ffi_init__":
            value = next(
                (m["func"] for m in _backend.type_info(index)["methods"]
                 if m["name"] == "__create__"),
                None,
            )  # fmt: skip
        if value is not None:
            return value
    return None


class _TypeInfoAttribute:
    """``cls.__tvm_ffi_type_info__`` under the switch: the :class:`TypeInfo` of the nearest class
    of ``cls``'s MRO that stands for a native type, read afresh from the type table on each access
    (so methods that ``@method`` registers after the class statement are seen)."""

    def __get__(self, obj: typing.Any, cls: type | None = None) -> TypeInfo | None:
        for klass in (cls if cls is not None else type(obj)).__mro__:
            index = klass.__dict__.get("__pf_type_index__")
            if index is not None:
                return TypeInfo(index, klass)
        return None


_TYPE_INFO_ATTRIBUTE = _TypeInfoAttribute()


def _give_type_info(cls: type) -> None:
    """Gives an object class the attribute ``__tvm_ffi_type_info__``, as tvm-ffi's classes have,
    and names a class made for a type no Python class was registered for as tvm-ffi names its
    fallback classes: module the key's prefix, qualified name the whole key."""
    if "__tvm_ffi_type_info__" not in cls.__dict__:
        cls.__tvm_ffi_type_info__ = _TYPE_INFO_ATTRIBUTE  # type: ignore[attr-defined]
    if cls.__dict__.get("__pf_unregistered__"):
        key = _backend.type_info(cls.__dict__["__pf_type_index__"])["type_key"]
        cls.__module__, _, _ = key.rpartition(".")
        cls.__qualname__ = key
        doc = cls.__dict__.get("__doc__")
        cls.__doc__ = (
            f"Auto-generated fallback class for {key}: no Python class is registered for this "
            "type, so its fields and methods were read from the type table. Register one with "
            "register_object to name it and add to it." + (f"\n\n{doc}" if doc else "")
        )


def _attach_type_info() -> None:
    """Called by the switch's ``install()``: every object class, made already or later (C++
    types, ``register_object``, ``py_class``), gets ``__tvm_ffi_type_info__``."""
    if _give_type_info not in _class_hooks:
        on_new_class(_give_type_info)


def _attach_metadata(packedfun: typing.Any) -> None:
    """Called by the switch's ``install()``: ``tvm_ffi.get_global_func_metadata`` (the package's
    and ``tvm_ffi.registry``'s name) and ``Module.get_function_metadata`` give tvm-ffi's form;
    ``tvm_ffi.registry.get_registered_type_keys`` lists the type table."""
    replaced = {
        (packedfun, "get_global_func_metadata"): get_global_func_metadata,
        (_registry, "get_global_func_metadata"): get_global_func_metadata,
        (_registry, "get_registered_type_keys"): get_registered_type_keys,
        (Module, "get_function_metadata"): _module_function_metadata,
    }
    for (owner, name), value in replaced.items():
        _saved_names.setdefault((owner, name), owner.__dict__.get(name, _saved_names))
        setattr(owner, name, value)


def _detach_metadata() -> None:
    """Called by the switch's ``uninstall()``: packedfun's own names back."""
    for (owner, name), own in _saved_names.items():
        if own is _saved_names:  # packedfun has none of that name
            delattr(owner, name)
        else:
            setattr(owner, name, own)
    _saved_names.clear()


#: (module or class, name) -> what packedfun had there before the switch replaced it (the dict
#: itself where it had nothing).
_saved_names: dict[tuple[typing.Any, str], typing.Any] = {}


def _detach_type_info() -> None:
    """Called by the switch's ``uninstall()``: object classes lose ``__tvm_ffi_type_info__``."""
    if _give_type_info in _class_hooks:
        _class_hooks.remove(_give_type_info)
    for cls in [*_registered.values(), *_automatic.values()]:
        if cls.__dict__.get("__tvm_ffi_type_info__") is _TYPE_INFO_ATTRIBUTE:
            delattr(cls, "__tvm_ffi_type_info__")


_KWARGS: list = []  # tvm-ffi's keyword marker, made once when first asked for


def _kwargs_marker() -> typing.Any:
    """tvm-ffi's ``KWARGS`` marker object (``ffi.GetKwargsObject``): in a call of a constructor
    that tvm-ffi generates from its fields' traits, the arguments after it are name/value pairs.
    Without apache-tvm-ffi's library, a plain marker object that no such constructor reads."""
    if not _KWARGS:
        try:
            make = _backend.get_global_func("ffi.GetKwargsObject")
        except (KeyError, ValueError):
            make = None
        _KWARGS.append(make() if make is not None else object())
    return _KWARGS[0]


def __getattr__(name: str) -> typing.Any:
    if name == "KWARGS":
        return _kwargs_marker()
    # Everything else: packedfun's backend module (the switch's tvm_ffi.core replaces the
    # packedfun.core attribute, which packedfun's package module reads).
    return getattr(_backend, name)
