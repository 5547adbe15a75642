#!/usr/bin/env bash
# Session 31, first device call (an H100 or H200; carry .whl, .deb; repo root, after the .whl line):
#   END_S=585 bash bench/h200_s31.sh
# 1. bench/v8_experiments.py: where conv v8's time goes (timing-only producer variants), both dtypes;
# 2. bench/flip_variants.py: flip2d v4 beside schedule variants in bfloat16 / float16;
# 3. the GPU re-check of session 30's census fixes: PLAN (default flip2d bfloat16 + conv bfloat16, whole
#    ladders through the engine) via bench/h200_s26_plan.sh in the time left.
# $OUT: v8_experiments.txt, flip_variants.txt, status.txt, catalog.md, runs.tar.gz, logs.tar.gz.
set -u
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"
start=$(date +%s) END=${END_S:-585}
left() { echo $(( END - ($(date +%s) - start) )); }
. bench/device_env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$FINAL/gpu.txt" 2>&1
OUT=$FINAL timeout "${V8X_S:-170}" python3 bench/v8_experiments.py > "$FINAL/v8x.log" 2>&1
echo "v8_experiments rc=$? at $(( $(date +%s) - start )) s" >> "$FINAL/status.txt"
OUT=$FINAL timeout "${FLIPV_S:-120}" python3 bench/flip_variants.py > "$FINAL/flipv.log" 2>&1
echo "flip_variants rc=$? at $(( $(date +%s) - start )) s" >> "$FINAL/status.txt"
L=$(( $(left) - 5 ))
[ "$L" -gt 120 ] && OUT=$FINAL END_S=$L PLAN="${PLAN:-flip2d:110:bfloat16 conv_relu_maxpool:230:bfloat16}" \
  bash bench/h200_s26_plan.sh > "$FINAL/plan.log" 2>&1
echo "total $(( $(date +%s) - start )) s" >> "$FINAL/status.txt"
cat "$FINAL/status.txt"; tail -40 "$FINAL/v8x.log"; tail -30 "$FINAL/flipv.log"
