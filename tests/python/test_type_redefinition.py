"""A library that redefines an object type already defined in the process (a notebook cell
edited and run again) fails to load with an error saying how to load it; an identical definition
(the same source built again elsewhere) loads. Both backends: the check is the runtime's."""

import uuid

import pytest
from packedfun import cpp

TEMPLATE = r"""
#include <packedfun/packedfun.h>

class PointObj : public packedfun::Object {
 public:
  int64_t x = 0, y = 0, z = 0;
  PointObj(int64_t x, int64_t y) : x(x), y(y) {}
  int64_t Sum() const { return x + y; }
  PACKEDFUN_DECLARE_OBJECT_INFO_FINAL("KEY", PointObj, packedfun::Object);
};

PACKEDFUN_STATIC_INIT_BLOCK() {
  namespace refl = packedfun::reflection;
  refl::ObjectDef<PointObj>("A point.")
      .def(refl::init<int64_t, int64_t>(), {"x", "y"})
      MEMBERS;
}

int64_t version() { return VERSION; }
packedfun::ObjectPtr<PointObj> make(int64_t x, int64_t y) {
  return packedfun::make_object<PointObj>(x, y);
}
"""

V1 = '.def_ro("x", &PointObj::x).def_rw("y", &PointObj::y)'


def build(tmp_path, key, members, version, tag):
    # One C++ class name per type key: an inline function's statics (the cached type index) are
    # unique symbols, shared by every library of the process that defines the same class.
    cls = "PointObj" + key.rsplit("Point", 1)[1]
    source = TEMPLATE.replace("KEY", key).replace("MEMBERS", members).replace("PointObj", cls)
    source = source.replace("VERSION", str(version))
    return cpp.load_inline(
        f"redefine_{tag}",
        cpp_sources=source,
        functions=["version", "make"],
        build_directory=tmp_path / tag,
    )


KEY = f"test_redefinition.Point{uuid.uuid4().hex[:8]}"  # a fresh type in every run


@pytest.fixture(scope="module")
def first(tmp_path_factory):
    """The first definition of KEY (the conflicting loads below leave it intact)."""
    return build(tmp_path_factory.mktemp("first"), KEY, V1, 1, "a")


def test_identical_definition_loads_again(tmp_path, first):
    again = build(tmp_path, KEY, V1, 2, "b")  # same type, another library (another body)
    assert (first.version(), again.version()) == (1, 2)
    for mod in (first, again):
        point = mod.make(3, 4)
        assert (point.x, point.y) == (3, 4)
        assert type(point)(5, 6).y == 6  # the constructor, identical in both, is kept


@pytest.mark.parametrize(
    "members, what",
    [
        (V1 + '.def_ro("z", &PointObj::z)', "field 'z' is new"),
        ('.def_ro("x", &PointObj::x).def_ro("y", &PointObj::y)', "field 'y' changed"),
        ('.def_ro("x", &PointObj::x)', "a field of the loaded definition is missing"),
        (V1 + '.def("norm1", &PointObj::Sum)', "method 'norm1' is new"),
    ],
    ids=["new-field", "changed-field", "missing-field", "new-method"],
)
def test_changed_definition_fails_to_load_with_how_to_reload(tmp_path, first, members, what):
    with pytest.raises(RuntimeError) as info:
        build(tmp_path, KEY, members, 3, "c")
    message = str(info.value)
    assert f"object type '{KEY}' is already defined in this process ({what})" in message
    assert "restart the interpreter (in a notebook, the kernel)" in message
    assert "PF" not in message
    # The first definition is intact and still usable.
    point = first.make(1, 2)
    assert (point.x, point.y) == (1, 2)
    point.y = 7  # the first definition's y is read-write
    assert type(point)(3, 4).x == 3
    assert [f for f in type(point).__dict__ if f in ("z", "norm1")] == []
