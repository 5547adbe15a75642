"""Compare a run on 1 GPU with the same run on 2 GPUs (bench/h200_multi.sh, issue 17).

    python3 bench/multi_compare.py RUN_DIR_1GPU RUN_DIR_2GPU

Prints: each run's observations, wall time (run.json ``wall_s``; an interrupted run: the span of
its observation timestamps) and observations per minute, the throughput ratio (issue 17: >= 1.8),
whether every observation key has the same verdict in both, whether the records are the same
(id, dtype, versions of the ladder with their verdicts, best version), the latency ratio
2-GPU / 1-GPU of every key timed in both (issue 17: within 2 %: the count outside, the worst),
and the 2-GPU run's observations per device (``device_index``). Exit status 0 when every
criterion holds, 1 otherwise. Reads only the run directories (no torch).
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernelsynth.store import run_rows  # noqa: E402


def _wall(run: Path, rows) -> float:
    info = run / "run.json"
    if info.is_file():
        return float(json.loads(info.read_text())["wall_s"])
    stamps = sorted(datetime.fromisoformat(r["timestamp"]) for r in rows if r.get("timestamp"))
    return (stamps[-1] - stamps[0]).total_seconds() if len(stamps) > 1 else float("nan")


def _records(run: Path):
    import pyarrow.parquet as pq

    files = sorted((run / "dataset" / "data").glob("*.parquet"))
    out = set()
    for f in files:
        for r in pq.read_table(f).to_pylist():
            ladder = tuple((v["version"], v["verdict"]) for v in r["trajectory"])
            out.add((r["id"], r["dtype"], ladder, r["metrics"]["best_version"]))
    return out


def main(one: Path, two: Path) -> int:
    a, b = run_rows(one), run_rows(two)
    wa, wb = _wall(one, a), _wall(two, b)
    ratio = (len(b) / wb) / (len(a) / wa) if wa and wb and a else float("nan")
    va, vb = {r["key"]: r["verdict"] for r in a}, {r["key"]: r["verdict"] for r in b}
    common = sorted(set(va) & set(vb))
    differ = [k for k in common if va[k] != vb[k]]
    ma = {r["key"]: r["median_ms"] for r in a if r.get("median_ms")}
    mb = {r["key"]: r["median_ms"] for r in b if r.get("median_ms")}
    lat = {k: mb[k] / ma[k] for k in set(ma) & set(mb)}
    outside = {k: x for k, x in lat.items() if abs(x - 1) > 0.02}
    worst = max(lat.items(), key=lambda kv: abs(kv[1] - 1), default=(None, 1.0))
    per_device = {}
    for r in b:
        per_device[r.get("device_index")] = per_device.get(r.get("device_index"), 0) + 1
    ra, rb = _records(one), _records(two)
    print(f"## {one.name} vs {two.name}")
    print(f"1 GPU: {len(a)} observations in {wa:.0f} s ({60 * len(a) / wa:.1f}/min); "
          f"2 GPUs: {len(b)} in {wb:.0f} s ({60 * len(b) / wb:.1f}/min); throughput ratio {ratio:.2f}x (>= 1.8)")
    print(f"keys in both: {len(common)} (only 1 GPU: {len(set(va) - set(vb))}, only 2 GPUs: {len(set(vb) - set(va))}); "
          f"verdicts differ: {len(differ)} {differ[:5]}")
    print(f"records: {len(ra)} and {len(rb)}, identical: {ra == rb}")
    print(f"latency 2 GPUs / 1 GPU over {len(lat)} timed keys: {len(outside)} outside 2 %, worst {worst[1]:.4f} "
          f"({worst[0]})")
    print(f"2-GPU observations per device_index: {dict(sorted(per_device.items(), key=str))}")
    ok = ratio >= 1.8 and not differ and ra == rb and not outside and len(common) == len(va) == len(vb)
    print("criteria:", "all met" if ok else "NOT all met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
