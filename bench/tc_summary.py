"""Issue 14 items 1 and 4 from a run's observations: per dtype, each version's and baseline's fastest
accepted config with its ratios, then the targets (bench/h200_tc.sh prints this for flip2d and
conv_relu_maxpool).

Usage: python3 bench/tc_summary.py <run dir> <task>

flip2d target: the best version >= 1.0x torch.compile and >= 97% of the copy ceiling in every
dtype. conv_relu_maxpool target: the fastest native CUDA version (tensor cores) >= 2x eager and >= 1.1x
torch.compile in both dtypes (stretch: as fast as the Triton v3). Rejected observations are listed
with their reasons. Exits 0 (the table is the result; it judges nothing the run did not judge).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow.parquet as pq

from kernelsynth.store import run_rows


def fastest(obs):
    ok = [o for o in obs if o["verdict"] == "accepted" and o.get("median_ms")]
    return min(ok, key=lambda o: o["median_ms"]) if ok else None


def main(run_dir: Path, task: str) -> int:
    obs = run_rows(run_dir)
    f = lambda x, s: "-" if x is None else format(x, s)  # noqa: E731
    for dtype in sorted({o["dtype"] for o in obs}):
        rows = [o for o in obs if o["dtype"] == dtype]
        keys = sorted({(o["role"], o["version"]) for o in rows}, key=lambda k: (k[0] != "candidate", k[1]))
        best = {k: fastest([o for o in rows if (o["role"], o["version"]) == k]) for k in keys}
        eager, comp = best.get(("baseline", "eager")), best.get(("baseline", "compile"))
        print(f"\n{task} {dtype}")
        print(f"  {'version':10s} {'ok':>5s} {'median ms':>10s} {'GB/s':>6s} {'% copy':>6s} {'TFLOP/s':>7s} "
              f"{'x eager':>7s} {'x comp':>7s} {'regs':>4s} {'spill':>5s}  best config")
        for k in keys:
            o = best[k]
            n = [x for x in rows if (x["role"], x["version"]) == k]
            n_ok = sum(x["verdict"] == "accepted" for x in n)
            ms = o["median_ms"] if o else None
            xe = eager["median_ms"] / ms if o and eager else None
            xc = comp["median_ms"] / ms if o and comp else None
            cfg = " ".join(f"{a}={b}" for a, b in json.loads(o["config"]).items()) if o and o.get("config") else ""
            print(f"  {k[1]:10s} {f'{n_ok}/{len(n)}':>5s} {f(ms, '.4f'):>10s} {f(o and o.get('achieved_gbps'), '.0f'):>6s} "
                  f"{f(o and o.get('pct_of_copy_ceiling'), '.1f'):>6s} {f(o and o.get('achieved_tflops'), '.1f'):>7s} "
                  f"{f(xe, '.2f'):>7s} {f(xc, '.2f'):>7s} {f(o and o.get('n_regs'), 'd'):>4s} "
                  f"{f(o and o.get('n_spills'), 'd'):>5s}  {cfg}")
        cands = {k[1]: best[k] for k in keys if k[0] == "candidate" and best[k]}
        if task == "flip2d" and cands and comp:
            v, o = min(cands.items(), key=lambda kv: kv[1]["median_ms"])
            xc, pct = comp["median_ms"] / o["median_ms"], o.get("pct_of_copy_ceiling")
            print(f"  target: best {v} {xc:.3f}x torch.compile ({'met' if xc >= 1.0 else 'MISSED'} >= 1.0), "
                  f"{f(pct, '.1f')}% of copy ({'met' if pct and pct >= 97 else 'MISSED'} >= 97)")
        if task == "conv_relu_maxpool" and eager and comp:
            native = {v: o for v, o in cands.items() if o.get("backend") == "cuda"} or \
                {v: o for v, o in cands.items() if v == "v4"}
            v, o = min(native.items(), key=lambda kv: kv[1]["median_ms"]) if native else ("v4", None)
            if o is None:
                print("  target: no native CUDA version has an accepted observation (MISSED)")
            else:
                xe, xc = eager["median_ms"] / o["median_ms"], comp["median_ms"] / o["median_ms"]
                v3 = cands.get("v3")
                print(f"  target: fastest native CUDA version {v} {xe:.2f}x eager ({'met' if xe >= 2 else 'MISSED'} >= 2), {xc:.2f}x torch.compile "
                      f"({'met' if xc >= 1.1 else 'MISSED'} >= 1.1)"
                      + (f", {v3['median_ms'] / o['median_ms']:.2f}x Triton v3 (stretch >= 1)" if v3 else ""))
    bad = [o for o in obs if o["verdict"] != "accepted"]
    print(f"\n{len(obs) - len(bad)} accepted, {len(bad)} rejected observations")
    for o in bad:
        print(f"  rejected {o['dtype']} {o['version']} {o['config']}: {o.get('fault')}: {(o.get('reason') or '')[:300]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2]))
