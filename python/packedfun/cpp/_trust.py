# Trust rules of the packedfun.cpp cache: owner-only folders, ownership checks, content digests.
"""Whoever can write into a cache folder can run code in every process that loads from it, so:

* every folder packedfun creates under a cache root is 0700 and every file 0600, whatever the
  umask (:func:`make_private_dirs`, :func:`make_private_tree`);
* before a folder is built into or loaded from, it and each parent up to the cache root must be a
  real directory (not a symbolic link, the root excepted) owned by the current user and not
  writable by group or others (:func:`check_folder`), else :class:`PermissionError`;
* a published library is loaded only if its sha256 matches the digest recorded next to it when it
  was published (:func:`record_digest`, :func:`verified`).

``PACKEDFUN_CACHE_SHARED=1`` accepts a deliberately shared cache (owner and mode checks become a
warning, folders are created with the umask's modes); digests are verified regardless.
"""

from __future__ import annotations

import hashlib
import os
import stat
import warnings

__all__ = [
    "SHARED_ENV",
    "SharedCacheWarning",
    "shared_cache",
    "make_private_dirs",
    "make_private_tree",
    "check_folder",
    "file_digest",
    "record_digest",
    "recorded_digest",
    "verified",
]

SHARED_ENV = "PACKEDFUN_CACHE_SHARED"
_DIGEST_SUFFIX = ".sha256"
_warned: set[str] = set()


class SharedCacheWarning(UserWarning):
    """A cache folder fails the ownership checks but ``PACKEDFUN_CACHE_SHARED=1`` accepts it."""


def shared_cache() -> bool:
    """Whether ``$PACKEDFUN_CACHE_SHARED`` opts into a shared cache ("1"/"0", unset means "0")."""
    value = os.environ.get(SHARED_ENV, "").strip()
    if value in ("", "0"):
        return False
    if value == "1":
        return True
    raise ValueError(f"environment variable {SHARED_ENV} must be '0' or '1', got {value!r}")


def _problem(st: os.stat_result) -> str | None:
    """Why a folder with this lstat (stat for the root) may not hold code we load, or None."""
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link (a folder under the cache root must be a real directory)"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a directory"
    uid = os.geteuid()
    if st.st_uid != uid:
        return f"is owned by uid {st.st_uid}, not by the current user (uid {uid})"
    if st.st_mode & 0o022:
        return f"is writable by group or others (mode {stat.S_IMODE(st.st_mode):03o})"
    return None


def _refuse(folder: str, reason: str, shared: bool) -> None:
    fix = (
        f"use a cache folder that you own and only you can write (e.g. `chmod 700 {folder}` if it "
        "is yours, or point PACKEDFUN_CACHE_DIR or build_directory= at a new folder); "
        f"set {SHARED_ENV}=1 only for a deliberately shared cache whose writers you trust"
    )
    message = (
        f"packedfun.cpp refuses the cache folder {folder!r}: it {reason}; anyone who can write "
        f"there could plant a library this process would load. Fix: {fix}"
    )
    if not shared:
        raise PermissionError(message)
    if folder not in _warned:
        _warned.add(folder)
        warnings.warn(
            f"{SHARED_ENV}=1 accepts the cache folder {folder!r} although it {reason}",
            SharedCacheWarning,
            stacklevel=4,
        )


def check_folder(folder: str, root: str) -> bool:
    """Checks `folder` and its parents up to `root` (inclusive); False if `folder` is missing.

    Raises
    ------
    PermissionError
        When one of them is a symbolic link (the root may be one: its target is checked), is
        owned by another user, or is writable by group or others; the message names the folder,
        the reason and the fix. With ``PACKEDFUN_CACHE_SHARED=1`` a warning instead.
    ValueError
        When ``PACKEDFUN_CACHE_SHARED`` is neither "0" nor "1".
    """
    shared = shared_cache()
    root = os.path.abspath(root)
    path = os.path.abspath(folder)
    chain = [path]
    while path != root:
        parent = os.path.dirname(path)
        if parent == path:
            raise ValueError(f"folder {folder!r} is not inside the cache root {root!r}")
        chain.append(parent)
        path = parent
    for current in reversed(chain):
        try:
            st = os.stat(current) if current == root else os.lstat(current)
        except FileNotFoundError:
            return False
        reason = _problem(st)
        if reason is not None:
            _refuse(current, reason, shared)
    return True


def _mkdir(path: str, shared: bool) -> None:
    try:
        os.mkdir(path, 0o777 if shared else 0o700)
    except FileExistsError:
        return
    if not shared:
        os.chmod(path, 0o700)  # a umask like 0o277 would otherwise leave it unusable


def make_private_dirs(folder: str, root: str) -> None:
    """Creates `root` and the folders down to `folder` (0700 each), then checks them all."""
    shared = shared_cache()
    root = os.path.abspath(root)
    parent = os.path.dirname(root)
    if parent and not os.path.isdir(parent):
        os.makedirs(parent, exist_ok=True)  # above the root: ordinary folders (e.g. ~/.cache)
    _mkdir(root, shared)
    relative = os.path.relpath(os.path.abspath(folder), root)
    path = root
    if relative != os.curdir:
        for part in relative.split(os.sep):
            path = os.path.join(path, part)
            _mkdir(path, shared)
    check_folder(folder, root)


def make_private_tree(top: str) -> None:
    """Owner-only modes for everything under `top` (files 0600, folders 0700) before publishing."""
    if shared_cache():
        return
    os.chmod(top, 0o700)
    for base, dirs, files in os.walk(top):
        for name in dirs:
            os.chmod(os.path.join(base, name), 0o700, follow_symlinks=False)
        for name in files:
            path = os.path.join(base, name)
            if not os.path.islink(path):
                os.chmod(path, 0o600)


def file_digest(path: str) -> str | None:
    """sha256 of a regular file that is ours and not writable by others; None otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        if not shared_cache() and (st.st_uid != os.geteuid() or st.st_mode & 0o022):
            return None
        h = hashlib.sha256()
        while chunk := os.read(fd, 1 << 20):
            h.update(chunk)
        return h.hexdigest()
    finally:
        os.close(fd)


def record_digest(library: str) -> str:
    """Writes ``<library>.sha256`` (0600) holding the library's digest; returns the digest.

    Call it before the folder holding `library` is published (renamed into place), so that a
    published library always has its digest next to it.
    """
    digest = file_digest(library)
    if digest is None:
        raise OSError(f"cannot read the built library {library!r} to record its digest")
    fd = os.open(library + _DIGEST_SUFFIX, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(digest + "\n")
    return digest


def recorded_digest(library: str) -> str | None:
    """The digest recorded for `library` when it was published, or None."""
    try:
        with open(library + _DIGEST_SUFFIX, encoding="ascii") as f:
            text = f.read(100).strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text if len(text) == 64 else None


def verified(library: str) -> bool:
    """Whether `library` exists and its content matches the digest recorded at publication."""
    expected = recorded_digest(library)
    return expected is not None and file_digest(library) == expected
