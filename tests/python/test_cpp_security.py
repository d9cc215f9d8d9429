# Attacks on packedfun.cpp's cache and build: foreign owners, open modes, symlinks, planted bytes.
"""Each test plays an attacker who can write somewhere packedfun reads code from, or who controls
a name or a setting, and checks that packedfun refuses (PermissionError/ValueError) or rebuilds
instead of loading what was planted. Libraries are plain ``extern "C"`` files loaded with ctypes,
so only the cache machinery is under test."""

import ctypes
import os
import shutil
import stat
import warnings
from pathlib import Path

import pytest
import suite

cpp = suite.require("packedfun.cpp")
from packedfun.cpp import _build, _probe, _trust  # noqa: E402

if not os.path.exists(os.path.join(cpp._package.lib_dir(), "libpackedfun.so")):
    pytest.skip("libpackedfun.so is not built", allow_module_level=True)

GOOD = 'extern "C" long long pf_sec_value(void) { return 15; }\n'
EVIL = 'extern "C" long long pf_sec_value(void) { return 666; }\n'
NASTY = ["a b", "a'b", 'a"b', "a;b", "$(touch PWNED)", "`touch PWNED`", "a\nb", "..", "../x"]
NASTY_PATH_PART = "d i'r\"; $(touch PWNED) `touch PWNED`\n.."


def _value(lib_path: str) -> int:
    fn = ctypes.CDLL(lib_path).pf_sec_value
    fn.restype = ctypes.c_longlong
    return fn()


def _src(tmp_path: Path, text: str = GOOD, name: str = "sec.cc") -> Path:
    path = tmp_path / "src" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def env(tmp_path, monkeypatch):
    """A private cache root under tmp_path, no shared-cache opt-in, cwd in tmp_path."""
    monkeypatch.delenv(_trust.SHARED_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path / "cache"


def _no_pwned(tmp_path: Path) -> None:
    assert not [p for p in tmp_path.rglob("*") if p.name == "PWNED"]


@pytest.mark.parametrize("umask", [0o000, 0o002, 0o022, 0o077])
def test_everything_created_is_owner_only_whatever_the_umask(tmp_path, env, umask):
    old = os.umask(umask)
    try:
        path = cpp.build("sec", [_src(tmp_path)], build_directory=env)
    finally:
        os.umask(old)
    assert _value(path) == 15
    seen = [env, *env.rglob("*")]
    assert len(seen) > 5
    for p in seen:
        mode = stat.S_IMODE(p.lstat().st_mode)
        assert mode == (0o700 if p.is_dir() else 0o600), (p, oct(mode))


def test_failed_build_folder_is_owner_only(tmp_path, env):
    old = os.umask(0)
    try:
        with pytest.raises(cpp.BuildError):
            cpp.build("bad", [_src(tmp_path, "int broken( {")], build_directory=env)
    finally:
        os.umask(old)
    failed = [p for p in (env / "bad").iterdir() if p.name.startswith("failed-")]
    assert failed and stat.S_IMODE(failed[0].stat().st_mode) == 0o700


def _assert_refused(info, folder: Path, reason: str) -> None:
    text = str(info.value)
    assert repr(str(folder)) in text and reason in text, text
    assert "PACKEDFUN_CACHE_DIR" in text and "PACKEDFUN_CACHE_SHARED" in text


@pytest.mark.parametrize("which", ["root", "name", "final"])
def test_group_or_world_writable_folder_is_refused(tmp_path, env, which):
    src = _src(tmp_path)
    path = Path(cpp.build("sec", [src], build_directory=env))
    folder = {"root": env, "name": env / "sec", "final": path.parent}[which]
    for mode in (0o777, 0o770, 0o702):
        folder.chmod(mode)
        with pytest.raises(PermissionError) as info:
            cpp.build("sec", [src], build_directory=env)
        _assert_refused(info, folder, "writable by group or others")
    folder.chmod(0o700)
    assert cpp.build("sec", [src], build_directory=env) == str(path)


@pytest.mark.deselect_if(
    not hasattr(os, "geteuid") or os.geteuid() != 0,
    reason="chown needs root: the test below checks the same refusal without it",
)
@pytest.mark.parametrize("which", ["root", "name", "final"])
def test_folder_of_another_owner_is_refused_before_loading(tmp_path, env, which):
    src = _src(tmp_path)
    path = Path(cpp.build("sec", [src], build_directory=env))
    shutil.copyfile(cpp.build("evil", [_src(tmp_path, EVIL, "evil.cc")], build_directory=env), path)
    _trust.record_digest(str(path))  # the planted library even has a matching digest
    folder = {"root": env, "name": env / "sec", "final": path.parent}[which]
    os.chown(folder, 65534, 65534)
    with pytest.raises(PermissionError) as info:
        cpp.load("sec", [src], build_directory=env)
    _assert_refused(info, folder, "owned by uid 65534")
    with pytest.raises(PermissionError):
        cpp.build("sec", [src], build_directory=env)


@pytest.mark.parametrize("which", ["root", "name", "final"])
def test_folder_of_another_owner_is_refused_without_root(tmp_path, env, which, monkeypatch):
    # The test above for any user: the folder is not chowned (that needs root) but reported by
    # stat/lstat as another user's, everything else about it real. Root or not, this runs.
    src = _src(tmp_path)
    path = Path(cpp.build("sec", [src], build_directory=env))
    shutil.copyfile(cpp.build("evil", [_src(tmp_path, EVIL, "evil.cc")], build_directory=env), path)
    _trust.record_digest(str(path))  # the planted library even has a matching digest
    folder = {"root": env, "name": env / "sec", "final": path.parent}[which]
    target = (folder.stat().st_dev, folder.stat().st_ino)
    other = os.geteuid() + 1

    def owned_by_other(real):
        def stat_of(p, *args, **kwargs):
            st = real(p, *args, **kwargs)
            if (st.st_dev, st.st_ino) != target:
                return st
            fields = list(st)
            fields[stat.ST_UID] = other
            return os.stat_result(fields)

        return stat_of

    monkeypatch.setattr(os, "stat", owned_by_other(os.stat))
    monkeypatch.setattr(os, "lstat", owned_by_other(os.lstat))
    with pytest.raises(PermissionError) as info:
        cpp.load("sec", [src], build_directory=env)
    _assert_refused(info, folder, f"owned by uid {other}")
    with pytest.raises(PermissionError):
        cpp.build("sec", [src], build_directory=env)


def test_symlink_swapped_in_is_refused(tmp_path, env):
    src = _src(tmp_path)
    path = Path(cpp.build("sec", [src], build_directory=env))
    # The attacker's copy of the name folder, with a planted library and a matching digest.
    planted = tmp_path / "attacker"
    shutil.copytree(env / "sec", planted, symlinks=True)
    evil = cpp.build("evil", [_src(tmp_path, EVIL, "evil.cc")], build_directory=env)
    shutil.copyfile(evil, planted / path.parent.name / path.name)
    _trust.record_digest(str(planted / path.parent.name / path.name))
    shutil.rmtree(env / "sec")
    (env / "sec").symlink_to(planted)
    with pytest.raises(PermissionError) as info:
        cpp.load("sec", [src], build_directory=env)
    _assert_refused(info, env / "sec", "symbolic link")
    # The same one level down: the published folder itself replaced by a link.
    (env / "sec").unlink()
    shutil.copytree(planted, env / "sec", symlinks=True)
    final = env / "sec" / path.parent.name
    shutil.rmtree(final)
    final.symlink_to(planted / path.parent.name)
    with pytest.raises(PermissionError) as info:
        cpp.build("sec", [src], build_directory=env)
    _assert_refused(info, final, "symbolic link")


def test_symlinked_library_file_is_rebuilt_not_loaded(tmp_path, env):
    src = _src(tmp_path)
    path = Path(cpp.build("sec", [src], build_directory=env))
    evil = cpp.build("evil", [_src(tmp_path, EVIL, "evil.cc")], build_directory=env)
    path.unlink()
    path.symlink_to(evil)
    Path(str(path) + ".sha256").write_text(_trust.file_digest(evil) + "\n")
    assert cpp.build("sec", [src], build_directory=env) == str(path)
    assert not path.is_symlink() and _value(str(path)) == 15


def test_cache_root_may_be_a_symlink_to_a_private_folder(tmp_path, env):
    real = tmp_path / "real-cache"
    real.mkdir(mode=0o700)
    env.symlink_to(real)
    assert _value(cpp.build("sec", [_src(tmp_path)], build_directory=env)) == 15
    real.chmod(0o777)  # the target is what is checked
    with pytest.raises(PermissionError, match="writable by group or others"):
        cpp.build("sec", [_src(tmp_path)], build_directory=env)


def test_shared_cache_opt_in_warns_and_still_verifies(tmp_path, env, monkeypatch):
    src = _src(tmp_path)
    env.mkdir(mode=0o700)
    env.chmod(0o777)
    monkeypatch.setenv(_trust.SHARED_ENV, "1")
    with pytest.warns(_trust.SharedCacheWarning, match="writable by group or others"):
        path = Path(cpp.build("sec", [src], build_directory=env))
    path.write_bytes(path.read_bytes()[:100])  # still rebuilt, not loaded, when truncated
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", _trust.SharedCacheWarning)
        assert cpp.build("sec", [src], build_directory=env) == str(path)
    assert _value(str(path)) == 15
    for bad in ("yes", "1; touch PWNED", "true"):
        monkeypatch.setenv(_trust.SHARED_ENV, bad)
        with pytest.raises(ValueError, match="PACKEDFUN_CACHE_SHARED"):
            cpp.build("sec", [src], build_directory=env)
    _no_pwned(tmp_path)


@pytest.mark.parametrize("damage", ["truncate", "replace", "empty", "no-digest", "bad-digest"])
def test_damaged_library_is_rebuilt_never_loaded(tmp_path, env, damage):
    src = _src(tmp_path)
    path = Path(cpp.build("sec", [src], build_directory=env))
    evil = Path(cpp.build("evil", [_src(tmp_path, EVIL, "evil.cc")], build_directory=env))
    digest = Path(str(path) + ".sha256")
    if damage == "truncate":
        path.write_bytes(path.read_bytes()[:4096])
    elif damage == "replace":
        path.write_bytes(evil.read_bytes())  # a valid library, the wrong one
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "no-digest":
        digest.unlink()
    else:
        digest.write_text("0" * 64 + "\n")
    assert not _trust.verified(str(path))
    again = cpp.build("sec", [src], build_directory=env)  # rebuilt under the lock
    assert again == str(path) and _trust.verified(again)
    assert _value(again) == 15  # first load of this path in this process: the rebuilt bytes


def test_tampered_library_through_load_inline_is_rebuilt(tmp_path, env):
    source = "int64_t sec_twice(int64_t x) { return 2 * x; }"
    path = Path(cpp.build_inline("sec_inline", source, functions="sec_twice", build_directory=env))
    path.write_bytes(path.read_bytes()[:1000])
    mod = cpp.load_inline("sec_inline", source, functions="sec_twice", build_directory=env)
    assert mod.sec_twice(21) == 42 and _trust.verified(str(path))


@pytest.mark.parametrize("name", NASTY)
def test_hostile_module_and_function_names_are_rejected(tmp_path, env, name):
    with pytest.raises(ValueError, match="module name"):
        cpp.build_inline(name, cpp_sources="int x;", build_directory=env)
    with pytest.raises(ValueError, match="identifier"):
        cpp.build_inline("ok", cpp_sources="int x;", functions=[name], build_directory=env)
    _no_pwned(tmp_path)


def test_hostile_include_paths_flags_and_cache_dir_stay_literal(tmp_path, env):
    include = tmp_path / NASTY_PATH_PART / "inc"
    include.mkdir(parents=True)
    (include / "sec_value.h").write_text("#define SEC_VALUE 15\n")
    source = (
        '#include "sec_value.h"\nextern "C" long long pf_sec_value(void) { return SEC_VALUE; }\n'
    )
    source += 'extern "C" long long pf_sec_len(void) { return sizeof(SEC_MSG) - 1; }\n'
    message = "a b; $(touch PWNED) `touch PWNED` 'q' && touch PWNED\n.."
    cache = tmp_path / NASTY_PATH_PART / "cache"
    path = cpp.build(
        "sec",
        [_src(tmp_path, source)],
        extra_cflags=[f"-DSEC_MSG={message!r}".replace("\n", "\\n")],
        extra_include_paths=[str(include)],
        build_directory=cache,
    )
    assert path.startswith(str(cache)) and _value(path) == 15
    fn = ctypes.CDLL(path).pf_sec_len
    fn.restype = ctypes.c_longlong
    assert fn() == len(message)
    _no_pwned(tmp_path)


def test_hostile_compiler_setting_runs_no_shell(tmp_path, env, monkeypatch):
    monkeypatch.setenv("CXX", f"{_build.find_cxx().path} ; touch PWNED")
    with pytest.raises(cpp.BuildError) as info:
        cpp.build("sec", [_src(tmp_path)], build_directory=env)
    assert info.value.returncode not in (0, None)
    monkeypatch.setenv("CXX", "g++ 'unbalanced")
    with pytest.raises(ValueError, match="CXX"):
        cpp.build("sec", [_src(tmp_path)], build_directory=env)
    monkeypatch.setenv("CXX", "$(touch PWNED)")
    with pytest.raises(cpp.CompilerNotFoundError, match=r"\$CXX"):
        cpp.build("sec", [_src(tmp_path)], build_directory=env)
    _no_pwned(tmp_path)


@pytest.mark.parametrize(
    "value", ["80;$(touch PWNED)", "sm_80 `touch PWNED`", "90\nrm", "../80", "sm_80 && x", "'80'"]
)
def test_hostile_cuda_arch_setting_is_a_value_error(tmp_path, env, monkeypatch, value):
    monkeypatch.setenv("PACKEDFUN_CUDA_ARCH", value)
    with pytest.raises(ValueError, match="PACKEDFUN_CUDA_ARCH"):
        _probe.gpu_archs(str(env / ".probes"))
    _no_pwned(tmp_path)


def test_valid_cuda_arch_settings_still_parse(monkeypatch, tmp_path):
    monkeypatch.setenv("PACKEDFUN_CUDA_ARCH", "sm_90;8.0, 100a")
    assert _probe.gpu_archs(str(tmp_path)) == ["80", "90", "100a"]
