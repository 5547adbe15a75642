#!/usr/bin/env bash
# Issue 14's evidence in ONE device call (written in session 32, when no machine started all session):
# a failed start costs 90-180 s of the 1800 s budget, so one start must bring everything from one card.
# From the repo root, after the device README's .whl line (carry .whl and .deb):
#   END_S=570 bash bench/h200_s32.sh
# 1. bench/conv_v8_probe.py on v9 (V9_S seconds, default 140): NVRTC builds, 23 ragged shapes per config
#    in both dtypes, timing beside eager / torch.compile / v3 / v6, ncu if time is left -> $OUT/v9.tgz;
# 2. conv_relu_maxpool through the engine, both dtypes, every version v0-v9 with its tunables pinned to
#    one or two configs (the fastest ones of sessions 21-27; CONV_PINS, empty: the whole ladder), profile
#    step on (CONV_S seconds, default 230; ncu budget CONV_PROFILE_S, default 50);
# 3. flip2d through the engine, all four dtypes, every version v0-v4, BLOCK_M=1 num_warps=4 pinned
#    (v4's best on the H200 in session 21: BLOCK_N=512 num_warps=4), profile on, in the time left
#    (FLIP=0: no flip step, conv gets the rest; bench/h200_s31b.sh is that).
# Both engine runs share one RUNS directory, so the last catalog_summary.md covers both tasks.
# $OUT: v9.tgz, gpu.txt, status.txt, catalog_summary.md, runs.tar.gz, logs.tar.gz, total.txt (7 of the 8).
set -u
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"
start=$(date +%s) END=${END_S:-570}
left() { echo $(( END - ($(date +%s) - start) )); }
. bench/device_env.sh
mkdir -p /tmp/v9p
V9=${V9_S:-140}
OUT=/tmp/v9p V8_PROBE_VERSION=v9 PROBE_BUDGET_S=$(( V9 - 15 )) timeout "$V9" python3 bench/conv_v8_probe.py > /tmp/v9p/v9_probe.log 2>&1
echo "v9 probe rc=$? at $(( $(date +%s) - start )) s" >> /tmp/v9p/status.txt
tar czf "$FINAL/v9.tgz" -C /tmp v9p
export RUNS=/tmp/s32/runs
CONV_PINS=${CONV_PINS-"task.tunables.BLOCK=256 task.tunables.KPT=8 task.tunables.CC=16 task.tunables.BLOCK_W=64
 task.tunables.BLOCK_K=128 task.tunables.num_warps=4 task.tunables.num_stages=3 task.tunables.BW=128
 task.tunables.STAGES=3 task.tunables.ROWS=4"}
FLIP=${FLIP:-1}
keep=$([ "$FLIP" = 1 ] && echo 100 || echo 30)  # what conv leaves for flip2d and the end
C=$(( ${CONV_S:-230} < $(left) - keep ? ${CONV_S:-230} : $(left) - keep ))
[ "$C" -lt 90 ] && { C=$(( $(left) - 30 )); FLIP=0; }  # too short for both: conv (v9 through the engine) takes the rest
[ "$C" -gt 90 ] && OUT=$FINAL TASKS="conv_relu_maxpool:$C" TOTAL_S=$(( C + 25 )) PROFILE=true \
  EXTRA="exploration.profile_budget_s=${CONV_PROFILE_S:-50} $(echo $CONV_PINS)" bash bench/h200_catalog.sh > /tmp/s32_conv.log 2>&1
F=$(( $(left) - 25 ))
[ "$FLIP" = 1 ] && [ "$F" -gt 60 ] && OUT=$FINAL TASKS="flip2d:$F" TOTAL_S=$(( F + 20 )) PROFILE=true \
  EXTRA="exploration.profile_budget_s=30 task.tunables.BLOCK_M=1 task.tunables.num_warps=4" \
  bash bench/h200_catalog.sh > /tmp/s32_flip.log 2>&1
echo "total $(( $(date +%s) - start )) s" >> "$FINAL/status.txt"
cat /tmp/v9p/status.txt "$FINAL/status.txt"; grep -E "v8 |verification|FAIL|>= 1.1x" /tmp/v9p/v9_probe.log | tail -30
head -40 "$FINAL/catalog_summary.md"
