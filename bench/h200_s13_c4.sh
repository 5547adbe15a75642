#!/usr/bin/env bash
# Session 13's last H200 call (< 230 s):   bash bench/h200_s13_c4.sh   (repo root, after the install line; carry .whl, .deb)
# issue 10 (session 12's open question): two flip2d float32 runs side by side on one GPU, every candidate in a fresh
# worker (exploration.fresh_worker=always), after the fix that takes the GPU lock before a pinned worker's CUDA start:
# any rule-17 host-timed rejection (event vs synced time) is a false one. To $OUT: steps.txt, side.txt.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
. bench/device_env.sh
K="python3 -m kernelsynth task=flip2d hw=h200 exploration.progress=false exploration.profile=false exploration.baselines=false exploration.fresh_worker=always task.dtypes=[float32]"
t0=$(date +%s)
timeout -k 5 ${SIDE_S:-190} $K hydra.run.dir=/tmp/sideA > /tmp/sideA.log 2>&1 &
timeout -k 5 ${SIDE_S:-190} $K hydra.run.dir=/tmp/sideB > /tmp/sideB.log 2>&1 &
wait
echo "side by side: $(( $(date +%s) - t0 )) s" >> "$OUT/steps.txt"
for d in sideA sideB; do
  { echo "== $d"; grep -E "rejected|lock" /tmp/$d.log | cut -c1-300 | head -20
    timeout 30 python3 bench/protocol_cost.py /tmp/$d 2>&1 | tail -3; } >> "$OUT/side.txt" 2>&1
done
cat "$OUT/steps.txt" "$OUT/side.txt"
