"""Markdown tables of a run's ceilings and of its versions beside eager and torch.compile, with
the profile columns (issue 14; BENCHMARKS.md pastes them).

Usage: python3 bench/profile_report.py <run dir>...

For each run directory (python -m kernelsynth ... hydra.run.dir=<run dir>) it reads run.json
(the hardware's ceiling methods and any raise by an observation) and observations.parquet (the
consolidated table, whose percentages are of the ceilings in effect) and prints:
  1. the ceilings: every copy and matmul method measured (GB/s, TFLOP/s, or its error), the
     best of each, and the raise, if a verified observation moved above a measured ceiling;
  2. per dtype, one row per version (its fastest verified config), then eager and torch.compile:
     ms, GB/s, % of the copy ceiling, TFLOP/s, x eager, x torch.compile, and the ncu columns of
     the profile step (DRAM, SM, tensor pipe % of peak, achieved occupancy, L2 hit rate,
     registers, local-memory instructions, top stalls), or the reason there is no profile.
Exits 1 when a run directory has no run.json (the run did not finish).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow.parquet as pq


def _f(x, spec):
    return "n/a" if x is None else format(x, spec)


def ceilings_table(info: dict) -> list:
    hw = info["hardware"]
    lines = [f"Ceilings of {hw['device_name']} (driver {hw.get('driver')}, torch {hw.get('torch')}, "
             f"Triton {hw.get('triton')}):", "", "| ceiling | method | value | detail |", "|---|---|---|---|"]
    for m in hw.get("ceiling_methods") or []:
        value = f"{m['value']:.0f} {m['unit']}" if m.get("value") is not None else f"failed: {m.get('error')}"
        lines.append(f"| {m['ceiling']} | {m['method']} | {value} | {m.get('detail') or ''} |")
    lines.append(f"| copy | **best measured** | **{_f(hw.get('copy_gbps_measured'), '.0f')} GB/s** | "
                 f"datasheet {_f(hw.get('peak_gbps'), '.0f')} GB/s |")
    lines.append(f"| matmul | **best measured** | **{_f(hw.get('matmul_tflops_measured'), '.0f')} TFLOP/s** | "
                 f"datasheet bf16 dense {_f((hw.get('peak_tflops') or {}).get('bfloat16'), '.0f')} TFLOP/s |")
    for c in hw.get("ceiling_corrections") or []:
        lines.append(f"| {c['ceiling']} | **in effect (raised)** | **{c['raised_to']:.0f} {c['unit']}** | {c['what']} |")
    if not hw.get("ceiling_corrections"):
        lines.append("| both | in effect | as measured | no verified observation above a measured ceiling by more "
                     "than 1% |")
    return lines + [""]


def _best(rows):
    ok = [r for r in rows if r["verdict"] == "accepted"]
    return min(ok, key=lambda r: (r["median_ms"] if r["median_ms"] is not None else float("inf"), r["config"])) \
        if ok else None


def versions_table(info: dict, obs: list) -> list:
    lines = []
    sha = info["spec_sha256"]
    obs = [o for o in obs if o["spec_sha256"] == sha]
    for dtype in sorted({o["dtype"] for o in obs}):
        mine = [o for o in obs if o["dtype"] == dtype]
        versions = sorted({o["version"] for o in mine if o["role"] == "candidate"})
        picks = [(v, _best([o for o in mine if o["role"] == "candidate" and o["version"] == v])) for v in versions]
        picks += [(b, _best([o for o in mine if o["role"] == "baseline" and o["version"] == b]))
                  for b in ("eager", "compile")]
        eager = dict(picks).get("eager")
        comp = dict(picks).get("compile")
        lines += [f"{info['task']}, {dtype}:", "",
                  "| version | config | ms | GB/s | % copy | TFLOP/s | x eager | x compile | ncu DRAM % | SM % | "
                  "tensor % | occupancy % | L2 hit % | regs | local insts | top stalls (cycles/issue) |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for label, o in picks:
            if o is None or o["median_ms"] is None:
                what = "no verified observation" if o is None else "verified, not timed (no GPU)"
                lines.append(f"| {label} | {what} |" + " |" * 14)
                continue
            name = {"eager": "eager", "compile": "torch.compile"}.get(label, f"{label} {o['name']}")
            ratio = lambda b: _f(b["median_ms"] / o["median_ms"], ".2f") if b else "n/a"  # noqa: E731
            prof = o.get("profile")
            if prof == "ncu":
                cols = [_f(o.get("ncu_dram_pct"), ".1f"), _f(o.get("ncu_sm_pct"), ".1f"),
                        _f(o.get("ncu_tensor_pct"), ".1f"), _f(o.get("ncu_occupancy_pct"), ".1f"),
                        _f(o.get("ncu_l2_hit_pct"), ".1f"), _f(o.get("ncu_registers"), "d"),
                        _f(o.get("ncu_local_insts"), "d"), o.get("ncu_stalls") or "n/a"]
            else:
                cols = [(prof or "not profiled (baselines are not)")[:120]] + [""] * 7
            lines.append(f"| {name} | {o['config']} | {o['median_ms']:.4f} | {_f(o.get('achieved_gbps'), '.0f')} | "
                         f"{_f(o.get('pct_of_copy_ceiling'), '.1f')} | {_f(o.get('achieved_tflops'), '.1f')} | "
                         f"{ratio(eager)} | {ratio(comp)} | " + " | ".join(cols) + " |")
        lines.append("")
    return lines


def main(argv) -> int:
    status = 0
    for d in map(Path, argv):
        if not (d / "run.json").is_file():
            print(f"{d}: no run.json (the run did not finish)")
            status = 1
            continue
        info = json.loads((d / "run.json").read_text())
        obs = pq.read_table(d / "observations.parquet").to_pylist()
        print("\n".join(ceilings_table(info) + versions_table(info, obs)))
        for c in info.get("charts") or []:
            print(f"chart {c['task']} {c['dtype']} {c['kind']}: {c['path'] or 'not drawn: ' + str(c['reason'])}")
        print()
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
