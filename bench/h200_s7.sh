#!/usr/bin/env bash
# The H200 runs of session 7 (2026-12-01), in parts that fit 10-minute device calls. From the repo
# root after the device's .whl install line (../shared/device/README.md), carrying .whl and .deb:
#   bash bench/h200_s7.sh gputests        # every GPU test (adversarial, gpu, the GPU cache test), -rfE
#   bash bench/h200_s7.sh TASK:MODE ...   # one run of TASK (flip2d, conv_relu_maxpool) with
#                                         # exploration.sandbox.mode=MODE (on/off), profile off, cold
#                                         # compile caches (as bench/sandbox_cost.sh); run dirs kept under
#                                         # $OUT/sc/TASK-MODE for bench/sandbox_cost.py and
#                                         # bench/protocol_cost.py (issue 10's cost per candidate)
# Logs and a summary go to $OUT (default /tmp/out); $OUT/sc.tgz holds the run directories.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/sc"
. bench/device_env.sh
S="$OUT/summary.txt"
for part in "$@"; do
  t0=$(date +%s)
  case "$part" in
    gputests)
      KERNELSYNTH_TEST_GPU=1 timeout ${GPU_TESTS_S:-360} python3 -m pytest -q -p no:cacheprovider -o addopts="" -rfE \
        tests/test_adversarial_gpu.py tests/test_gpu.py \
        tests/test_cache.py::test_on_the_gpu_a_warm_cache_compiles_nothing_and_keeps_the_verdicts > "$OUT/gpu_tests.log" 2>&1
      echo "== gputests: exit $? in $(( $(date +%s) - t0 )) s" >> "$S"; tail -12 "$OUT/gpu_tests.log" >> "$S" ;;
    *:*)
      task=${part%%:*}; mode=${part##*:}; lim=${RUN_S:-300}; cache=/tmp/sc-cache-$task-$mode; mkdir -p "$cache"
      [ -f "$KERNELSYNTH_CACHE/ceilings.json" ] && cp "$KERNELSYNTH_CACHE/ceilings.json" "$cache/"
      KERNELSYNTH_CACHE="$cache" TRITON_CACHE_DIR="$cache/triton" TORCHINDUCTOR_CACHE_DIR="$cache/inductor" \
        TORCH_EXTENSIONS_DIR="$cache/torch_extensions" timeout "$lim" \
        python3 -m kernelsynth task=$task hw=h200 exploration.sandbox.mode=$mode exploration.progress=false \
          exploration.profile=false hydra.run.dir="$OUT/sc/$task-$mode" > "$OUT/sc/$task-$mode.log" 2>&1
      echo "== $task sandbox $mode: exit $? in $(( $(date +%s) - t0 )) s" >> "$S"
      mkdir -p "$KERNELSYNTH_CACHE"; [ -f "$cache/ceilings.json" ] && cp -n "$cache/ceilings.json" "$KERNELSYNTH_CACHE/"
      grep -m1 "sandbox:" "$OUT/sc/$task-$mode.log" | sed 's/.*sandbox:/sandbox:/' >> "$S"
      grep -E "^(rejected|accepted) " "$OUT/sc/$task-$mode.log" | cut -c1-600 >> "$S"
      python3 bench/protocol_cost.py "$OUT/sc/$task-$mode" 2>&1 | tail -4 >> "$S" ;;
  esac
done
( cd "$OUT" && tar czf sc.tgz --exclude='*/dataset' sc )
python3 bench/sandbox_cost.py "$OUT/sc" >> "$S" 2>&1
cat "$S"
