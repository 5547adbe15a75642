#!/usr/bin/env bash
# Session 11's second H200 call (< 590 s; each step has its own hard limit and starts only while time is left):
#   bash bench/h200_s11_c2.sh            (repo root, after the device's install line)
# 1. issue 10: where one flip2d candidate's verify_s goes on the GPU (bench/verify_profile.py, cProfile);
# 2. issue 10 / 14: the whole conv_relu_maxpool ladder (every version, dtype and config, eager and
#    torch.compile, the ceilings, the ncu profile step; the GPU lock's reason if it fails), then
#    bench/profile_report.py, bench/protocol_cost.py and bench/precision_report.py on it;
# 3. issue 10: rule 23's fp32 headroom on the GPU: the softmax_rows ladder in float32 (what time is left).
# To $OUT: steps.txt, summary.txt, vprof.txt, conv.tgz, fp32.tgz.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
. bench/device_env.sh
start=$(date +%s); END=${END_S:-585}
. bench/steps.sh  # step NAME LIMIT CMD...
step vprof 80 python3 bench/verify_profile.py flip2d v0 float32 --gpu
cp /tmp/vprof.stdout "$OUT/vprof.txt"
step conv ${CONV_S:-380} python3 -m kernelsynth task=conv_relu_maxpool hw=h200 exploration.progress=false \
  exploration.profile_budget_s=${PROFILE_BUDGET:-80} hydra.run.dir=/tmp/conv
{ echo "== conv_relu_maxpool"; grep -E "sandbox:|ceiling|profile |lock" /tmp/conv.stdout | cut -c1-600 | head -30
  timeout 60 python3 bench/profile_report.py /tmp/conv 2>&1; timeout 60 python3 bench/protocol_cost.py /tmp/conv 2>&1 | tail -8
  timeout 60 python3 bench/tc_summary.py /tmp/conv conv_relu_maxpool 2>&1
  timeout 60 python3 bench/precision_report.py /tmp/conv 2>&1 | cut -c1-240; } >> "$OUT/summary.txt"
cp /tmp/conv.stdout /tmp/conv/cli.log 2>/dev/null
tar czf "$OUT/conv.tgz" -C /tmp --exclude='*.so' --exclude='*.cubin' conv 2>/dev/null
left=$(( END - ($(date +%s) - start) ))
if [ "$left" -gt 70 ]; then
  step fp32 $(( left - 12 )) env OUT=/tmp/fp32out RUNS=/tmp/fp32 EXTRA='task.dtypes=[float32] exploration.baselines=false' \
    TOTAL_S=$(( left - 15 )) TASKS="softmax_rows:$(( left - 30 ))" bash bench/h200_catalog.sh
  { cat /tmp/fp32out/status.txt; timeout 30 python3 bench/precision_report.py /tmp/fp32/* 2>&1 | cut -c1-260; } >> "$OUT/summary.txt"
  tar czf "$OUT/fp32.tgz" -C /tmp fp32 fp32out 2>/dev/null
fi
cat "$OUT/steps.txt"; tail -40 "$OUT/vprof.txt"; cut -c1-250 "$OUT/summary.txt" | head -120
