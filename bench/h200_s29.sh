#!/usr/bin/env bash
# Session 29's device call (an H100 or H200; carry .whl, .deb; repo root, after the .whl line):
#   END_S=585 bash bench/h200_s29.sh
# 1. bench/fused_sums_check.py: rule 23's fused per-trial sums against the PyTorch path on the GPU
#    (numbers and per-call times); if they differ, the rest runs with KERNELSYNTH_FUSED_SUMS=0.
# 2. issue 10's per-trial cost, one candidate in-process (bench/cost_groups.py conv_relu_maxpool v4 float32
#    --gpu), PyTorch path then fused path.
# 3. PLAN (bench/h200_s26_plan.sh) with what is left: the last issue-15 rows and conv float32 (the fresh
#    audit and the later staleness calls' metering on a GPU).
set -u
. bench/device_env.sh
. bench/steps.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
step fused_check 90 python3 bench/fused_sums_check.py
cp /tmp/fused_check.stdout "$OUT/fused_check.txt"
grep -q "rc=0" <(grep fused_check "$OUT/steps.txt") || export KERNELSYNTH_FUSED_SUMS=0
for mode in 0 1; do
  [ "${KERNELSYNTH_FUSED_SUMS:-1}" = 0 ] && [ "$mode" = 1 ] && continue
  KERNELSYNTH_FUSED_SUMS=$mode step "cost_fused$mode" 100 python3 bench/cost_groups.py conv_relu_maxpool v4 float32 --gpu --repeats 2
  cp "/tmp/cost_fused$mode.stdout" "$OUT/cost_fused$mode.txt"
done
cat "$OUT/steps.txt"
left=$(( END - ($(date +%s) - start) - 10 ))
[ "$left" -gt 80 ] && OUT=$OUT/plan END_S=$left PLAN="${PLAN:-conv_relu_maxpool:200:float32 cumsum_rows:90:bfloat16 transpose2d:110:bfloat16 transpose2d:90:float32}" \
  bash bench/h200_s26_plan.sh
