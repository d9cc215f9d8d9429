# The scaling report runs end to end at small sizes and prints every row (no timing is asserted).
import os
import subprocess
import sys
from pathlib import Path

import packedfun

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "scaling.py"


def test_scaling_report_quick_run_prints_every_section(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(Path(packedfun.__file__).resolve().parents[1]), env.get("PYTHONPATH")])
    )
    out = tmp_path / "scaling.md"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--out", str(out)],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    text = out.read_text()
    for row in ("get_global_func", "PFTypeIsInstance", "Array: arr[i]", "adversarial", "nested",
                "threads"):  # fmt: skip
        assert row in text, row
    svg = out.with_suffix(".svg").read_text()
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>") and "polyline" in svg
