# Threads, the GIL and shutdown: GIL policies, native threads calling back, signals, races, exit.
"""Tests of the thread model (docs/threads.md).

Every case that could hang (a deadlock on the GIL) or abort (an unwind at interpreter exit) runs in
a child process with a timeout, so a regression fails instead of hanging the suite. The children
inherit ``PACKEDFUN_BACKEND``, so the ctypes run of the suite covers that backend too.
``PACKEDFUN_SOAK=full`` runs the shutdown soak 200 times instead of 20.
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import weakref
from pathlib import Path

import packedfun
import packedfun.testing  # noqa: F401 - registers testing.*
import pytest

PACKAGE_PARENT = str(Path(packedfun.__file__).resolve().parents[1])
SOAK_RUNS = 200 if os.environ.get("PACKEDFUN_SOAK") == "full" else 20


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [PACKAGE_PARENT, env.get("PYTHONPATH")]))
    return env


def forced_unwind_env() -> dict:
    """The environment of a child whose daemon threads CPython ends inside packedfun calls at exit.
    Under the sanitized run (tests/sanitize/run.py) its leak check also suppresses what those
    threads' discarded frames alone referenced (tests/sanitize/lsan_forced_unwind.supp says what
    and why); anywhere else it is the plain environment."""
    env = _env()
    if env.get("PACKEDFUN_SANITIZE_FORCED_UNWIND_LSAN_OPTIONS"):
        env["LSAN_OPTIONS"] = env["PACKEDFUN_SANITIZE_FORCED_UNWIND_LSAN_OPTIONS"]
    return env


def run_child(code: str, timeout: float = 60, args=(), env=None) -> subprocess.CompletedProcess:
    """Runs ``code`` in a fresh interpreter; a hang becomes a failure after ``timeout`` s."""
    try:
        return subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code), *args],
            capture_output=True,
            text=True,
            env=_env() if env is None else env,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"child hung for {timeout} s; stderr: {exc.stderr!r}")


def func(name: str) -> packedfun.Function:
    return packedfun.get_global_func(name)


# ---- the GIL policy ----------------------------------------------------------------------------
def test_policy_default_is_release_and_trivial_functions_hold():
    assert func("testing.nop_release").gil_policy == "release"  # declared nothing
    assert func("testing.apply_release").gil_policy == "release"
    assert func("testing.apply").gil_policy == "hold"  # calls back on the calling thread only
    assert func("testing.nop").gil_policy == "hold"  # declared .gil(GILPolicy::kHold)
    assert func("testing.add_int").gil_policy == "hold"
    # A Python callable as a Function already holds the GIL when Python calls it.
    assert packedfun.Function(lambda: 1).gil_policy == "hold"


def test_policy_is_in_the_metadata_record():
    assert packedfun.get_global_func_metadata("testing.greet")["gil"] == "release"
    assert packedfun.get_global_func_metadata("testing.add_kw")["gil"] == "hold"


def test_policy_override_is_seen_by_every_holder():
    f = func("testing.add_int_release")
    try:
        f.gil_policy = "hold"
        assert func("testing.add_int_release").gil_policy == "hold"  # the native Function's flag
        assert f(2, 3) == 5
    finally:
        f.gil_policy = "release"
    assert f.gil_policy == "release"
    assert f(2, 3) == 5


def test_policy_rejects_bad_values():
    f = func("testing.nop_release")
    with pytest.raises(ValueError, match="'release' or 'hold'"):
        f.gil_policy = "fast"
    with pytest.raises(TypeError, match="gil_policy"):
        f.gil_policy = 1
    assert f.gil_policy == "release"


def test_cpp_authors_declare_policies(tmp_path):
    # Registration (.gil), the export macro (PACKEDFUN_DLL_EXPORT_GIL), and the example:
    # a std::thread calling a Python callback, joined, under the default policy.
    code = f"""
    import packedfun, packedfun.cpp
    src = r'''#include <thread>
    int64_t run(packedfun::Function f) {{
      int64_t r = 0;
      std::thread t([&] {{ r = f(1).cast<int64_t>(); }});
      t.join();
      return r;
    }}
    int64_t twice(int64_t x) {{ return 2 * x; }}
    PACKEDFUN_DLL_EXPORT_GIL(twice, kPFGILHold);
    PACKEDFUN_REGISTER_GLOBAL("threads_test.triple")
        .set_body_typed([](int64_t x) {{ return 3 * x; }})
        .gil(packedfun::GILPolicy::kHold);
    '''
    m = packedfun.cpp.load_inline("threads_policies", src, functions=["run", "twice"],
                                  build_directory={str(tmp_path)!r})
    print(m.run(lambda x: x + 1), m.run.gil_policy, m.twice(4), m.twice.gil_policy)
    triple = packedfun.get_global_func("threads_test.triple")
    print(triple(2), triple.gil_policy)
    """
    proc = run_child(code, timeout=300)
    if "CompilerNotFoundError" in proc.stderr:
        pytest.skip("no C++ compiler")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["2", "release", "8", "hold", "6", "hold"]


# ---- the default policy: native threads call back, Python threads run -------------------------
def test_native_threads_call_python_callbacks_and_errors_come_back():
    code = """
    import packedfun, packedfun.testing
    run = packedfun.get_global_func("testing.call_from_threads")
    def cb(i):
        if i % 1000 == 7:
            raise ValueError(f"bad {i}")
        return i
    total, errors = run(cb, 8, 10000, False)
    raising = [i for i in range(80000) if i % 1000 == 7]
    assert total == sum(range(80000)) - sum(raising), total
    assert sorted(errors) == sorted(f"ValueError: bad {i}" for i in raising), errors[:3]
    try:
        run(cb, 8, 10000, True)
    except ValueError as exc:  # the Python exception itself, through C++ and back
        assert str(exc).startswith("bad "), exc
        print("ok")
    """
    proc = run_child(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


def test_python_thread_runs_during_a_long_native_call():
    code = """
    import json, threading, time, packedfun, packedfun.testing
    def longest_pause(name):
        stamps, stop = [], threading.Event()
        def count():
            while not stop.is_set():
                stamps.append(time.monotonic())
        t = threading.Thread(target=count)
        t.start()
        time.sleep(0.02)
        start = time.monotonic()
        packedfun.get_global_func(name)(500.0)
        end = time.monotonic()
        stop.set()
        t.join()
        # The call spins 500 ms (steady_clock, time.monotonic's clock) somewhere in [start, end].
        # The longest stretch of [start, end] in which the counting thread made no step: when the
        # call holds the GIL, the whole spin is one (at least 0.5 s, whatever the machine's load);
        # when it releases it, the thread steps all through the spin (a loaded machine delays a
        # step by scheduling slices, far below 0.5 s). No window is guessed, so a call that the
        # load makes last much longer than 0.5 s is judged the same.
        inside = [start] + [s for s in stamps if start < s < end] + [end]
        return max(b - a for a, b in zip(inside, inside[1:])), len(inside) - 2
    print(json.dumps([longest_pause("testing.spin_ms"), longest_pause("testing.spin_ms_hold")]))
    """
    proc = run_child(code)
    assert proc.returncode == 0, proc.stderr
    (released_pause, released_steps), (held_pause, _) = json.loads(proc.stdout)
    assert released_pause < 0.45 and released_steps >= 100, (released_pause, released_steps)
    assert held_pause >= 0.49, held_pause


def test_cpp_releases_the_callers_lock_for_a_scope():
    # testing.call_on_thread_unlocked holds the GIL by policy and joins a thread calling back:
    # without its EnvReleaseCallerLock scope this would deadlock.
    proc = run_child(
        """
        import packedfun, packedfun.testing
        print(packedfun.get_global_func("testing.call_on_thread_unlocked")(lambda: 42))
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "42"


_RELEASING_KERNEL = r"""
#include <packedfun/env.h>
#include <packedfun/packedfun.h>
#include <thread>
#include <vector>
using namespace packedfun;
// Releases the caller's lock itself, calls back on the calling thread (in a nested scope too),
// then from native threads that also open a scope (nothing to release there).
static int64_t Fan(Function f, int64_t n) {
  EnvReleaseCallerLock outer;
  int64_t s = f(100).cast<int64_t>();
  {
    EnvReleaseCallerLock again;
    s += f(1000).cast<int64_t>();
  }
  std::vector<std::thread> threads;
  std::vector<int64_t> out(n);
  for (int64_t i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      EnvReleaseCallerLock inner;
      out[i] = f(i).cast<int64_t>();
    });
  }
  for (auto& t : threads) t.join();
  for (auto v : out) s += v;
  return s;
}
PACKEDFUN_REGISTER_GLOBAL("gilscope.fan_hold").set_body_typed(Fan).gil(GILPolicy::kHold);
PACKEDFUN_REGISTER_GLOBAL("gilscope.fan_release").set_body_typed(Fan);
int64_t unused() { return 0; }
"""


def test_kernel_releasing_the_lock_itself_while_threads_call_back(tmp_path):
    # A kernel that drops the caller's lock itself (EnvReleaseCallerLock, nested, under either GIL
    # policy) and calls Python from the calling thread and from native threads: each callback
    # takes the GIL it needs (once a fatal "PyEval_SaveThread: the GIL is released" abort).
    source = tmp_path / "kernel.cc"
    source.write_text(_RELEASING_KERNEL)
    proc = run_child(
        """
        import sys, packedfun, packedfun.cpp
        src = open(sys.argv[1]).read()
        packedfun.cpp.load_inline("gilscope", cpp_sources=src, functions=["unused"],
                                  build_directory=sys.argv[2])
        def bad(i):
            raise KeyError(i)
        for name in ("gilscope.fan_hold", "gilscope.fan_release"):
            f = packedfun.get_global_func(name)
            for _ in range(3):
                assert f(lambda i: 2 * i, 8) == 2256, name
            try:
                f(bad, 4)
            except KeyError as exc:
                assert exc.args == (100,), exc.args
            else:
                raise AssertionError(name)
        print("ok")
        """,
        timeout=300,
        args=(str(source), str(tmp_path / "build")),
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


def test_last_reference_dropped_on_a_native_thread():
    class Token:
        pass

    drop = func("testing.drop_on_thread")
    tok = Token()
    ref = weakref.ref(tok)
    drop(tok)
    del tok
    assert ref() is None
    tok = Token()
    ref = weakref.ref(tok)
    f = packedfun.Function(lambda t=tok: t)  # a Function owning a callable, dropped there too
    del tok
    drop(f)
    del f
    assert ref() is None


def test_callbacks_from_a_native_thread_that_outlives_many_calls():
    # A native thread keeps its Python thread state between callbacks; exceptions still cross.
    seen = []

    def cb(i):
        seen.append(threading.get_ident())
        return i

    total, errors = func("testing.call_from_threads")(cb, 1, 500, False)
    assert (total, list(errors)) == (sum(range(500)), [])
    assert len(set(seen)) == 1 and seen[0] != threading.get_ident()


# ---- signals -----------------------------------------------------------------------------------
def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _wait_until_spinning(pid: int) -> None:
    """Returns once the child has run 0.2 s of CPU since it printed "ready": only the native loop
    it then enters spends that much, so the signal cannot arrive before the loop however slow a
    loaded machine makes the child's way there (a fixed sleep could)."""
    if not Path(f"/proc/{pid}/stat").exists():
        time.sleep(1.0)  # no procfs: a generous margin instead
        return
    start, deadline = _cpu_seconds(pid), time.monotonic() + 60
    while _cpu_seconds(pid) - start < 0.2 and time.monotonic() < deadline:
        time.sleep(0.02)


@pytest.mark.parametrize(
    "name", ["testing.spin_checking_signals", "testing.spin_checking_signals_release"]
)
def test_check_signals_stops_a_long_native_loop(name):
    # No time bound: the loop would spin 10 minutes, so only a stop on the signal lets the child
    # exit inside communicate()'s 120 s timeout (a miss fails with TimeoutExpired, not a hang).
    # The child installs Python's own Ctrl-C handler first: a Python whose parent ignores SIGINT
    # keeps ignoring it (as in any job a non-interactive shell starts with `&`, such as a CI run
    # in the background), and the loop then never sees the signal (the sanitized whole run's
    # "finished" instead of "interrupted").
    code = f"""
    import signal
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import packedfun, packedfun.testing
    f = packedfun.get_global_func({name!r})
    print("ready", flush=True)
    try:
        f(600.0)
        print("finished")
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    """
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    try:
        assert child.stdout.readline().strip() == "ready"
        _wait_until_spinning(child.pid)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=120)
    finally:
        child.kill()
    assert out.split() == ["interrupted"], (out, err)


# ---- several Python threads at once -------------------------------------------------------------
def _in_threads(n, target):
    errors = []

    def run(i):
        try:
            target(i)
        except BaseException as exc:  # noqa: B036 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_shared_list_and_dict_mutated_from_eight_threads():
    lst = packedfun.List()
    dct = packedfun.Dict()

    def work(i):
        for j in range(500):
            lst.append(i * 1000 + j)
            dct[f"{i}:{j}"] = j
            if j % 50 == 0:
                func("testing.spin_ms")(0.1)  # releases the GIL: interleaves the threads

    _in_threads(8, work)
    assert sorted(lst) == sorted(i * 1000 + j for i in range(8) for j in range(500))
    assert len(dct) == 4000 and dct["7:499"] == 499


def test_registry_lookups_race_remove_global_func():
    name = "threads_test.flapping"
    stop = threading.Event()

    def flap(_):
        while not stop.is_set():
            packedfun.register_global_func(name, lambda: 1, override=True)
            packedfun.remove_global_func(name)

    def look(_):
        for _ in range(2000):
            f = packedfun.get_global_func(name, allow_missing=True)
            if f is not None:
                assert f() == 1  # a Function found stays callable after its name is removed

    flapper = threading.Thread(target=flap, args=(0,))
    flapper.start()
    try:
        _in_threads(4, look)
    finally:
        stop.set()
        flapper.join()
    packedfun.remove_global_func(name)


def test_one_function_called_from_eight_threads_with_creation_and_drop():
    add = func("testing.add_int_release")
    make = func("testing.make_array")

    def work(i):
        for j in range(2000):
            assert add(i, j) == i + j
            arr = make(j % 7)
            assert len(arr) == j % 7
            del arr

    _in_threads(8, work)


# ---- shutdown ----------------------------------------------------------------------------------
SHUTDOWN_SCRIPT = """
import threading, time, packedfun, packedfun.testing
g = packedfun.get_global_func
apply, apply_release = g("testing.apply"), g("testing.apply_release")
keep = [packedfun.List([1, "x"]), packedfun.Dict({"k": lambda: 0}), g("testing.make_array")(3)]
packedfun.register_global_func("threads_test.cb", lambda x: x + 1, override=True)
def loop():
    while True:
        apply(lambda: sum(range(50)))
        apply_release(lambda: sum(range(50)))
def native_calls():
    g("testing.call_from_threads")(g("threads_test.cb"), 2, 1000000, False)
for _ in range(2):
    threading.Thread(target=loop, daemon=True).start()
threading.Thread(target=native_calls, daemon=True).start()
g("testing.start_caller_thread")(lambda: keep[0].append(1) if len(keep[0]) < 1000 else None, 50)
g("testing.start_caller_thread")(lambda: None, 20)
time.sleep(0.05)
"""


def test_forced_unwind_of_daemon_threads_in_callbacks_is_not_an_abort():
    # The example: daemon threads inside C++ -> Python callbacks at exit.
    # testing.apply keeps the GIL (CPython ends the thread at its eval loop's GIL drop, inside the
    # callback); testing.apply_release releases it (the thread ends waiting to take it back).
    code = """
    import sys, threading, time, packedfun, packedfun.testing
    apply = packedfun.get_global_func(sys.argv[1])
    def loop():
        while True: apply(lambda: sum(range(50)))
    for _ in range(2): threading.Thread(target=loop, daemon=True).start()
    time.sleep(0.05)
    """
    for name in ["testing.apply", "testing.apply_release"] * 3:
        proc = run_child(code, timeout=60, args=[name], env=forced_unwind_env())
        assert proc.returncode == 0, (name, proc.returncode, proc.stderr[-2000:])


def test_shutdown_soak():
    failures = []
    for i in range(SOAK_RUNS):
        proc = run_child(SHUTDOWN_SCRIPT, timeout=60, env=forced_unwind_env())
        if proc.returncode != 0:
            failures.append((i, proc.returncode, proc.stderr[-1000:]))
    assert failures == [], f"{len(failures)}/{SOAK_RUNS} runs failed: {failures[:3]}"
