#!/usr/bin/env bash
# The H200 runs of session 6 (2026-12-01), in parts that each fit one 10-minute device call.
# From the repo root, after the device's .whl install line (../shared/device/README.md), carrying
# .whl and .deb (bubblewrap for the sandbox):
#   bash bench/h200_s6.sh verdicts    # GPU tests (adversarial, gpu, cache) and the red team's GPU set,
#                                     # side by side (verdicts only: nothing of theirs is a timing result)
#   bash bench/h200_s6.sh ladders     # flip2d and conv_relu_maxpool, one run each (sandbox on, profile on):
#                                     # verdicts, tc_summary (issue 14 targets), protocol cost, precision
# Logs go to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
. bench/device_env.sh
S="$OUT/summary.txt"
for part in "$@"; do
  t0=$(date +%s)
  case "$part" in
    verdicts)
      ( KERNELSYNTH_TEST_GPU=1 timeout 540 python3 -m pytest -q -p no:cacheprovider -o addopts="" -rfE \
          tests/test_adversarial_gpu.py tests/test_gpu.py \
          tests/test_cache.py::test_on_the_gpu_a_warm_cache_compiles_nothing_and_keeps_the_verdicts \
          > "$OUT/gpu_tests.log" 2>&1; echo "gpu tests exit $?" >> "$OUT/gpu_tests.log" ) &
      timeout 540 bash tests/adversarial/redteam_2026_12_01/gpu/run_h200.sh /tmp/redteam > "$OUT/redteam.txt" 2>&1
      wait
      echo "== verdicts: $(( $(date +%s) - t0 )) s" >> "$S"
      tail -25 "$OUT/gpu_tests.log" >> "$S"; cat "$OUT/redteam.txt" | cut -c1-400 >> "$S"
      for r in conv32 conv16 flip; do tail -4 /tmp/redteam/$r.log > "$OUT/redteam_${r}_tail.txt" 2>/dev/null; done ;;
    ladders)
      for task in flip2d:${FLIP_S:-240} conv_relu_maxpool:${CONV_S:-290}; do
        t=${task%%:*}; lim=${task##*:}; t1=$(date +%s)
        timeout "$lim" python3 -m kernelsynth task=$t hw=h200 exploration.progress=false hydra.run.dir=/tmp/r_$t > "$OUT/run_$t.log" 2>&1
        echo "== $t: exit $? in $(( $(date +%s) - t1 )) s" >> "$S"; grep -m1 "sandbox:" "$OUT/run_$t.log" >> "$S"
        grep -E "profile v|ceiling:" "$OUT/run_$t.log" | cut -c1-300 >> "$S"
        python3 bench/tc_summary.py /tmp/r_$t $t >> "$S" 2>&1
        python3 bench/protocol_cost.py /tmp/r_$t 2>&1 | tail -4 >> "$S"
        python3 bench/precision_report.py /tmp/r_$t > "$OUT/precision_$t.txt" 2>&1
      done ;;
  esac
done
cat "$S"
