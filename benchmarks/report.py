# Formats benchmark results as a markdown table: ns/call, ratio to the floor, target and verdict.
from __future__ import annotations

import importlib.metadata
import os

from harness import FLOOR, PEER_ORDER, Result

_DISTRIBUTIONS = {
    "packedfun": "packedfun",
    "tvm-ffi": "apache-tvm-ffi",
    "nanobind": "nanobind",
}


def peer_versions(peers) -> str:
    """Return 'name version' for every loaded peer that is a Python distribution."""
    parts = []
    for name, dist in _DISTRIBUTIONS.items():
        if name in peers.loaded:
            try:
                parts.append(f"{name} {importlib.metadata.version(dist)}")
            except importlib.metadata.PackageNotFoundError:
                parts.append(f"{name} (in-tree)")
    return ", ".join(parts) or "-"


def load_average() -> str:
    """Return the 1-minute load average and core count, with a warning when the machine is busy."""
    load, cores = os.getloadavg()[0], os.cpu_count() or 1
    text = f"{load:.2f} on {cores} cores"
    return text + (" (busy machine: expect noisy numbers)" if load > 0.5 * cores else "")


def packedfun_backend(peers) -> str:
    """Return the backend the packedfun column measured ("_core" or "ctypes")."""
    peer = peers.loaded.get("packedfun")
    return getattr(peer.raw, "BACKEND", "?") if peer is not None else "-"


def _cell(result: Result, peer: str, best: bool = False) -> str:
    table = result.best if best else result.ns
    ns = table.get(peer)
    if ns is None:
        return "—"
    floor = table.get(FLOOR)
    value = f"{ns / 1000:.2f} µs" if result.case.show_us else f"{ns:.0f} ns"
    if floor and peer != FLOOR:
        value += f" ({ns / floor:.2f}×)"
    return value


def _verdict(result: Result) -> str:
    if result.case.target is None:
        return ""
    ok = result.case.target.check(result.ns)
    return {True: "yes", False: "**no**", None: "n/a"}[ok]


def _columns(results: list) -> list:
    seen = {peer for r in results for peer in r.ns}
    return [p for p in PEER_ORDER if p in seen] + sorted(seen - set(PEER_ORDER))


def render(results: list, peers, header: dict) -> str:
    """Return the whole report: a header, the table, and the peers that could not be measured."""
    columns = _columns(results)
    lines = ["# packedfun benchmark", ""]
    lines += [f"- {key}: {value}" for key, value in header.items()]
    lines += [
        "- times: median per call, minus an empty loop of the same shape; (×) = ratio to floor",
        "",
        "| case | " + " | ".join(columns) + " | target (packedfun) | met |",
        "|---|" + "---:|" * len(columns) + "---|---|",
    ]
    for r in results:
        cells = [_cell(r, peer) for peer in columns]
        target = r.case.target.text if r.case.target else ""
        lines.append(f"| {r.case.name} | " + " | ".join(cells) + f" | {target} | {_verdict(r)} |")
    # Best-of beside the medians: the least disturbed sample of each loop, minus the least
    # disturbed empty loop (on a busy machine, closer to the code's own cost than the median).
    lines += [
        "",
        "Best of the samples (the fastest sample of each loop minus the fastest empty loop):",
        "",
        "| case | " + " | ".join(columns) + " |",
        "|---|" + "---:|" * len(columns),
    ]
    for r in results:
        cells = [_cell(r, peer, best=True) for peer in columns]
        lines.append(f"| {r.case.name} | " + " | ".join(cells) + " |")
    if peers.missing:
        lines.append("")
        lines += [f"- not measured: {name} ({why})" for name, why in sorted(peers.missing.items())]
    return "\n".join(lines)
