# tvm-ffi's container forms under the switch: printed forms, slices, == against plain dicts.
"""``packedfun._tvm_ffi_container``: what the switch changes on packedfun's own container classes,
checked in a child process (the switch changes the classes for the whole process), and that
packedfun's own forms are back after ``uninstall()`` and untouched without the switch. Both
backends: the suite runs once per backend, and the child inherits ``PACKEDFUN_BACKEND``."""

from __future__ import annotations

import packedfun
import pytest
from test_tvm_ffi_switch import run_child


def test_without_the_switch_containers_keep_packedfuns_forms():
    a = packedfun.convert([1, 2, 3])
    assert str(a) == "[1, 2, 3]" and isinstance(a[0:2], packedfun.Array)
    assert packedfun.Map({"a": 1}) == {"a": 1}
    assert packedfun.Dict({"a": 1}) == {"a": 1}
    with pytest.raises(TypeError):
        packedfun.Map(1)


def test_switch_gives_tvm_ffis_container_forms_and_takes_them_back():
    run_child(
        """
        import pickle
        import packedfun
        import packedfun.tvm_ffi_compat as compat
        compat.install()
        import tvm_ffi
        a = tvm_ffi.convert([1, 2, 3])
        assert str(a) == repr(a) == "(1, 2, 3)"
        assert str(tvm_ffi.convert([1])) == "(1,)" and str(tvm_ffi.convert([])) == "()"
        assert str(pickle.loads(pickle.dumps(a))) == "(1, 2, 3)"
        nested = tvm_ffi.convert(["a", [1, 2], {"k": 1.5}, None])
        assert str(nested) == '("a", (1, 2), {"k": 1.5}, None)', str(nested)
        assert str(tvm_ffi.convert({"a": 1, "b": 2})) == '{"a": 1, "b": 2}'
        assert str(tvm_ffi.List(["é", (1,)])) == '["\\\\u00e9", (1,)]'
        assert str(tvm_ffi.Dict({"a": [1]})) == '{"a": (1,)}'
        part = a[-3:-1]
        assert type(part) is list and part == [1, 2] and a[-1] == 3
        assert type(tvm_ffi.List([1, 2, 3])[1:]) is list
        m, d = tvm_ffi.Map({"x": 1}), tvm_ffi.Dict({"x": 1})
        assert m.__eq__({"x": 1}) is NotImplemented and d.__eq__({"x": 1}) is NotImplemented
        assert not (m == {"x": 1}) and m != {"x": 1} and not (m == d)
        assert m == tvm_ffi.Map({"x": 1}) and d == tvm_ffi.Dict({"x": 1})
        assert not (m != tvm_ffi.Map({"x": 1}))
        for cls in (tvm_ffi.Map, tvm_ffi.Dict):
            try:
                cls(1)
            except AttributeError as e:
                assert "'int' object has no attribute 'items'" in str(e)
            else:
                raise AssertionError("no AttributeError")
            assert cls([("k", 2)])["k"] == 2  # packedfun's pairs form still accepted
        try:
            tvm_ffi.Array(1)
        except TypeError:
            pass
        compat.uninstall()
        assert str(a) == "[1, 2, 3]" and isinstance(a[0:2], packedfun.Array)
        assert m == {"x": 1} and m == d
        try:
            packedfun.Map(1)
        except TypeError:
            pass
        print("ok")
        """
    )
