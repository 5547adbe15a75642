#!/usr/bin/env bash
# Session 9 (memo9) on the H200, one call, about 3 min (hard timeouts 75 + 60 + 40 s): bash bench/h200_memo9.sh "$OUT/memo9"
# 1. bench/memo9_timed_inputs.py (75 s): rule 15's timing loop with timed_fresh off / on, at 4096^3
#    float32, for v0 (cuBLAS), v1 (Triton) and an always-right incremental memo (tests/adversarial/s9);
# 2. the harness on matmul_bias_gelu float32, ladder cut to v0, with the red team's mm1, mc1 and the
#    s9 memo (60 s): mm1 and mc1 rejected (rules 10, 24), the memo accepted and timed with fresh inputs;
# 3. flip2d float32, ladder cut to v0, with fo1 (rejected: kept outputs) and fh1 (honest) (40 s).
set -u
OUTDIR=${1:-${OUT:-/tmp}/memo9}
mkdir -p "$OUTDIR"
. bench/device_env.sh  # PYTHONPATH, the shared compile cache, bubblewrap from .deb
R=tests/adversarial/redteam_s8
M="$OUTDIR/mm_candidates"; F="$OUTDIR/flip_candidates"
mkdir -p "$M" "$F"
cp $R/matmul/mm1_*.py $R/matmul/mc1_*.py tests/adversarial/s9/mm_exact_incremental_memo.py "$M"/
cp $R/flip/fo1_*.py $R/flip/fh1_*.py "$F"/
K="python3 -m kernelsynth hw=h200 exploration.baselines=false exploration.profile=false exploration.sandbox.allow_unsandboxed_external=true"
run() {  # name seconds args...
  local name=$1 secs=$2; shift 2
  timeout -k 5 "$secs" $K "$@" hydra.run.dir="$OUTDIR/$name" > "$OUTDIR/$name.log" 2>&1
  echo "$name: rc=$?" >> "$OUTDIR/rc.txt"
}
timeout -k 5 75 python3 bench/memo9_timed_inputs.py > "$OUTDIR/timed_inputs.txt" 2>&1; echo "timed_inputs: rc=$?" >> "$OUTDIR/rc.txt"
run matmul 60 task=matmul_bias_gelu 'task.dtypes=[float32]' exploration.sources=[external] "exploration.extra_candidates=[$M]"
run flip 40 task=flip2d 'task.dtypes=[float32]' exploration.sources=[external] "exploration.extra_candidates=[$F]"
python3 tests/adversarial/redteam_s7/summarize.py "$OUTDIR"/matmul "$OUTDIR"/flip > "$OUTDIR/summary.txt" 2>&1
cat "$OUTDIR/rc.txt" "$OUTDIR/timed_inputs.txt" "$OUTDIR/summary.txt"
