# Modules: shared libraries loaded at run time and the Functions they export.
"""Loading shared libraries that export packed functions.

A library exports a function ``name`` as the C symbol ``__packedfun_<name>`` (a packed call, see
``include/packedfun/c_api.h``); ``__packedfun_doc__<name>`` is its docstring and
``__packedfun_main__`` names the entry function that calling the module runs::

    mod = packedfun.load_module("libadd.so")
    mod.add_one(1)            # attribute access: looked up once, then cached on the instance
    mod["add_one"](1)         # item access, also for names that clash with Module's attributes
    "add_one" in mod          # True
    mod(1)                    # the entry function
"""

from __future__ import annotations

import os

from ._backend import core
from ._enum import wrap_enum_result
from ._rules import signature as _signature

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see __init__'s import cost)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Module", "load_module", "system_lib"]


class _ModuleMeta(type):
    """Lets instances switched to a :class:`_ListedModule` class still pass
    ``isinstance(x, Module)``."""

    def __instancecheck__(cls, obj) -> bool:
        return type.__instancecheck__(cls, obj) or (
            cls is Module and type.__subclasscheck__(_ListedModule, type(obj))
        )

    def __subclasscheck__(cls, sub) -> bool:
        return type.__subclasscheck__(cls, sub) or (
            cls is Module and isinstance(sub, type) and type.__subclasscheck__(_ListedModule, sub)
        )


class Module(metaclass=_ModuleMeta):
    """A loaded shared library and the packed functions it exports.

    The first attribute access ``mod.name`` gives the instance a class of its own that holds every
    function the library exports (where the exports cannot be listed, just ``name`` is stored in
    the instance's ``__dict__``), so later accesses are plain attribute loads; that class has no
    ``__getattr__``, which lets CPython specialize ``mod.name(...)`` like a method call. A missing
    name raises :class:`AttributeError` (naming the library on the first access).
    Names that clash with the attributes of this class (``path``, ``imports``, ...) are reached
    with ``mod[name]`` or :meth:`get_function`.

    A Function taken from a module keeps the library loaded: it stays callable after the Module
    is gone.

    Parameters
    ----------
    handle : Object
        The backend's native Module object.
    path : str, optional
        The path the library was loaded from; asked from the runtime when omitted.
    """

    def __init__(self, handle, path: str | None = None) -> None:
        if path is None:
            path = core.module_get_path(handle)
        # Plain attribute stores (never through self.__dict__, which would turn the instance's
        # inline attribute values into a real dict and slow every cached lookup down).
        self._pf_handle = handle
        self._pf_path = path
        self._pf_items: dict[str, object] = {}
        self._pf_entry = None

    @property
    def handle(self):
        """The backend's native Module object."""
        return self._pf_handle

    def __tvm_ffi_object__(self):
        """What a Module passed to a Function is: its native Module object (``handle``), as
        apache-tvm-ffi's protocol says (a tvm-ffi library's Module goes back as itself)."""
        return self._pf_handle

    @property
    def path(self) -> str:
        """The path of the library (``""`` for the system library)."""
        return self._pf_path

    def _describe(self) -> str:
        return f"library {self._pf_path!r}" if self._pf_path else "the system library"

    def get_function(self, name: str, query_imports: bool = False):
        """The Function ``name`` of this module, its docstring as ``__doc__``.

        Parameters
        ----------
        name : str
            The exported name (the library exports ``__packedfun_<name>``).
        query_imports : bool
            Also search the modules this one imports (depth first).

        Returns
        -------
        Function

        Raises
        ------
        AttributeError
            When the module (and, with ``query_imports``, its imports) has no such function.
        """
        if not isinstance(name, str):
            raise TypeError(f"function name must be a str, got {type(name).__name__}")
        func = core.module_get_function(self._pf_handle, name, bool(query_imports))
        if func is None:
            where = " or its imports" if query_imports else ""
            raise AttributeError(f"{self._describe()}{where} has no function {name!r}")
        doc = core.module_get_function_doc(self._pf_handle, name, bool(query_imports))
        try:  # a record a library got wrong stays this function's problem, not the module's
            if _signature.metadata_of(func) is not None:
                doc = _signature.describe(func, name, doc)
        except ValueError:
            pass
        try:
            if doc is not None:
                func.__doc__ = doc
            func._pf_module = (_Library(self._pf_path), name)  # pickles as (module, name)
        except (AttributeError, TypeError):  # a backend Function without instance attributes
            pass
        return wrap_enum_result(func)  # a C++ enum result comes back as its IntEnum member

    def get_function_metadata(self, name: str, query_imports: bool = False) -> dict | None:
        """The metadata record of function ``name`` as plain Python data, or None.

        Libraries export it with ``PACKEDFUN_DLL_EXPORT_TYPED_FUNC(name, F, "a", "b"_a = 2)``;
        functions of older libraries carry none.

        Raises
        ------
        AttributeError
            When the module has no function ``name``.
        """
        record = _signature.metadata_of(self.get_function(name, query_imports))
        if record is not None and "doc" not in record:
            doc = self.get_function_doc(name, query_imports)
            if doc:
                record["doc"] = doc
        return record

    def get_function_doc(self, name: str, query_imports: bool = False) -> str | None:
        """The docstring the library exports for ``name`` (``__packedfun_doc__<name>``), or None.

        Parameters
        ----------
        name : str
            The exported name.
        query_imports : bool
            Also search the modules this one imports.

        Returns
        -------
        str or None
            None when the function or its docstring is missing.
        """
        return core.module_get_function_doc(self._pf_handle, name, bool(query_imports))

    def __getattr__(self, name: str):
        # Only reached when normal lookup fails. The first time, a module whose exports can be
        # listed gets every function stored on the instance and then drops this hook (see
        # _list_functions); otherwise each name is looked up once and stored.
        if name.startswith("__") or name.startswith("_pf_"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        if type(self) is Module and self._list_functions():
            if name in self.__dict__ or name in vars(type(self)):
                return getattr(self, name)
            raise AttributeError(f"{self._describe()} has no function {name!r}")
        func = self.get_function(name)
        setattr(self, name, func)  # later `self.name` finds it without reaching __getattr__
        return func

    def _list_functions(self) -> bool:
        """Moves the instance to a class of its own, derived from :class:`_ListedModule` (no
        ``__getattr__``), whose attributes are the exported functions: CPython specializes
        ``mod.fn(...)`` as a method load only for a class attribute that is a method descriptor
        (an instance attribute is looked up the slow way on every call), and ``_core``'s
        ModuleFunctionDescriptor is one that calls ``fn`` without the module and reads as ``fn``
        itself. Everything else stays an instance attribute: dunder names (an export must not
        become a special method) and exports whose lookup gave something other than a plain
        Function (a wrapper could bind as a method).
        False (and nothing changed) when the exports cannot be listed or are too many."""
        names = core.module_list_functions(self._pf_handle, False)
        if names is None or len(names) > _MAX_LISTED_FUNCTIONS:
            return False
        shadowed = set(dir(Module))
        members: dict[str, object] = {"__module__": __name__}
        for name in names:
            if name in shadowed or name in self.__dict__:
                continue
            func = self.get_function(name)
            if type(func) is not core.Function or _is_dunder(name):
                setattr(self, name, func)  # read and called like any instance attribute
            else:
                members[name] = _member(func, name)
        members["__qualname__"] = "Module"
        cls = _ModuleMeta("Module", (_ListedModule,), members)
        # CPython 3.11 specializes the method load only while the instance dict's keys are the
        # class's shared keys, which a dict made before the class switch never is: the state moves
        # into a dict made by an instance of the new class.
        carrier: Any = object.__new__(cls)  # type: ignore[arg-type]
        for key, value in vars(self).items():
            object.__setattr__(carrier, key, value)
        state = carrier.__dict__
        self.__class__ = cls  # type: ignore[assignment]
        self.__dict__ = state
        return True

    def __getitem__(self, name: str):
        items = self._pf_items
        func = items.get(name) if isinstance(name, str) else None
        if func is None:
            func = items[name] = self.get_function(name)
        return func

    def implements_function(self, name: str, query_imports: bool = False) -> bool:
        """Whether this module exports the function ``name`` (``name in mod`` says the same).

        Parameters
        ----------
        name : str
            The exported name.
        query_imports : bool
            Also search the modules this one imports (depth first).

        Returns
        -------
        bool

        Raises
        ------
        TypeError
            When ``name`` is not a str.
        """
        if not isinstance(name, str):
            raise TypeError(f"function name must be a str, got {type(name).__name__}")
        if not query_imports and name in self._pf_items:
            return True
        return core.module_get_function(self._pf_handle, name, bool(query_imports)) is not None

    def same_as(self, other: object) -> bool:
        """Whether ``other`` is a Module of the same loaded library (as ``==``)."""
        return isinstance(other, Module) and bool(self._pf_handle.same_as(other._pf_handle))

    def __contains__(self, name) -> bool:
        if not isinstance(name, str):
            return False
        if name in self._pf_items:
            return True
        return core.module_get_function(self._pf_handle, name, False) is not None

    @property
    def imports(self) -> list[Module]:
        """The modules this one imports, in import order."""
        return [Module(dep) for dep in core.module_get_imports(self._pf_handle)]

    def import_module(self, other: Module) -> None:
        """Makes this module import ``other``: ``get_function(name, query_imports=True)`` then
        finds ``other``'s functions too, and ``other`` stays loaded while this module lives.

        Parameters
        ----------
        other : Module
            The module to import.

        Raises
        ------
        ValueError
            When the import would create a cycle.
        """
        if not isinstance(other, Module):
            raise TypeError(f"import_module expects a Module, got {type(other).__name__}")
        core.module_import(self._pf_handle, other._pf_handle)

    @property
    def entry_name(self) -> str | None:
        """The name of the entry function (``__packedfun_main__``), or None."""
        return core.module_get_entry_name(self._pf_handle)

    def __call__(self, *args):
        """Calls the entry function named by the library's ``__packedfun_main__``."""
        entry = self._pf_entry
        if entry is None:
            name = self.entry_name
            if name is None:
                raise TypeError(
                    f"{self._describe()} has no entry function to call (it exports no "
                    f"'__packedfun_main__'); call one of its functions by name instead"
                )
            entry = self._pf_entry = self.get_function(name)
        return entry(*args)

    def __eq__(self, other) -> bool:
        if not isinstance(other, Module):
            return NotImplemented
        return bool(self._pf_handle.same_as(other._pf_handle))

    def __hash__(self) -> int:
        return hash(self._pf_handle)

    def __repr__(self) -> str:
        return f"<packedfun.Module {self._pf_path or '<system library>'}>"

    def __reduce__(self) -> tuple:
        """Pickles as the library's bytes and identity (see :func:`_load_shipped`)."""
        if not self._pf_path:
            raise TypeError("cannot pickle the system library Module: it has no library file")
        name, digest, data = _library_bytes(self._pf_path)
        return (_load_shipped, (name, digest, data))


class _Library:
    """A library file on its way into a pickle (a module Function's origin, weakly: a path)."""

    __slots__ = ("path",)

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple:
        if not self.path:
            raise TypeError("cannot pickle a Function of the system library: it has no file")
        return (_load_shipped, _library_bytes(self.path))


_sent: dict[tuple, tuple] = {}  # (path, size, mtime_ns) -> (name, digest, bytes)
_received: dict[str, Module] = {}  # digest -> the Module loaded from it in this process


def _library_bytes(path: str) -> tuple:
    """``(name, sha256, bytes)`` of the library at ``path``, read once per file version."""
    import hashlib

    st = os.stat(path)
    key = (path, st.st_size, st.st_mtime_ns)
    found = _sent.get(key)
    if found is None:
        with open(path, "rb") as f:
            data = f.read()
        name = os.path.basename(path)
        name = name[:-3] if name.endswith(".so") else name
        found = _sent[key] = (name, hashlib.sha256(data).hexdigest(), data)
    return found


def _load_shipped(name: str, digest: str, data: bytes) -> Module:
    """Unpickles a Module: its bytes are written once into this process's packedfun cache
    (content-addressed, atomically) and loaded from there; no compiler is needed."""
    module = _received.get(digest)
    if module is None:
        from .cpp import _cache

        module = _received[digest] = load_module(_cache.publish_received(name, digest, data))
    return module


def _module_function(module: Module, name: str):
    """Unpickles a Function of a module."""
    return module.get_function(name)


# Beyond this many exports, functions are looked up one by one instead of all at first access.
_MAX_LISTED_FUNCTIONS = 4096

# A class attribute that reads as the Function and that `mod.fn(...)` calls as a method (on _core
# without a bound method; the ctypes backend's twin reads the Function and calls it).
_member = core.ModuleFunctionDescriptor


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


# Module without __getattr__ (same methods and layout): the base of a listed module's own class.
_ListedModule = _ModuleMeta(
    "Module",
    (),
    {k: v for k, v in vars(Module).items() if k not in ("__getattr__", "__dict__", "__weakref__")},
)


def load_module(path, keep_module_alive: bool = False) -> Module:
    """Loads a shared library, running its static initializers (and so its registrations).

    Loading the same path again is fine: the library is mapped once and its initializers run
    once; each call returns a new Module over it.

    Parameters
    ----------
    path : str or os.PathLike
        The library file.
    keep_module_alive : bool, optional
        Keep the Module (and so the library) loaded for the rest of the process, as
        apache-tvm-ffi's ``load_module`` does by default. Without it a Module stays loaded while
        it, or any Function or object from it, is alive, and is unloaded after.

    Returns
    -------
    Module

    Raises
    ------
    FileNotFoundError
        When the file does not exist (an OSError; the message carries the loader's message).
    OSError
        When the file is not a shared library, or has unresolved dependencies; the
        message carries the loader's own message and the path. For a library built for Apache
        TVM FFI, when libtvm_ffi cannot be found (neither the ``PACKEDFUN_TVM_FFI_LIBRARY``
        environment variable nor an installed ``apache-tvm-ffi`` package provides it).

    Notes
    -----
    Libraries built for Apache TVM FFI (functions exported as ``__tvm_ffi_<name>``) load too:
    their functions are ordinary packedfun Functions; see ``docs/tvm-ffi-kernels.md``.
    """
    path = os.fspath(path)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    try:
        module = Module(core.module_load(path), path)
    except OSError as exc:
        # A library built for Apache TVM FFI that needs libtvm_ffi: point the runtime at the
        # installed apache-tvm-ffi package (found without importing it) and try once more.
        if "libtvm_ffi" not in str(exc) or not _configure_tvm_ffi():
            raise
        module = Module(core.module_load(path), path)
    if keep_module_alive:
        _KEPT_ALIVE.append(module)
    return module


#: Modules loaded with keep_module_alive=True: held for the rest of the process.
_KEPT_ALIVE: list = []


_tvm_ffi_configured = False


def _find_tvm_ffi_library() -> str | None:
    """The libtvm_ffi.so of the installed apache-tvm-ffi package, found without importing it.

    Read from the ``apache-tvm-ffi`` distribution's file list, not from ``find_spec("tvm_ffi")``:
    under the tvm_ffi switch (``packedfun.tvm_ffi_compat``) that name is packedfun itself.
    """
    import importlib.metadata

    try:
        files = importlib.metadata.distribution("apache-tvm-ffi").files or []
    except (importlib.metadata.PackageNotFoundError, ValueError, OSError):
        files = []
    for file in files:
        if file.name == "libtvm_ffi.so" and file.parent.name == "lib":
            candidate = os.fspath(file.locate())
            if os.path.isfile(candidate):
                return candidate
    return None


def _configure_tvm_ffi() -> bool:
    """Tells the runtime where libtvm_ffi is (once); False when there is nothing new to try."""
    global _tvm_ffi_configured
    if _tvm_ffi_configured:
        return False
    _tvm_ffi_configured = True
    found = _find_tvm_ffi_library()
    if found is None:
        return False
    core.module_set_tvm_ffi_library(found)
    return True


def system_lib() -> Module:
    """The Module over the running program and the libraries loaded into its global scope.

    Functions compiled into the executable (or into libraries loaded with ``RTLD_GLOBAL``) and
    exported as ``__packedfun_<name>`` are found here.

    Returns
    -------
    Module
    """
    return Module(core.module_system_lib(), "")
