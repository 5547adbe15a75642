#!/usr/bin/env bash
# conv_relu_maxpool v7 (wgmma, both operands through shared-memory descriptors) on the H200, < 400 s:
#   bash bench/h200_v7.sh            (repo root, after the device's install line, carrying .whl)
# 1. bench/conv_v7_probe.py (PROBE_BUDGET_S, default 300): verification of the 8 builds on 23 shapes
#    (with the V7_DESC_SWAP / V7_WAIT0 diagnosis builds on a failure), timing beside eager,
#    torch.compile, v6 and v3, ncu on the fastest config per dtype;
# 2. compute-sanitizer memcheck of every config on three small ragged shapes, per dtype, while time is left.
# To $OUT: steps.txt, conv_v7_probe.txt, conv_v7_probe.json, conv_v7_ncu.txt, sanitize.txt.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
. bench/device_env.sh
start=$(date +%s); END=${END_S:-395}
. bench/steps.sh  # step NAME LIMIT CMD...
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv > "$OUT/steps.txt" 2>&1
PROBE_BUDGET_S=${PROBE_BUDGET_S:-300} OUT="$OUT" step v7 320 python3 bench/conv_v7_probe.py
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
for dt in bfloat16 float32; do
  if [ -n "$SAN" ]; then
    step san_$dt 60 "$SAN" --tool memcheck --print-limit 20 python3 bench/conv_v7_probe.py --sanitize-child $dt
    { echo "==== $dt"; tail -40 /tmp/san_$dt.stdout; } >> "$OUT/sanitize.txt"
  fi
done
cat "$OUT/steps.txt"; cut -c1-400 /tmp/v7.stdout | tail -150; cat "$OUT/sanitize.txt" 2>/dev/null | cut -c1-300 | tail -30
