# The build cache of packedfun.cpp: cache keys, per-key file locks and atomic publication.
"""Layout under a cache root (``$PACKEDFUN_CACHE_DIR``, ``~/.cache/packedfun`` or build_directory)::

    <root>/<name>/<key>.lock            flock'ed by whoever builds <key>
    <root>/<name>/<key>.deps.json       headers the last build of <key> read (paths)
    <root>/<name>/<key>.<deps>/         a published build: <name>.so, <name>.so.sha256, sources,
                                        build.log
    <root>/<name>/.build-<key>-XXXX/    a build in progress (or killed: removed under the lock)
    <root>/<name>/failed-<key>/         the sources and log of the last failed build of <key>

<key> hashes everything known before compiling; <deps> hashes the contents of the user headers the
compiler reported, so editing an included header gives a new library path (a path that was dlopen'ed
once is never reused for different code). A directory is published by one rename, so a library at a
final path is always complete.

Every folder here is created owner-only and checked before use, and a library is returned only if
its content matches the digest recorded when it was published (see ``_trust``): a truncated or
replaced library is rebuilt, never loaded.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Sequence
from contextlib import contextmanager

from . import _trust
from ._build import BuildError

__all__ = [
    "cache_root",
    "prepare_root",
    "hash_parts",
    "lookup",
    "build_locked",
    "publish_folder",
    "parse_depfile",
    "publish_received",
]

_KEY_CHARS = 32


def cache_root(build_directory: str | os.PathLike | None = None) -> str:
    """The cache root: build_directory, else $PACKEDFUN_CACHE_DIR, else the user cache dir."""
    if build_directory is not None:
        return os.path.abspath(os.fspath(build_directory))
    env = os.environ.get("PACKEDFUN_CACHE_DIR")
    if env:
        return os.path.abspath(os.path.expanduser(env))
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(xdg, "packedfun")


def prepare_root(root: str) -> None:
    """Creates the cache root owner-only if it is missing and checks it (see ``_trust``)."""
    if not _trust.check_folder(root, root):
        _trust.make_private_dirs(root, root)


def hash_parts(parts: Iterable[str | bytes]) -> str:
    """sha256 over length-prefixed parts, so different part lists never collide."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogatepass") if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def _deps_digest(deps: Sequence[str]) -> str:
    parts: list[str | bytes] = []
    for path in deps:
        parts.append(path)
        try:
            with open(path, "rb") as f:
                parts.append(f.read())
        except OSError:
            parts.append(b"\0<missing>")
    return hash_parts(parts)[:12]


def _final_dir(name_dir: str, key: str, deps: Sequence[str]) -> str:
    return os.path.join(name_dir, f"{key[:_KEY_CHARS]}.{_deps_digest(deps)}")


def lookup(name_dir: str, name: str, key: str, filename: str | None = None) -> str | None:
    """The published library for `key` whose recorded headers are unchanged and whose content
    matches its recorded digest, or None. Raises PermissionError for an untrusted folder."""
    root = os.path.dirname(name_dir)
    if not _trust.check_folder(name_dir, root):
        return None
    try:
        with open(os.path.join(name_dir, f"{key[:_KEY_CHARS]}.deps.json"), encoding="utf-8") as f:
            deps = json.load(f)["deps"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    final = _final_dir(name_dir, key, deps)
    if not _trust.check_folder(final, root):
        return None
    library = os.path.join(final, filename or f"{name}.so")
    return library if _trust.verified(library) else None


@contextmanager
def _file_lock(path: str):
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing drops the flock; a killed holder drops it too


def parse_depfile(path: str) -> list[str]:
    """The prerequisites of a make-style depfile (as written by -MMD), in order."""
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
    except OSError:
        return []
    text = text.replace("\\\r\n", " ").replace("\\\n", " ")
    words, current, i = [], [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in " #":
            current.append(text[i + 1])
            i += 2
            continue
        if ch.isspace():
            if current:
                words.append("".join(current))
                current = []
        else:
            current.append(ch)
        i += 1
    if current:
        words.append("".join(current))
    # The first word(s) up to the one ending in ':' are targets.
    for index, word in enumerate(words):
        if word.endswith(":"):
            return [w.replace("$$", "$") for w in words[index + 1 :]]
    return []


def _tracked_deps(
    depfiles: Sequence[str], build_dir: str, stable_roots: Sequence[str]
) -> list[str]:
    """User headers worth re-checking on a hit: not our generated sources, not under the stable
    roots (packedfun's and CUDA's headers, which the key covers already)."""
    roots = [os.path.join(os.path.abspath(r), "") for r in stable_roots]
    own = os.path.join(os.path.realpath(build_dir), "")
    found: dict[str, None] = {}
    for depfile in depfiles:
        for dep in parse_depfile(depfile):
            path = os.path.abspath(os.path.join(build_dir, dep))
            if os.path.realpath(path).startswith(own) or any(path.startswith(r) for r in roots):
                continue
            found[path] = None
    return sorted(found)


def _write_manifest(name_dir: str, key: str, deps: list[str]) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".deps-", dir=name_dir)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump({"deps": deps}, f)
    os.replace(tmp, os.path.join(name_dir, f"{key[:_KEY_CHARS]}.deps.json"))


def _remove_stale(name_dir: str, key: str) -> None:
    prefix = f".build-{key[:_KEY_CHARS]}-"
    for entry in os.listdir(name_dir):
        if entry.startswith(prefix):
            shutil.rmtree(os.path.join(name_dir, entry), ignore_errors=True)


def _keep_failure(name_dir: str, key: str, tmp: str, err: BuildError) -> BuildError:
    failed = os.path.join(name_dir, f"failed-{key[:_KEY_CHARS]}")
    shutil.rmtree(failed, ignore_errors=True)
    try:
        os.rename(tmp, failed)
    except OSError:
        return err
    moved = BuildError(
        str(err).replace(tmp, failed),
        err.command.replace(tmp, failed),
        err.log_path.replace(tmp, failed) if err.log_path else None,
        err.returncode,
    )
    return moved


def publish_folder(tmp: str, final: str, library: str) -> None:
    """Publishes the build folder `tmp` (holding `library`) as `final` with one rename: modes made
    owner-only and the library's digest recorded first, any earlier `final` (a library removed,
    truncated or replaced by hand) removed. Call it under the key's lock."""
    _trust.make_private_tree(tmp)
    _trust.record_digest(library)
    if os.path.lexists(final):
        if os.path.isdir(final) and not os.path.islink(final):
            shutil.rmtree(final)
        else:
            os.unlink(final)
    os.rename(tmp, final)


def _publish(
    name_dir: str, name: str, key: str, tmp: str, deps: list[str], filename: str | None = None
) -> str:
    final = _final_dir(name_dir, key, deps)
    publish_folder(tmp, final, os.path.join(tmp, filename or f"{name}.so"))
    _write_manifest(name_dir, key, deps)
    return final


def build_locked(
    name_dir: str,
    name: str,
    key: str,
    builder: Callable[[str], list[str]],
    stable_roots: Sequence[str],
    filename: str | None = None,
) -> str:
    """Returns the library for `key`, building it under the key's lock when nobody has.

    `builder(tmp_dir)` writes ``tmp_dir/<name>.so`` (``tmp_dir/<filename>`` when given: an object
    file, or a library of another name) and returns the depfiles the compiler wrote; it raises
    BuildError on failure, and a failure publishes nothing.
    """
    _trust.make_private_dirs(name_dir, os.path.dirname(name_dir))
    with _file_lock(os.path.join(name_dir, f"{key[:_KEY_CHARS]}.lock")):
        found = lookup(name_dir, name, key, filename)
        if found is not None:
            return found
        _remove_stale(name_dir, key)
        tmp = tempfile.mkdtemp(prefix=f".build-{key[:_KEY_CHARS]}-", dir=name_dir)
        if not _trust.shared_cache():
            os.chmod(tmp, 0o700)  # mkdtemp's 0700 is masked by the umask
        try:
            depfiles = builder(tmp)
        except BuildError as err:
            raise _keep_failure(name_dir, key, tmp, err) from None
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        deps = _tracked_deps(depfiles, tmp, stable_roots)
        final = _publish(name_dir, name, key, tmp, deps, filename)
        return os.path.join(final, filename or f"{name}.so")


def publish_received(name: str, digest: str, data: bytes) -> str:
    """The cached copy of a library received from another process (a pickled Module).

    Content-addressed: ``<root>/received/<digest>/<name>.so``, written once under a lock through
    a temporary folder and one rename (never visible half-written), its digest recorded; later
    calls find the verified copy and write nothing.

    Raises
    ------
    ValueError
        When ``data`` does not hash to ``digest`` or ``name`` is not a plain file name.
    """
    if hashlib.sha256(data).hexdigest() != digest:
        raise ValueError(f"received library {name!r}: its bytes do not match digest {digest}")
    if not name or name.strip(".") == "" or any(c in name for c in "/\\\0"):
        raise ValueError(f"received library name {name!r} is not a plain file name")
    root = cache_root()
    name_dir = os.path.join(root, "received")
    final = os.path.join(name_dir, digest[:_KEY_CHARS])
    library = os.path.join(final, f"{name}.so")
    if _trust.check_folder(final, root) and _trust.verified(library):
        return library
    _trust.make_private_dirs(name_dir, root)
    with _file_lock(os.path.join(name_dir, f"{digest[:_KEY_CHARS]}.lock")):
        if _trust.check_folder(final, root) and _trust.verified(library):
            return library
        tmp = tempfile.mkdtemp(prefix=f".recv-{digest[:_KEY_CHARS]}-", dir=name_dir)
        try:
            with open(os.path.join(tmp, f"{name}.so"), "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            publish_folder(tmp, final, os.path.join(tmp, f"{name}.so"))
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return library
