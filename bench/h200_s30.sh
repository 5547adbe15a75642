#!/usr/bin/env bash
# Session 30's first device call (an H100 or H200; carry .whl, .deb; repo root, after the .whl line):
#   END_S=560 bash bench/h200_s30.sh
# 1. issue 10's cost: py-spy (raw, 250 Hz) of bench/cost_groups.py conv_relu_maxpool v4 float32 --gpu --repeats 4
#    -> $OUT/conv_v4.raw (fold on the CPU machine: grep "main (cost_groups.py:77)" | python3 bench/pyspy_fold.py);
# 2. on an H200 only (issue 14): conv_relu_maxpool's whole ladder in both dtypes through bench/h200_catalog.sh,
#    the engine's ncu profile step on (PROFILE=true), in what is left of END_S.
set -u
. bench/device_env.sh
. bench/steps.sh
step pyspy 120 py-spy record -r 250 -f raw -o "$OUT/conv_v4.raw" -- \
  python3 bench/cost_groups.py conv_relu_maxpool v4 float32 --gpu --repeats 4
cp /tmp/pyspy.stdout "$OUT/cost_groups.txt"
if [ "$HW" = h200 ]; then
  L=$(( END - ($(date +%s) - start) - 30 ))
  TASKS="conv_relu_maxpool:$L" TOTAL_S=$(( L + 20 )) PROFILE=true bash bench/h200_catalog.sh > /tmp/catalog.log 2>&1
  tail -30 /tmp/catalog.log > "$OUT/catalog_tail.txt"
fi
cat "$OUT/steps.txt"; tail -25 "$OUT/cost_groups.txt"; head -40 "$OUT/catalog_summary.md" 2>/dev/null
