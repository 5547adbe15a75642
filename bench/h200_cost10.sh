#!/usr/bin/env bash
# Session 10, helper cost10: the protocol's cost per candidate on the H200 after rule 12's shapes were
# packed by JIT specialisation key (kernelsynth/shapes.py extreme_shapes; VERIFICATION.md "Cost per
# candidate"). Compare flip2d float32 v0's median verify_s with 0.94 s (session 8) and 2.14 s
# (session 9); the allowance is 1.22 s. Then softmax_rows bfloat16 v0 (session 9: 1.99 s).
#   . bench/device_env.sh; timeout 180 bash bench/h200_cost10.sh "$OUT/cost10"
# Hard limits 110 + 55 s; sandbox on, no baselines, no profile, ladder v0 only (8 / 4 configs).
set -u
OUTDIR=${1:-${OUT:-/tmp}/cost10}
mkdir -p "$OUTDIR"
if [ -f bench/device_env.sh ]; then . bench/device_env.sh; fi
K="python3 -m kernelsynth hw=h200 exploration.baselines=false exploration.profile=false exploration.progress=false"
run() {  # name seconds args...
  local name=$1 secs=$2; shift 2
  local t0=$(date +%s)
  timeout -k 5 "$secs" $K "$@" hydra.run.dir="$OUTDIR/$name" > "$OUTDIR/$name.log" 2>&1
  echo "$name: rc=$? $(( $(date +%s) - t0 )) s" >> "$OUTDIR/rc.txt"
}
run flip 110 task=flip2d 'task.dtypes=[float32]' 'exploration.sources=[external]'
run softmax 55 task=softmax_rows 'task.dtypes=[bfloat16]' 'exploration.sources=[external]'
for d in flip softmax; do echo "== $d"; timeout 30 python3 bench/protocol_cost.py "$OUTDIR/$d"; done > "$OUTDIR/cost.txt" 2>&1
echo "target: flip2d float32 candidate median verify_s <= 1.22 s (0.94 s x 1.3); session 9: 2.14 s" >> "$OUTDIR/cost.txt"
cat "$OUTDIR/rc.txt"; grep -E "^== |median|target" "$OUTDIR/cost.txt" | cut -c1-300
