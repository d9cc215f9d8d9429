# apache-tvm-ffi's C++ unit tests (its sdist's tests/cpp), built against packedfun's tvm/ffi tree.
"""The machinery of ``test_tvm_ffi_cpp_conformance.py``, also runnable by hand to measure:

    python tests/python/tvm_ffi_cpp_suite.py [file.cc ...]

Each test file of the pinned sdist is compiled unchanged against packedfun's ``tvm/ffi`` header
tree (``include/packedfun/compat``); a ``TEST(...)``, or any other top-level declaration of the
file or of its shared ``testing_object.h`` (a class, a function, a ``static_assert``), whose code
does not compile is left out, one round of compiler errors at a time, until the file compiles (an
error nothing can be left out for fails the file whole). The files of ``extra/`` are not built:
the tree refuses that API by design. What compiles is linked with GoogleTest (``third_party/``)
and ``libpackedfun`` and run, one program per file. Nothing of tvm-ffi is copied into this
repository: the sources are read from the cached sdist and pruned in a temporary copy."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
GTEST = os.path.join(ROOT, "third_party", "googletest", "googletest")
_TEST_RE = re.compile(r"^(TEST|TEST_F|TEST_P)\(\s*(\w+)\s*,\s*(\w+)\s*\)")
_MAX_ROUNDS = 12


@dataclasses.dataclass
class FileResult:
    """What became of one test file: the tests kept (compiled) and dropped, or why it failed."""

    name: str
    total: int
    kept: list[str] = dataclasses.field(default_factory=list)
    dropped: list[str] = dataclasses.field(default_factory=list)
    error: str = ""  # set when the file could not be made to compile at all
    passed: list[str] = dataclasses.field(default_factory=list)
    failed: list[str] = dataclasses.field(default_factory=list)


def _code_only(text: str) -> list[str]:
    """``text``'s lines with comments, string and character literals blanked (newlines kept)."""

    def blank(m: re.Match) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))

    pattern = r'/\*.*?\*/|//[^\n]*|"(\\.|[^"\\\n])*"|\'(\\.|[^\'\\\n])*\''
    return re.sub(pattern, blank, text, flags=re.S).split("\n")


def chunks(text: str) -> list[tuple[str, int, int]]:
    """(name, first, last) line indices of each top-level declaration of a C++ file that may be
    left out: a TEST, a class, a function, a static_assert, a using or variable declaration.
    ``namespace ... {`` lines and their closing braces are transparent; preprocessor lines are
    never chunks (an #include is not left out)."""
    code = _code_only(text)
    found: list[tuple[str, int, int]] = []
    ns_depth, i = 0, 0
    while i < len(code):
        line = code[i].strip()
        if not line or line.startswith("#"):
            i += 1
            continue
        if re.match(r"^(inline\s+)?namespace(\s+[\w:]+)?\s*\{\s*$", line):
            ns_depth += 1
            i += 1
            continue
        if line.startswith("}") and ns_depth and re.match(r"^\}\s*;?\s*$", line):
            ns_depth -= 1
            i += 1
            continue
        depth, j = 0, i
        while j < len(code):
            c = code[j]
            depth += c.count("{") + c.count("(") - c.count("}") - c.count(")")
            end = c.rstrip()
            if depth <= 0 and (end.endswith(";") or end.endswith("}")):
                break
            j += 1
        m = _TEST_RE.match(line)
        found.append(
            (f"{m.group(2)}.{m.group(3)}" if m else f"decl@{i + 1}", i, min(j, len(code) - 1))
        )
        i = j + 1
    return found


def compile_flags(include_dirs: list[str]) -> list[str]:
    return ["-std=c++17", "-w"] + [f"-I{d}" for d in include_dirs]


def _write_without(
    path: str, lines: list[str], spans: list[tuple[str, int, int]], drop: set
) -> None:
    out = list(lines)
    for name, first, last in spans:
        if name in drop:
            out[first : last + 1] = [""] * (last + 1 - first)  # keep the line numbers
    with open(path, "w") as f:
        f.write("\n".join(out))


def _without_refused_includes(text: str, include_dirs: list[str]) -> str:
    """``text`` without its includes of tvm/ffi headers that packedfun's tree refuses (#error):
    what used them is then left out by the pruning, instead of the whole file."""

    def keep(m: re.Match) -> str:
        for d in include_dirs:
            path = os.path.join(d, m.group(1))
            if os.path.isfile(path):
                with open(path) as f:
                    return "" if "#error" in f.read() else m.group(0)
        return m.group(0)

    return re.sub(r"^#include <(tvm/ffi/[^>]+)>", keep, text, flags=re.M)


def prune(files: list[str], main: str, include_dirs: list[str], cxx: str = "c++") -> str:
    """Leaves out of ``files`` (rewritten in place; ``main`` is the one compiled) the top-level
    declarations the compiler rejects, one round of errors at a time, until ``main`` compiles.
    Returns "" then, or the first error that no left-out declaration could remove. The names left
    out are in ``prune.dropped`` afterwards, keyed by file."""
    texts = {f: _without_refused_includes(open(f).read(), include_dirs) for f in files}
    spans = {f: chunks(t) for f, t in texts.items()}
    drop: dict[str, set] = {f: set() for f in files}
    prune.dropped = drop  # type: ignore[attr-defined]
    for _ in range(_MAX_ROUNDS):
        for f in files:
            _write_without(f, texts[f].split("\n"), spans[f], drop[f])
        cmd = [cxx, *compile_flags(include_dirs), "-fsyntax-only", main]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=os.path.dirname(main))
        if proc.returncode == 0:
            return ""
        progress = False
        for f in files:
            # The lines of f an error points at, directly or as its "required from (here)"; not
            # the notes, which point at innocent declarations ("candidate", "declared here").
            # A macro's error is reported in packedfun's header, with notes at the user's lines.
            pat = (rf"{re.escape(os.path.basename(f))}:(\d+):\d+:\s+(?:error|required from|"
                   r"note: in (?:expansion|definition) of macro)")  # fmt: skip
            hit = {int(n) - 1 for n in re.findall(pat, proc.stderr)}
            # gcc names the test whose body holds the error ("In member function ... TestBody").
            bodies = set(re.findall(r"(\w+)_Test::TestBody\(\)", proc.stderr))
            newly = {
                n
                for n, a, b in spans[f]
                if n not in drop[f]
                and (any(a <= h <= b for h in hit) or n.replace(".", "_") in bodies)
            }
            drop[f] |= newly
            if os.environ.get("PF_TVMCPP_DEBUG") and newly:
                print(os.path.basename(f), sorted(newly), file=sys.stderr)
            progress = progress or bool(newly)
        if not progress:
            lines = proc.stderr.splitlines()
            err = next((ln for ln in lines if " error: " in ln), "does not compile")
            return err.replace(os.path.dirname(main) + "/", "")[:300]
    return f"still does not compile after {_MAX_ROUNDS} rounds"


def build_gtest(work: str, cxx: str = "c++") -> list[str]:
    """Objects of GoogleTest (the vendored copy) with its main."""
    objs = []
    for src in ("gtest-all.cc", "gtest_main.cc"):
        obj = os.path.join(work, src + ".o")
        if not os.path.exists(obj):
            tmp = (
                f"{obj}.{os.getpid()}.tmp"  # renamed into place: a concurrent run sees all or none
            )
            subprocess.run(
                [
                    cxx,
                    "-std=c++17",
                    "-O1",
                    "-w",
                    "-pthread",
                    f"-I{GTEST}/include",
                    f"-I{GTEST}",
                    "-c",
                    os.path.join(GTEST, "src", src),
                    "-o",
                    tmp,
                ],  # fmt: skip
                check=True,
            )
            os.replace(tmp, obj)
        objs.append(obj)
    return objs


def gtest_cache_dir() -> str:
    path = os.path.join(tempfile.gettempdir(), f"pf_gtest_{os.getuid()}")
    os.makedirs(path, exist_ok=True)
    return path


def _local_headers(path: str) -> list[str]:
    with open(path) as f:
        names = re.findall(r'^#include "([^"]+)"', f.read(), flags=re.M)
    return [os.path.normpath(os.path.join(os.path.dirname(path), n)) for n in names]


def run_suite(
    sdist_tests: str,
    include_dirs: list[str],
    lib_dir: str,
    work: str,
    gtest_dir: str,
    only: list[str] | None = None,
) -> list[FileResult]:
    """Prunes, builds and runs every test file (``only``: these file names); one binary per file,
    so a crash in one file's tests is charged to that file alone. Works on a copy in ``work``."""
    src_root = os.path.join(work, "src")
    shutil.copytree(sdist_tests, src_root, dirs_exist_ok=True)
    files = sorted(
        os.path.relpath(os.path.join(d, f), src_root)
        for d, _, fs in os.walk(src_root)
        for f in fs
        if f.startswith("test") and f.endswith(".cc")
    )
    if only:
        files = [f for f in files if f in only or os.path.basename(f) in only]
    gtest = build_gtest(gtest_dir)
    incs = [*include_dirs, f"{GTEST}/include"]
    # A shared test header is pruned once on its own first; each file then prunes it further.
    headers = sorted({h for rel in files for h in _local_headers(os.path.join(src_root, rel))})
    for h in headers:
        probe = h + ".probe.cc"
        with open(probe, "w") as f:
            f.write(f'#include "{os.path.basename(h)}"\n')
        prune([h], probe, incs)
        os.remove(probe)
    base_text = {h: open(h).read() for h in headers}
    results = []
    for rel in files:
        src = os.path.join(src_root, rel)
        local = _local_headers(src)
        for h in local:
            with open(h, "w") as f:
                f.write(base_text[h])
        with open(src) as f:
            tests = [n for n, _, _ in chunks(f.read()) if not n.startswith("decl@")]
        res = FileResult(rel, total=len(tests))
        if rel.startswith("extra" + os.sep):
            # Their subject is tvm-ffi's extra/ API, which the tree refuses (#error): not built.
            res.error, res.dropped = "extra/ is not provided by packedfun's tvm/ffi tree", tests
            results.append(res)
            continue
        res.error = prune([src, *local], src, incs)
        dropped = prune.dropped[src]  # type: ignore[attr-defined]
        res.kept = [] if res.error else [n for n in tests if n not in dropped]
        res.dropped = [n for n in tests if n not in res.kept]
        if res.kept:
            exe = os.path.join(work, rel.replace("/", "_") + ".exe")
            link = subprocess.run(
                [
                    "c++",
                    *compile_flags(incs),
                    "-O0",
                    "-pthread",
                    src,
                    *gtest,
                    f"-L{lib_dir}",
                    f"-Wl,-rpath,{lib_dir}",
                    "-lpackedfun",
                    "-o",
                    exe,
                ],  # fmt: skip
                capture_output=True,
                text=True,
                cwd=os.path.dirname(src),
            )
            if link.returncode != 0:
                res.error = (
                    "link: "
                    + next(
                        (
                            ln
                            for ln in link.stderr.splitlines()
                            if "undefined" in ln or "error" in ln
                        ),
                        link.stderr[-300:],
                    )[:300]
                )
                res.dropped, res.kept = tests, []
            else:
                _run(exe, res)
        results.append(res)
        print(
            f"{rel}: {len(res.kept)}/{res.total} compile, {len(res.passed)} pass", file=sys.stderr
        )
    return results


def _run(exe: str, res: FileResult) -> None:
    report = exe + ".json"
    try:
        subprocess.run([exe, f"--gtest_output=json:{report}"], capture_output=True, timeout=300)
    except subprocess.TimeoutExpired:
        pass
    if not os.path.exists(report):  # crashed or hung: run each test alone to charge the right one
        for name in res.kept:
            try:
                proc = subprocess.run(
                    [exe, f"--gtest_filter={name}"], capture_output=True, timeout=300
                )
                (res.passed if proc.returncode == 0 else res.failed).append(name)
            except subprocess.TimeoutExpired:
                res.failed.append(name)
        return
    with open(report) as f:
        data = json.load(f)
    for suite in data.get("testsuites", []):
        for case in suite.get("testsuite", []):
            name = f"{case['classname']}.{case['name']}"
            (res.failed if case.get("failures") else res.passed).append(name)


def table(results: list[FileResult]) -> str:
    rows = ["| file | tests | compile | pass |", "|---|---|---|---|"]
    tot = [0, 0, 0]
    for r in results:
        rows.append(f"| {r.name} | {r.total} | {len(r.kept)} | {len(r.passed)} |")
        tot = [tot[0] + r.total, tot[1] + len(r.kept), tot[2] + len(r.passed)]
    rows.append(f"| all | {tot[0]} | {tot[1]} | {tot[2]} |")
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    sys.path.insert(0, HERE)
    import packedfun.config as config
    import tvm_ffi_sdist

    tests = os.path.join(tvm_ffi_sdist.source_root(), "tests", "cpp")
    incs = [os.path.join(ROOT, "include", "packedfun", "compat"), os.path.join(ROOT, "include"),
            os.path.join(ROOT, "third_party", "dlpack", "include")]  # fmt: skip
    lib_dir = config.get_lib_dir()
    work = tempfile.mkdtemp(prefix="pf_tvmcpp_")
    t0 = time.time()
    try:
        results = run_suite(tests, incs, lib_dir, work, gtest_cache_dir(), only=argv or None)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(table(results))
    for r in results:
        if r.error:
            print(f"{r.name}: {r.error}")
        if r.failed:
            print(f"{r.name}: failed {r.failed}")
    print(f"{time.time() - t0:.0f} s")
    print("passing:", json.dumps({r.name: sorted(r.passed) for r in results if r.passed}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
