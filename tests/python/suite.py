# Which run of the suite this is (quick or full) and what a test may skip: read here, nowhere else.
"""The one place the suite's run-wide switches are read (``docs/testing.md``).

* ``PACKEDFUN_TEST_FULL=1`` makes the full run (what ``.ci/run`` runs): it adds the ctypes re-run,
  the second-Python run, the sanitized runs, the cluster (Dask) tests and the larger fuzz and soak
  sizes to the quick run, which is the default. ``PACKEDFUN_SOAK=full`` asks for the long soak
  sizes, which neither run makes by default. A heavy test marks itself ``@suite.full_only(why)``;
  the quick run deselects it and lists it, with ``why``, at the end.
* In the full run, and in CI (``CI=true``), a test may skip only for a reason in ``ALLOWED_SKIPS``;
  any other skip is turned into a failure by ``conftest.py`` (a missing package of the ``test``
  extra, a runtime dependency, a tool the README's set-up provides). The quick run may skip; it
  prints each reason at the end. ``require(module)`` is the import a test uses instead of
  ``pytest.importorskip``: its failure names the package to install.
* A test whose whole work is a child run of the suite (the ctypes re-run, the second Python) marks
  itself ``@suite.alongside(why)``: it runs in a child pytest started as soon as collection ends,
  beside the rest of the run (a 2-core machine has a core to spare for most of it), and the test
  takes the child's outcome at the end of the run (``conftest.py``).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

__all__ = [
    "ALLOWED_SKIPS",
    "ALONGSIDE_CHILD",
    "FULL",
    "IN_CI",
    "CTYPES_REMAINDER",
    "LONG_SOAK",
    "SANITIZE_MODE",
    "STRICT",
    "allowed_skip",
    "alongside",
    "full_only",
    "require",
]


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes")


#: The full run (PACKEDFUN_TEST_FULL=1); its re-runs (ctypes, second Python, sanitized) inherit it.
FULL = _flag("PACKEDFUN_TEST_FULL")
#: Running in CI (CI=true, which .ci/run sets).
IN_CI = _flag("CI")
#: The long soak sizes (PACKEDFUN_SOAK=full: 10 million calls, a million errors, a million-deep
#: structure): minutes a test, so no run makes them unless asked, not even the full run.
LONG_SOAK = os.environ.get("PACKEDFUN_SOAK", "").strip().lower() == "full"
#: A skip outside ALLOWED_SKIPS fails the test.
STRICT = FULL or IN_CI
#: PACKEDFUN_SANITIZE: "0" turns the full run's sanitized run off, "1" (or "all") adds it to the
#: quick run, "subset" runs the runner's short subset instead of the whole suite.
SANITIZE_MODE = os.environ.get("PACKEDFUN_SANITIZE", "").strip().lower()
#: In the ctypes re-run: only the tests that the sanitized run's ctypes pass does not run
#: (PACKEDFUN_CTYPES_REMAINDER=1, set by the main run when `sanitized_run_covers_ctypes()`).
CTYPES_REMAINDER = _flag("PACKEDFUN_CTYPES_REMAINDER")

REPO = Path(__file__).resolve().parents[2]

# The only reasons a test may skip in the full run and in CI: the reason text must match the
# pattern. Everything the README's set-up installs (the `test` extra, the runtime dependencies, a
# C/C++ compiler, gcc's sanitizer runtimes) is required there.
ALLOWED_SKIPS: dict[str, str] = {
    "no CUDA GPU (or no CUDA toolkit) on this machine": r"\bno CUDA (GPU|device)\b|\bnvcc\b",
    "a platform that is not this one (OS, Python implementation or version)": r"^platform: ",
    "a package the test extra does not install on this Python (a marker in pyproject.toml)": (
        r"^not in the test extra on this Python: "
    ),
    "an optional compiler the README does not ask for (clang)": r"^optional compiler: ",
}


def allowed_skip(reason: str) -> str | None:
    """The entry of ``ALLOWED_SKIPS`` that admits a skip with this reason, or None."""
    for why, pattern in ALLOWED_SKIPS.items():
        if re.search(pattern, reason):
            return why
    return None


def sanitized_run_planned() -> bool:
    """Whether this run drives the sanitized run of the whole suite (test_sanitized_suite.py):
    the full run, or PACKEDFUN_SANITIZE=1 in a quick one; never with PACKEDFUN_SANITIZE=0 or
    =subset. Whether it can run (gcc's sanitizer runtimes) is that test's to check."""
    if SANITIZE_MODE in ("0", "subset"):
        return False
    return FULL or SANITIZE_MODE in ("1", "all")


def sanitized_run_covers_ctypes() -> bool:
    """Whether the sanitized run this run drives will run the whole suite on the ctypes backend
    too, so that the plain ctypes re-run need only run what that pass leaves out. When it
    cannot run (no sanitizer runtime, not a source checkout) the full run fails on its skip, so
    the ctypes re-run's narrowing never hides a test silently; it is not narrowed then anyway."""
    if not sanitized_run_planned():
        return False
    if os.environ.get("PACKEDFUN_SANITIZE_BACKEND", "") not in ("", "ctypes"):
        return False
    runner = _sanitize_runner()
    return runner.asan_runtime() is not None and (REPO / "CMakeLists.txt").is_file()


def _sanitize_runner() -> ModuleType:
    """tests/sanitize/run.py, imported once (its lists of what each pass leaves out)."""
    name = "packedfun_tests_sanitize_run"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "tests" / "sanitize" / "run.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


#: Test files whose behaviour or sizes change under the sanitizers (they read
#: PACKEDFUN_SANITIZE_PRELOAD or LD_PRELOAD): the plain ctypes re-run keeps them whole, as
#: test_sanitized_suite.py checks.
SANITIZER_SENSITIVE = {
    "test_gc_cycles.py": "its append race runs 6,000 times plain, 1,200 under the sanitizers",
    "test_object_names.py": "its child runs on pymalloc's debug hooks plain, malloc's sanitized",
    "test_soak.py": "its sizes, and its growth checks (which the sanitizers' memory would blur)",
    "test_structural_toolkit.py": "its deep chain (shallower under the sanitizers)",
    "test_tvm_ffi_kernels.py": "its 100,000-call growth check (10,000 calls, unchecked, sanitized)",
}


def in_sanitized_ctypes_pass(item: pytest.Item) -> bool:
    """Whether the sanitized run's ctypes pass runs this test as the plain ctypes re-run would:
    not a file or test its runner leaves out (on every backend or on ctypes), not a file of
    SANITIZER_SENSITIVE, not a test of the installed package's files (the sanitized passes run a
    staged copy, so they deselect it)."""
    if item.path.parent != REPO / "tests" / "python":  # a generated suite of a test's child
        return False
    runner = _sanitize_runner()
    name = item.path.name
    if name in runner.EXCLUDED or name in runner.EXCLUDED_ON.get("ctypes", {}):
        return False
    if name in SANITIZER_SENSITIVE:
        return False
    if f"{name}::{getattr(item, 'originalname', item.name)}" in runner.DESELECTED:
        return False
    marks = item.iter_markers("deselect_if")
    return not any(mark.kwargs.get("reason") == NOT_IN_SITE_DIR for mark in marks)


def full_only(reason: str) -> pytest.MarkDecorator:
    """Marks a test of the full run only; the quick run deselects it and says why at the end."""
    return pytest.mark.deselect_if(
        not FULL, reason=f"full run only (PACKEDFUN_TEST_FULL=1): {reason}"
    )


#: In the child pytest that runs one ``alongside`` test for the main run: that test's node id.
ALONGSIDE_CHILD = os.environ.get("PACKEDFUN_ALONGSIDE_CHILD", "")


def alongside(reason: str) -> pytest.MarkDecorator:
    """Marks a long test that only drives a child run of the suite: the run starts it in a child
    pytest when collection ends, beside the other tests, and reports its outcome at the end."""
    return pytest.mark.alongside(reason=reason)


def _extra_markers() -> dict[str, str]:
    """Distribution name -> environment marker, for the `test` extra's requirements with one."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11 cannot run the suite anyway (requires-python)
        return {}
    pyproject = REPO / "pyproject.toml"
    if not pyproject.is_file():
        return {}
    extra = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]["test"]
    found = {}
    for requirement in extra:
        spec, _, marker = requirement.partition(";")
        if marker.strip():
            found[re.split(r"[\s<>=!~\[]", spec.strip(), maxsplit=1)[0].lower()] = marker.strip()
    return found


def _marker_holds(marker: str) -> bool:
    from packaging.markers import Marker  # pytest depends on packaging

    return Marker(marker).evaluate()


# import name -> distribution name, where they differ
_DISTRIBUTIONS = {"tvm_ffi": "apache-tvm-ffi", "elftools": "pyelftools", "yaml": "pyyaml"}


def require(module: str) -> ModuleType:
    """Imports `module` for a test. When it cannot be imported: if the test extra leaves its
    package out on this Python (an environment marker), the test skips (an allowed reason);
    otherwise it skips with the package's name in the quick run and fails, naming the package, in
    the full run and in CI."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        top = module.split(".")[0]
        dist = _DISTRIBUTIONS.get(top, top)
        marker = _extra_markers().get(dist.lower())
        if marker is not None and not _marker_holds(marker):
            pytest.skip(
                f"not in the test extra on this Python: {dist} ({marker}; "
                f"Python {sys.version.split()[0]})",
                allow_module_level=True,
            )
        message = (
            f"{module} cannot be imported ({err}): install {dist} (pip install '.[test]' brings it)"
        )
        if STRICT:
            pytest.fail(message, pytrace=False)
        pytest.skip(message, allow_module_level=True)


#: Why a test of the installed package's files cannot run here (see `packedfun_in_site_dir`).
NOT_IN_SITE_DIR = (
    "packedfun is not installed in a site directory (a dev tree on PYTHONPATH, the sanitized "
    "run's staged copy): no .pth file or console script of it exists"
)


def packedfun_in_site_dir() -> bool:
    """True when the packedfun under test is pip-installed (its parent folder is one of this
    Python's site directories), so its .pth file and console scripts exist."""
    import importlib.util
    import site

    spec = importlib.util.find_spec("packedfun")
    if spec is None or not spec.origin:
        return False
    parent = os.path.dirname(os.path.dirname(os.path.abspath(spec.origin)))
    dirs = [*site.getsitepackages(), site.getusersitepackages()]
    return any(os.path.isdir(d) and os.path.samefile(parent, d) for d in dirs)
