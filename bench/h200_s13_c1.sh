#!/usr/bin/env bash
# Session 13's first H200 call (< 590 s):   bash bench/h200_s13_c1.sh   (repo root, after the install line; carry .whl, .deb)
# issue 10 (cost) and 14: conv_relu_maxpool's whole ladder with the reference memo (the default), then the
# bfloat16 half again with exploration.reference_memo=false (no profile) for the side-by-side cost; then
# bench/protocol_cost.py, profile_report.py, tc_summary.py, precision_report.py on each.
# To $OUT: steps.txt, summary.txt, conv.tgz, conv_nomemo.tgz (run dirs without binaries).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
. bench/device_env.sh
start=$(date +%s); END=${END_S:-585}
. bench/steps.sh
step conv ${CONV_S:-330} python3 -m kernelsynth task=conv_relu_maxpool hw=h200 exploration.progress=false \
  exploration.profile_budget_s=${PROFILE_BUDGET:-60} hydra.run.dir=/tmp/conv
step conv_nomemo ${NOMEMO_S:-210} python3 -m kernelsynth task=conv_relu_maxpool hw=h200 exploration.progress=false \
  'task.dtypes=[bfloat16]' exploration.reference_memo=false exploration.profile=false hydra.run.dir=/tmp/conv_nomemo
for d in conv conv_nomemo; do
  { echo "== $d"; grep -E "sandbox:|ceiling|lock|records?|trajector" /tmp/$d.stdout | cut -c1-300 | head -20
    timeout 40 python3 bench/protocol_cost.py /tmp/$d 2>&1 | tail -8
    timeout 40 python3 bench/tc_summary.py /tmp/$d conv_relu_maxpool 2>&1 | grep -v "^conv_relu_maxpool  "
    timeout 40 python3 bench/precision_report.py /tmp/$d 2>&1 | cut -c1-200 | head -30
  } >> "$OUT/summary.txt" 2>&1
  timeout 40 python3 bench/protocol_cost.py /tmp/$d > "$OUT/cost_$d.txt" 2>&1
  cp /tmp/$d.stdout /tmp/$d/cli.log 2>/dev/null
  tar czf "$OUT/$d.tgz" -C /tmp --exclude='*.so' --exclude='*.cubin' $d 2>/dev/null
done
{ echo "== profile"; timeout 40 python3 bench/profile_report.py /tmp/conv 2>&1 | head -30; } >> "$OUT/summary.txt" 2>&1
cat "$OUT/steps.txt"; cut -c1-250 "$OUT/summary.txt" | head -150
