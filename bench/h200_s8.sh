#!/usr/bin/env bash
# The H200 runs of session 8 (2026-12-01), in parts that fit 10-minute device calls. From the repo
# root after the device's .whl install line (../shared/device/README.md), carrying .whl and .deb:
#   bash bench/h200_s8.sh gpusmall             # tests/test_gpu.py and the GPU cache test, -rfE
#   bash bench/h200_s8.sh warm:TASK:DTYPES     # issue 13's sandbox cost on warm compile caches: TASK
#                                              # with exploration.sandbox.mode=off on a cold cache (it
#                                              # fills the cache), then =on, then =off again, both on the
#                                              # warm cache; profile off; DTYPES like float32 or
#                                              # float32,bfloat16; run dirs $OUT/wp/TASK-{fill,on,off}
# DEADLINE=<epoch s> skips a run that would start with less than RUN_S left. A summary goes to
# $OUT/summary.txt; $OUT/wp.tgz holds the run directories (datasets left out).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/wp"
. bench/device_env.sh
S="$OUT/summary.txt"; DEADLINE=${DEADLINE:-$(( $(date +%s) + 100000 ))}
for part in "$@"; do
  t0=$(date +%s)
  case "$part" in
    gpusmall)
      KERNELSYNTH_TEST_GPU=1 timeout ${GPU_TESTS_S:-240} python3 -m pytest -q -p no:cacheprovider -o addopts="" -rfE \
        tests/test_gpu.py tests/test_cache.py::test_on_the_gpu_a_warm_cache_compiles_nothing_and_keeps_the_verdicts \
        > "$OUT/gpusmall.log" 2>&1
      echo "== gpusmall: exit $? in $(( $(date +%s) - t0 )) s" >> "$S"; tail -8 "$OUT/gpusmall.log" >> "$S" ;;
    warm:*)
      IFS=: read -r _ task dts <<< "$part"; lim=${RUN_S:-150}; cache=/tmp/wp-cache-$task; mkdir -p "$cache"
      [ -f "$KERNELSYNTH_CACHE/ceilings.json" ] && cp "$KERNELSYNTH_CACHE/ceilings.json" "$cache/"
      for step in fill:off on:on off:off; do
        name=${step%%:*}; mode=${step##*:}
        if [ $(( DEADLINE - $(date +%s) )) -lt "$lim" ]; then echo "== $task $name: skipped (deadline)" >> "$S"; continue; fi
        t1=$(date +%s)
        KERNELSYNTH_CACHE="$cache" TRITON_CACHE_DIR="$cache/triton" TORCHINDUCTOR_CACHE_DIR="$cache/inductor" \
          TORCH_EXTENSIONS_DIR="$cache/torch_extensions" timeout "$lim" \
          python3 -m kernelsynth task=$task hw=h200 "task.dtypes=[$dts]" exploration.sandbox.mode=$mode \
            exploration.progress=false exploration.profile=false hydra.run.dir="$OUT/wp/$task-$name" > "$OUT/wp/$task-$name.log" 2>&1
        echo "== $task $name (sandbox $mode): exit $? in $(( $(date +%s) - t1 )) s" >> "$S"
        grep -E "^(rejected|accepted) " "$OUT/wp/$task-$name.log" | cut -c1-300 >> "$S"
        python3 bench/protocol_cost.py "$OUT/wp/$task-$name" 2>&1 | tail -2 >> "$S"
      done
      mkdir -p "$KERNELSYNTH_CACHE"; [ -f "$cache/ceilings.json" ] && cp -n "$cache/ceilings.json" "$KERNELSYNTH_CACHE/" ;;
  esac
done
( cd "$OUT" && tar czf wp.tgz --exclude='*/dataset' wp )
python3 bench/sandbox_cost.py "$OUT/wp" >> "$S" 2>&1
cat "$S"
