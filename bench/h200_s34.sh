#!/usr/bin/env bash
# Issue 14's two criteria in ONE device call (session 34): flip2d first (v5, new this session, is what is
# being decided; FLIP_S, default 200; FLIP_PINS, default task.tunables.BLOCK_M=1), then
# bench/flip_variants.py (v4 / v5 / Inductor-like schedules in 2-byte dtypes, outside the harness; 60 s at
# most), then conv_relu_maxpool (v0-v9 pinned as in
# bench/h200_s32.sh) in the time left if that is 120 s or more.
# From the repo root, after the device README's .whl line (carry .whl and .deb):
#   END_S=420 bash bench/h200_s34.sh
# $OUT: status.txt, gpu.txt, catalog_summary.md (both tasks: one RUNS directory), runs.tar.gz, logs.tar.gz,
# total.txt, flip_variants.txt.
set -u
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"
start=$(date +%s) END=${END_S:-380}
left() { echo $(( END - ($(date +%s) - start) )); }
export RUNS=/tmp/s34/runs
F=${FLIP_S:-200}
OUT=$FINAL TASKS="flip2d:$F" TOTAL_S=$(( F + 20 )) PROFILE=true \
  EXTRA="exploration.profile_budget_s=30 ${FLIP_PINS:-task.tunables.BLOCK_M=1}" bash bench/h200_catalog.sh > /tmp/s34_flip.log 2>&1
V=$(( $(left) - 130 )); [ "$V" -gt 60 ] && V=60
[ "$V" -gt 30 ] && OUT=$FINAL FLIPV_ROUNDS=5 timeout "$V" python3 bench/flip_variants.py > /tmp/s34_variants.log 2>&1
CONV_PINS=${CONV_PINS-"task.tunables.BLOCK=256 task.tunables.KPT=8 task.tunables.CC=16 task.tunables.BLOCK_W=64
 task.tunables.BLOCK_K=128 task.tunables.num_warps=4 task.tunables.num_stages=3 task.tunables.BW=128
 task.tunables.STAGES=3 task.tunables.ROWS=4"}
C=$(( $(left) - 25 ))
[ "$C" -gt 200 ] && C=200
[ "$C" -ge 120 ] && OUT=$FINAL TASKS="conv_relu_maxpool:$C" TOTAL_S=$(( C + 20 )) PROFILE=true \
  EXTRA="exploration.profile_budget_s=40 $(echo $CONV_PINS)" bash bench/h200_catalog.sh > /tmp/s34_conv.log 2>&1
echo "total $(( $(date +%s) - start )) s" >> "$FINAL/status.txt"
cat "$FINAL/status.txt"; head -40 "$FINAL/catalog_summary.md"; tail -45 /tmp/s34_variants.log 2>/dev/null
