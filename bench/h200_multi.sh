#!/usr/bin/env bash
# Issue 17 on the nvidia-h200-x2 machine: the same runs on 1 GPU and on 2 GPUs of one host
# (exploration.workers=[0] against exploration.workers=auto), then their comparison
# (bench/multi_compare.py): throughput ratio (issue 17 asks >= 1.8x), identical verdicts per
# observation key and identical records (ids, versions, verdicts, best version), latencies of the
# same key within 2 %, and how the 2-GPU run spread its jobs over the devices. From the repo root
# after the device's .whl install line (../shared/device/README.md), carrying .whl and .deb; one
# part per 10-minute device call:
#   bash bench/h200_multi.sh ceilings          # both GPUs' ceilings into $KERNELSYNTH_CACHE (~60 s)
#   bash bench/h200_multi.sh flip2d:1 flip2d:2 # flip2d float32+bfloat16 on 1 GPU (~150 s), then 2 (~90 s)
#   bash bench/h200_multi.sh conv_relu_maxpool:1 conv_relu_maxpool:2   # (~230 s, then ~130 s)
#   bash bench/h200_multi.sh compare           # the table for BENCHMARKS.md, from $OUT/multi
# Each run: profile off, sandbox on, cold compile caches of its own (the ceilings copied in, so
# both runs time the same way and neither reuses the other's compiles). Logs, run dirs and
# $OUT/summary.txt under $OUT (default /tmp/out); $OUT/multi.tgz holds the run dirs.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/multi"
. bench/device_env.sh
S="$OUT/summary.txt"
nvidia-smi -L >> "$S" 2>&1
for part in "$@"; do
  t0=$(date +%s)
  case "$part" in
    ceilings)  # one tiny run on every GPU: each GPU's ceilings measured once, under its fingerprint
      timeout ${CEIL_S:-300} python3 -m kernelsynth task=flip2d hw=h200 exploration.workers=auto exploration.sources=[] \
        task.dtypes=[float32] exploration.baselines=false exploration.profile=false exploration.progress=false \
        hydra.run.dir="$OUT/multi/ceilings" > "$OUT/multi/ceilings.log" 2>&1
      echo "== ceilings: exit $? in $(( $(date +%s) - t0 )) s" >> "$S"; grep -E "ceiling|worker\(s\) on|retired" "$OUT/multi/ceilings.log" | cut -c1-400 >> "$S" ;;
    *:1|*:2)
      task=${part%%:*}; n=${part##*:}; lim=${RUN_S:-540}; cache=/tmp/multi-cache-$task-$n; rm -rf "$cache"; mkdir -p "$cache"
      [ -f "$KERNELSYNTH_CACHE/ceilings.json" ] && cp "$KERNELSYNTH_CACHE/ceilings.json" "$cache/"
      workers=$([ "$n" = 1 ] && echo "[0]" || echo auto)
      dtypes=$([ "$task" = flip2d ] && echo "task.dtypes=[float32,bfloat16]" || echo "")
      KERNELSYNTH_CACHE="$cache" TRITON_CACHE_DIR="$cache/triton" TORCHINDUCTOR_CACHE_DIR="$cache/inductor" \
        TORCH_EXTENSIONS_DIR="$cache/torch_extensions" timeout "$lim" \
        python3 -m kernelsynth task=$task hw=h200 exploration.workers=$workers $dtypes exploration.progress=false \
          exploration.profile=false hydra.run.dir="$OUT/multi/$task-$n" > "$OUT/multi/$task-$n.log" 2>&1
      echo "== $task on $n GPU(s) (workers=$workers): exit $? in $(( $(date +%s) - t0 )) s" >> "$S"
      grep -E "worker\(s\) on|retired|ceiling:" "$OUT/multi/$task-$n.log" | cut -c1-400 >> "$S" ;;
    compare)
      for task in flip2d conv_relu_maxpool; do
        [ -d "$OUT/multi/$task-1" ] && [ -d "$OUT/multi/$task-2" ] && \
          python3 bench/multi_compare.py "$OUT/multi/$task-1" "$OUT/multi/$task-2" >> "$S" 2>&1
      done ;;
    *) echo "unknown part $part" >> "$S" ;;
  esac
done
( cd "$OUT" && tar czf multi.tgz --exclude='*/dataset' multi )
cat "$S"
