# Object and container benchmark cases (issue 3): container access, conversion, reflected objects.
"""Cases of containers and reflected objects, against apache-tvm-ffi's equivalents.

In these rows the ``floor`` column is plain Python: ``tuple[i]`` / ``len(tuple)`` / iterating a
tuple for the container rows, ``list(x)`` / ``dict(x)`` for the conversions, and a ``__slots__``
class for the object rows (attribute read, method call, construction).
"""

from __future__ import annotations

from harness import Case, Target, _compile_loop, call_loop, empty_loop
from peers import Peers

N_ITEMS = 1000
FASTER = "≥ 3× faster than tvm-ffi"


class _SlotsPair:
    __slots__ = ("a", "b")

    def __init__(self, a: int, b: int) -> None:
        self.a = a
        self.b = b

    def sum(self) -> int:
        return self.a + self.b


def _stmt_loop(src: str, **names):
    return _compile_loop(src, names)


def _containers(peers: Peers) -> dict:
    """Per peer: (1000-element Array, convert function); the floor gets a tuple."""
    made = {"floor": (tuple(range(N_ITEMS)), tuple)}
    for p in peers:
        convert = getattr(p.raw, "convert", None)
        if p.name in ("packedfun", "packedfun[ctypes]", "tvm-ffi") and convert is not None:
            arr = convert(list(range(N_ITEMS)))
            if len(arr) != N_ITEMS or arr[500] != 500:
                raise AssertionError(f"{p.name}: convert(list) gave a wrong Array")
            made[p.name] = (arr, convert)
    return made


def _container_cases(peers: Peers) -> list:
    made = _containers(peers)
    ints = list(range(N_ITEMS))
    str_map = {f"key{i}": i for i in range(100)}
    for name, (_, convert) in made.items():
        if name != "floor" and convert(str_map)["key7"] != 7:
            raise AssertionError(f"{name}: convert(dict) gave a wrong Map")
    floor_convert = {"floor": call_loop(list, ints)}
    floor_dict = {"floor": call_loop(dict, str_map)}
    conv = {n: call_loop(c, ints) for n, (_, c) in made.items() if n != "floor"}
    conv_d = {n: call_loop(c, str_map) for n, (_, c) in made.items() if n != "floor"}
    return [
        Case("len(Array)", {n: call_loop(len, a) for n, (a, _) in made.items()}, empty_loop(1),
             Target(FASTER, faster_than=("tvm-ffi", 3.0)), group="objects"),
        Case("Array[i] (floor: tuple[i])",
             {n: _stmt_loop("_a0[_a1]", _a0=a, _a1=500) for n, (a, _) in made.items()},
             empty_loop(2), Target("≤ 2× tuple[i]; " + FASTER, max_ratio=2.0,
                                   faster_than=("tvm-ffi", 3.0)), group="objects"),
        Case("iterate a 1000-element Array",
             {n: _stmt_loop("for _x in _a0: pass", _a0=a) for n, (a, _) in made.items()},
             empty_loop(1), Target(FASTER, faster_than=("tvm-ffi", 3.0)), show_us=True,
             group="objects"),
        Case("convert(list of 1000 ints)", {**floor_convert, **conv}, empty_loop(1),
             Target(FASTER, faster_than=("tvm-ffi", 3.0)), show_us=True, group="objects"),
        Case("convert(dict of 100 str→int)", {**floor_dict, **conv_d}, empty_loop(1),
             Target(FASTER, faster_than=("tvm-ffi", 3.0)), show_us=True, group="objects"),
    ]  # fmt: skip


def _pair_classes(peers: Peers) -> dict:
    classes: dict = {"floor": _SlotsPair}
    for p in peers:
        if p.name == "packedfun":
            pf = p.raw

            @pf.register_object("testing.TestIntPair")
            class PfPair(pf.Object):
                pass

            classes[p.name] = PfPair
        elif p.name == "tvm-ffi":
            import tvm_ffi.testing

            classes[p.name] = tvm_ffi.testing.TestIntPair
    for name, cls in classes.items():
        pair = cls(1, 2)
        if (pair.a, pair.b, pair.sum()) != (1, 2, 3):
            raise AssertionError(f"{name}: TestIntPair(1, 2) is wrong")
    return classes


def _object_cases(peers: Peers) -> list:
    classes = _pair_classes(peers)
    pairs = {n: c(1, 2) for n, c in classes.items()}
    return [
        Case("field read obj.a (floor: __slots__ attribute)",
             {n: _stmt_loop("_a0.a", _a0=o) for n, o in pairs.items()}, empty_loop(1),
             Target("≤ 1.5× __slots__ read; " + FASTER, max_ratio=1.5,
                    faster_than=("tvm-ffi", 3.0)), group="objects"),
        Case("method call obj.sum()",
             {n: _stmt_loop("_a0.sum()", _a0=o) for n, o in pairs.items()}, empty_loop(1),
             Target(FASTER, faster_than=("tvm-ffi", 3.0)), group="objects"),
        *_method_vs_function(pairs),
        Case("construct TestIntPair(1, 2)",
             {n: call_loop(c, 1, 2) for n, c in classes.items()}, empty_loop(2),
             Target(FASTER, faster_than=("tvm-ffi", 3.0)), group="objects"),
    ]  # fmt: skip


def _method_vs_function(pairs: dict) -> list:
    """obj.sum() beside the same Function called as a registry function with the same argument."""
    pair = pairs.get("packedfun")
    if pair is None:
        return []
    func = type(pair).sum.__func__  # the method's Function: what a registry lookup would give
    if func(pair) != 3:
        raise AssertionError("packedfun: TestIntPair.sum's Function gave a wrong result")
    return [
        Case("obj.sum() (floor: its Function called as f(obj))",
             {"floor": call_loop(func, pair), "packedfun": _stmt_loop("_a0.sum()", _a0=pair)},
             empty_loop(1), Target("≤ 1.3× the registry call", max_ratio=1.3), group="objects"),
    ]  # fmt: skip


def make_cases(peers: Peers) -> list:
    """The container and object rows of the table."""
    return _container_cases(peers) + _object_cases(peers)
