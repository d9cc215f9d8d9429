# tvm-ffi's RecursiveEq / RecursiveHash / ordering under the switch, over packedfun's values.
"""``tvm_ffi._ffi_api.RecursiveEq``, ``RecursiveHash`` and ``RecursiveLt``/``Le``/``Gt``/``Ge``.

apache-tvm-ffi compares and hashes values by reflection: containers by content, a reflected object
field by field, and any other object (a Function, a Tensor) by its type alone, as it reflects no
field. Its rules, given here over packedfun's values:

- values of different kinds are unequal (``1``, ``1.0`` and ``True`` too); ordering them raises
  ``TypeError``. ``None`` equals ``None`` and orders before anything else.
- floats: NaN equals NaN (any payload), ``-0.0`` equals ``0.0``; ordering a NaN raises
  ``TypeError``.
- Array and List compare item by item, then by length (an Array never equals a List); Map and Dict
  by key (a Map never equals a Dict); ordering maps that differ raises ``TypeError``.
- a field declared with ``compare=False`` takes no part, one with ``hash=False`` no part in the
  hash; a class's hooks ``__ffi_eq__(self, other, fn_eq)``, ``__ffi_compare__(self, other,
  fn_cmp)`` and ``__ffi_hash__(self, fn_hash)`` replace the field walk (a py_class's methods, or
  the type attributes of a tvm-ffi C++ type, read through the bridge). Hashing a type with an
  equality hook and no hash hook raises ``ValueError``.
- a pair of objects met again while still being compared is equal (cycles end); ordering one
  raises ``ValueError``. Hashing gives a cycle its type's hash and hashes each shared object
  once.

The walks are iterative (each open container or object is a generator on a heap stack), so
nesting depth is bounded by memory, not by Python's recursion limit.
"""

from __future__ import annotations

import hashlib
import math
import numbers
import struct
import types
import typing

from ._py_class import fields, is_dataclass
from .container import Array, Dict, List, Map, Shape
from .object import Object, type_info
from .registry import get_global_func
from .tensor import device, dtype

__all__ = [
    "recursive_eq",
    "recursive_ge",
    "recursive_gt",
    "recursive_hash",
    "recursive_le",
    "recursive_lt",
]

_MASK = (1 << 64) - 1
_COMPARE_OFF, _HASH_OFF = 1 << 7, 1 << 8  # tvm-ffi's field flags: not compared, not hashed

# The kinds of value; two values of different kinds never compare equal.
_NONE, _BOOL, _INT, _FLOAT, _STR, _BYTES, _DTYPE, _DEVICE, _SHAPE = range(9)
_ARRAY, _LIST, _MAP, _DICT, _OBJECT, _OTHER = range(9, 15)
_KIND_NAMES = (
    *("None", "bool", "int", "float", "str", "bytes", "dtype", "Device", "Shape"),
    *("Array", "List", "Map", "Dict", "Object", "object"),
)
#: An open container or object: yields what to compare or hash next, is sent its result.
_Walk = typing.Generator[typing.Any, typing.Any, int]


def _kind(value: typing.Any) -> int:
    if value is None:
        return _NONE
    if isinstance(value, bool):
        return _BOOL
    if isinstance(value, dtype):  # a str subclass
        return _DTYPE
    if isinstance(value, str):
        return _STR
    if isinstance(value, (bytes, bytearray)):
        return _BYTES
    if isinstance(value, int):
        return _INT
    if isinstance(value, float):
        return _FLOAT
    if isinstance(value, Object):
        if isinstance(value, Array):
            return _ARRAY
        if isinstance(value, List):
            return _LIST
        if isinstance(value, Map):
            return _MAP
        if isinstance(value, Dict):
            return _DICT
        if isinstance(value, Shape):
            return _SHAPE
        return _OBJECT
    if isinstance(value, device):
        return _DEVICE
    if isinstance(value, (list, tuple)):  # converted to an Array when passed to tvm-ffi
        return _ARRAY
    if isinstance(value, dict):  # converted to a Map
        return _MAP
    if isinstance(value, numbers.Integral):  # a NumPy integer: converted to an int
        return _INT
    if isinstance(value, numbers.Real):  # a NumPy float: converted to a float
        return _FLOAT
    return _OTHER


def _type_name(value: typing.Any, kind: int) -> str:
    return value.type_key if kind == _OBJECT else _KIND_NAMES[kind]


def _identity(value: typing.Any) -> int:
    return value.handle if isinstance(value, Object) else id(value)


def _mix(seed: int, value: int) -> int:
    """Combines two 64-bit words (a SplitMix64 finaliser over ``seed * 31 + value``)."""
    x = (seed * 31 + (value & _MASK) + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def _digest(data: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


def _sign(x: typing.Any, y: typing.Any) -> int:
    return int(x > y) - int(x < y)


def _signed(h: int) -> int:
    return h - (1 << 64) if h >= 1 << 63 else h


# ---------------------------------------------------------------------------------------------
# What each object type compares: its fields, its hooks (cached by type index).
# ---------------------------------------------------------------------------------------------


class _Traits:
    """The compared fields, hashed fields and hooks of one object type."""

    __slots__ = ("compared", "hashed", "eq", "cmp", "hash", "key_hash")

    def __init__(self, cls: type, type_index: int) -> None:
        info = type_info(type_index)
        self.key_hash = _digest(info["type_key"].encode())
        flags = _bridge("packedfun.tvm_ffi_field_flags")
        own = flags(type_index) if flags is not None else None
        if own is not None:  # a tvm-ffi type: its own field flags and type attributes
            rows = [r for a in info["ancestors"][1:] for r in (flags(a) or ())] + list(own)
            self.compared = tuple(r[0] for r in rows if not r[1] & _COMPARE_OFF)
            self.hashed = tuple(r[0] for r in rows if not r[1] & (_COMPARE_OFF | _HASH_OFF))
            attr = _bridge("packedfun.tvm_ffi_type_attr")
            self.eq, self.cmp, self.hash = (
                attr(type_index, n) for n in ("__ffi_eq__", "__ffi_compare__", "__ffi_hash__")
            )
            return
        names = [f["name"] for a in info["ancestors"][1:] for f in type_info(a)["fields"]]
        names += [f["name"] for f in info["fields"]]
        declared = {f.name: f for f in fields(cls)} if is_dataclass(cls) else {}
        compared = [n for n in names if getattr(declared.get(n), "compare", True)]
        self.compared = tuple(compared)
        self.hashed = tuple(
            n for n in compared if getattr(declared.get(n), "hash", None) is not False
        )
        self.eq, self.cmp, self.hash = (
            getattr(cls, n, None) for n in ("__ffi_eq__", "__ffi_compare__", "__ffi_hash__")
        )


_traits: dict = {}


def _traits_of(value: typing.Any) -> _Traits:
    key = (type(value), value.type_index)
    found = _traits.get(key)
    if found is None:
        found = _traits[key] = _Traits(type(value), value.type_index)
    return found


def _bridge(name: str) -> typing.Any:
    """A global function of the tvm-ffi bridge (None in a build without it)."""
    return get_global_func(name, allow_missing=True)


def _drive(first: typing.Any, step: typing.Callable[[typing.Any], typing.Any]) -> typing.Any:
    """Runs a walk without recursion (deep values do not reach Python's recursion limit):
    ``first`` is a result, or a generator that yields the children to visit, each passed to
    ``step`` (which gives a result or another such generator), and returns its own result."""
    if not isinstance(first, types.GeneratorType):
        return first
    stack = [first]
    sent: typing.Any = None
    try:
        while stack:
            try:
                item = stack[-1].send(sent)
            except StopIteration as done:
                stack.pop()
                sent = done.value
                continue
            sent = step(item)
            if isinstance(sent, types.GeneratorType):
                stack.append(sent)
                sent = None
        return sent
    finally:
        for gen in reversed(stack):  # an error: each open frame is closed (its state undone)
            gen.close()


# ---------------------------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------------------------


class _Comparer:
    """One three-way comparison (``eq_only``: equality, where nothing raises for being
    unordered); hooks called during it share its set of pairs under comparison."""

    def __init__(self, eq_only: bool) -> None:
        self.eq_only = eq_only
        self.active: set = set()

    def run(self, a: typing.Any, b: typing.Any) -> int:
        return _drive(self.step(a, b), lambda pair: self.step(*pair))

    def unordered(self, message: str) -> int:
        if self.eq_only:
            return 1
        raise TypeError(message)

    def step(self, a: typing.Any, b: typing.Any) -> typing.Any:
        """The result of comparing ``a`` with ``b`` (an int), or a generator that yields the
        pairs of children to compare and returns the result."""
        ka, kb = _kind(a), _kind(b)
        if ka == _NONE or kb == _NONE:
            return 0 if ka == kb else (-1 if ka == _NONE else 1)
        if ka != kb:
            return self.unordered(
                f"Cannot compare values of different types: {_type_name(a, ka)} vs "
                f"{_type_name(b, kb)}"
            )
        if ka == _FLOAT:
            return self.floats(a, b)
        if ka in (_INT, _BOOL, _STR):
            return _sign(a, b)
        if ka == _BYTES:
            return _sign(bytes(a), bytes(b))
        if ka == _DTYPE:
            return _sign((a.type_code, a.bits, a.lanes), (b.type_code, b.bits, b.lanes))
        if ka == _DEVICE:
            return _sign((a.device_type, a.device_id), (b.device_type, b.device_id))
        if ka == _OTHER:
            if a == b:
                return 0
            return self.unordered(f"Cannot order values of type {type(a).__name__}")
        ia, ib = _identity(a), _identity(b)
        if ia == ib:
            return 0
        if ka == _SHAPE:
            return _sign(tuple(a), tuple(b))
        pair = (ia, ib)
        if pair in self.active:
            if self.eq_only:
                return 0
            raise ValueError("RecursiveCompare: cyclic reference detected in ordering")
        if ka in (_ARRAY, _LIST):
            return self.sequence(pair, a, b)
        if ka in (_MAP, _DICT):
            return self.mapping(pair, a, b)
        return self.object(pair, a, b)

    def floats(self, a: float, b: float) -> int:
        if math.isnan(a) or math.isnan(b):
            if self.eq_only:
                return 0 if math.isnan(a) and math.isnan(b) else 1
            raise TypeError("Cannot order NaN values")
        return _sign(a, b)

    def sequence(self, pair: tuple, a: typing.Any, b: typing.Any) -> _Walk:
        self.active.add(pair)
        try:
            for x, y in zip(a, b):
                r = yield x, y
                if r:
                    return r
            return _sign(len(a), len(b))
        finally:
            self.active.discard(pair)

    def mapping(self, pair: tuple, a: typing.Any, b: typing.Any) -> typing.Any:
        if len(a) != len(b) or any(k not in b for k in a.keys()):
            return self.unordered("Cannot order Map/Dict values")
        return self.map_items(pair, a, b)

    def map_items(self, pair: tuple, a: typing.Any, b: typing.Any) -> _Walk:
        self.active.add(pair)
        try:
            for k, x in a.items():
                r = yield x, b[k]
                if r:
                    if not self.eq_only:
                        raise TypeError("Cannot order Map/Dict values")
                    return r
            return 0
        finally:
            self.active.discard(pair)

    def object(self, pair: tuple, a: typing.Any, b: typing.Any) -> typing.Any:
        if a.type_index != b.type_index:
            return self.unordered(
                f"Cannot compare objects of different types: {a.type_key} vs {b.type_key}"
            )
        traits = _traits_of(a)
        hook = traits.eq if self.eq_only else None
        if hook is not None:
            return 0 if self.hooked(pair, hook, a, b, self.fn_eq) else 1
        if traits.cmp is not None:
            r = int(self.hooked(pair, traits.cmp, a, b, self.fn_cmp))
            return (r > 0) - (r < 0)
        return self.fields(pair, a, b, traits.compared)

    def hooked(self, pair: tuple, hook: typing.Any, *args: typing.Any) -> typing.Any:
        self.active.add(pair)
        try:
            return hook(*args)
        finally:
            self.active.discard(pair)

    def fn_eq(self, a: typing.Any, b: typing.Any) -> bool:
        return self.run(a, b) == 0

    def fn_cmp(self, a: typing.Any, b: typing.Any) -> int:
        return self.run(a, b)

    def fields(self, pair: tuple, a: typing.Any, b: typing.Any, names: tuple) -> _Walk:
        self.active.add(pair)
        try:
            for name in names:
                r = yield getattr(a, name), getattr(b, name)
                if r:
                    return r
            return 0
        finally:
            self.active.discard(pair)


def recursive_eq(a: typing.Any, b: typing.Any) -> bool:
    """Whether ``a`` and ``b`` are equal by content (tvm-ffi's ``RecursiveEq``)."""
    return _Comparer(True).run(a, b) == 0


def recursive_lt(a: typing.Any, b: typing.Any) -> bool:
    """``a < b`` by content (tvm-ffi's ``RecursiveLt``); ``TypeError`` when unordered."""
    return _Comparer(False).run(a, b) < 0


def recursive_le(a: typing.Any, b: typing.Any) -> bool:
    """``a <= b`` by content (tvm-ffi's ``RecursiveLe``)."""
    return _Comparer(False).run(a, b) <= 0


def recursive_gt(a: typing.Any, b: typing.Any) -> bool:
    """``a > b`` by content (tvm-ffi's ``RecursiveGt``)."""
    return _Comparer(False).run(a, b) > 0


def recursive_ge(a: typing.Any, b: typing.Any) -> bool:
    """``a >= b`` by content (tvm-ffi's ``RecursiveGe``)."""
    return _Comparer(False).run(a, b) >= 0


# ---------------------------------------------------------------------------------------------
# Hashing
# ---------------------------------------------------------------------------------------------

_KIND_SEEDS = tuple(_digest(name.encode()) for name in _KIND_NAMES)
_NAN_BITS = struct.unpack("<Q", struct.pack("<d", math.nan))[0]


class _Hasher:
    """One hash: finished objects memoized by identity, open ones (a cycle) hashed by type."""

    def __init__(self) -> None:
        self.memo: dict = {}
        self.open: dict = {}  # identity -> the seed a cycle back to it hashes as
        self.keep: list = []  # the values memoized, alive while their identities are keys

    def run(self, value: typing.Any) -> int:
        return _drive(self.step(value), self.step)

    def step(self, v: typing.Any) -> typing.Any:
        kind = _kind(v)
        seed = _KIND_SEEDS[kind]
        if kind == _NONE:
            return seed
        if kind in (_BOOL, _INT):
            return _mix(seed, int(v) if -(1 << 63) <= v < 1 << 63 else _digest(str(v).encode()))
        if kind == _FLOAT:
            bits = (
                _NAN_BITS if math.isnan(v) else struct.unpack("<Q", struct.pack("<d", v + 0.0))[0]
            )
            return _mix(seed, bits)
        if kind == _STR:
            return _mix(seed, _digest(v.encode("utf-8", "surrogatepass")))
        if kind == _BYTES:
            return _mix(seed, _digest(bytes(v)))
        if kind == _DTYPE:
            return _mix(_mix(_mix(seed, v.type_code), v.bits), v.lanes)
        if kind == _DEVICE:
            return _mix(_mix(seed, v.device_type), v.device_id)
        if kind == _OTHER:
            return _mix(seed, hash(v))
        ident = _identity(v)
        if ident in self.memo:
            return self.memo[ident]
        if ident in self.open:
            return self.open[ident]
        if kind == _SHAPE:
            h = _mix(seed, len(v))
            for d in v:
                h = _mix(h, d)
            return self.done(ident, v, h)
        if kind == _OBJECT:
            traits = _traits_of(v)
            seed = traits.key_hash
            if traits.hash is not None:
                self.open[ident] = seed
                try:
                    r = int(traits.hash(v, self.fn_hash))
                finally:
                    del self.open[ident]
                return self.done(ident, v, r & _MASK)
            if traits.eq is not None or traits.cmp is not None:
                raise ValueError(
                    f"RecursiveHash: type '{v.type_key}' defines __ffi_eq__ or __ffi_compare__ "
                    "but not __ffi_hash__. Add a __ffi_hash__ hook to maintain the invariant "
                    "RecursiveEq(a,b) => RecursiveHash(a)==RecursiveHash(b)."
                )
            return self.frame(ident, v, seed, [getattr(v, n) for n in traits.hashed], False)
        if kind in (_MAP, _DICT):
            return self.frame(ident, v, _mix(seed, len(v)), list(v.items()), True)
        return self.frame(ident, v, _mix(seed, len(v)), list(v), False)

    def done(self, ident: int, value: typing.Any, h: int) -> int:
        self.memo[ident] = h
        self.keep.append(value)
        return h

    def frame(self, ident: int, value: typing.Any, h: int, children: list, is_map: bool) -> _Walk:
        self.open[ident] = h
        try:
            if is_map:
                entries = []
                for k, x in children:
                    hk = yield k
                    hx = yield x
                    entries.append(_mix(hk, hx))
                for e in sorted(entries):
                    h = _mix(h, e)
            elif _kind(value) == _OBJECT:
                for x in children:
                    h = _mix(h, (yield x))
            else:
                for i, x in enumerate(children):
                    h = _mix(h, _mix((yield x), i))
        finally:
            del self.open[ident]
        return self.done(ident, value, h)

    def fn_hash(self, value: typing.Any) -> int:
        return _signed(self.run(value))


def recursive_hash(value: typing.Any) -> int:
    """The hash that agrees with :func:`recursive_eq` (tvm-ffi's ``RecursiveHash``), a signed
    64-bit int; ``ValueError`` for an object whose type has an equality hook but no hash hook."""
    return _signed(_Hasher().run(value))
