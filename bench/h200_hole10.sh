#!/usr/bin/env bash
# Session 10 (hole10) on the H200, one call, about 3.5 min (hard timeouts 100 + 45 + 70 s):
#   bash bench/h200_hole10.sh "$OUT/hole10"
# 1. bench/hole10_inline_outputs.py (100 s): rule 10's fresh-memory check against a load_inline CUDA
#    extension: a torch::empty output accepted, a from_blob output over kept memory rejected;
# 2. flip2d float32 (45 s), ladder cut to v0: redteam_s9 fa1 (screened by name; rule 10 at run time in
#    tests/test_redteam_s9_holes.py), s10 fk (rejected: kept block), s10 fh (honest, accepted);
# 3. softmax_rows float32 (70 s), ladder cut to v0: redteam_s9 sm1 and sh2; sm1 must be
#    rejected on the GPU plan too (its odd listed shapes 7x37, 37x1001, ... carry the exchange), sh2 accepted.
set -u
OUTDIR=${1:-${OUT:-/tmp}/hole10}
mkdir -p "$OUTDIR"
. bench/device_env.sh
F="$OUTDIR/flip_candidates"; S="$OUTDIR/softmax_candidates"
mkdir -p "$F" "$S"
cp tests/adversarial/redteam_s9/flip/fa1_*.py tests/adversarial/s10/fk_*.py tests/adversarial/s10/fh_*.py "$F"/
cp tests/adversarial/redteam_s9/softmax/sm1_*.py tests/adversarial/redteam_s9/softmax/sh2_*.py "$S"/
K="python3 -m kernelsynth hw=h200 exploration.baselines=false exploration.profile=false exploration.trials=2 exploration.sandbox.allow_unsandboxed_external=true"
run() {  # name seconds args...
  local name=$1 secs=$2; shift 2
  timeout -k 5 "$secs" $K "$@" hydra.run.dir="$OUTDIR/$name" > "$OUTDIR/$name.log" 2>&1
  echo "$name: rc=$?" >> "$OUTDIR/rc.txt"
}
timeout -k 5 ${INLINE_S:-100} python3 bench/hole10_inline_outputs.py > "$OUTDIR/inline.txt" 2>&1; echo "inline: rc=$?" >> "$OUTDIR/rc.txt"
run flip 45 task=flip2d 'task.dtypes=[float32]' exploration.sources=[external] "exploration.extra_candidates=[$F]"
run softmax 70 task=softmax_rows 'task.dtypes=[float32]' exploration.sources=[external] "exploration.extra_candidates=[$S]"
python3 tests/adversarial/redteam_s7/summarize.py "$OUTDIR"/flip "$OUTDIR"/softmax > "$OUTDIR/summary.txt" 2>&1
cat "$OUTDIR/rc.txt" "$OUTDIR/inline.txt" "$OUTDIR/summary.txt"
