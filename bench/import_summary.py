"""Summary of bench/h200_import.sh: per imported task, v0 (eager) and the inductor candidate's
verdicts and median latencies, inductor vs eager speedup, the trajectories' verdicts and the
records written. Usage: python3 bench/import_summary.py SCRATCH (the script's folder: specs/
from the importer, runs/<task>/ one run directory per task)."""

import json
import sys
from pathlib import Path

import pyarrow.parquet as pq


def _table(path: Path):
    return pq.read_table(path).to_pylist() if path.is_file() else []


def main(scratch: Path) -> None:
    report = json.loads((scratch / "specs" / "import_report.json").read_text()) \
        if (scratch / "specs" / "import_report.json").is_file() else {}
    problems = report.get("problems", report if isinstance(report, list) else [])
    imported = sorted(p.name for p in (scratch / "specs").glob("kb_*") if (p / "spec.yaml").is_file())
    failed = [p for p in problems if p.get("status") != "imported"]
    print(f"imported: {len(imported)} tasks from {len(problems)} problems; not imported: {len(failed)}")
    for p in failed:
        print(f"- {p.get('source')}: {p.get('reason')}")
    print()
    print("| task | v0 eager ms | inductor ms | inductor vs eager | inductor verdict | library calls | "
          "generated kernels | trajectory v0->inductor | records |")
    print("|---|---|---|---|---|---|---|---|---|")
    n_records = n_ran = 0
    speedups = []
    for task in imported:
        run = scratch / "runs" / task
        obs = _table(run / "observations.parquet")
        trajs = _table(run / "trajectories.parquet")
        recs = sum(len(_table(f)) for f in (run / "dataset" / "data").glob("*.parquet")) \
            if (run / "dataset" / "data").is_dir() else 0
        if not obs:
            print(f"| {task} | - | - | - | not run or no observations | | | | 0 |")
            continue
        n_ran += 1
        n_records += recs
        v0 = next((o for o in obs if o["role"] == "candidate" and o["version"] == "v0"), None)
        ind = next((o for o in obs if o["role"] == "inductor"), None)
        facts = {}
        if ind is not None:
            meta = run / (ind["name"] + ".json")
            facts = json.loads(meta.read_text()) if meta.is_file() else {}
        v0_ms = v0 and v0.get("median_ms")
        ind_ms = ind and ind.get("median_ms")
        sp = v0_ms / ind_ms if v0_ms and ind_ms else None
        if sp:
            speedups.append(sp)
        verdict = "no observation" if ind is None else ind["verdict"] + (
            "" if ind["verdict"] == "accepted" else f" ({(ind.get('reason') or '').splitlines()[0][:120]})")
        traj = next((t for t in trajs if t.get("source") == "inductor"), None)
        tv = "-" if traj is None else ("accepted" if traj["accepted"] else "rejected: " + "; ".join(traj["reasons"])[:160])
        fmt = lambda x: f"{x:.4f}" if x else "-"
        print(f"| {task} | {fmt(v0_ms)} | {fmt(ind_ms)} | {f'{sp:.2f}x' if sp else '-'} | {verdict} | "
              f"{(ind or {}).get('library_calls') or '-'} | {facts.get('n_kernels', '-')} | {tv} | {recs} |")
    print(f"\nran: {n_ran}; records: {n_records}; inductor timed on {len(speedups)} tasks"
          + (f", speedup vs eager min {min(speedups):.2f}x, max {max(speedups):.2f}x" if speedups else ""))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
