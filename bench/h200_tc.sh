#!/usr/bin/env bash
# Issue 14 items 1 and 4 on the H200, in ONE device call (under 10 minutes). From the repo root,
# after the device's install line (../shared/device/README.md):
#   bash bench/h200_tc.sh
# 1. bench/conv_v4_smoke.py: conv_relu_maxpool v4 (native CUDA tensor cores) compiled by NVRTC in
#    every dtype x config, max error against float64 on the verify shapes, timing-shape latency
#    beside eager and cuDNN's convolution alone (about 30 s);
# 2. one run of conv_relu_maxpool (hw=h200): eager, torch.compile and every version (v0-v4);
# 3. one run of flip2d (hw=h200): eager, torch.compile and every version (v0-v3).
# Each run's summary (ratios vs eager / torch.compile, % of the copy ceiling, the targets)
# comes from bench/tc_summary.py. Written to $OUT: tc_summary.txt (everything below), the smoke
# output and the tail of each run's log. Per-part timeouts keep the call under 10 minutes.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export KERNELSYNTH_CACHE=${KERNELSYNTH_CACHE:-/tmp/kcache} PYTHONUNBUFFERED=1
S="$OUT/tc_summary.txt"
: > "$S"
t0=$(date +%s)
timeout 90 python3 bench/conv_v4_smoke.py > "$OUT/tc_conv_v4_smoke.txt" 2>&1
echo "== conv v4 smoke: exit $? in $(( $(date +%s) - t0 )) s" >> "$S"; cat "$OUT/tc_conv_v4_smoke.txt" >> "$S"
for part in conv_relu_maxpool:270 flip2d:220; do
  task=${part%%:*}; limit=${part##*:}; t0=$(date +%s)
  timeout "$limit" python3 -m kernelsynth task=$task hw=h200 hydra.run.dir=/tmp/tc_$task > /tmp/tc_$task.log 2>&1
  echo "== $task run: exit $? in $(( $(date +%s) - t0 )) s (timeout $limit s)" >> "$S"
  python3 bench/tc_summary.py /tmp/tc_$task $task >> "$S" 2>&1
  tail -80 /tmp/tc_$task.log > "$OUT/tc_${task}_log_tail.txt"
done
cat "$S"
