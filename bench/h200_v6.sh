#!/usr/bin/env bash
# Session 12, issue 14 item 1: bench/conv_v6_probe.py on the H200 (< 180 s):
#   bash bench/h200_v6.sh            (repo root, after the device's install line)
# To $OUT: steps.txt, conv_v6_probe.txt, conv_v6_probe.json (the probe writes them when OUT is set).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
. bench/device_env.sh
start=$(date +%s); END=${END_S:-185}
. bench/steps.sh  # step NAME LIMIT CMD...
PROBE_BUDGET_S=${PROBE_BUDGET_S:-150} OUT="$OUT" step v6 175 python3 bench/conv_v6_probe.py
cat "$OUT/steps.txt"; cut -c1-400 /tmp/v6.stdout | tail -150
