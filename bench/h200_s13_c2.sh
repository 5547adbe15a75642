#!/usr/bin/env bash
# Session 13's second H200 call (< 590 s):   bash bench/h200_s13_c2.sh   (repo root, after the install line; carry .whl, .deb)
# 1. issue 10 cost: where a warm conv_relu_maxpool candidate's protocol time goes with the reference memo on
#    (py-spy on bench/cost11_cpu.py: v4 bfloat16, a warm-up then 3 evaluations in one process, so the memo is warm),
#    folded by bench/pyspy_fold.py;
# 2. issue 10 item 8: red team s12's GPU part, one run after the other (bench/h200_redteam12.sh).
# To $OUT: steps.txt, spy.txt, rt12.tgz.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
. bench/device_env.sh
start=$(date +%s); END=${END_S:-585}
. bench/steps.sh
SPY=$(command -v py-spy || echo /tmp/site/bin/py-spy)
step spy_v4 75 "$SPY" record -r 250 -f raw -o /tmp/spy_v4.raw -- python3 bench/cost11_cpu.py conv_relu_maxpool v4 bfloat16 --gpu --repeats 3
{ echo "== v4 bfloat16"; grep -E "warm-up|repeat|SUMMARY|cpu_s" /tmp/spy_v4.stdout | cut -c1-200; tail -3 /tmp/spy_v4.stdout | cut -c1-300
  python3 bench/pyspy_fold.py /tmp/spy_v4.raw --top 70; } >> "$OUT/spy.txt" 2>&1
RT12_END_S=$(( END - ($(date +%s) - start) - 20 )) start=$(date +%s) bash bench/h200_redteam12.sh /tmp/rt12 > /tmp/rt12.stdout 2>&1
cp /tmp/rt12.stdout /tmp/rt12/ 2>/dev/null; cp /tmp/rt12/steps.txt "$OUT/rt12_steps.txt" 2>/dev/null
tar czf "$OUT/rt12.tgz" -C /tmp --exclude='*.so' --exclude='*.cubin' rt12 2>/dev/null
cat "$OUT/steps.txt" "$OUT/rt12_steps.txt"; head -90 "$OUT/spy.txt" | cut -c1-200; tail -40 /tmp/rt12.stdout | cut -c1-300
