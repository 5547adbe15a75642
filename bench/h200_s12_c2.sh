#!/usr/bin/env bash
# Session 12's second H200 call (< 590 s):   bash bench/h200_s12_c2.sh   (repo root, after the install line; carry .whl, .deb)
# 1. issue 10, where conv_relu_maxpool's verify_s goes: py-spy (carried wheel) on bench/cost11_cpu.py, v4 and v3
#    float32 on the GPU plan, a warm-up then 4 evaluations each; folded by bench/pyspy_fold.py (cProfile misses
#    the census's windows: the census sets its own sys.setprofile hook);
# 2. issue 15, three catalog tasks not yet measured, started together (bench/h200_catalog.sh PARALLEL=1).
# To $OUT: steps.txt, spy.txt, catalog_summary.md, status.txt, runs.tar.gz, logs.tar.gz.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
. bench/device_env.sh
start=$(date +%s); END=${END_S:-585}
. bench/steps.sh
SPY=$(command -v py-spy || echo /tmp/site/bin/py-spy)
for v in v4 v3; do
  step spy_$v 60 "$SPY" record -r 250 -f raw -o /tmp/spy_$v.raw -- python3 bench/cost11_cpu.py conv_relu_maxpool $v float32 --gpu --repeats 4
  { echo "== $v float32"; grep -E "warm-up|repeat|SUMMARY" /tmp/spy_$v.stdout | cut -c1-200; tail -3 /tmp/spy_$v.stdout | cut -c1-300
    python3 bench/pyspy_fold.py /tmp/spy_$v.raw --top 60; } >> "$OUT/spy.txt" 2>&1
done
left=$(( END - ($(date +%s) - start) - 30 ))
PARALLEL=1 TOTAL_S=$left TASKS="${TASKS:-topk_rows:$left column_sum:$left layernorm:$left}" step catalog $(( left + 25 )) bash bench/h200_catalog.sh
cat "$OUT/steps.txt"; head -120 "$OUT/spy.txt" | cut -c1-200; cat "$OUT/status.txt" 2>/dev/null; head -60 "$OUT/catalog_summary.md" 2>/dev/null | cut -c1-300
