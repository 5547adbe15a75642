"""Driver: evaluate candidates in-process on the CPU plan the way tests/test_redteam_s10_holes.py::_evaluate
does (listed shapes cut to --shapes, --trials trials, no derived shapes), print verdict / reason /
library_calls, and append the lines to cpu_summary.txt.
Run from the repository root:
    export PYTHONPATH=$PWD TRITON_INTERPRET=1
    python tests/adversarial/redteam_s16b/run_eval.py [--task conv_relu_maxpool] [--shapes 1] [--trials 1] FILE...
"""
import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("TRITON_INTERPRET", "1")

from test_redteam_s10_holes import SPECS, _evaluate  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--task", default="conv_relu_maxpool")
ap.add_argument("--shapes", type=int, default=1)
ap.add_argument("--trials", type=int, default=1)
ap.add_argument("files", nargs="+")
a = ap.parse_args()
t0 = time.time()
got = _evaluate(SPECS / a.task / "spec.yaml", [Path(f).resolve() for f in a.files], shapes=a.shapes, trials=a.trials)
lines = []
for name, (verdict, reason, calls, _audit) in got.items():
    lines.append(f"{a.task} shapes={a.shapes} trials={a.trials} | {name} | {verdict} | "
                 f"labels={calls or None} | {reason[:400]}")
lines.append(f"  ({time.time() - t0:.0f} s)")
print("\n".join(lines))
with open(Path(__file__).parent / "cpu_summary.txt", "a") as f:
    f.write("\n".join(lines) + "\n")
