#!/usr/bin/env bash
# Session 10, helper cost10: the protocol's cost per candidate on the H200 after two trims of rule 12's
# GPU plan (VERIFICATION.md "Cost per candidate"): the valuation-class shapes packed by JIT
# specialisation key (kernelsynth/shapes.py extreme_shapes) and the cheaper audit checksum
# (kernelsynth/verify/transport.py _checksum).
#   . bench/device_env.sh; timeout 185 bash bench/h200_cost10.sh "$OUT/cost10"
# 1. bench/cost10_pieces.py (hard limit 35 s): seconds of each piece of the 2^31-element shape and the
#    timing shape, a compile at a new key, and the derived group in-process with session 9's plan and
#    checksum against the current ones (same process, fresh Triton caches);
# 2. flip2d float32 through the engine (95 s): ladder v0 only, 8 configs; compare the median verify_s
#    with 0.94 s (session 8), 2.14 s (session 9) and the allowance 1.22 s (0.94 x 1.3);
# 3. softmax_rows bfloat16 (45 s; session 9: 1.99 s).
# Sandbox on, no baselines, no profile. Logs and pieces.json under the folder given.
set -u
OUTDIR=${1:-${OUT:-/tmp}/cost10}
mkdir -p "$OUTDIR"
if [ -f bench/device_env.sh ]; then . bench/device_env.sh; fi
timeout -k 5 35 python3 bench/cost10_pieces.py --out "$OUTDIR/pieces.json" > "$OUTDIR/pieces.txt" 2>&1
echo "pieces: rc=$?" >> "$OUTDIR/rc.txt"
K="python3 -m kernelsynth hw=h200 exploration.baselines=false exploration.profile=false exploration.progress=false"
run() {  # name seconds args...
  local name=$1 secs=$2; shift 2
  local t0=$(date +%s)
  timeout -k 5 "$secs" $K "$@" hydra.run.dir="$OUTDIR/$name" > "$OUTDIR/$name.log" 2>&1
  echo "$name: rc=$? $(( $(date +%s) - t0 )) s" >> "$OUTDIR/rc.txt"
}
run flip 95 task=flip2d 'task.dtypes=[float32]' 'exploration.sources=[external]'
run softmax 45 task=softmax_rows 'task.dtypes=[bfloat16]' 'exploration.sources=[external]'
for d in flip softmax; do echo "== $d"; timeout 20 python3 bench/protocol_cost.py "$OUTDIR/$d"; done > "$OUTDIR/cost.txt" 2>&1
echo "target: flip2d float32 candidate median verify_s <= 1.22 s (0.94 s x 1.3); session 9: 2.14 s" >> "$OUTDIR/cost.txt"
cat "$OUTDIR/rc.txt"; grep -v "Warn\|warn_once" "$OUTDIR/pieces.txt" | cut -c1-120 | tail -32
grep -E "^== |median|target" "$OUTDIR/cost.txt" | cut -c1-300
