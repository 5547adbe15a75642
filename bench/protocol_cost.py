"""Cost of the verification protocol per candidate, from one or more run directories.

    python bench/protocol_cost.py <run dir> [<run dir> ...]

Prints one row per observation (task, version, dtype, verdict, verify_s, timing_s, wall_s) and,
per task and role, the median seconds: ``verify_s`` is the correctness protocol (listed, derived
and timing-shape trials), ``timing_s`` the timed measurement with its integrity checks, ``wall_s``
the whole job in the worker (imports, first call and JIT compile included); and how many of the
reference computations the worker's memo already held (kernelsynth/verify/refmemo.py).
Used for references/VERIFICATION.md ("Cost per candidate").
"""

import statistics
import sys
from pathlib import Path

import pyarrow.parquet as pq

from kernelsynth.store import run_rows


def main(run_dirs):
    rows = []
    for d in run_dirs:
        rows += run_rows(d)
    fmt = "{:<18} {:<10} {:<22} {:<9} {:<9} {:>9} {:>9} {:>9}"
    print(fmt.format("task", "role", "version/config", "dtype", "verdict", "verify_s", "timing_s", "wall_s"))
    for r in rows:
        cell = lambda v: "-" if v is None else f"{v:.2f}"  # noqa: E731
        print(fmt.format(r["task"][:18], r["role"], f"{r['version']} {r['config']}"[:22], r["dtype"], r["verdict"],
                         cell(r["verify_s"]), cell(r["timing_s"]), cell(r["wall_s"])))
    print()
    groups = {}
    for r in rows:
        groups.setdefault((r["task"], r["role"]), []).append(r)
    for (task, role), rs in sorted(groups.items()):
        med = lambda k: statistics.median([r[k] for r in rs if r[k] is not None] or [float("nan")])  # noqa: E731
        hits = [(r.get("reference_hits"), r.get("reference_calls")) for r in rs if r.get("reference_calls")]
        memo = (f" reference memo: {sum(h for h, _ in hits)}/{sum(c for _, c in hits)} hits over {len(hits)} jobs"
                if hits else " reference memo: off")
        print(f"{task} {role}: n={len(rs)} median verify_s={med('verify_s'):.2f} timing_s={med('timing_s'):.2f} "
              f"wall_s={med('wall_s'):.2f}{memo}")


if __name__ == "__main__":
    main(sys.argv[1:])
