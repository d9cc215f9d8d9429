# packedfun.dataclasses.method: what it registers and what it refuses, on both backends.
import packedfun as pf
import pytest
from packedfun import dataclasses as dc
from packedfun.object import type_info


def _methods(cls) -> dict:
    return {m["name"]: m for m in type_info(cls.__pf_type_index__)["methods"]}


def test_marked_methods_are_registered_static_or_not_and_unmarked_ones_are_not():
    @dc.py_class("test_dataclasses_method.Node")
    class Node(pf.Object):
        x: int

        @dc.method
        def label(self, prefix: str) -> str:
            return f"{prefix}{self.x}"

        @dc.method
        @staticmethod
        def constant() -> int:
            return 42

        def helper(self) -> int:
            return self.x

    methods = _methods(Node)
    assert methods["label"]["func"](Node(x=7), "N") == "N7" and not methods["label"]["is_static"]
    assert methods["constant"]["func"]() == 42 and methods["constant"]["is_static"]
    assert "helper" not in methods
    assert pf.method is dc.method  # tvm-ffi's top-level name


def test_tvm_ffi_marker_attribute_registers_too():
    def twice(self) -> int:
        return 2 * self.x

    twice.__ffi_method__ = True

    @dc.py_class("test_dataclasses_method.Marked")
    class Marked(pf.Object):
        x: int
        double = twice

    assert _methods(Marked)["double"]["func"](Marked(x=4)) == 8


def test_classmethods_and_non_callables_are_refused():
    with pytest.raises(TypeError, match="@classmethod is not supported"):

        class _Bad:
            @dc.method
            @classmethod
            def maker(cls) -> int:
                return 0

    with pytest.raises(TypeError, match="wrapped by @classmethod"):

        @dc.py_class("test_dataclasses_method.CMOrder")
        class _CMOrder(pf.Object):
            x: int

            @classmethod
            @dc.method
            def maker(cls) -> int:
                return 0

    with pytest.raises(TypeError, match="expected a callable, got int"):
        dc.method(42)

    # The refused class registered nothing: its key is still free.
    @dc.py_class("test_dataclasses_method.CMOrder")
    class Fine(pf.Object):
        x: int

    assert Fine(x=1).x == 1
