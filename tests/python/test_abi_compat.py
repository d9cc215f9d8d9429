# A library built against the previous minor version's headers keeps working on this runtime.
"""The ABI only grows within a major version: an extension compiled against the ABI 1.4 headers
(before the cold message and metadata code moved from the headers into the runtime, ABI 1.5)
loads and runs on the current runtime, with the same metadata and the same error words as the
same source compiled against the current headers, which call the runtime's 1.5 entry points."""

from __future__ import annotations

import shutil
import subprocess
import tarfile
from pathlib import Path

import packedfun
import pytest

REPO = Path(__file__).resolve().parents[2]
#: The last commit of the ABI 1.4 headers.
ABI_1_4_COMMIT = "95063fbc78d5b6cdbba74306ba1c57541a99f2a8"
ABI_1_5_ENTRIES = (
    "PFAnyGetTypeName",
    "PFErrorSetRaisedArity",
    "PFErrorSetRaisedConversion",
    "PFErrorSetRaisedArgument",
    "PFFunctionBuildMetadata",
    "PFFunctionBuildLabel",
    "PFFunctionBuildMetadataRanges",
    "PFErrorSetRaisedAxis",
    "PFErrorNew",
    "PFErrorGetWhat",
    "PFErrorMoveToRaised",
)

SOURCE = r"""
#include <packedfun/packedfun.h>
#include <string>
using namespace packedfun::literals;
int64_t Add(int64_t a, int64_t b) { return a + b; }
std::string Greet(std::string name, int32_t times) {
  std::string out;
  for (int32_t i = 0; i < times; ++i) out += "hi " + name + ";";
  return out;
}
int64_t Check(int64_t x) {
  if (x < 0) throw packedfun::Error("ValueError", "x must not be negative");
  try {
    throw packedfun::Error("KeyError", "inner");
  } catch (const packedfun::Error& e) {
    if (std::string(e.what()) != "KeyError: inner") return -1;
  }
  return x;
}
PACKEDFUN_DLL_EXPORT_TYPED_FUNC(add, Add);
PACKEDFUN_DLL_EXPORT_TYPED_FUNC(check, Check);
PACKEDFUN_DLL_EXPORT_TYPED_FUNC(greet, Greet, "name", "times"_a = 1);
"""


def _old_headers(tmp_path: Path) -> Path:
    git = shutil.which("git")
    if git is None or not (REPO / ".git").exists():
        pytest.skip("needs the git history of a source checkout")
    archive = tmp_path / "abi_1_4.tar"
    proc = subprocess.run(
        [git, "-C", str(REPO), "archive", "-o", str(archive), ABI_1_4_COMMIT, "include",
         "third_party/dlpack/include"],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    if proc.returncode != 0:
        pytest.skip(f"the ABI 1.4 commit is not in this checkout: {proc.stderr.strip()}")
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path / "abi_1_4", filter="data")
    root = tmp_path / "abi_1_4"
    assert "PACKEDFUN_ABI_VERSION_MINOR 4" in (root / "include/packedfun/c_api.h").read_text()
    return root


def _build(tmp_path: Path, name: str, includes: list[Path]) -> Path:
    cxx = shutil.which("c++") or shutil.which("g++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    lib_dir = Path(packedfun.__file__).resolve().parent / "lib"
    src = tmp_path / f"{name}.cc"
    src.write_text(SOURCE)
    out = tmp_path / f"lib{name}.so"
    cmd = [cxx, "-std=c++17", "-O1", "-shared", "-fPIC", "-fvisibility=hidden",
           *[f"-I{d}" for d in includes], str(src), "-o", str(out), f"-L{lib_dir}", "-lpackedfun",
           f"-Wl,-rpath,{lib_dir}"]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return out


def _undefined(library: Path) -> set[str]:
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("nm not found")
    proc = subprocess.run([nm, "-D", "-u", str(library)], capture_output=True, text=True,
                          check=True)  # fmt: skip
    return {line.split()[-1] for line in proc.stdout.splitlines() if line.strip()}


def _behaviour(library: Path) -> list:
    mod = packedfun.load_module(str(library))
    # testing.apply calls from C++, past the binding's own checks of keywords and arity.
    apply = packedfun.get_global_func("testing.apply")
    seen: list = [mod.add(1, 2), mod.greet("x"), mod.greet(name="y", times=2)]
    seen.append(mod.greet.__doc__)
    for call in (
        lambda: mod.add(1),
        lambda: apply(mod.add, 1),
        lambda: apply(mod.add, "one", 2),
        lambda: apply(mod.greet, "x", 2**40),
        lambda: mod.add(1, 2, 3),
        lambda: mod.add("one", 2),
        lambda: mod.add(1, 2**64 - 1),
        lambda: mod.greet(3),
        lambda: mod.greet("x", 2**40),
        lambda: mod.greet("x", None),
    ):
        with pytest.raises((TypeError, OverflowError)) as info:
            call()
        seen.append((type(info.value).__name__, str(info.value)))
    seen.append(mod.check(5))  # a C++ Error's what(), caught inside the library
    with pytest.raises(ValueError) as raised:
        mod.check(-1)
    seen.append((type(raised.value).__name__, str(raised.value), raised.value.kind))
    return seen


def test_library_built_against_abi_1_4_headers_runs_alike(tmp_path):
    old_root = _old_headers(tmp_path)
    old = _build(tmp_path, "abi14", [old_root / "include", old_root / "third_party/dlpack/include"])
    new = _build(tmp_path, "abi15", [REPO / "include", REPO / "third_party/dlpack/include"])
    # The old library needs none of the 1.5 entry points; the new one calls them.
    assert not set(ABI_1_5_ENTRIES) & _undefined(old)
    assert {"PFErrorSetRaisedArity", "PFFunctionBuildMetadataRanges", "PFErrorNew",
            "PFErrorGetWhat", "PFErrorMoveToRaised"} <= _undefined(new)  # fmt: skip
    old_seen, new_seen = _behaviour(old), _behaviour(new)
    assert old_seen == new_seen
    assert old_seen[:3] == [3, "hi x;", "hi y;hi y;"]
    assert old_seen[-2:] == [5, ("ValueError", "x must not be negative", "ValueError")]
    assert ("TypeError", "add: expected 2 arguments, got 1") in old_seen
    assert any("greet(name: str, times: int) -> str: argument 'times'" in m for _, m in
               old_seen[4:-2])  # fmt: skip
