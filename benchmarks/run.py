# Side-by-side benchmark of packedfun and its peers: `python benchmarks/run.py [--quick]`.
"""Build the peers, run every case interleaved in this one process, print the table.

Ratios are medians relative to the floor (a hand-written CPython C extension of the same C bodies)
measured in the same run. The table also goes to ``benchmarks/results/latest.md`` (full runs only,
unless ``--out`` says otherwise).
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import platform
import sys
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import build_peers  # noqa: E402
import harness  # noqa: E402
import peers as peers_mod  # noqa: E402
import report  # noqa: E402


def _parse(argv: list | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a few short samples (smoke test)")
    parser.add_argument("--repeat", type=int, help="samples per peer per case (default 101)")
    parser.add_argument("--sample-ms", type=float, help="target length of one sample (default 0.5)")
    parser.add_argument("--peers", help="comma-separated peers to load (default: all)")
    parser.add_argument(
        "--cases", help="only cases whose name contains this text (alternatives separated by '|')"
    )
    parser.add_argument("--no-build", action="store_true", help="use the peers already built")
    parser.add_argument("--out", help="markdown file for the table ('-' for none)")
    parser.add_argument("--verbose", action="store_true", help="print build logs of failed peers")
    args = parser.parse_args(argv)
    args.repeat = args.repeat or (3 if args.quick else 101)
    args.sample_ms = args.sample_ms or (0.1 if args.quick else 0.5)
    if args.out is None:
        args.out = "-" if args.quick else str(HERE / "results" / "latest.md")
    return args


def _case_files() -> list:
    return sorted(p.stem for p in HERE.glob("cases_*.py"))


def _collect_cases(peers: peers_mod.Peers, errors: list) -> list:
    cases = []
    for stem in _case_files():
        try:
            module = importlib.import_module(stem)
            cases.extend(module.make_cases(peers))
        except Exception:
            errors.append(f"{stem}: {traceback.format_exc()}")
    return cases


def main(argv: list | None = None) -> int:
    """Run the benchmark; returns 1 when a case file failed or a peer computed a wrong result."""
    args = _parse(argv)
    only = set(args.peers.split(",")) if args.peers else None
    build = build_peers.BuildResult(out_dir=build_peers.OUT_DIR)
    if not args.no_build:
        print("building peers in", build_peers.BUILD_DIR, flush=True)
        build = build_peers.build(verbose=args.verbose)
    peers = peers_mod.load(build.out_dir, build.missing, only)
    errors: list = []
    cases = _collect_cases(peers, errors)
    if args.cases:
        wanted = args.cases.split("|")
        cases = [c for c in cases if any(text in c.name for text in wanted)]
    results = []
    for case in cases:
        print(f"  measuring: {case.name}", file=sys.stderr, flush=True)
        results.append(harness.measure(case, args.repeat, args.sample_ms * 1e6))
    header = {
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {platform.processor() or platform.system()}",
        "samples": f"{args.repeat} per peer per case, ~{args.sample_ms} ms each, interleaved",
        "load average at start": report.load_average(),
        "versions": report.peer_versions(peers),
        "packedfun backend": report.packedfun_backend(peers),
    }
    text = report.render(results, peers, header)
    print(text)
    if args.out != "-":
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text + "\n")
        print(f"written to {args.out}", file=sys.stderr)
    for error in errors:
        print("case file failed:", error, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
