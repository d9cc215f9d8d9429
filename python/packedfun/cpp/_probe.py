# Persisted probes for packedfun.cpp (compiler versions, GPU archs), so warm hits spawn nothing.
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile

from . import _trust
from ._build import Tool, parse_arch_list

__all__ = ["tool_identity", "local_binding_flags", "gpu_archs"]

# Process-wide memos: (kind, path, args, mtime_ns, size) -> a tool probe's result; GPU set -> archs.
_tool_memo: dict[tuple, object] = {}
_gpu_memo: dict[str, list[str]] = {}

# Lets calls inside a -fPIC library bind to its own functions (direct calls that may inline)
# instead of through the PLT, as hidden visibility does, while every symbol stays exported.
_LOCAL_BINDING_FLAG = "-fno-semantic-interposition"


def _read_json(path: str) -> dict | None:
    folder = os.path.dirname(path)
    if not _trust.check_folder(folder, os.path.dirname(folder)):  # PermissionError if untrusted
        return None
    try:
        with open(path, encoding="utf-8") as f:
            value = json.load(f)
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _write_json(path: str, value: dict) -> None:
    """Writes atomically (temp file + rename) so a concurrent reader never sees half a file."""
    directory = os.path.dirname(path)
    try:
        _trust.make_private_dirs(directory, os.path.dirname(directory))
        fd, tmp = tempfile.mkstemp(prefix=".probe-", dir=directory)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(value, f)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache only costs a repeated probe


def _probe_version(tool: Tool) -> str:
    try:
        proc = subprocess.run(
            [*tool.argv(), "--version"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"<version probe failed: {err}>"
    return proc.stdout.decode("utf-8", errors="replace").strip()


def _probe_tool(tool: Tool, probe_dir: str, kind: str, field: str, probe, valid, extra=()):
    """``probe()`` for `tool`, run once per executable state (path, arguments, mtime, size):
    memoized in the process and persisted under `probe_dir` as ``{kind}-<digest>.json`` (the
    result under `field`; `extra` joins the record's key), so a warm cache hit never starts a
    process. A record that does not match, or whose result fails ``valid``, is probed again."""
    st = os.stat(tool.path)
    state = (tool.path, tool.args, st.st_mtime_ns, st.st_size)
    memo_key = (kind, *state)
    if memo_key in _tool_memo:
        return _tool_memo[memo_key]
    digest = hashlib.sha256(repr(state).encode()).hexdigest()[:24]
    record_path = os.path.join(probe_dir, f"{kind}-{digest}.json")
    key = [tool.path, list(tool.args), st.st_mtime_ns, st.st_size, *extra]
    record = _read_json(record_path)
    if record is not None and record.get("key") == key and valid(record.get(field)):
        value = record[field]
    else:
        value = probe()
        _write_json(record_path, {"key": key, field: value})
    _tool_memo[memo_key] = value
    return value


def tool_identity(tool: Tool, probe_dir: str) -> str:
    """Path, arguments and ``--version`` text of `tool` (the version probed once per executable
    state, see :func:`_probe_tool`)."""
    version = _probe_tool(
        tool, probe_dir, "tool", "version", lambda: _probe_version(tool), _is_text
    )
    return f"{tool.path} {' '.join(tool.args)}\n{version}"


def _accepts_flag(tool: Tool, flag: str) -> bool:
    try:
        proc = subprocess.run(
            [*tool.argv(), flag, "-x", "c++", "-fsyntax-only", "-"],
            input=b"int pf_probe;\n",
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def local_binding_flags(tool: Tool, probe_dir: str) -> list[str]:
    """``["-fno-semantic-interposition"]`` when `tool` accepts it, else ``[]`` (an older compiler);
    probed once per executable state, like :func:`tool_identity`."""
    flags = _probe_tool(
        tool,
        probe_dir,
        "flags",
        "flags",
        lambda: [_LOCAL_BINDING_FLAG] if _accepts_flag(tool, _LOCAL_BINDING_FLAG) else [],
        lambda v: isinstance(v, list) and all(map(_is_text, v)),
        extra=(_LOCAL_BINDING_FLAG,),
    )
    return list(flags)


def _is_text(value) -> bool:
    return isinstance(value, str)


def _gpu_fingerprint() -> str | None:
    """Which NVIDIA GPUs the driver shows, read from /proc without spawning anything."""
    root = "/proc/driver/nvidia/gpus"
    try:
        buses = sorted(os.listdir(root))
    except OSError:
        return None
    parts = []
    for bus in buses:
        try:
            with open(os.path.join(root, bus, "information"), encoding="utf-8") as f:
                parts.append(bus + "\n" + f.read())
        except OSError:
            parts.append(bus)
    return hashlib.sha256("\n".join(parts).encode()).hexdigest() if parts else None


def _query_compute_caps() -> list[str]:
    try:
        proc = subprocess.run(
            ["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    if proc.returncode != 0:
        return []
    try:
        return parse_arch_list(proc.stdout.decode())
    except ValueError:
        return []


def gpu_archs(probe_dir: str) -> list[str]:
    """CUDA architectures to build for: ``$PACKEDFUN_CUDA_ARCH``, else the present GPUs' (probed
    with nvidia-smi once per GPU set and persisted), else [] meaning the default."""
    env = os.environ.get("PACKEDFUN_CUDA_ARCH", "").strip()
    if env:
        try:
            return parse_arch_list(env)
        except ValueError as err:
            raise ValueError(f"environment variable PACKEDFUN_CUDA_ARCH: {err}") from None
    fingerprint = _gpu_fingerprint()
    if fingerprint is None:
        return []
    if fingerprint in _gpu_memo:
        return _gpu_memo[fingerprint]
    record_path = os.path.join(probe_dir, f"gpu-{fingerprint[:24]}.json")
    record = _read_json(record_path)
    if record is not None and isinstance(record.get("archs"), list):
        archs = [str(a) for a in record["archs"]]
    else:
        archs = _query_compute_caps()
        _write_json(record_path, {"archs": archs})
    _gpu_memo[fingerprint] = archs
    return archs
