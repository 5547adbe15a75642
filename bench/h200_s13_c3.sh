#!/usr/bin/env bash
# Session 13's third H200 call (< 590 s):   bash bench/h200_s13_c3.sh   (repo root, after the install line; carry .whl, .deb)
# 1. issues 10 and 14: flip2d's whole ladder (every version, dtype and config, eager and torch.compile, the
#    ceilings, the ncu profile step, records and charts) with the reference memo; protocol_cost, profile_report,
#    tc_summary on it;
# 2. issue 10 item 8: red team s12's softmax set again (s3, the honest online softmax, after the tail fix), then
#    the cross-entropy set with what is left (x3's host math over tolist is slow at the GPU shapes).
# To $OUT: steps.txt, summary.txt, flip.tgz, rt12.tgz.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
. bench/device_env.sh
start=$(date +%s); END=${END_S:-585}
. bench/steps.sh
step flip ${FLIP_S:-400} python3 -m kernelsynth task=flip2d hw=h200 exploration.progress=false \
  exploration.profile_budget_s=${PROFILE_BUDGET:-90} hydra.run.dir=/tmp/flip
{ echo "== flip2d"; grep -E "sandbox:|ceiling|profile |lock|records?|trajector" /tmp/flip.stdout | cut -c1-300 | head -30
  timeout 40 python3 bench/protocol_cost.py /tmp/flip 2>&1 | tail -5
  timeout 40 python3 bench/tc_summary.py /tmp/flip flip2d 2>&1 | grep -v "^flip2d  "
  timeout 40 python3 bench/profile_report.py /tmp/flip 2>&1 | head -40
  echo "== charts"; find /tmp/flip -name "*.png" | head; } >> "$OUT/summary.txt" 2>&1
cp /tmp/flip.stdout /tmp/flip/cli.log 2>/dev/null
tar czf "$OUT/flip.tgz" -C /tmp --exclude='*.so' --exclude='*.cubin' flip 2>/dev/null
mkdir -p /tmp/rt12/cands/softmax /tmp/rt12/cands/xent
cp tests/adversarial/redteam_s12/softmax/*.py /tmp/rt12/cands/softmax/; cp tests/adversarial/redteam_s12/xent/*.py /tmp/rt12/cands/xent/
K="python3 -m kernelsynth hw=h200 exploration.baselines=false exploration.profile=false exploration.trials=2 exploration.sandbox.allow_unsandboxed_external=true exploration.sources=[external]"
step rt12_softmax 90 $K task=softmax_rows 'task.dtypes=[float32]' "exploration.extra_candidates=[/tmp/rt12/cands/softmax]" hydra.run.dir=/tmp/rt12/softmax
step rt12_xent 150 $K task=cross_entropy 'task.dtypes=[float32]' "exploration.extra_candidates=[/tmp/rt12/cands/xent]" hydra.run.dir=/tmp/rt12/xent
python3 tests/adversarial/redteam_s7/summarize.py /tmp/rt12/softmax /tmp/rt12/xent > /tmp/rt12/summary.txt 2>&1
cp /tmp/rt12_*.stdout /tmp/rt12/ 2>/dev/null
tar czf "$OUT/rt12.tgz" -C /tmp --exclude='*.so' --exclude='*.cubin' rt12 2>/dev/null
cat "$OUT/steps.txt"; cut -c1-250 "$OUT/summary.txt" | head -90; cut -c1-400 /tmp/rt12/summary.txt
