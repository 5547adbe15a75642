#!/usr/bin/env bash
# Session 11's first H200 call (< 590 s; each step has its own hard limit and starts only while time is left):
#   bash bench/h200_s11_c1.sh            (repo root, after the device's install line)
# 1. issue 16: bench/gpulock_probe.py (why sandboxed workers could not open the GPU lock);
# 2. issue 10 / 14: the whole flip2d ladder (every version, dtype and config, eager and torch.compile,
#    the ceilings, the ncu profile step), then bench/profile_report.py and bench/protocol_cost.py on it;
# 3. issue 10: rule 23's fp32 headroom on the GPU: softmax_rows and cross_entropy in float32.
# To $OUT: steps.txt, summary.txt, lock.txt, flip.tgz, fp32.tgz.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
. bench/device_env.sh
start=$(date +%s); END=${END_S:-585}
. bench/steps.sh  # step NAME LIMIT CMD...
step lock 40 python3 bench/gpulock_probe.py
cp /tmp/lock.stdout "$OUT/lock.txt"
step flip ${FLIP_S:-400} python3 -m kernelsynth task=flip2d hw=h200 exploration.progress=false \
  exploration.profile_budget_s=${PROFILE_BUDGET:-90} hydra.run.dir=/tmp/flip
{ echo "== flip2d"; grep -E "sandbox:|ceiling|profile |lock" /tmp/flip.stdout | head -30
  timeout 60 python3 bench/profile_report.py /tmp/flip 2>&1; timeout 60 python3 bench/protocol_cost.py /tmp/flip 2>&1
  timeout 60 python3 bench/tc_summary.py /tmp/flip flip2d 2>&1; } >> "$OUT/summary.txt"
cp /tmp/flip.stdout /tmp/flip/cli.log 2>/dev/null
tar czf "$OUT/flip.tgz" -C /tmp --exclude='*.so' --exclude='*.cubin' flip 2>/dev/null
left=$(( END - ($(date +%s) - start) ))
if [ "$left" -gt 60 ]; then
  step fp32 $(( left - 15 )) env OUT=/tmp/fp32out RUNS=/tmp/fp32 EXTRA='task.dtypes=[float32]' TOTAL_S=$(( left - 20 )) \
    TASKS="softmax_rows:$(( (left - 30) / 2 )) cross_entropy:$(( (left - 30) / 2 ))" bash bench/h200_catalog.sh
  cat /tmp/fp32out/status.txt /tmp/fp32out/catalog_summary.md >> "$OUT/summary.txt" 2>/dev/null
  timeout 60 python3 bench/precision_report.py /tmp/fp32/* 2>&1 | cut -c1-260 >> "$OUT/summary.txt"
  tar czf "$OUT/fp32.tgz" -C /tmp fp32 fp32out 2>/dev/null
fi
cat "$OUT/steps.txt" "$OUT/lock.txt"; cut -c1-250 "$OUT/summary.txt" | head -150
