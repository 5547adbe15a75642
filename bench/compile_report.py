"""Compile cost per candidate from two runs' observations (first run: cold caches; second: warm).

usage: python bench/compile_report.py RUN1/observations.parquet RUN2/observations.parquet
Prints, per (version, dtype, config): NVRTC compile_s (raw CUDA), first_call_s (includes the
Triton JIT or the load_inline build when the candidate is imported at first use), registers and
local-memory bytes, for both runs side by side.
"""
import sys

import pyarrow.parquet as pq

runs = [{(r["version"], r["dtype"], r["config"]): r for r in pq.read_table(p).to_pylist()} for p in sys.argv[1:3]]
fmt = lambda x, s=".3f": "-" if x is None else format(x, s)  # noqa: E731
print(f"{'version':10s} {'dtype':9s} {'config':44s} {'nvrtc_s 1':>9s} {'nvrtc_s 2':>9s} {'first_call_s 1':>14s} "
      f"{'first_call_s 2':>14s} {'wall_s 1':>8s} {'wall_s 2':>8s} regs local_B")
for key, a in sorted(runs[0].items()):
    b = runs[1].get(key, {}) if len(runs) > 1 else {}
    if a["role"] == "baseline":
        continue
    print(f"{key[0]:10s} {key[1]:9s} {key[2][:44]:44s} {fmt(a.get('compile_s')):>9s} {fmt(b.get('compile_s')):>9s} "
          f"{fmt(a.get('first_call_s')):>14s} {fmt(b.get('first_call_s')):>14s} {fmt(a.get('wall_s'), '.1f'):>8s} "
          f"{fmt(b.get('wall_s'), '.1f'):>8s} {fmt(a.get('n_regs'), 'd'):>4s} {fmt(a.get('local_bytes'), 'd')}")
