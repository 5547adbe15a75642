#!/usr/bin/env bash
# Red team s13 (issue 10 item 8), the GPU part, on the H200: the candidates whose CPU verdict needs the GPU plan
# or the session-14 relative tail, float32, two trials, one task after the other, each under a hard limit (RT_S, 110 s):
#   bash bench/h200_redteam13.sh "$OUT/rt13"
# 1. softmax_rows: sm_p1, sm_p2 (bfloat16 where the rounding scale hides it: rejected on the CPU since session 14),
#    sm_h1 (rejected on the CPU by its own prescale), sm_h2 (honest);
# 2. gelu_tanh: ge_p2 (bfloat16 input below -4.5), ge_h1 (honest);
# 3. cumsum_rows: cu_r1 (carry dropped when M >= 2 and N > 2048: do the GPU pair shapes reach it?), cu_h1 (honest);
# 4. column_sum: cs_r1 (rows past 4096 ignored when N >= 16), cs_h1 (honest).
# Under the given directory: logs, summary.txt (summarize.py). Look for: sm_p1, sm_p2, cu_r1, cs_r1 accepted = got through.
set -u
OUTDIR=${1:-${OUT:-/tmp}/rt13}
. bench/device_env.sh
R=tests/adversarial/redteam_s13
declare -A PICK=([softmax_rows]="sm_p1 sm_p2 sm_h1 sm_h2" [gelu_tanh]="ge_p2 ge_h1" [cumsum_rows]="cu_r1 cu_h1"
                 [column_sum]="cs_r1 cs_h1")
K="python3 -m kernelsynth hw=h200 exploration.baselines=false exploration.profile=false exploration.trials=2 exploration.sandbox.allow_unsandboxed_external=true"
start=${start:-$(date +%s)}; END=${END:-${RT13_END_S:-460}}
OUT=${OUT:-$OUTDIR}
. bench/steps.sh
runs=()
for t in softmax_rows gelu_tanh cumsum_rows column_sum; do
  mkdir -p "$OUTDIR/cands/$t"
  for c in ${PICK[$t]}; do cp $R/$t/${c}_*.py "$OUTDIR/cands/$t/"; done
  step rt13_$t ${RT_S:-110} $K task=$t 'task.dtypes=[float32]' exploration.sources=[external] \
    "exploration.extra_candidates=[$OUTDIR/cands/$t]" hydra.run.dir="$OUTDIR/$t"
  cp /tmp/rt13_$t.stdout "$OUTDIR/$t.log" 2>/dev/null; runs+=("$OUTDIR/$t")
done
python3 tests/adversarial/redteam_s7/summarize.py "${runs[@]}" > "$OUTDIR/summary.txt" 2>&1
cut -c1-400 "$OUTDIR/summary.txt"
