# Libraries built for Apache TVM FFI, loaded and called by packedfun without importing tvm_ffi.
"""The kernel library (fixtures/tvm_ffi_kernels.cc) is built with ``tvm_ffi.cpp.build_inline`` in a
child process and cached on disk by source and tvm-ffi version. Every call runs in a child process
(a crash or hang fails one test), on the backend under test (``PACKEDFUN_BACKEND``)."""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

import pytest
import suite

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SOURCE = os.path.join(HERE, "fixtures", "tvm_ffi_kernels.cc")
CTX_SOURCE = os.path.join(HERE, "fixtures", "tvm_ffi_ctx_kernels.cc")
CASES = os.path.join(HERE, "fixtures", "tvm_ffi_cases.py")

if importlib.util.find_spec("tvm_ffi") is None:  # not imported here: the kernels run in children
    suite.require("tvm_ffi")
suite.require("numpy")

_BUILD = """
import sys
import tvm_ffi.cpp
src, name, out_dir = sys.argv[1], sys.argv[2], sys.argv[3]
print(tvm_ffi.cpp.build_inline(name, cpp_sources=open(src).read(),
      build_directory=out_dir, extra_cflags=["-DTVM_FFI_DLL_EXPORT_INCLUDE_METADATA=1"]))
"""


def build_library(source: str, name: str) -> str:
    """A kernel library's path, built once per source and tvm-ffi version (atomic publish)."""
    version = importlib.metadata.version("apache-tvm-ffi")
    with open(source, "rb") as f:
        key = hashlib.sha256(f.read() + version.encode()).hexdigest()[:16]
    out_dir = os.path.join(tempfile.gettempdir(), f"pf_test_tvm_ffi_{os.getuid()}_{key}")
    lib = os.path.join(out_dir, f"{name}.so")
    if os.path.exists(lib):
        return lib
    work = tempfile.mkdtemp(prefix="pf_tvm_build_")
    proc = subprocess.run([sys.executable, "-c", _BUILD, source, name, work], capture_output=True,
                          text=True, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    os.makedirs(out_dir, exist_ok=True)
    os.replace(os.path.join(work, f"{name}.so"), lib)
    return lib


@pytest.fixture(scope="session")
def lib() -> str:
    return build_library(SOURCE, "pf_tvm_kernels")


def _env(**extra) -> dict:
    env = dict(os.environ)
    # The packedfun under test (installed, or the dev tree's python/), found without importing it.
    spec = importlib.util.find_spec("packedfun")
    origin = spec.origin if spec is not None and spec.origin else None
    parent = os.path.dirname(os.path.dirname(origin)) if origin else os.path.join(ROOT, "python")
    env["PYTHONPATH"] = os.pathsep.join([parent] + [p for p in [env.get("PYTHONPATH")] if p])
    env.update(extra)
    return env


def run_child(*args: str, code: str | None = None, timeout: int = 300, **env) -> str:
    cmd = [sys.executable, "-c", code, *args] if code is not None else [sys.executable, *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=_env(**env))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return proc.stdout


@pytest.fixture(scope="session")
def tvm_results(lib) -> dict:
    """Every case called through tvm_ffi itself (the reference)."""
    return json.loads(run_child(CASES, "tvm_ffi", lib))


def test_every_result_matches_tvm_ffi(lib, tvm_results):
    ours = json.loads(run_child(CASES, "packedfun", lib))
    assert ours.pop("tvm_ffi_imported") is False  # packedfun never imported tvm_ffi
    assert tvm_results.pop("tvm_ffi_imported") is True
    assert ours.keys() == tvm_results.keys()
    mismatched = {k: (ours[k], tvm_results[k]) for k in ours if ours[k] != tvm_results[k]}
    assert not mismatched
    # The cases really ran (not two identical lists of errors).
    assert ours["add"] == 3 and ours["add_one_cpu"] == {"tensor": [1.0, 2, 3, 4, 5, 6]}
    assert ours["concat_nul"] == "a\0bc\0d long enough"
    assert ours["fail"] == {"error": "ValueError", "message": "boom"}
    assert ours["counts"] == {"map": [["a", 2], ["a longer word", 2], ["b", 1]]}


def test_memory_stays_flat_over_100000_mixed_calls(lib):
    sanitized = bool(os.environ.get("PACKEDFUN_SANITIZE_PRELOAD"))
    calls = "10000" if sanitized else "100000"  # the child's leak check at exit covers them
    out = json.loads(run_child(CASES, "packedfun", lib, "memory", calls))
    assert out["tvm_ffi_imported"] is False
    # Under AddressSanitizer freed memory waits in its quarantine, so RSS grows by design: there
    # the child's leak check at exit (LeakSanitizer, which fails the child) checks these calls.
    assert sanitized or out["growth_kib"] < 2048, out


_BEHAVIOUR = """
import sys, ctypes, traceback
import numpy as np
import packedfun as pf
import packedfun.testing  # noqa: F401 (registers testing.apply, a C++ caller)
m = pf.load_module(sys.argv[1])
assert isinstance(m.add, pf.Function)
assert m.add.__doc__ == "add(arg0: int, arg1: int) -> int\\n\\nAdds two integers."
# The exported type schema is the Function's metadata: signatures, keywords, type names.
import inspect
assert str(inspect.signature(m.counts)) == "(arg0: 'Array[str]') -> 'Map[str, int]'"
assert str(inspect.signature(m.add_one_cpu)) == "(arg0: 'Tensor', arg1: 'Tensor') -> 'None'"
assert str(inspect.signature(m.echo_device)) == "(arg0: 'Device') -> 'Device'"
assert m.add(arg1=2, arg0=40) == 42 and m.scale(2.0, arg1=1.5) == 3.0
try:
    m.add(1, b=2)
except TypeError as e:
    assert "unexpected keyword argument 'b'" in str(e), str(e)
else:
    raise AssertionError("no TypeError")
assert "add" in m and "no_such_function" not in m
# An ordinary Function: the registry, C++ callers (testing.apply) and callbacks.
pf.register_global_func("tvmk.add", m.add, override=True)
assert pf.get_global_func("tvmk.add")(40, 2) == 42
assert pf.get_global_func("testing.apply")(m.add, 1, 2) == 3
assert m.call_twice(m.make_adder(5), 0) == 10
# A Python exception raised in a callback comes back as the same exception object.
class Custom(Exception):
    pass
err = Custom("from the callback")
def raiser(v):
    raise err
try:
    m.call_twice(raiser, 1)
except Custom as e:
    assert e is err
else:
    raise AssertionError("no error")
# Errors: the right type, the kernel's message and backtrace.
try:
    m.fail("kernel message")
except ValueError as e:
    text = "".join(traceback.format_exception(e))
    assert "kernel message" in str(e)
    assert "Fail" in text, text
# A value with no tvm-ffi equivalent: TypeError naming the function and the value's type.
for bad in (object(), pf.Error("x") if hasattr(pf, "Error") else object()):
    try:
        m.echo(bad)
    except TypeError as e:
        assert "echo" in str(e) and "no tvm-ffi equivalent" in str(e), str(e)
    else:
        raise AssertionError("no TypeError")
# Wrong argument types are tvm-ffi's own TypeError.
try:
    m.add("x", 1)
except TypeError as e:
    assert "add" in str(e)
# Tensors: packedfun.Tensor and NumPy views, a Tensor (object) parameter, results.
x = np.arange(8, dtype=np.float32)
t = pf.from_dlpack(x)
y = np.zeros(8, dtype=np.float32)
m.add_one_cpu(t, y)
assert (y == x + 1).all()
assert tuple(m.shape_of(x[::2])) == (4,)  # a strided view reaches the kernel zero-copy
assert m.tensor_numel(x) == 8 and m.tensor_numel(t) == 8
r = m.arange(3)
assert isinstance(r, pf.Tensor) and np.from_dlpack(r).tolist() == [0.0, 1.0, 2.0]
assert tuple(m.shape_of(np.zeros((2, 5), np.float32))) == (2, 5)
# Containers come back as packedfun containers.
assert isinstance(m.range(3), pf.Array) and list(m.range(3)) == [0, 1, 2]
assert isinstance(m.counts(["a"]), pf.Map)
assert m.echo(pf.Dict({"a": 1}))["a"] == 1
assert m.echo(pf.Shape([1, 2])) == pf.Shape([1, 2]) or tuple(m.echo(pf.Shape([1, 2]))) == (1, 2)
assert m.echo_device(pf.device("cpu", 0)) == pf.device("cpu", 0)
assert m.echo_ptr(ctypes.c_void_p(77)).value == 77
assert "tvm_ffi" not in sys.modules
print("ok")
"""


def test_functions_behave_as_packedfun_functions(lib):
    assert run_child(lib, code=_BEHAVIOUR).strip().endswith("ok")


_TORCH = """
import sys, torch, packedfun as pf
m = pf.load_module(sys.argv[1])
x = torch.arange(6, dtype=torch.float32)
y = torch.zeros(6)
m.add_one_cpu(x, y)
assert torch.equal(y, x + 1)
assert m.tensor_numel(x) == 6
assert "tvm_ffi" not in sys.modules
print("ok")
"""


def test_torch_tensors(lib):
    suite.require("torch")
    assert run_child(lib, code=_TORCH).strip() == "ok"


_BACKTRACE = """
import sys, traceback
if sys.argv[2] == "tvm_ffi":
    import tvm_ffi as ffi
else:
    import packedfun as ffi
m = ffi.load_module(sys.argv[1])
try:
    m.fail_nested(3)
except ValueError as e:
    print("".join(traceback.format_exception(e)))
"""


def _kernel_frames(text: str) -> list:
    """The kernel's own frames of a rendered traceback, in the order printed."""
    return [line.split(", in ")[-1] for line in text.splitlines()
            if ", in " in line and ("FailOuter" in line or "FailInner" in line)]  # fmt: skip


def test_kernel_backtrace_is_the_kernels_own_in_python_order(lib):
    ours = run_child(lib, "packedfun", code=_BACKTRACE)
    theirs = run_child(lib, "tvm_ffi", code=_BACKTRACE)
    assert "nested 3" in ours
    # Most recent call last, as Python prints (and as tvm-ffi's own traceback shows them).
    frames = _kernel_frames(ours)
    assert len(frames) == 2 and "FailOuter" in frames[0] and "FailInner" in frames[1], ours
    assert frames == _kernel_frames(theirs), (ours, theirs)
    # Cut where packedfun called the kernel: none of packedfun's call path shows.
    native = ours.split("Native backtrace", 1)[-1]
    for machinery in ("packedfun::", "call_released", "function_vectorcall", "PFFunctionCall"):
        assert machinery not in native, ours


_MISSING = """
import sys, packedfun as pf, packedfun.module as pm
pm._find_tvm_ffi_library = lambda: None  # as if apache-tvm-ffi were not installed
try:
    pf.load_module(sys.argv[1])
except OSError as e:
    print(str(e))
else:
    print("loaded")
"""


def test_missing_libtvm_ffi_is_a_clear_oserror(lib):
    out = run_child(lib, code=_MISSING, PACKEDFUN_TVM_FFI_LIBRARY="/nonexistent/libtvm_ffi.so")
    assert "libtvm_ffi.so" in out and "pip install apache-tvm-ffi" in out
    assert "PACKEDFUN_TVM_FFI_LIBRARY" in out and "/nonexistent/libtvm_ffi.so" in out


_ENV = """
import sys, packedfun as pf, packedfun.module as pm
pm._find_tvm_ffi_library = lambda: None  # only the environment variable can find it
print(pf.load_module(sys.argv[1]).add(2, 3))
"""


def test_environment_variable_names_libtvm_ffi(lib):
    spec = importlib.util.find_spec("tvm_ffi")
    assert spec is not None and spec.submodule_search_locations
    found = os.path.join(list(spec.submodule_search_locations)[0], "lib", "libtvm_ffi.so")
    assert run_child(lib, code=_ENV, PACKEDFUN_TVM_FFI_LIBRARY=found).strip() == "5"


_CTX = """
import sys, packedfun as pf
m = pf.load_module(sys.argv[1])
assert m.ctx_is_set() is True  # tvm-ffi's own loader ran and filled the library context
assert m.twice(21) == 42 and isinstance(m.twice, pf.Function)
assert "twice" in m and "missing" not in m
assert "tvm_ffi" not in sys.modules
print("ok")
"""


def test_library_with_context_loads_through_tvm_ffi_loader():
    ctx_lib = build_library(CTX_SOURCE, "pf_tvm_ctx_kernels")
    assert run_child(ctx_lib, code=_CTX).strip() == "ok"


_ENV_MIRROR = """
import ctypes, sys
import numpy as np
import packedfun as pf

m = pf.load_module(sys.argv[1])


class Version(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32),
                ("device_id", ctypes.c_int32), ("ndim", ctypes.c_int32), ("code", ctypes.c_uint8),
                ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
NO_DELETE = DELETER(lambda p: None)


class Managed(ctypes.Structure):
    _fields_ = [("version", Version), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


KEEP = []


def fake_cuda(device_id):
    # A CUDA tensor by its metadata only (never dereferenced): the kernel reads its device.
    shape, strides, managed = (ctypes.c_int64 * 1)(4), (ctypes.c_int64 * 1)(1), Managed()
    managed.version, managed.deleter = Version(1, 0), NO_DELETE
    t = managed.dl_tensor
    t.data, t.device_type, t.device_id, t.ndim = 0x1000, 2, device_id, 1
    t.code, t.bits, t.lanes, t.shape, t.strides = 2, 32, 1, shape, strides
    KEEP.extend([shape, strides, managed])
    new = ctypes.pythonapi.PyCapsule_New
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    return pf.from_dlpack(new(ctypes.addressof(managed), b"dltensor_versioned", None))


x0, x1 = fake_cuda(0), fake_cuda(1)
cuda0 = pf.device("cuda:0")
seen = [m.tensor_stream(x0)]
with pf.use_stream("cuda:0", 0xABC0):
    seen += [m.tensor_stream(x0), m.tensor_stream(x1), m.env_stream(cuda0)]
    with pf.use_stream("cuda:1", 0xDEF0):
        seen += [m.tensor_stream(x0), m.tensor_stream(x1)]
    seen.append(m.tensor_stream(x1))
seen.append(m.tensor_stream(x0))
# tvm-ffi's own setting stands where packedfun sets nothing, and comes back after a call that
# mirrored packedfun's stream over it.
m.set_tvm_stream(cuda0, 0x77)
seen.append(m.env_stream(cuda0))
with pf.use_stream("cuda:0", 0xABC0):
    seen.append(m.env_stream(cuda0))
seen.append(m.env_stream(cuda0))
print(seen)
# The allocator: the caller's framework allocates the kernel's output (TVMFFIEnvTensorAlloc).
x = np.zeros(2, np.float32)
out = m.env_ones_like(x, 5)
assert type(out) is np.ndarray and out.tolist() == [1.0] * 5, out
try:
    import torch
except ImportError:
    torch = None
if torch is not None:
    out = m.env_ones_like(torch.zeros(2), 5)
    assert type(out) is torch.Tensor and out.tolist() == [1.0] * 5, out
try:  # no framework argument: tvm-ffi has no allocator, its error arrives as raised
    m.env_ones_like(pf.from_dlpack(x), 3)
except RuntimeError as e:
    assert "allocator" in str(e), str(e)
else:
    raise AssertionError("no error")
for _ in range(2000):  # balanced: the mirrored allocator is restored after every call
    m.env_ones_like(x, 4)
try:
    m.env_ones_like(pf.from_dlpack(x), 3)
except RuntimeError:
    pass
else:
    raise AssertionError("the allocator leaked out of a call")
assert "tvm_ffi" not in sys.modules
del x0, x1
print("ok")
"""


def test_kernels_see_packedfuns_stream_and_allocator(lib):
    out = run_child(lib, code=_ENV_MIRROR).split("\n")
    a, b = 0xABC0, 0xDEF0
    assert out[0] == str([0, a, 0, a, a, b, 0, 0, 0x77, a, 0x77])
    assert out[1] == "ok"
