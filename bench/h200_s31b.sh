#!/usr/bin/env bash
# Session 31, second device call (an H100 or H200; carry .whl, .deb; repo root, after the .whl line):
#   END_S=585 bash bench/h200_s31b.sh
# 1. bench/conv_v8_probe.py on v9 (V8_PROBE_VERSION=v9): NVRTC builds, 23 ragged shapes per config, timing
#    beside eager / torch.compile / v3 / v6, ncu on the fastest config (V9_S seconds, default 150);
# 2. conv_relu_maxpool's whole ladder (v0-v9, both dtypes) through the engine with the profile step on,
#    in the time left (bench/h200_catalog.sh).
set -u
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"
start=$(date +%s) END=${END_S:-585}
left() { echo $(( END - ($(date +%s) - start) )); }
. bench/device_env.sh
# the device returns at most 8 files: the probe's go into one tarball (v9.tgz), h200_catalog.sh writes 6
mkdir -p /tmp/v9p
V9=${V9_S:-150}
OUT=/tmp/v9p V8_PROBE_VERSION=v9 PROBE_BUDGET_S=$(( V9 - 15 )) timeout "$V9" python3 bench/conv_v8_probe.py > /tmp/v9p/v9_probe.log 2>&1
echo "v9 probe rc=$? at $(( $(date +%s) - start )) s" >> /tmp/v9p/status.txt
tar czf "$FINAL/v9.tgz" -C /tmp v9p
L=$(( $(left) - 30 ))
export RUNS=/tmp/s31/runs
[ "$L" -gt 120 ] && OUT=$FINAL TASKS="conv_relu_maxpool:$L" TOTAL_S=$(( L + 25 )) PROFILE=${PROFILE:-true} \
  EXTRA="exploration.profile_budget_s=${PROFILE_S:-80} ${EXTRA:-}" bash bench/h200_catalog.sh > "$FINAL/conv.log" 2>&1
echo "conv ladder rc=$? total $(( $(date +%s) - start )) s" >> /tmp/v9p/status.txt
cat /tmp/v9p/status.txt; grep -E "v8 |verification|FAIL|>= 1.1x" /tmp/v9p/v9_probe.log | tail -30; head -30 "$FINAL/catalog_summary.md"
