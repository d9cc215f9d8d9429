# One object system: objects of a tvm-ffi library's own types cross into packedfun and back.
"""A library built against apache-tvm-ffi (fixtures/tvm_ffi_objects.cc) defines ``pf_tvm_obj.Shape``
and ``pf_tvm_obj.Rect`` (fields, a read-only field, a method, a constructor). Their objects come
into Python as instances of mirrored packedfun types (the class ``register_object`` gives them, or
an automatic one), go back into tvm-ffi calls as the same object, and are freed exactly once.
Every case runs in a child process, on the backend under test."""

from __future__ import annotations

import importlib.util
import os
import subprocess

import pytest
import suite

if importlib.util.find_spec("tvm_ffi") is None:
    pytest.skip("apache-tvm-ffi is not installed", allow_module_level=True)

from test_tvm_ffi_kernels import build_library, run_child  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "fixtures", "tvm_ffi_objects.cc")


@pytest.fixture(scope="module")
def lib() -> str:
    return build_library(SOURCE, "pf_tvm_objects")


_PRELUDE = """
import gc, sys
import packedfun as pf
pf.load_module(sys.argv[1])
g = {n: pf.get_global_func("pf_tvm_obj." + n) for n in
     ("make_rect", "area", "same", "echo", "live", "in_array", "first", "call_back")}
"""


def _check(lib: str, body: str) -> None:
    """Runs ``body`` after the prelude in a child process; it must end without an error."""
    assert run_child(lib, code=_PRELUDE + body + 'print("ok")\n').strip() == "ok"


def test_generic_wrapper(lib):
    code = (
        _PRELUDE
        + """
r = g["make_rect"](3, 4)
assert isinstance(r, pf.Object) and type(r).__name__ == "Rect", type(r)
assert r.type_key == "pf_tvm_obj.Rect"
assert (r.w, r.h, r.name) == (3, 4, "rect")  # own fields and the parent's
assert r.area() == 12 and g["area"](r) == 12  # a method; the object back into a tvm-ffi call
r.w = 10  # a writable field, written through tvm-ffi's setter
assert r.w == 10 and g["area"](r) == 40
r.name = "wide"
assert g["echo"](r).name == "wide"
try:
    r.h = 1
except AttributeError:
    pass
else:
    raise AssertionError("a read-only field was written")
try:
    r.w = "x"
except TypeError as e:
    assert "int" in str(e), e
else:
    raise AssertionError("a str went into an int field")
assert pf.structural_equal(g["make_rect"](1, 2), g["make_rect"](1, 2))
assert not pf.structural_equal(g["make_rect"](1, 2), g["make_rect"](1, 3))
import pickle
try:
    pickle.dumps(r)
    pickle.loads(pickle.dumps(r))
except TypeError:
    pass  # the constructor does not take every field: refused cleanly
else:
    raise AssertionError("a Rect round-tripped through a constructor of two arguments")
print(repr(r))
"""
    )
    out = run_child(lib, code=code)
    assert "pf_tvm_obj.Rect" in out, out


def test_identity_and_references(lib):
    _check(
        lib,
        """
r = g["make_rect"](2, 5)
assert g["same"](r, r)
assert g["same"](g["echo"](r), r)  # the same tvm-ffi object, not a copy
pair = g["in_array"](r)  # inside a tvm-ffi Array, then a packedfun one
assert len(pair) == 2 and g["same"](pair[0], r) and g["same"](pair[1], r)
assert g["same"](g["first"]([r, 1]), r)  # a packedfun list element going into tvm-ffi
assert g["same"](g["call_back"](lambda o: o, r), r)  # through a packedfun callback and back
assert g["call_back"](lambda o: o.area(), r) == 10
assert g["live"]() == 1
del r, pair
gc.collect()
assert g["live"]() == 0, g["live"]()  # freed once the last holder on either side let go
""",
    )


def test_identity_kept_while_alive(lib):
    # A tvm-ffi object that crosses again while its wrapper lives comes back as that wrapper.
    _check(
        lib,
        """
r = g["make_rect"](2, 5)
assert g["echo"](r) is r
pair = g["in_array"](r)
assert pair[0] is r and pair[1] is r
assert g["first"]([r, 1]) is r
seen = []
assert g["call_back"](lambda o: seen.append(o) or o, r) is r
assert seen[0] is r  # the callback's argument too
assert r.same_as(g["echo"](r)) and r.is_(g["echo"](r))
fresh = g["in_array"](g["make_rect"](1, 1))  # no wrapper in between: one object all the same
assert fresh[0] is fresh[1] and fresh[0].same_as(fresh[1])
del r, pair, seen, fresh
gc.collect()
assert g["live"]() == 0, g["live"]()
again = g["make_rect"](3, 3)  # objects made after the old ones died: new wrappers, kept too
assert g["echo"](again) is again and g["echo"](again).w == 3
""",
    )


def test_tensor_view_to_callback(lib):
    _check(
        lib,
        """
import numpy as np
view = pf.get_global_func("pf_tvm_obj.call_with_view")
x = np.arange(6, dtype="float32").reshape(2, 3)
assert view(lambda t, k: (tuple(t.shape), str(t.dtype), k), x) == ((2, 3), "float32", 7)
assert view(lambda t, k: float(np.from_dlpack(t)[1, 2]), x) == 5.0  # the caller's data
""",
    )


def test_environment_of_the_tvm_ffi_host(lib):
    # tvm-ffi code (a framework's handler) installs its stream and allocator in tvm-ffi's
    # environment and calls a packedfun Function it was given: packedfun code reads that stream
    # and allocates from that allocator (nothing set in packedfun's own).
    _check(
        lib,
        """
import packedfun.testing
with_env = pf.get_global_func("pf_tvm_obj.with_env")
env_stream = pf.get_global_func("testing.env_stream")
env_ones = pf.get_global_func("testing.env_ones")
def body():
    t = env_ones(4)  # C++ Tensor::FromEnvAlloc
    assert list(t.shape) == [4]
    return [pf.current_stream("cpu:0"), env_stream(pf.device("cpu", 0))]
(streams, allocs) = with_env(body, 0xABC)
assert list(streams) == [0xABC, 0xABC] and allocs == 1, (streams, allocs)
assert pf.current_stream("cpu:0") == 0  # tvm-ffi's settings ended with the call
(streams, allocs) = with_env(lambda: [env_stream(pf.device("cpu", 0))], 7)
assert list(streams) == [7] and allocs == 0
""",
    )


def test_register_object_and_constructor(lib):
    _check(
        lib,
        """
@pf.register_object("pf_tvm_obj.Shape")
class Shape(pf.Object):
    pass

@pf.register_object("pf_tvm_obj.Rect")
class Rect(Shape):
    def double(self):
        return self.area() * 2

r = Rect(2, 3)  # tvm-ffi's refl::init, as the constructor
assert type(r) is Rect and isinstance(r, Shape) and r.double() == 12
made = g["make_rect"](1, 1)
assert type(made) is Rect and g["area"](made) == 1
try:
    Rect("a", 1)
except TypeError as e:
    assert "int" in str(e), e
else:
    raise AssertionError("the constructor took a str")
try:
    pf.register_object("pf_tvm_obj.NoSuchType")(type("X", (pf.Object,), {}))
except KeyError:
    pass
else:
    raise AssertionError("an unknown type key was registered")
del r, made
gc.collect()
assert g["live"]() == 0
""",
    )


def test_module_returned_and_passed_back(lib):
    _check(
        lib,
        """
raw = pf.get_global_func("pf_tvm_obj.load_module")(sys.argv[1])  # tvm-ffi's loader, its Module
assert raw.type_key == "packedfun.Module", raw.type_key  # a packedfun Module object
m = pf.Module(raw)
assert m.triple(3) == 9 and m["triple"](4) == 12
assert pf.get_global_func("pf_tvm_obj.module_call")(raw, "triple", 5) == 15  # back as itself
assert pf.get_global_func("pf_tvm_obj.module_call")(m.handle, "triple", 6) == 18
assert pf.get_global_func("pf_tvm_obj.module_call")(m, "triple", 7) == 21  # the wrapper too
try:
    m.no_such_function
except AttributeError:
    pass
else:
    raise AssertionError("a missing function was found")
""",
    )


def test_packedfun_object_refused(lib):
    # An object of packedfun's own reflection has no tvm-ffi counterpart: TypeError naming it.
    code = (
        _PRELUDE
        + """
import packedfun.testing
obj = pf.get_global_func("testing.make_more_derived")(1, "a", 2.0)
try:
    g["echo"](obj)
except TypeError as e:
    print("TypeError:", e)
"""
    )
    out = run_child(lib, code=code)
    assert out.startswith("TypeError:") and "has no tvm-ffi equivalent" in out, out


_LEAK = """
import gc, sys, tracemalloc
import packedfun as pf
pf.load_module(sys.argv[1])
n = int(sys.argv[2])
g = {k: pf.get_global_func("pf_tvm_obj." + k) for k in
     ("make_rect", "area", "echo", "live", "in_array", "first", "call_back")}
def one(i):
    r = g["make_rect"](i, 2)                 # tvm-ffi -> packedfun
    assert g["area"](r) == 2 * i             # packedfun -> tvm-ffi
    assert g["echo"](r).w == i               # both ways, and a field read
    assert len(g["in_array"](r)) == 2        # inside containers
    assert g["first"]([r]).h == 2
    assert g["call_back"](lambda o: o, r).w == i  # through a callback
    r.w = i + 1
for i in range(200):
    one(i)
gc.collect()
tracemalloc.start()
base = tracemalloc.get_traced_memory()[0]
for i in range(n):
    one(i)
gc.collect()
grown = tracemalloc.get_traced_memory()[0] - base
assert g["live"]() == 0, g["live"]()
assert grown < 64 * 1024, grown
print("ok")
"""


def test_mixed_crossings_do_not_leak(lib):
    # Six crossings per round: 100,000 and more in the full run.
    rounds = 17_000 if suite.FULL else 1_000
    assert run_child(lib, str(rounds), code=_LEAK, timeout=600).strip() == "ok"


_FAKE_TVM_FFI = r"""
typedef struct { unsigned major, minor, patch; } V;
void TVMFFIGetVersion(V* v) { v->major = 0; v->minor = 9; v->patch = 3; }
"""

_KERNEL = r"""
extern void TVMFFIGetVersion(void*);
int __tvm_ffi_f(void* s, const void* a, int n, void* r) { (void)s; (void)a; (void)n; (void)r;
  return 0; }
void* keep = (void*)&TVMFFIGetVersion;
"""


def test_wrong_abi_version_refused(tmp_path):
    cc = os.environ.get("CC", "cc")
    (tmp_path / "fake.c").write_text(_FAKE_TVM_FFI)
    (tmp_path / "kernel.c").write_text(_KERNEL)
    fake = tmp_path / "libtvm_ffi.so"
    kernel = tmp_path / "kernel.so"
    for cmd in (
        [cc, "-shared", "-fPIC", "-Wl,-soname,libtvm_ffi.so", "fake.c", "-o", str(fake)],
        [cc, "-shared", "-fPIC", "kernel.c", "-L.", "-ltvm_ffi", "-o", str(kernel)],
    ):
        subprocess.run(cmd, cwd=tmp_path, check=True, capture_output=True)
    code = """
import sys, packedfun as pf
try:
    pf.load_module(sys.argv[1])
except OSError as e:
    print("OSError:", e)
"""
    out = run_child(str(kernel), code=code, PACKEDFUN_TVM_FFI_LIBRARY=str(fake))
    assert out.startswith("OSError:"), out
    assert "0.9.3" in out and "0.1" in out, out
