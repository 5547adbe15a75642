#!/usr/bin/env bash
# Session 12's first H200 call (< 590 s; each step has its own hard limit and starts only while time is left):
#   bash bench/h200_s12_c1.sh            (repo root, after the device's install line; carry .whl and .deb)
# 1. issue 10, the protocol's cost on conv_relu_maxpool: cProfile of a warm evaluation of v4 float32
#    (bench/verify_profile.py: where a CUDA candidate's verify_s goes over rule 12's shapes), and v3 float32 /
#    bfloat16 with an empty Triton cache (bench/cost11_cpu.py: compile_s and verify_s of the first and of a warm
#    evaluation, after v3's one-variant-per-config change; session 11: 13.4 s cold);
# 2. issue 10, the rest of red team s11's GPU set (bench/h200_redteam11.sh without the mw1/cw1 pairs, the three
#    task runs started together, 200 s each).
# To $OUT: steps.txt, summary.txt, cost.tgz, rt11.tgz.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/cost
. bench/device_env.sh
start=$(date +%s); END=${END_S:-585}
. bench/steps.sh  # step NAME LIMIT CMD...
step vprof_v4 70 python3 bench/verify_profile.py conv_relu_maxpool v4 float32 --gpu
for dt in float32 bfloat16; do
  TRITON_CACHE_DIR=$(mktemp -d /tmp/v3cache-XXXX) step v3_$dt 75 python3 bench/cost11_cpu.py conv_relu_maxpool v3 $dt --gpu --repeats 1
done
cp /tmp/vprof_v4.stdout /tmp/v3_*.stdout /tmp/cost/ 2>/dev/null; tar czf "$OUT/cost.tgz" -C /tmp cost
RT_SKIP_PAIRS=1 RT_PARALLEL=1 RT_MATMUL_S=200 RT_CONV_S=200 RT_FLIP_S=200 step rt11 215 bash bench/h200_redteam11.sh /tmp/rt11
cp /tmp/rt11.stdout /tmp/rt11/ 2>/dev/null; tar czf "$OUT/rt11.tgz" -C /tmp --exclude='*.so' --exclude='*.cubin' rt11 2>/dev/null
{ echo "== v4 float32 warm evaluation (cProfile)"; head -60 /tmp/vprof_v4.stdout | cut -c1-160
  for dt in float32 bfloat16; do echo "== v3 $dt, empty Triton cache"; grep -E "warm-up|repeat|SUMMARY|config" /tmp/v3_$dt.stdout | cut -c1-220; done
  echo "== red team s11 rest"; cat /tmp/rt11/rc.txt /tmp/rt11/summary.txt /tmp/rt11/times.txt 2>/dev/null | cut -c1-330; } > "$OUT/summary.txt" 2>&1
cat "$OUT/steps.txt"; cat "$OUT/summary.txt"
