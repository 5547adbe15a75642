#!/usr/bin/env bash
# A red team's GPU part (issue 10 item 8) on the H200: the candidates whose CPU verdict needs the GPU plan (wrong
# only at shapes the interpreter's plan lacks) or the GPU's arithmetic (TF32 tensor cores, approximate exp), and the
# honest ones beside them; float32, two trials, one task after the other, each under a hard limit (RT_S, 110 s):
#   bash bench/h200_redteam.sh SET [DIR]      SET: s13 or s15; DIR default $OUT/rt<SET>
# (after . bench/device_env.sh; sets its own start/END if unset: RT_END_S, default 460 for s13, 560 for s15).
# Look for (summary.txt, summarize.py's lines; logs beside it):
#   s13: sm_p1, sm_p2, cu_r1, cs_r1 accepted = got through; sm_h2, ge_h1, cu_h1, cs_h1 rejected = a false rejection
#        (sm_h1 is rejected on the CPU by its own prescale; ge_p2 is accepted by design: VERIFICATION.md);
#   s15: mb_r1, dw_r1 accepted = got through; mb_h1, mb_h2, dw_h1, sb_h1, ce_h1, ro_h1 rejected = a false rejection
#        (mb_p2, sb_p1, ce_p1: their numbers on the GPU; judged harmless on the CPU).
set -u
SET=${1:?usage: h200_redteam.sh s13|s15 [DIR]}
OUTDIR=${2:-${OUT:-/tmp}/rt${SET#s}}
. bench/device_env.sh
R=tests/adversarial/redteam_$SET
case $SET in
  s13) declare -A PICK=([softmax_rows]="sm_p1 sm_p2 sm_h1 sm_h2" [gelu_tanh]="ge_p2 ge_h1" [cumsum_rows]="cu_r1 cu_h1"
                        [column_sum]="cs_r1 cs_h1")
       TASKS="softmax_rows gelu_tanh cumsum_rows column_sum"; DEFAULT_END=460 ;;
  s15) declare -A PICK=([matmul_bias_gelu]="mb_r1 mb_p2 mb_h1 mb_h2" [depthwise_conv2d]="dw_r1 dw_h1"
                        [softmax_backward]="sb_p1 sb_h1" [cross_entropy]="ce_p1 ce_h1" [rope]="ro_h1")
       TASKS="matmul_bias_gelu depthwise_conv2d softmax_backward cross_entropy rope"; DEFAULT_END=560 ;;
  *) echo "unknown set $SET (s13, s15)" >&2; exit 2 ;;
esac
TASKS=${RT_TASKS:-$TASKS}  # RT_TASKS="softmax_backward": a subset of the set's tasks
K="python3 -m kernelsynth hw=${HW:-h200} exploration.baselines=false exploration.profile=false exploration.trials=2 exploration.sandbox.allow_unsandboxed_external=true"
start=${start:-$(date +%s)}; END=${END:-${RT_END_S:-$DEFAULT_END}}
OUT=${OUT:-$OUTDIR}
. bench/steps.sh
runs=()
for t in $TASKS; do
  mkdir -p "$OUTDIR/cands/$t"
  for c in ${PICK[$t]}; do cp $R/$t/${c}_*.py "$OUTDIR/cands/$t/"; done
  step rt${SET#s}_$t ${RT_S:-110} $K task=$t 'task.dtypes=[float32]' exploration.sources=[external] \
    "exploration.extra_candidates=[$OUTDIR/cands/$t]" hydra.run.dir="$OUTDIR/$t"
  cp /tmp/rt${SET#s}_$t.stdout "$OUTDIR/$t.log" 2>/dev/null; runs+=("$OUTDIR/$t")
done
python3 tests/adversarial/redteam_s7/summarize.py "${runs[@]}" > "$OUTDIR/summary.txt" 2>&1
cut -c1-400 "$OUTDIR/summary.txt"
