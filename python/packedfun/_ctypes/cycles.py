# Cycle collection through native objects for the ctypes backend (docs/concepts.md).
"""The compiled backend lets the GC traverse a wrapper into the native object it solely owns.
Wrappers here are Python classes without that hook, and the Python objects that native objects
keep alive sit in the backend's global ``_handles`` table, where the GC sees them as always
reachable. So, around each full collection (``gc.callbacks``, generation 2: ``gc.collect()`` and
the interpreter's own full passes), the table *lends* them to the wrappers:

* at the start, every wrapper whose native object has a reference count of 1 is walked like
  ``_core`` walks it (``PFObjectVisitChildren``, descending only into children whose count is 1,
  depth at most 64); each Python callable of a Function and each Python object of an Opaque found
  moves from ``_handles`` into the wrapper's ``_pf_gc_lent`` dict, leaving a ``_Lent`` entry that
  still finds it. The GC now sees the reference where it really is, behind the wrapper.
* a wrapper collected meanwhile releases its native object in ``__del__`` and gives back what
  native code still holds (such an object is resurrected, as CPython allows finalizers to do);
* at the end, every lender still alive gives everything back.

Younger collections, collections run on other threads than the main one and collections during
interpreter exit lend nothing: the cycles wait for the next full collection on the main thread.
"""

from __future__ import annotations

import ctypes
import gc
import sys
import threading
import weakref
from ctypes import CFUNCTYPE, c_int, c_int32, c_uint64, c_void_p
from typing import Any

from . import abi as abi
from .values import FREE_HANDLE_ADDR, SAFE_CALL_ADDR, _handles, _Lent, _wrappers, give_back

MAX_DEPTH = 64
_LEAVES = frozenset(
    (abi.kPFTypeString, abi.kPFTypeBytes, abi.kPFTypeShape, abi.kPFTypeTensor, abi.kPFTypeModule)
)

_Visitor = CFUNCTYPE(c_int, c_void_p, c_void_p)
# Through PyDLL: the GIL stays held for the whole walk (no thread runs between two visits).
_visit_children: Any = getattr(
    ctypes.PyDLL(abi._OPENED_AS, mode=ctypes.RTLD_GLOBAL), "PFObjectVisitChildren", None
)
if _visit_children is not None:
    _visit_children.restype = c_int
    _visit_children.argtypes = [c_void_p, _Visitor, c_void_p]

_MAIN_THREAD = threading.main_thread().ident
_found: list = []  # keys of the walk in progress
_lenders: list = []  # weak references to the wrappers that lent in the collection in progress


def _walk(handle: int, depth: int) -> None:
    """Collects into ``_found`` the keys of the Python objects that ``handle`` (solely owned
    along the path) keeps alive."""
    tindex = c_int32.from_address(handle + 8).value
    if tindex == abi.kPFTypeFunction:
        func = abi.PFFunctionObject.from_address(handle)
        if func.safe_call == SAFE_CALL_ADDR and func.self:
            _found.append(func.self)
    elif tindex == abi.kPFTypeOpaque:
        opaque = abi.PFOpaqueObject.from_address(handle)
        if opaque.free_handle == FREE_HANDLE_ADDR and opaque.handle:
            _found.append(opaque.handle)
    elif tindex not in _LEAVES and depth < MAX_DEPTH:
        _visit_children(handle, _visitor, depth + 1)


def _visit(child, depth) -> int:
    try:
        if c_uint64.from_address(child).value == 1:  # shared children are never followed
            _walk(child, depth or 0)
    except BaseException:  # noqa: B036 - a visit must not raise through C; skipping is safe
        pass
    return 0


_visitor = _Visitor(_visit)


def _lend(wrapper) -> None:
    del _found[:]
    _walk(wrapper._pf_handle, 0)
    lent = {}
    for key in _found:
        entry = _handles.get(key)
        if entry is None or type(entry) is _Lent:  # already held by a wrapper
            continue
        lent[key] = entry
        _handles[key] = _Lent(wrapper, key)
    del _found[:]
    if lent:
        wrapper._pf_gc_lent = lent
        _lenders.append(weakref.ref(wrapper))


def _lend_all() -> None:
    # From the registry of wrappers, never gc.get_objects(): see values._wrappers.
    for ref in list(_wrappers.values()):
        obj = ref()
        if obj is not None:
            handle = obj._pf_handle
            if (
                handle
                and c_uint64.from_address(handle).value == 1
                and getattr(obj, "_pf_gc_lent", None) is None
            ):
                _lend(obj)


def _give_back_all() -> None:
    lenders = _lenders[:]
    del _lenders[:]
    for ref in lenders:
        wrapper = ref()
        if wrapper is not None and getattr(wrapper, "_pf_gc_lent", None) is not None:
            give_back(wrapper)


def _on_collect(phase: str, info: dict) -> None:
    # Only on the main thread and not while the interpreter exits: another thread may be ended
    # (daemon threads at exit) while inside the walk, with native frames on its stack. Skipping a
    # collection's lending only keeps its cycles for a later full collection.
    if (
        info.get("generation") != 2
        or _visit_children is None
        or sys.is_finalizing()
        or threading.get_ident() != _MAIN_THREAD
    ):
        return
    try:
        if phase == "start":
            _lend_all()
        else:
            _give_back_all()
    except BaseException:  # noqa: B036 - a failed lending only leaves cycles for later
        _give_back_all()


def install() -> None:
    """Registers the lending around full collections (once)."""
    if _on_collect not in gc.callbacks:
        gc.callbacks.append(_on_collect)
