# The package's layering, checked statically: no import circle across layers, no hidden imports.
"""The import graph of ``python/packedfun`` (plus what ``_core``'s C sources import), read by
``tools/layering.py`` without importing anything.

- No import circle outside one backend's own files (the ctypes backend's modules may import each
  other; nothing else may close a circle, and ``_core`` imports only modules below it).
- No function-level import of the package's own modules, except the documented lazy loads in
  ``tools/layering.py``'s ``LAZY_IMPORTS`` and the lazy-namespace hook (``_lazy.py``,
  ``__init__``'s ``__getattr__``).
- The bottom layer ``packedfun._rules`` imports nothing from the rest of the package.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def layering():
    spec = importlib.util.spec_from_file_location("_layering", ROOT / "tools" / "layering.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["_layering"] = mod  # dataclass-free, but keep the module findable while it runs
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def edges(layering):
    return layering.imports(layering.package_modules())


def test_the_graph_sees_the_compiled_bindings_imports(layering, edges):
    # Guards the test itself, so that an empty answer below means something: _core's edges come
    # from its C sources (messages.c imports the wording), function-level imports are seen (the
    # documented lazy load of the symbolizer), and a circle is found where there is one.
    assert (layering.CORE, "packedfun._rules.messages") in {(a, b) for a, b, *_ in edges}
    assert ("packedfun.error", "packedfun._native_frames", True) in {
        (a, b, flevel) for a, b, _, flevel in edges
    }
    made_up = [
        ("a", "b", 1, False),
        ("b", "c", 1, False),
        ("c", "a", 1, False),
        ("c", "d", 1, False),
    ]
    assert layering.circles(made_up) == [["a", "b", "c"]]


def test_no_import_circle_outside_one_backends_own_files(layering, edges):
    bad = [c for c in layering.circles(edges) if not layering.within_one_backend(c)]
    assert not bad, "import circles across layers:\n" + "\n".join(" ".join(c) for c in bad)


def test_no_function_level_import_of_the_package_itself(layering, edges):
    bad = layering.unexplained_function_level_imports(edges)
    assert not bad, "function-level imports (make them top-level, or document a lazy load):\n" + (
        "\n".join(f"{a}:{line} -> {b}" for a, b, line, _ in bad)
    )


def test_every_documented_lazy_import_still_exists(layering, edges):
    present = {(a, b) for a, b, _, flevel in edges if flevel}
    stale = sorted(set(layering.LAZY_IMPORTS) - present)
    assert not stale, f"LAZY_IMPORTS entries with no such import left: {stale}"


def test_the_bottom_layer_imports_nothing_of_the_package(layering, edges):
    up = [
        (a, b)
        for a, b, *_ in edges
        if a.startswith("packedfun._rules") and not b.startswith("packedfun._rules")
    ]
    assert not up, f"packedfun._rules imports modules above it: {up}"
    core_imports = sorted({b for a, b, *_ in edges if a == layering.CORE})
    assert all(b.startswith("packedfun._rules") for b in core_imports), core_imports


def test_the_compiled_binding_never_loads_the_ctypes_one():
    # Streams (and everything else) go through packedfun._backend.core: with _core in use, the
    # ctypes binding is never imported. A child process, so that nothing this run loaded counts;
    # it picks the default backend itself, so this holds in the ctypes pass too (a skip there was
    # a failure of the full run, whose skip policy allows no such reason).
    code = (
        "import sys, packedfun\n"
        "from packedfun import _backend\n"
        "assert _backend.BACKEND == '_core', _backend.BACKEND\n"
        "with packedfun.use_stream('cpu', 5):\n"
        "    assert packedfun.current_stream('cpu') == 5\n"
        "assert packedfun.current_stream('cpu') == 0\n"
        "print(sorted(m for m in sys.modules if m.startswith('packedfun._ctypes')))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PACKEDFUN_BACKEND"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_no_message_is_written_in_both_bindings(layering):
    # Every user-facing message is a template in packedfun._rules.messages. The one text left in
    # the compiled binding is error.c's fallback for when str(exception) itself failed, which
    # must not import anything (it may run while an import is what failed).
    found = layering.messages_in_two_languages()
    assert [(c, p) for c, p, _ in found] == [("error.c", "errors.py")], found
