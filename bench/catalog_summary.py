"""Summarise catalog runs: per task and dtype, the best version against v0, eager, torch.compile and
the ceilings, and issue 15's aggregate targets.

    python bench/catalog_summary.py RUN_DIR [RUN_DIR ...] [--readme]

Each RUN_DIR is a run directory of ``python -m kernelsynth task=X ...`` (or a folder holding such
directories, e.g. what bench/h200_catalog.sh writes). Rows come from ``observations.parquet``, or,
for a run stopped before its end (a timeout), from the per-observation files
``observations/*.parquet`` it had written (read without checking their HMAC tags: a summary, not a
dataset). Only verified and timed rows count as latencies.

Per (task, dtype), one markdown row: the best version (lowest median ms over its accepted configs,
v1 and later; v0 when nothing beats it), its config and latency, speedup vs v0, vs eager and vs
torch.compile (ratios of medians), % of the measured copy ceiling when the task is memory-bound
or % of the measured bf16 matmul ceiling when compute-bound (the bound whose floor -- bytes / copy
bandwidth or flops / matmul rate, kernelsynth/ceilings.py -- is the larger; bf16's is the only matmul
ceiling measured, so a float32 TF32 task is held to it too), and whether every
observation of the task and dtype was accepted (``all correct``: n accepted / n verified; a
rejected config of any version shows here).

Then the targets of issue 15: median % of the copy ceiling over the memory-bound rows, geomean of
best / torch.compile over all rows, the rows below 0.9x torch.compile, and rows whose best is below
1.5x v0. ``--readme``: also one line per task for the README's task table ("best measured result").
``--versions``: also one row per (task, dtype, version) -- v0, v1, ... and the baselines -- with
its best accepted median, x the previous version (is each step of the ladder faster?), x v0, x
eager, % of the copy ceiling, n accepted / n verified, and the first rejection reason if any.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path
from typing import Dict, List, Optional


def _read_rows(run_dir: Path) -> List[dict]:
    import pyarrow.parquet as pq

    whole = run_dir / "observations.parquet"
    if whole.is_file():
        return pq.read_table(whole).to_pylist()
    rows = []
    for f in sorted((run_dir / "observations").glob("*.parquet")):
        rows.extend(pq.read_table(f).to_pylist())
    return rows


def run_dirs(paths: List[str]) -> List[Path]:
    """The run directories under ``paths``: each path itself when it holds observations, else
    its sub-folders that do (one level)."""
    out = []
    for p in map(Path, paths):
        if (p / "observations.parquet").is_file() or (p / "observations").is_dir():
            out.append(p)
        else:
            out.extend(d for d in sorted(p.iterdir()) if d.is_dir() and
                       ((d / "observations.parquet").is_file() or (d / "observations").is_dir()))
    return out


def _best(rows: List[dict], version: str) -> Optional[dict]:
    timed = [r for r in rows if r["version"] == version and r["verdict"] == "accepted" and r.get("median_ms")]
    return min(timed, key=lambda r: r["median_ms"]) if timed else None


def _ceilings(rows: List[dict]) -> Dict[str, Optional[float]]:
    """The run's copy GB/s and matmul TFLOP/s, recovered from any row's derived columns."""
    copy = matmul = None
    for r in rows:
        if copy is None and r.get("pct_of_copy_ceiling") and r.get("achieved_gbps"):
            copy = 100.0 * r["achieved_gbps"] / r["pct_of_copy_ceiling"]
        if matmul is None and r.get("pct_of_matmul_ceiling") and r.get("achieved_tflops"):
            matmul = 100.0 * r["achieved_tflops"] / r["pct_of_matmul_ceiling"]
    return {"copy_gbps": copy, "matmul_tflops": matmul}


def summarise(rows: List[dict]) -> List[dict]:
    """One dict per (task, dtype): see the module docstring for the fields."""
    out = []
    keys = sorted({(r["task"], r["dtype"]) for r in rows})
    for task, dtype in keys:
        group = [r for r in rows if r["task"] == task and r["dtype"] == dtype]
        ceil = _ceilings([r for r in rows if r["task"] == task])
        versions = sorted({r["version"] for r in group if r["role"] == "candidate"})
        bests = {v: _best(group, v) for v in versions}
        ladder = [b for v, b in bests.items() if b is not None and v != "v0"] or [b for b in bests.values() if b]
        best = min(ladder, key=lambda r: r["median_ms"]) if ladder else None
        v0, eager, comp = bests.get("v0"), _best(group, "eager"), _best(group, "compile")
        verified = [r for r in group if r["verdict"] in ("accepted", "rejected")]
        one = best or v0 or eager or comp or group[0]
        nbytes, flops = one.get("bytes"), one.get("flops")
        mem_floor = nbytes / (ceil["copy_gbps"] * 1e9) if nbytes and ceil["copy_gbps"] else None
        mm_floor = flops / (ceil["matmul_tflops"] * 1e12) if flops and ceil["matmul_tflops"] else None
        bound = "compute" if mm_floor is not None and (mem_floor is None or mm_floor > mem_floor) else "memory"

        def ratio(base):
            return base["median_ms"] / best["median_ms"] if best and base else None

        pct = None
        if best:
            pct = best.get("pct_of_matmul_ceiling") if bound == "compute" else best.get("pct_of_copy_ceiling")
        out.append({
            "task": task, "dtype": dtype, "bound": bound,
            "best": best["version"] if best else None, "best_name": best["name"] if best else None,
            "config": best["config"] if best else None, "ms": best["median_ms"] if best else None,
            "x_v0": ratio(v0), "x_eager": ratio(eager), "x_compile": ratio(comp), "pct": pct,
            "eager_ms": eager["median_ms"] if eager else None, "compile_ms": comp["median_ms"] if comp else None,
            "n_accepted": sum(r["verdict"] == "accepted" for r in verified), "n_verified": len(verified),
            "n_other": sum(r["verdict"] not in ("accepted", "rejected") for r in group),
        })
    return out


def targets(summary: List[dict]) -> Dict[str, object]:
    """Issue 15's aggregates over the summary rows."""
    mem = [s["pct"] for s in summary if s["bound"] == "memory" and s["pct"] is not None]
    comp = [s["x_compile"] for s in summary if s["x_compile"]]
    return {
        "median_pct_of_copy_memory_bound": statistics.median(mem) if mem else None, "n_memory_bound": len(mem),
        "geomean_x_compile": math.exp(sum(map(math.log, comp)) / len(comp)) if comp else None, "n_compared": len(comp),
        "below_0_9x_compile": [f"{s['task']}/{s['dtype']}" for s in summary if s["x_compile"] and s["x_compile"] < 0.9],
        "below_1_5x_v0": [f"{s['task']}/{s['dtype']}" for s in summary if s["x_v0"] is not None and s["x_v0"] < 1.5],
        "not_all_correct": [f"{s['task']}/{s['dtype']}" for s in summary if s["n_accepted"] < s["n_verified"]],
    }


def _f(x, fmt):
    return "-" if x is None else format(x, fmt)


def markdown(summary: List[dict]) -> str:
    lines = ["| task | dtype | bound | best version | best config | median ms | x v0 | x eager | x torch.compile "
             "| % of ceiling | all correct |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for s in summary:
        cfg = ", ".join(f"{k}={v}" for k, v in json.loads(s["config"]).items()) if s["config"] else "-"
        ceiling = "-" if s["pct"] is None else f"{s['pct']:.1f}% {'bf16 matmul' if s['bound'] == 'compute' else 'copy'}"
        correct = ("yes" if s["n_accepted"] == s["n_verified"] else "no") + f" ({s['n_accepted']}/{s['n_verified']})"
        lines.append(f"| {s['task']} | {s['dtype']} | {s['bound']} | {s['best'] or '-'} {s['best_name'] or ''} | {cfg} "
                     f"| {_f(s['ms'], '.4f')} | {_f(s['x_v0'], '.2f')} | {_f(s['x_eager'], '.2f')} "
                     f"| {_f(s['x_compile'], '.2f')} | {ceiling} | {correct} |")
    return "\n".join(lines)


def readme_lines(summary: List[dict]) -> str:
    """One line per task: the best measured result of each dtype, for the README's task table."""
    out = []
    for task in sorted({s["task"] for s in summary}):
        cells = []
        for s in (s for s in summary if s["task"] == task and s["ms"] is not None):
            what = "bf16 matmul" if s["bound"] == "compute" else "copy"  # the one matmul ceiling measured
            cells.append(f"{s['best']} {s['dtype']}: {_f(s['x_v0'], '.2f')}x v0, {_f(s['x_compile'], '.2f')}x "
                         f"torch.compile, {_f(s['pct'], '.0f')}% of the {what} ceiling")
        out.append(f"`{task}` | " + ("; ".join(cells) if cells else "not measured"))
    return "\n".join(out)


def ladder(rows: List[dict]) -> List[dict]:
    """One dict per (task, dtype, version), ladder versions in order then the baselines: best
    accepted median (``ms``), ratios to the previous ladder version, v0 and eager (``x_prev``,
    ``x_v0``, ``x_eager``: earlier / this), ``pct_copy``, counts and the first rejection reason."""
    out = []
    for task, dtype in sorted({(r["task"], r["dtype"]) for r in rows}):
        group = [r for r in rows if r["task"] == task and r["dtype"] == dtype]
        cands = sorted({r["version"] for r in group if r["role"] == "candidate"})
        names = cands + [b for b in ("eager", "compile") if any(r["version"] == b for r in group)]
        bests = {v: _best(group, v) for v in names}
        prev = None
        for v in names:
            mine = [r for r in group if r["version"] == v]
            b = bests[v]

            def x(base):
                return base["median_ms"] / b["median_ms"] if base and b else None

            rejected = [r for r in mine if r["verdict"] != "accepted"]
            out.append({
                "task": task, "dtype": dtype, "version": v, "name": mine[0].get("name"), "ms": b["median_ms"] if b else None,
                "x_prev": x(bests.get(prev)) if v in cands and prev else None, "x_v0": x(bests.get("v0")),
                "x_eager": x(bests.get("eager")), "pct_copy": b.get("pct_of_copy_ceiling") if b else None,
                "n_accepted": sum(r["verdict"] == "accepted" for r in mine), "n": len(mine),
                "reason": ((rejected[0].get("reason") or rejected[0]["verdict"]).splitlines() or [""])[0][:160]
                if rejected else "",
            })
            if v in cands:
                prev = v
    return out


def ladder_markdown(table: List[dict]) -> str:
    lines = ["| task | dtype | version | median ms | x previous | x v0 | x eager | % of copy | accepted | first rejection |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for t in table:
        lines.append(f"| {t['task']} | {t['dtype']} | {t['version']} {t['name'] or ''} | {_f(t['ms'], '.4f')} "
                     f"| {_f(t['x_prev'], '.2f')} | {_f(t['x_v0'], '.2f')} | {_f(t['x_eager'], '.2f')} "
                     f"| {_f(t['pct_copy'], '.1f')} | {t['n_accepted']}/{t['n']} | {t['reason'] or '-'} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--readme", action="store_true")
    ap.add_argument("--versions", action="store_true", help="also the per-version ladder table")
    args = ap.parse_args(argv)
    rows = [r for d in run_dirs(args.runs) for r in _read_rows(d)]
    if not rows:
        print("no observations found under", args.runs)
        return 1
    summary = summarise(rows)
    print(markdown(summary))
    t = targets(summary)
    print()
    print(f"- median % of the copy ceiling over the memory-bound rows: {_f(t['median_pct_of_copy_memory_bound'], '.1f')}"
          f" ({t['n_memory_bound']} rows; target >= 90)")
    print(f"- geomean best / torch.compile: {_f(t['geomean_x_compile'], '.3f')}x ({t['n_compared']} rows; target >= 1.2)")
    print(f"- below 0.9x torch.compile: {', '.join(t['below_0_9x_compile']) or 'none'}")
    print(f"- best below 1.5x v0: {', '.join(t['below_1_5x_v0']) or 'none'}")
    print(f"- not every observation accepted: {', '.join(t['not_all_correct']) or 'none'}")
    if args.readme:
        print()
        print(readme_lines(summary))
    if args.versions:
        print()
        print(ladder_markdown(ladder(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
