#!/usr/bin/env bash
# Session 15's H200 call for issue 10's cost (< 590 s; written in session 15, which had no device: run it in the
# next session that has one):   bash bench/h200_s15_c1.sh   (repo root, after the install line; carry .whl, .deb;
# the .whl folder needs py-spy's wheel: ../shared/device/wheels.sh py-spy)
# 1. bench/call_overhead.py --gpu: the harness's fixed cost of one verified call on the H200's host (session 15's
#    trims: 2.7 -> 1.6 ms on the 2-core CPU machine);
# 2. where a WARM candidate evaluation's time goes (py-spy attached after the warm-up): conv_relu_maxpool v4
#    bfloat16 and flip2d v4 float32 (bench/cost11_cpu.py --spy, bench/pyspy_fold.py);
# 3. conv_relu_maxpool's whole ladder (profile off): median candidate verify_s against session 13's 1.49 s and
#    session 8's 0.86 s (bench/protocol_cost.py), verdicts against the usual 56/58.
# To $OUT: steps.txt, spy.txt, summary.txt, conv.tgz.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
. bench/device_env.sh
export PATH=/tmp/site/bin:$PATH
start=$(date +%s); END=${END_S:-585}
. bench/steps.sh
step overhead 60 python3 bench/call_overhead.py --gpu 1000
step spy_conv 110 python3 bench/cost11_cpu.py conv_relu_maxpool v4 bfloat16 --gpu --repeats 3 --spy /tmp/spy_conv.raw
step spy_flip 80 python3 bench/cost11_cpu.py flip2d v4 float32 --gpu --repeats 3 --spy /tmp/spy_flip.raw
{ grep -h "call_poisoned" /tmp/overhead.stdout
  for n in conv flip; do
    echo "== $n"; grep -E "warm-up|repeat|SUMMARY|derived" /tmp/spy_$n.stdout | cut -c1-220
    python3 bench/pyspy_fold.py /tmp/spy_$n.raw --top 60
  done; } >> "$OUT/spy.txt" 2>&1
ladder_step conv conv_relu_maxpool ${CONV_S:-300}
cat "$OUT/steps.txt"; head -60 "$OUT/spy.txt" | cut -c1-200; cut -c1-250 "$OUT/summary.txt" | head -60
