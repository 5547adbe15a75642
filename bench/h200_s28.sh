#!/usr/bin/env bash
# Session 28's first device call (an H100 or H200; carry .whl, .deb; repo root, after the .whl line):
#   END_S=570 bash bench/h200_s28.sh
# 1. PLAN_A (default causal_attention float32): the parent's audit with the worker's honest_low exclusion
#    (session 27: the audit rejected v1/v2 at 32 % after the worker accepted them).
# 2. External candidates on matmul_bias_gelu float32 (policy tf32), two trials: the numeric-settings guard
#    (verify.guard.numeric_flags) on a GPU. Honest: redteam_s15 mb_h1 (split-K), mb_h2 (TF32 truncation);
#    redteam_s27 ma1 (autocast at import) and mm1 (precision lowered between calls) must be rejected as tampering.
#    A false "changed process-wide numeric settings" on mb_h1/mb_h2 is a guard bug.
# 3. PLAN_B (default cross_entropy bfloat16) with what is left.
# $OUT (5 files): report.txt (status, steps, GPU, the external verdicts), catalog.md, runs.tar.gz, logs.tar.gz, ext.tgz.
set -u
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"
start=$(date +%s) END=${END_S:-570}
left() { echo $(( END - ($(date +%s) - start) )); }
W=/tmp/s28; mkdir -p $W/out $W/cands
. bench/device_env.sh
OUT=$W/out END_S=$(( $(left) > ${A_S:-200} ? ${A_S:-200} : $(left) )) PLAN=${PLAN_A:-causal_attention:175:float32} \
  bash bench/h200_s26_plan.sh > $W/planA.log 2>&1
for f in tests/adversarial/redteam_s15/matmul_bias_gelu/mb_h[12]_*.py tests/adversarial/redteam_s27/matmul_bias_gelu/ma1_*.py \
         tests/adversarial/redteam_s27/matmul_bias_gelu/mm1_*.py; do cp "$f" $W/cands/; done
L=$(( $(left) - 20 )); [ "$L" -gt ${EXT_S:-150} ] && L=${EXT_S:-150}
t0=$(date +%s)
timeout -k 5 "$L" python3 -m kernelsynth task=matmul_bias_gelu hw=$HW exploration.baselines=false exploration.profile=false \
  exploration.trials=2 exploration.progress=false exploration.sandbox.allow_unsandboxed_external=true 'task.dtypes=[float32]' \
  'exploration.sources=[external]' "exploration.extra_candidates=[$W/cands]" hydra.run.dir=$W/ext > $W/ext.log 2>&1
echo "external matmul_bias_gelu: rc=$? $(( $(date +%s) - t0 )) s (limit $L)" >> $W/out/status.txt
python3 tests/adversarial/redteam_s7/summarize.py $W/ext > $W/ext_summary.txt 2>&1
cp $W/ext.log $W/ext/cli.log 2>/dev/null
tar czf "$FINAL/ext.tgz" -C $W --exclude='*.so' --exclude='*.cubin' ext ext_summary.txt 2>/dev/null
L=$(left)
[ "$L" -gt 90 ] && OUT=$W/out END_S=$(( L - 5 )) PLAN=${PLAN_B:-cross_entropy:200:bfloat16} \
  bash bench/h200_s26_plan.sh > $W/planB.log 2>&1
{ echo "== status"; cat $W/out/status.txt; echo "== gpu"; cat $W/out/gpu.txt; echo "== external (summarize.py)";
  cut -c1-600 $W/ext_summary.txt; echo "== ext.log tail"; tail -30 $W/ext.log | cut -c1-400; } > "$FINAL/report.txt"
cp $W/out/catalog_summary.md "$FINAL/catalog.md" 2>/dev/null
cp $W/out/runs.tar.gz $W/out/logs.tar.gz "$FINAL/" 2>/dev/null
echo "total $(( $(date +%s) - start )) s" >> "$FINAL/report.txt"
cat "$FINAL/report.txt" | head -80
