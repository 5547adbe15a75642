#!/usr/bin/env bash
# Red team s15 (issue 10 item 8), the GPU part, on the H200: the candidates whose CPU verdict needs the GPU plan
# (mb_r1, dw_r1: wrong only at joint conditions the interpreter's plan has no shape for) and the precision
# candidates and honest ones whose numbers change with the GPU's arithmetic (TF32 tensor cores, approximate exp),
# float32, two trials, one task after the other, each under a hard limit (RT_S, 110 s):
#   bash bench/h200_redteam15.sh "$OUT/rt15"        (after . bench/device_env.sh; sets its own start/END if unset)
# Look for: mb_r1, dw_r1 accepted = got through; any honest (mb_h*, dw_h1, sb_h1, ce_h1, ro_h1) rejected = a false
# rejection. Under the given directory: logs, summary.txt (summarize.py).
set -u
OUTDIR=${1:-${OUT:-/tmp}/rt15}
. bench/device_env.sh
R=tests/adversarial/redteam_s15
declare -A PICK=([matmul_bias_gelu]="mb_r1 mb_p2 mb_h1 mb_h2" [depthwise_conv2d]="dw_r1 dw_h1"
                 [softmax_backward]="sb_p1 sb_h1" [cross_entropy]="ce_p1 ce_h1" [rope]="ro_h1")
K="python3 -m kernelsynth hw=h200 exploration.baselines=false exploration.profile=false exploration.trials=2 exploration.sandbox.allow_unsandboxed_external=true"
start=${start:-$(date +%s)}; END=${END:-${RT15_END_S:-560}}
OUT=${OUT:-$OUTDIR}
. bench/steps.sh
runs=()
for t in matmul_bias_gelu depthwise_conv2d softmax_backward cross_entropy rope; do
  mkdir -p "$OUTDIR/cands/$t"
  for c in ${PICK[$t]}; do cp $R/$t/${c}_*.py "$OUTDIR/cands/$t/"; done
  step rt15_$t ${RT_S:-110} $K task=$t 'task.dtypes=[float32]' exploration.sources=[external] \
    "exploration.extra_candidates=[$OUTDIR/cands/$t]" hydra.run.dir="$OUTDIR/$t"
  cp /tmp/rt15_$t.stdout "$OUTDIR/$t.log" 2>/dev/null; runs+=("$OUTDIR/$t")
done
python3 tests/adversarial/redteam_s7/summarize.py "${runs[@]}" > "$OUTDIR/summary.txt" 2>&1
cut -c1-400 "$OUTDIR/summary.txt"
