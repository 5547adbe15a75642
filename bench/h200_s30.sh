#!/usr/bin/env bash
# Session 30's device call (an H100 or H200; carry .whl, .deb, .s8tree; repo root, after the .whl line):
#   END_S=560 bash bench/h200_s30.sh
# 1. issue 10's cost, where it goes: py-spy (raw, 250 Hz) of bench/cost_groups.py conv_relu_maxpool v4 float32 --gpu
#    --repeats 4 -> $OUT/conv_v4.raw (fold here: grep "main (cost_groups.py:77)" conv_v4.raw | python3 bench/pyspy_fold.py
#    /dev/stdin), its stdout -> $OUT/cost_groups.txt;
# 2. issue 10's cost pair (bench/h200_s22_cost.sh, PAIRS=conv): session 8's tree then this checkout, conv_relu_maxpool
#    float32, sandbox on, cold caches, in what is left of END_S (HEAD_CONV_S, default 230 s: the whole ladder).
set -u
. bench/device_env.sh
. bench/steps.sh
step pyspy 120 py-spy record -r 250 -f raw -o "$OUT/conv_v4.raw" -- \
  python3 bench/cost_groups.py conv_relu_maxpool v4 float32 --gpu --repeats 4
cp /tmp/pyspy.stdout "$OUT/cost_groups.txt"
PAIRS="${PAIRS:-conv}" HEAD_CONV_S=${HEAD_CONV_S:-230} END_S=$(( END - ($(date +%s) - start) )) bash bench/h200_s22_cost.sh
tail -25 "$OUT/cost_groups.txt"
