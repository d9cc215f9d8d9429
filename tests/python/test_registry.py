# Tests of the global registry from Python: lookup, registration forms, override, init_ffi_api.
import gc
import subprocess
import sys
import threading
import types
import weakref

import packedfun
import pytest
from packedfun import testing


def test_get_global_func_missing():
    with pytest.raises(ValueError, match="test_registry.does_not_exist"):
        packedfun.get_global_func("test_registry.does_not_exist")
    assert packedfun.get_global_func("test_registry.does_not_exist", allow_missing=True) is None


def test_register_as_call_returns_function():
    def f(x):
        return x + 1

    try:
        assert packedfun.register_global_func("test_registry.call_form", f) is f
        assert packedfun.get_global_func("test_registry.call_form")(1) == 2
    finally:
        packedfun.remove_global_func("test_registry.call_form")


def test_register_as_named_decorator_keeps_doc():
    try:

        @packedfun.register_global_func("test_registry.named")
        def named(x):
            """Doubles x."""
            return 2 * x

        assert named(2) == 4  # the decorator returns the Python function
        assert packedfun.get_global_func("test_registry.named")(3) == 6
        assert testing.call_global("test_registry.named", 4) == 8
    finally:
        packedfun.remove_global_func("test_registry.named")


def test_register_as_bare_decorator_uses_name():
    try:

        @packedfun.register_global_func
        def test_registry_bare():
            return "bare"

        assert packedfun.get_global_func("test_registry_bare")() == "bare"
    finally:
        packedfun.remove_global_func("test_registry_bare")


def test_register_func_alias():
    assert packedfun.register_func is packedfun.register_global_func


def test_override():
    name = "test_registry.override"
    try:
        packedfun.register_global_func(name, lambda: 1)
        with pytest.raises(ValueError, match=name):
            packedfun.register_global_func(name, lambda: 2)
        assert packedfun.get_global_func(name)() == 1
        packedfun.register_global_func(name, lambda: 3, override=True)
        assert packedfun.get_global_func(name)() == 3
    finally:
        packedfun.remove_global_func(name)


def test_lookups_by_name_follow_changes_and_release_removed_functions():
    # C++ lookups by name are cached per thread: overrides and removals must show at once, from
    # every thread, and a removed callable must not be kept alive by the cache.
    name = "test_registry.cached"

    class Body:
        def __init__(self, value):
            self.value = value

        def __call__(self):
            return self.value

    first, second = Body(1), Body(2)
    ref = weakref.ref(first)
    try:
        packedfun.register_global_func(name, first)
        assert [testing.call_global(name) for _ in range(3)] == [1, 1, 1]
        packedfun.register_global_func(name, second, override=True)
        assert testing.call_global(name) == 2
        del first
        gc.collect()
        assert ref() is None
        # Another thread looks the function up, then stays alive and idle: removing the function
        # must free it at once all the same.
        seen = []
        looked_up, finish = threading.Event(), threading.Event()

        def worker_body():
            seen.extend(testing.call_global(name) for _ in range(3))
            looked_up.set()
            finish.wait(300)

        worker = threading.Thread(target=worker_body)
        worker.start()
        try:
            assert looked_up.wait(300)  # a hang guard, generous for a loaded machine
            assert seen == [2, 2, 2]
            ref2 = weakref.ref(second)
            del second
            assert packedfun.remove_global_func(name)
            gc.collect()
            assert ref2() is None
            assert worker.is_alive()
        finally:
            finish.set()
            worker.join()
    finally:
        packedfun.remove_global_func(name)
    with pytest.raises(ValueError, match=name):
        testing.call_global(name)


def test_register_existing_function_under_new_name():
    try:
        packedfun.register_global_func("test_registry.echo2", testing.echo)
        assert packedfun.get_global_func("test_registry.echo2").same_as(testing.echo)
    finally:
        packedfun.remove_global_func("test_registry.echo2")


def test_register_rejects_bad_input():
    with pytest.raises(TypeError):
        packedfun.register_global_func("test_registry.bad", 42)
    with pytest.raises(TypeError):
        packedfun.register_global_func(42, lambda: None)


def test_list_and_remove():
    name = "test_registry.listed"
    packedfun.register_global_func(name, lambda: None)
    names = packedfun.list_global_func_names()
    assert name in names and "testing.echo" in names
    assert names == sorted(names)
    assert packedfun.remove_global_func(name) is True
    assert packedfun.remove_global_func(name) is False
    assert name not in packedfun.list_global_func_names()


def test_init_ffi_api_fills_module():
    registered = ["test_ffi_api.alpha", "test_ffi_api.beta", "test_ffi_api.sub.gamma"]
    module = types.ModuleType("test_ffi_api_module")
    sys.modules[module.__name__] = module
    try:
        packedfun.register_global_func(registered[0], lambda: "a")

        def beta():
            """The beta docstring."""
            return "b"

        packedfun.register_global_func(registered[1], beta)
        packedfun.register_global_func(registered[2], lambda: "g")
        packedfun.init_ffi_api("test_ffi_api", module.__name__)
        assert module.alpha() == "a" and module.beta() == "b"
        assert not hasattr(module, "gamma") and not hasattr(module, "sub")
        assert module.alpha.__name__ == "alpha"
        # The signature line from the function's metadata, then its docstring.
        assert module.beta.__doc__ == "beta() -> Any\n\nThe beta docstring."
        assert "test_ffi_api.alpha" in module.alpha.__doc__
    finally:
        del sys.modules[module.__name__]
        for name in registered:
            packedfun.remove_global_func(name)


def test_testing_module_exposes_functions():
    for name in ["echo", "apply", "nop", "test_raise_error", "add_int", "call_global"]:
        assert isinstance(getattr(testing, name), packedfun.Function)
    assert testing.echo.__name__ == "echo"


def test_lazy_namespace_loads_once_on_first_miss(monkeypatch):
    from packedfun import _lazy

    monkeypatch.setattr(_lazy, "_LOADERS", dict(_lazy._LOADERS))
    monkeypatch.setattr(_lazy, "_STATE", dict(_lazy._STATE))
    calls = []

    def loader():
        calls.append(1)
        packedfun.register_global_func("test_lazy_ns.twice", lambda x: 2 * x, override=True)

    packedfun.register_lazy_namespace("test_lazy_ns", loader)
    packedfun.register_lazy_namespace("test_lazy_ns", loader)  # the same loader again: fine
    try:
        assert calls == []
        assert packedfun.get_global_func("test_lazy_ns.twice")(21) == 42
        assert packedfun.get_global_func("test_lazy_ns.absent", allow_missing=True) is None
        with pytest.raises(ValueError, match="test_lazy_ns.absent"):
            packedfun.get_global_func("test_lazy_ns.absent")
        assert calls == [1]  # run once, on the first miss only
        assert packedfun.get_global_func("test_lazy_nsx.f", allow_missing=True) is None
    finally:
        packedfun.remove_global_func("test_lazy_ns.twice")


def test_lazy_namespace_loader_failures(monkeypatch):
    from packedfun import _lazy

    monkeypatch.setattr(_lazy, "_LOADERS", dict(_lazy._LOADERS))
    monkeypatch.setattr(_lazy, "_STATE", dict(_lazy._STATE))
    calls = []

    def unavailable():
        calls.append("unavailable")
        raise ImportError("no such library")

    packedfun.register_lazy_namespace("test_lazy_gone", unavailable)
    assert packedfun.get_global_func("test_lazy_gone.f", allow_missing=True) is None
    assert packedfun.get_global_func("test_lazy_gone.g", allow_missing=True) is None
    assert calls == ["unavailable"]  # an unavailable library is not looked for again

    def broken():
        calls.append("broken")
        raise RuntimeError("loader bug")

    packedfun.register_lazy_namespace("test_lazy_broken", broken)
    for _ in range(2):  # a loader that fails otherwise raises, and runs again on the next miss
        with pytest.raises(RuntimeError, match="loader bug"):
            packedfun.get_global_func("test_lazy_broken.f")
    assert calls == ["unavailable", "broken", "broken"]


def test_lazy_namespace_rejects_bad_input():
    with pytest.raises(TypeError, match="must be a str"):
        packedfun.register_lazy_namespace(1, lambda: None)
    with pytest.raises(ValueError, match="not a namespace"):
        packedfun.register_lazy_namespace("a.b", lambda: None)
    with pytest.raises(ValueError, match="not a namespace"):
        packedfun.register_lazy_namespace("", lambda: None)
    with pytest.raises(TypeError, match="not callable"):
        packedfun.register_lazy_namespace("test_lazy_x", 3)
    with pytest.raises(ValueError, match="already has a loader"):
        packedfun.register_lazy_namespace("testing", lambda: None)


def test_registry_names_no_namespace_of_its_own():
    # The registry's lookups know nothing of "testing.": the package declares it as a lazy
    # namespace like any other.
    import inspect

    from packedfun import _enum, _lazy, object, registry

    for module in (registry, object, _enum, _lazy):
        code = "\n".join(
            line for line in inspect.getsource(module).splitlines() if "``" not in line
        )  # docstrings' examples aside
        assert "testing" not in code.replace("packedfun.testing", ""), module.__name__


def test_bare_import_then_testing_names(tmp_path):
    # A bare `import packedfun` opens no library, yet testing.* functions, object types and
    # enums are found, and packedfun.testing is an attribute.
    code = (
        "import sys, packedfun\n"
        "assert 'packedfun.testing' not in sys.modules\n"
        "assert packedfun.get_global_func('testing.echo')(5) == 5\n"
        "assert 'packedfun.testing' in sys.modules\n"
        "assert packedfun.testing.TestIntPair(1, 2).sum() == 3\n"
        "print('ok')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr
