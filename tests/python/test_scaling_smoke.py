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


def test_verdicts_compare_growth_with_the_reference_row():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from scaling import row_verdicts

    ref = "reference: Python list walk"
    rows = [
        ("grows with its reference", "O(1)", {10: 10.0, 10**6: 40.0}, ref),
        ("grows beyond its reference", "O(1)", {10: 10.0, 10**6: 400.0}, ref),
        ("grows, no reference", "O(1)", {10: 10.0, 10**6: 40.0}),
        ("flat", "O(1)", {10: 10.0, 10**6: 20.0}, ref),
        (ref, "O(1)", {10: 5.0, 10**6: 25.0}),
    ]
    assert row_verdicts(rows) == [
        "flat relative to Python list walk (4.0× vs its 5.0×)",
        "GROWS 40.0× (8.0× beyond Python list walk)",
        "GROWS 4.0×",
        "flat",
        "reference: grows 5.0×",
    ]
