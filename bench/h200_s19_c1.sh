#!/usr/bin/env bash
# Session 19's first H200 call (< 590 s):   bash bench/h200_s19_c1.sh   (repo root, after the install line; carry .whl, .deb)
# 1. where a WARM candidate evaluation's time goes on the GPU now (py-spy after the warm-up; issue 10's cost): flip2d v4
#    float32 and conv_relu_maxpool v4 bfloat16 (bench/cost11_cpu.py --spy, bench/pyspy_fold.py) -> $OUT/spy.txt;
# 2. bench/h200_v8.sh with what is left (issue 14: conv v8's NVRTC check, 23-shape verification, timing beside eager,
#    torch.compile, v3 and v6, ncu, memcheck) -> its own files in $OUT (steps.txt is v8's).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
. bench/device_env.sh
export PATH=/tmp/site/bin:$PATH
start=$(date +%s); END=${END_S:-585}
. bench/steps.sh
step spy_flip 75 python3 bench/cost11_cpu.py flip2d v4 float32 --gpu --repeats 3 --spy /tmp/spy_flip.raw
step spy_conv 90 python3 bench/cost11_cpu.py conv_relu_maxpool v4 bfloat16 --gpu --repeats 3 --spy /tmp/spy_conv.raw
{ cat "$OUT/steps.txt"
  for n in flip conv; do
    echo "== $n"; grep -E "warm-up|repeat|SUMMARY|derived" /tmp/spy_$n.stdout | cut -c1-220
    tail -5 /tmp/spy_$n.stdout | cut -c1-300
    python3 bench/pyspy_fold.py /tmp/spy_$n.raw --top 70
  done; } > "$OUT/spy.txt" 2>&1
left=$(( END - ($(date +%s) - start) - 5 ))
PROBE_BUDGET_S=$(( left > 420 ? 300 : left - 120 )) END_S=$left bash bench/h200_v8.sh
