#!/usr/bin/env bash
# Session 14's first H200 call (< 590 s):   bash bench/h200_s14_c1.sh   (repo root, after the install line; carry .whl, .deb)
# 1. issue 10 cost: where a WARM candidate evaluation's time goes (py-spy attached after the warm-up:
#    bench/cost11_cpu.py --spy), conv_relu_maxpool v4 bfloat16 and flip2d v4 float32, folded by bench/pyspy_fold.py;
# 2. issue 10 item 8: red team s13's GPU part (bench/h200_redteam.sh s13).
# To $OUT: steps.txt, spy.txt, rt13.tgz.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
. bench/device_env.sh
start=$(date +%s); END=${END_S:-585}
. bench/steps.sh
step spy_conv 110 python3 bench/cost11_cpu.py conv_relu_maxpool v4 bfloat16 --gpu --repeats 3 --spy /tmp/spy_conv.raw
step spy_flip 80 python3 bench/cost11_cpu.py flip2d v4 float32 --gpu --repeats 3 --spy /tmp/spy_flip.raw
for n in conv flip; do
  { echo "== $n"; grep -E "warm-up|repeat|SUMMARY|derived" /tmp/spy_$n.stdout | cut -c1-220
    python3 bench/pyspy_fold.py /tmp/spy_$n.raw --top 60; echo "== $n by line"; python3 bench/pyspy_fold.py /tmp/spy_$n.raw --top 40 --lines; } >> "$OUT/spy.txt" 2>&1
done
RT_END_S=$(( END - ($(date +%s) - start) - 15 )) start=$(date +%s) bash bench/h200_redteam.sh s13 /tmp/rt13 > /tmp/rt13.stdout 2>&1
cp /tmp/rt13.stdout /tmp/rt13/ 2>/dev/null; cp /tmp/rt13/steps.txt "$OUT/rt13_steps.txt" 2>/dev/null
tar czf "$OUT/rt13.tgz" -C /tmp --exclude='*.so' --exclude='*.cubin' rt13 2>/dev/null
cat "$OUT/steps.txt" "$OUT/rt13_steps.txt" 2>/dev/null; head -80 "$OUT/spy.txt" | cut -c1-200; tail -30 /tmp/rt13.stdout | cut -c1-300
