#!/usr/bin/env bash
# Session 30's second device call (an H100 or H200; carry .whl, .deb, .s8tree; repo root, after the .whl line):
#   END_S=480 bash bench/h200_s30b.sh
# 1. bench/fused_sums_check.py: the fused sums, compare and (new) the memo's fingerprint hash against PyTorch's;
#    if any number differs, the rest runs with KERNELSYNTH_FUSED_SUMS=0;
# 2. bench/integrity_cost.py: check_integrity's parts in a worker-like process on this host;
# 3. issue 10's cost pair (bench/h200_s22_cost.sh, PAIRS=conv): session 8's tree then this checkout, conv_relu_maxpool
#    float32, sandbox on, cold caches, the whole ladder (HEAD_CONV_S, default 200 s).
set -u
. bench/device_env.sh
. bench/steps.sh
step fused_check 60 python3 bench/fused_sums_check.py --sizes 1000,1000000,16777216
grep -q "rc=0" "$OUT/steps.txt" || export KERNELSYNTH_FUSED_SUMS=0
cp /tmp/fused_check.stdout "$OUT/fused_check.txt"
step integrity 40 python3 bench/integrity_cost.py
cp /tmp/integrity.stdout "$OUT/integrity.txt"
PAIRS="${PAIRS:-conv}" HEAD_CONV_S=${HEAD_CONV_S:-200} END_S=$(( END - ($(date +%s) - start) )) bash bench/h200_s22_cost.sh
cat "$OUT/fused_check.txt" "$OUT/integrity.txt" | grep -v USDT
