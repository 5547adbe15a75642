#!/usr/bin/env bash
# Session 26's device call (an H100 or H200; carry .whl, .deb; repo root, after the .whl line):
#   END_S=585 bash bench/h200_s26_plan.sh
# 1. causal_attention float32 again (200 s): session 26's first call rejected its honest TF32 v1/v2
#    (lower-format statistic at the one-key shapes) and its eager/torch.compile baselines (layout rule:
#    SDPA's float32 output is laid out (B, S, H, D)); both fixed without a GPU: this shows the fix.
# 2. depthwise_conv2d bfloat16 (150 s): never measured on a GPU.
# 3. layernorm bfloat16 (rest, <= 180 s): not reached in session 25.
# One RUNS directory, so the last summary (catalog.md) covers every task; $OUT gets catalog.md,
# status.txt, logs.tar.gz, runs.tar.gz, gpu.txt.
set -u
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"
start=$(date +%s) END=${END_S:-585}
left() { echo $(( END - ($(date +%s) - start) )); }
export RUNS=/tmp/s26/runs OUT="$FINAL"
TASKS="causal_attention:200" TOTAL_S=$(( $(left) )) EXTRA='task.dtypes=[float32]' bash bench/h200_catalog.sh > /tmp/s26_1.log 2>&1
TASKS="depthwise_conv2d:150" TOTAL_S=$(( $(left) )) EXTRA='task.dtypes=[bfloat16]' bash bench/h200_catalog.sh > /tmp/s26_2.log 2>&1
L=$(( $(left) - 25 )); [ "$L" -gt 180 ] && L=180
[ "$L" -gt 60 ] && TASKS="layernorm:$L" TOTAL_S=$(( L + 25 )) EXTRA='task.dtypes=[bfloat16]' bash bench/h200_catalog.sh \
  > /tmp/s26_3.log 2>&1
cp "$FINAL/catalog_summary.md" "$FINAL/catalog.md" 2>/dev/null
echo "total $(( $(date +%s) - start )) s" >> "$FINAL/status.txt"
cat "$FINAL/status.txt"; head -60 "$FINAL/catalog.md"
