# `tvm_ffi._dunder` under the switch, and tvm-ffi's low-level class-building steps.
"""apache-tvm-ffi's low-level steps for defining an object type in Python, over packedfun's own.

tvm-ffi builds a ``py_class`` in four steps that its tests (and code that defines types without
the decorator) call one by one::

    info = core._register_py_class(parent_info, "my.Point", cls)   # the type key, reserved
    info._register_fields([Field("x", TypeSchema("int")), ...])    # the layout and constructor
    _add_class_attrs(cls, info)                                    # field descriptors, methods
    _install_dataclass_dunders(cls, init=True, repr=True, eq=False, order=False,
                               unsafe_hash=False)                  # __init__, __repr__, ...

Under :mod:`packedfun.tvm_ffi_compat` these names exist and do the same with packedfun's
machinery (:mod:`packedfun._py_class`): the type is the same slot type ``py_class`` registers,
its fields are typed by the ``TypeSchema`` each ``Field`` carries, and the dunders are
``py_class``'s. This module is ``tvm_ffi._dunder`` under the switch; :func:`_attach` puts the
other names on the switch's modules (and :func:`_detach` takes them off).
"""

from __future__ import annotations

import typing

from . import _py_class
from . import _tvm_ffi_core as _core
from ._missing import MISSING
from ._tvm_ffi_dataclasses import _warn_missing_field_annotations

__all__: list[str] = []


class _PyClassTypeInfo(_core.TypeInfo):
    """What :func:`_register_py_class` returns: the :class:`TypeInfo` of a type whose key is
    reserved; ``fields`` is None until :meth:`_register_fields` declares them."""

    def __init__(
        self, type_index: int, type_cls: type, parent: type, parent_info: typing.Any
    ) -> None:
        super().__init__(type_index, type_cls)
        self.fields = None  # type: ignore[assignment]
        self._parent = parent
        self._parent_info = parent_info

    @property
    def parent_type_info(self) -> typing.Any:
        """The parent's info: the very one the type was registered under."""
        return self._parent_info

    def _register_fields(self, fields: list, structure_kind: int | None = None) -> None:
        """Declares the type's own fields (``Field`` objects with a name and a ``TypeSchema``)
        and its constructor, as ``py_class`` does for annotated fields; once only.

        Raises
        ------
        RuntimeError
            When called a second time.
        TypeError
            For a field without a name or type schema, or whose schema names no known type.
        """
        if self.fields is not None:
            raise RuntimeError(f"_register_fields already called for {self.type_key!r}")
        cls = self.type_cls
        assert cls is not None
        own = []
        for f in fields:
            if not isinstance(f, _py_class.Field):
                raise TypeError(f"_register_fields: expected Field objects, got {f!r}")
            if not f.name:
                raise TypeError("_register_fields: every Field needs a name")
            schema = getattr(f, "_ty_schema", None)
            if schema is None:
                raise TypeError(f"_register_fields: field {f.name!r} has no type schema")
            f.type = _core._annotation(schema, f"{cls.__qualname__}.{f.name}")
            if f.kw_only is MISSING or f.kw_only is None:
                f.kw_only = False
            own.append(f)
        kinds = {v: k for k, v in _STRUCTURE_KINDS.items()}
        params = {
            "frozen": False, "init": True, "repr": False, "eq": False, "order": False,
            "unsafe_hash": False, "match_args": False, "kw_only": False,
            "structural_eq": kinds.get(structure_kind or 0), "slots": False,
            "mixed_frozen": True, "late_default_check": True, "reorder_required": True,
        }  # fmt: skip
        _py_class._decorate(cls, self.type_key, params, own=own)
        cls.__pf_structural_eq__ = params["structural_eq"]
        if "__pf_type_index__" not in cls.__dict__:  # a field names a class not defined yet
            raise TypeError(
                f"_register_fields: {cls.__qualname__}'s fields name types that are not defined"
            )
        _core._reserved.pop(self.type_key, None)
        fresh = _core.TypeInfo(self.type_index, cls)
        self.fields, self.methods = fresh.fields, fresh.methods
        self.total_size = fresh.total_size

    def _register_py_methods(self, py_methods: typing.Any = None, **kwargs: typing.Any) -> None:
        """Re-reads the type's methods (``py_methods``: ``(name, function, is_static)`` entries
        are registered first, as :func:`packedfun.dataclasses.method` does)."""
        register = _py_class._func("packedfun.type_register_method")
        for name, func, is_static in py_methods or ():
            doc = getattr(func, "__doc__", None) or ""
            register(self.type_index, name, _core.to_function(func), bool(is_static), doc)
        self.methods = _core.TypeInfo(self.type_index, self.type_cls).methods


#: tvm-ffi's structural kinds (TVMFFISEqHashKind) -> py_class's structural_eq
_STRUCTURE_KINDS = {"tree": 1, "var": 2, "dag": 3, "const-tree": 4, None: 0}


def _register_py_class(parent_info: typing.Any, type_key: str, cls: type) -> _PyClassTypeInfo:
    """Reserves ``type_key`` for ``cls``, a subclass of ``parent_info``'s class (tvm-ffi's first
    low-level step); the fields follow with ``_register_fields``.

    Raises
    ------
    ValueError
        When ``type_key`` is taken.
    TypeError
        When ``parent_info`` is no type info, or ``cls`` does not derive from its class.
    """
    if not isinstance(parent_info, _core.TypeInfo):
        raise TypeError(f"_register_py_class: expected a parent TypeInfo, got {parent_info!r}")
    parent = parent_info.type_cls or _core._class_of_index(parent_info.type_index)
    if parent is None or not isinstance(cls, type) or not issubclass(cls, parent):
        raise TypeError(
            f"_register_py_class: {getattr(cls, '__qualname__', cls)!r} must derive from the "
            f"class of {parent_info.type_key!r}"
        )
    if type_key in _core._reserved or not _py_class._key_is_free(type_key):
        raise ValueError(f"_register_py_class: type key {type_key!r} is already registered")
    index = _py_class._func("packedfun.slot_type_reserve")(type_key, parent_info.type_index)
    # fields of other types may name the class before its own fields register
    setattr(cls, "__pf_type_index__", index)  # noqa: B010 (a class of any type)
    _core._reserved[type_key] = cls
    return _PyClassTypeInfo(index, cls, parent, parent_info)


def _add_class_attrs(
    type_cls: type, type_info: typing.Any, type_attr_names: typing.Any = ()
) -> type:
    """Gives ``type_cls`` a descriptor for each reflected field and each method of
    ``type_info`` it does not define itself (tvm-ffi's third step); returns ``type_cls``."""
    index = type_info.type_index
    for f in type_info.fields or ():
        if f.name not in type_cls.__dict__:
            setattr(type_cls, f.name, _py_class.FieldProperty(index, f.name))
    for m in type_info.methods:
        if m.name.startswith("__") or hasattr(type_cls, m.name):
            continue
        func = m.func
        setattr(type_cls, m.name, staticmethod(func) if m.is_static else _bound(func))
    return type_cls


def _bound(func: typing.Any) -> typing.Any:
    def method(self: typing.Any, *args: typing.Any) -> typing.Any:
        return func(self, *args)

    method.__name__ = getattr(func, "__name__", "method")
    return method


def _install_dataclass_dunders(
    cls: type,
    *,
    init: bool,
    repr: bool,  # noqa: A002 (tvm-ffi's keyword)
    eq: bool,
    order: bool,
    unsafe_hash: bool,
    match_args: bool = True,
    py_class_mode: bool = False,
) -> None:
    """Installs ``__init__``, ``__repr__``, ``__eq__``/``__ne__``, the ordering methods,
    ``__hash__`` and ``__match_args__`` on a class whose fields are registered (tvm-ffi's last
    step), as ``py_class`` does for the same options; what the class defines itself stays."""
    spec = cls.__dict__.get("__pf_py_spec__")
    if spec is None:
        raise TypeError(
            f"_install_dataclass_dunders: {cls.__qualname__} has no registered fields "
            "(call _register_fields first)"
        )
    if order and not eq:
        raise ValueError(f"{cls.__qualname__}: order=True requires eq=True")
    params = dict(spec.params)
    params.update(init=init, repr=repr, eq=eq, order=order, unsafe_hash=unsafe_hash)
    params["match_args"] = match_args
    spec.params = params
    setattr(cls, "__pf_dataclass_params__", dict(params))  # noqa: B010 (a class of any type)
    if not init and "__init__" in cls.__dict__ and "__init__" not in cls.__dict__["__pf_user__"]:
        del cls.__init__  # type: ignore[misc]
    _py_class._install_dunders(cls, params)


def _to_py_class_value(value: typing.Any) -> typing.Any:
    """A value as a ``py_class`` field gives it back (packedfun converts on store already)."""
    return value


#: (module attribute on packedfun's side, name) -> the function put there by _attach.
_ELSEWHERE = {
    ("core", "_register_py_class"): _register_py_class,
    ("core", "_to_py_class_value"): _to_py_class_value,
    ("registry", "_add_class_attrs"): _add_class_attrs,
    ("registry", "_warn_missing_field_annotations"): _warn_missing_field_annotations,
}


def _attach(packedfun: typing.Any) -> None:
    """Called by the switch's ``install()``: the private names on ``tvm_ffi.core`` (the switch's
    core module, ``packedfun.core`` while the switch is on) and ``tvm_ffi.registry``."""
    for (module, name), value in _ELSEWHERE.items():
        target = getattr(packedfun, module)
        if not hasattr(target, name) or getattr(target, name) is value:
            setattr(target, name, value)


def _detach(packedfun: typing.Any) -> None:
    """Called by the switch's ``uninstall()``: takes the names :func:`_attach` put back off."""
    for (module, name), value in _ELSEWHERE.items():
        target = getattr(packedfun, module, None)
        if target is not None and target.__dict__.get(name) is value:
            delattr(target, name)
