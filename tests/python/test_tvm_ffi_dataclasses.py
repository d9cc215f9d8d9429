# `tvm_ffi.dataclasses` under the switch: packedfun.dataclasses' names, tvm-ffi's py_class rule.
"""``packedfun._tvm_ffi_dataclasses`` is what ``import tvm_ffi.dataclasses`` gives under the
switch: packedfun's own names, except ``py_class``, which lets frozen and mutable classes mix in one
hierarchy (tvm-ffi's rule; packedfun's own ``py_class`` refuses it, test_dataclasses). Checked here
in this process, and the switch's import in a child process. Both backends: the suite runs once per
backend, and the child inherits ``PACKEDFUN_BACKEND``."""

from __future__ import annotations

import packedfun
import packedfun._tvm_ffi_dataclasses as tdc
import packedfun.dataclasses as dc
import pytest
from test_tvm_ffi_switch import run_child


def test_names_are_packedfuns_own_but_py_class():
    for name in tdc.__all__:
        if name != "py_class":
            assert getattr(tdc, name) is getattr(dc, name), name
    assert tdc.py_class is not dc.py_class


def test_frozen_parent_mutable_child():
    @tdc.py_class("test_tdc.FrozenParent", frozen=True)
    class Parent(packedfun.Object):
        a: int

    @tdc.py_class("test_tdc.MutableChild")
    class Child(Parent):
        b: int

    c = Child(1, 2)
    with pytest.raises(AttributeError):
        c.a = 10  # the parent's field stays frozen
    c.b = 20
    assert (c.a, c.b) == (1, 20)
    Child.a.set(c, 5)  # the escape hatch reaches the inherited frozen field
    assert c.a == 5


def test_mutable_parent_frozen_child():
    @tdc.py_class("test_tdc.MutableParent")
    class Parent(packedfun.Object):
        a: int

    @tdc.py_class("test_tdc.FrozenChild", frozen=True, eq=True)
    class Child(Parent):
        b: int

    c = Child(1, 2)
    c.a = 10
    with pytest.raises(AttributeError):
        c.b = 20
    assert (c.a, c.b) == (10, 2)
    assert Child(1, 2) == Child(1, 2) and hash(Child(1, 2)) == hash(Child(1, 2))


def test_packedfun_py_class_still_refuses_the_mix():
    @tdc.py_class("test_tdc.FrozenBase", frozen=True)
    class Base(packedfun.Object):
        a: int

    with pytest.raises(TypeError, match="non-frozen"):

        @dc.py_class("test_tdc.RefusedChild")
        class Child(Base):
            b: int


def test_switch_imports_it_as_tvm_ffi_dataclasses():
    run_child(
        """
        import sys
        import packedfun
        import packedfun.tvm_ffi_compat as compat
        compat.install()
        from tvm_ffi.dataclasses import Object, py_class, field
        import tvm_ffi.dataclasses
        assert sys.modules["tvm_ffi.dataclasses"] is sys.modules["packedfun._tvm_ffi_dataclasses"]
        assert tvm_ffi.dataclasses.fields is sys.modules["packedfun.dataclasses"].fields

        @py_class("child.Frozen", frozen=True)
        class Frozen(Object):
            a: int

        @py_class("child.Mutable")
        class Mutable(Frozen):
            b: int = field(default=0)

        m = Mutable(1)
        m.b = 3
        assert (m.a, m.b) == (1, 3)
        try:
            import tvm_ffi.dataclasses.no_such_module
        except ModuleNotFoundError:
            pass
        else:
            raise AssertionError("tvm_ffi.dataclasses.no_such_module imported")
        print("ok")
        """
    )


def test_a_default_that_does_not_fit_fails_when_used():
    # tvm-ffi's rule under the switch: the class is defined; building with the default raises
    @tdc.py_class("test_tdc.LateDefault")
    class Late(packedfun.Object):
        a: int
        b: str = 5  # type: ignore[assignment]

    with pytest.raises(TypeError, match=r"default for field 'b'"):
        Late(1)
    assert Late(1, "x").b == "x"  # an explicit value that fits is fine
    with pytest.raises(TypeError):
        Late(1, 5)  # an explicit value that does not fit: the usual store error
    with pytest.raises(TypeError, match="does not fit"):  # packedfun's own: at definition

        @dc.py_class("test_tdc.EarlyDefault")
        class Early(packedfun.Object):
            b: str = 5  # type: ignore[assignment]


def test_private_class_building_names_raise_when_called():
    run_child(
        """
        import packedfun, packedfun.tvm_ffi_compat as compat
        compat.install()
        from tvm_ffi._dunder import _install_dataclass_dunders
        from tvm_ffi.core import _register_py_class, _to_py_class_value
        from tvm_ffi.registry import _add_class_attrs
        for fn in (_install_dataclass_dunders, _register_py_class, _to_py_class_value,
                   _add_class_attrs):
            try:
                fn(object)
            except NotImplementedError as e:
                assert fn.__name__ in str(e) and "migration" in str(e), str(e)
            else:
                raise AssertionError(f"{fn.__name__} returned")
        compat.uninstall()
        assert not hasattr(packedfun.registry, "_add_class_attrs")
        assert not hasattr(packedfun.core, "_register_py_class")
        print("ok")
        """
    )


def test_required_fields_come_first_in_init():
    # tvm-ffi's rule under the switch; packedfun's own py_class refuses the order (dataclasses')
    @tdc.py_class("test_tdc.Reorder")
    class Reorder(packedfun.Object):
        a: int = 0
        b: int  # type: ignore[misc]
        _: dc.KW_ONLY
        c: int = 10
        d: int  # type: ignore[misc]

    import inspect

    assert list(inspect.signature(Reorder).parameters) == ["b", "a", "d", "c"]
    r = Reorder(2, d=4)
    assert (r.a, r.b, r.c, r.d) == (0, 2, 10, 4)
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument 'a'"):

        @dc.py_class("test_tdc.NoReorder")
        class NoReorder(packedfun.Object):
            a: int = 0
            b: int  # type: ignore[misc]
