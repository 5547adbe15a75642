"""The precision rule's numbers (references/VERIFICATION.md rule 23) per observation of one or more
run directories: policy, the candidate's RMS error over the rounding scale, the honest RMS, the
bound and the ratio RMS / bound (accepted below 1; the margins VERIFICATION.md reports), the tail
fraction / its bound and the lower-format fraction / its bound.

    python bench/precision_report.py <run dir> [<run dir> ...]
"""

import sys
from pathlib import Path

import pyarrow.parquet as pq

from kernelsynth.store import run_rows


def pair(r, stat):
    v, b = r.get(f"precision_{stat}"), r.get(f"precision_{stat}_bound")
    return "-" if v is None or b is None else f"{v:.2e}/{b:.2e}"


def main(run_dirs):
    rows = []
    for d in run_dirs:
        rows += run_rows(d)
    fmt = "{:<18} {:<34} {:<9} {:<9} {:<5} {:>10} {:>10} {:>10} {:>6} {:>17} {:>17}  {}"
    print(fmt.format("task", "version/config", "dtype", "verdict", "pol", "rms", "honest", "bound", "ratio",
                     "tail/bound", "low/bound", "reason"))
    for r in rows:
        e = lambda v: "-" if v is None else f"{v:.3e}"  # noqa: E731
        ratio = "-" if not r.get("precision_rms") else f"{r['precision_rms'] / r['precision_bound']:.2f}"
        print(fmt.format(r["task"][:18], f"{r['version']} {r['config']}"[:34], r["dtype"], r["verdict"],
                         r.get("precision_policy") or "-", e(r.get("precision_rms")), e(r.get("precision_honest_rms")),
                         e(r.get("precision_bound")), ratio, pair(r, "tail"), pair(r, "low"), (r["reason"] or "").splitlines()[0][:90] if r["reason"] else ""))


if __name__ == "__main__":
    main(sys.argv[1:])
