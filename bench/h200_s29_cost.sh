#!/usr/bin/env bash
# Session 29's last device call (an H100 or H200; carry .whl, .deb, .s8tree; repo root, after the .whl line):
#   END_S=570 bash bench/h200_s29_cost.sh
# 1. bench/fused_sums_check.py (the fused per-trial sums against the PyTorch path on this GPU);
# 2. bench/cost_groups.py conv_relu_maxpool v4 float32 (in-process, per group);
# 3. issue 10's cost pair, session 8's tree then this checkout, conv_relu_maxpool (PAIRS="conv flip": then flip2d), float32, sandbox on
#    (bench/h200_s22_cost.sh): the run-level median verify_s with the fused sums, and both ladders' verdicts.
set -u
. bench/device_env.sh
. bench/steps.sh
step fused_check 60 python3 bench/fused_sums_check.py --sizes 1000,1000000,16777216
cp /tmp/fused_check.stdout "$OUT/fused_check.txt"
step cost_groups 80 python3 bench/cost_groups.py conv_relu_maxpool v4 float32 --gpu --repeats 2
cp /tmp/cost_groups.stdout "$OUT/cost_groups.txt"
PAIRS="${PAIRS:-conv}" END_S=$(( END - ($(date +%s) - start) )) bash bench/h200_s22_cost.sh
