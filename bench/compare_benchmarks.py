"""Compare a run's best latencies and verdicts with the tables of BENCHMARKS.md (issue 12: the
refactor must give the same verdicts and latencies within 2%).

Usage: python3 bench/compare_benchmarks.py <run dir> <task> [--tol 0.02]
(<task>: flip2d or conv_relu_maxpool; the run dir of bench/h200_issue4.sh flip2d|conv is
/tmp/run_flip2d or /tmp/run_conv). Reads <run dir>/observations.parquet; for every row of the
task's first BENCHMARKS.md table, prints the recorded and the new median ms of the fastest
accepted config and their ratio, then the rejected observations. Exits 1 when a ratio is off by
more than --tol or a version recorded there has no accepted observation now.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import pyarrow.parquet as pq

HEADINGS = {"flip2d": "## flip2d", "conv_relu_maxpool": "## conv_relu_maxpool"}


def recorded(task: str, path: Path):
    """``[(dtype, role, version, median_ms)]`` of the first table under the task's heading."""
    lines = path.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(HEADINGS[task]))
    rows, in_table = [], False
    for line in lines[start + 1:]:
        if line.startswith("| dtype"):
            in_table = True
            continue
        if in_table and not line.startswith("|"):
            break
        if not in_table or line.startswith("|---"):
            continue
        cells = [c.strip().strip("*") for c in line.strip("|").split("|")]
        dtype, label, ms = cells[0], cells[1].strip("*"), float(cells[3].strip("*"))
        if label.startswith("torch.compile"):
            key = ("baseline", "compile")
        elif "(eager)" in label:
            key = ("baseline", "eager")
        elif "(external)" in label:
            key = ("external", None)
        else:
            key = ("candidate", re.match(r"v\d+", label).group(0))
        rows.append((dtype, *key, ms, label))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("task", choices=sorted(HEADINGS))
    ap.add_argument("--tol", type=float, default=0.02)
    ap.add_argument("--benchmarks", type=Path, default=Path(__file__).resolve().parent.parent / "BENCHMARKS.md")
    a = ap.parse_args()
    obs = pq.read_table(a.run_dir / "observations.parquet").to_pylist()
    bad = 0
    print(f"{'dtype':9s} {'version':44s} {'recorded ms':>11s} {'now ms':>9s} {'ratio':>7s}")
    for dtype, role, version, ms, label in recorded(a.task, a.benchmarks):
        got = [o["median_ms"] for o in obs if o["dtype"] == dtype and o["role"] == role
               and (version is None or o["version"] == version) and o["verdict"] == "accepted" and o["median_ms"]]
        now = min(got) if got else None
        ratio = now / ms if now else None
        off = ratio is None or abs(ratio - 1) > a.tol
        bad += off
        print(f"{dtype:9s} {label[:44]:44s} {ms:11.4f} {now if now else float('nan'):9.4f} "
              f"{ratio if ratio else float('nan'):7.3f}{'  <-- off' if off else ''}")
    rejected = [o for o in obs if o["verdict"] != "accepted"]
    print(f"\n{len(obs) - len(rejected)} accepted, {len(rejected)} rejected observations")
    for o in rejected:
        print(f"  rejected {o['dtype']} {o['version']} {o['config']}: {o['fault']}: {(o['reason'] or '')[:160]}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
