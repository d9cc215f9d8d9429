# Tests of reflected objects in Python: register_object, fields, methods, dispatch, lifetime.
import gc
import weakref

import packedfun
import pytest
from packedfun import testing


@packedfun.register_object("testing.TestIntPair")
class TestIntPair(packedfun.Object):
    """Seed 003, as written there (with packedfun's names)."""

    def __init__(self, a, b):
        self.__init_handle_by_constructor__(TestIntPair.__create__, a, b)


TestIntPair.__test__ = False  # not a pytest test class


@packedfun.register_object("testing.Base")
class Base(packedfun.Object):
    pass


@packedfun.register_object("testing.Derived")
class Derived(Base):
    pass


@packedfun.register_object("testing.Mutable")
class Mutable(packedfun.Object):
    pass


@packedfun.register_object("testing.TreeNode")
class TreeNode(packedfun.Object):
    pass


def live():
    gc.collect()
    return testing.object_live_count()


def test_seed_003_test_int_pair():
    test_int_pair = TestIntPair(1, 2)
    assert test_int_pair.a == 1
    assert test_int_pair.b == 2
    assert test_int_pair.sum() == 3
    assert isinstance(test_int_pair, TestIntPair)
    assert test_int_pair.type_key == "testing.TestIntPair"


def test_static_create_is_a_function():
    pair = TestIntPair.__create__(5, 6)
    assert isinstance(pair, TestIntPair)
    assert (pair.a, pair.b) == (5, 6)
    with pytest.raises(TypeError):
        TestIntPair("x", 1)


def test_read_only_field_and_delete():
    pair = TestIntPair(1, 2)
    with pytest.raises(AttributeError, match="read-only"):
        pair.a = 5
    with pytest.raises(AttributeError):
        del pair.b
    assert pair.a == 1


def test_read_write_fields_and_type_errors():
    m = Mutable(3, "n")
    assert (m.count, m.name, m.child) == (3, "n", None)
    m.count = 7
    m.ratio = 0.5
    m.name = "renamed"
    m.child = Base(9)
    assert (m.count, m.ratio, m.name, m.child.value) == (7, 0.5, "renamed", 9)
    with pytest.raises(TypeError, match=r"^testing\.Mutable\.count: expected int, got str$"):
        m.count = "seven"
    with pytest.raises(TypeError, match=r"^testing\.Mutable\.child: expected testing\.Base"):
        m.child = TestIntPair(1, 2)
    with pytest.raises(OverflowError, match=r"^testing\.Mutable\.small: .*int32"):
        m.small = 2**40
    m.child = None
    assert m.child is None and m.count == 7


def test_constructor_default_init_and_empty_object():
    d = Derived(4, "label")
    assert (d.value, d.label) == (4, "label")
    empty = packedfun.Object()
    assert empty.handle == 0
    with pytest.raises(ValueError):
        TestIntPair.a.__get__(empty)
    with pytest.raises(TypeError):
        TestIntPair.a.__get__(Base(1))


def test_dispatch_to_most_derived_registered_class():
    base = Base(1)
    assert type(base) is Base and base.type_key() == "testing.Base"
    derived = Derived(2, "d")
    assert type(derived) is Derived
    assert isinstance(derived, Base)
    assert derived.type_key() == "testing.Derived"  # inherited method, dynamic type
    back = testing.echo(derived)
    assert type(back) is Derived and back.same_as(derived)


def test_unregistered_type_arrives_as_nearest_registered_ancestor():
    obj = testing.make_more_derived(5, "more", 1.5)
    assert isinstance(obj, Derived) and isinstance(obj, Base)
    assert type(obj).__mro__[1] is Derived
    assert obj.type_key() == "testing.MoreDerived"  # testing.Base's reflected method
    assert (obj.value, obj.label, obj.extra) == (5, "more", 1.5)
    assert "extra" in dir(obj)
    assert type(testing.make_more_derived(1, "a", 2.0)) is type(obj)


def test_register_requires_object_subclass_and_known_key():
    with pytest.raises(TypeError):
        packedfun.register_object("testing.Base")(int)
    with pytest.raises(KeyError):

        @packedfun.register_object("testing.NoSuchType")
        class Missing(packedfun.Object):
            pass

    with pytest.raises(TypeError, match="must derive from"):

        @packedfun.register_object("testing.Derived")
        class WrongParent(packedfun.Object):
            pass


def test_same_as_hash_eq_repr_dir():
    pair = TestIntPair(1, 2)
    again = testing.echo(pair)
    assert again is not pair and again.same_as(pair) and again == pair
    assert hash(again) == hash(pair)
    other = TestIntPair(1, 2)
    assert not other.same_as(pair) and other != pair
    assert len({pair, again, other}) == 2
    assert repr(pair) == "testing.TestIntPair(a=1, b=2)"
    assert "label='x'" in repr(Derived(1, "x"))
    names = dir(pair)
    for name in ("a", "b", "sum", "same_as"):
        assert name in names


def test_testing_pair_is_a_c_class():
    from packedfun.dataclasses import asdict, fields, is_dataclass, replace

    Pair = testing.TestIntPair  # packedfun's class (this module registers one of its own)
    pair = Pair(1, 2)
    assert is_dataclass(Pair) and is_dataclass(pair) and type(pair) is Pair
    assert [(f.name, f.type, f.init, f.frozen) for f in fields(pair)] == [
        ("a", int, True, True),
        ("b", int, True, True),
    ]
    assert Pair.__match_args__ == ("a", "b") and asdict(pair) == {"a": 1, "b": 2}
    moved = replace(pair, a=10)
    assert (moved.a, moved.b, pair.a) == (10, 2, 1) and not moved.same_as(pair)
    with pytest.raises(TypeError, match="no field|unexpected|keyword"):
        replace(pair, zz=1)


def test_field_and_method_descriptors_on_class():
    assert TestIntPair.a.readonly and TestIntPair.a.__doc__ == "the first integer"
    assert TestIntPair.sum.__name__ == "sum"
    assert TestIntPair.sum(TestIntPair(2, 3)) == 5
    assert Mutable.count.readonly is False


def test_lifetime_held_only_by_python():
    before = live()
    pair = TestIntPair(1, 2)
    ref = weakref.ref(pair)
    assert live() == before + 1
    del pair
    assert ref() is None
    assert live() == before


def test_lifetime_held_only_by_cpp():
    before = live()
    testing.store_value(TestIntPair(3, 4))
    assert live() == before + 1
    loaded = testing.load_value()
    assert loaded.a == 3
    del loaded
    assert live() == before + 1
    testing.clear_value()
    assert live() == before


def test_lifetime_cycles_through_callbacks():
    before = live()

    class Holder:
        pass

    holder = Holder()
    pair = TestIntPair(5, 6)

    def callback(x, _holder=holder):  # the callback refers to holder
        return _holder, x

    holder.func = packedfun.Function(callback)  # holder -> Function -> callback -> holder
    holder.pair = pair
    result = testing.apply(holder.func, pair)
    assert result[0] is holder and result[1].same_as(pair)  # a tuple came back as an Array
    ref = weakref.ref(holder)
    del holder, pair, result, callback
    gc.collect()
    assert ref() is None
    assert live() == before


def test_tree_built_in_python_counted_in_cpp():
    before = live()
    leaves = [TreeNode(f"leaf{i}", []) for i in range(3)]
    root = TreeNode("root", [TreeNode("mid", leaves), TreeNode("other", [])])
    assert testing.tree_count(root) == 6
    assert [c.name for c in root.children] == ["mid", "other"]
    assert root.children[0].children[2].name == "leaf2"
    del leaves, root
    assert live() == before
    tree = testing.make_tree(2, 2)
    assert type(tree) is TreeNode and testing.tree_count(tree) == 7
