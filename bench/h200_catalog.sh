#!/usr/bin/env bash
# Issue 15 on the H200: every catalog task once on hw=h200 -- every version and config, eager,
# torch.compile and the measured ceilings side by side (the engine's normal run, one per task) --
# then bench/catalog_summary.py's table and targets. Usage, from the repo root (after the .whl
# install line of the device README):
#   bash bench/h200_catalog.sh                # all 17 catalog tasks in TOTAL_S (default 450 s: far too short now)
# Per task, measured on an H100 in sessions 24-25: a whole ladder of one dtype takes 100-150 s and more,
# mostly the first evaluation of each Triton version (its compiles for rule 12's derived shapes: layernorm
# v2 57 s, rope v1 > 170 s before its chunking fix); give each task >= 150 s per dtype, 2-3 tasks per call.
#   TASKS="softmax_rows layernorm" PER_TASK_S=60 bash bench/h200_catalog.sh
#   TASKS="layernorm:55 depthwise_conv2d:40 topk_rows:65 column_sum:60" TOTAL_S=240 bash bench/h200_catalog.sh
#       (session 7's four tasks, < 5 min: "task:seconds" sets that task's own limit)
# To $OUT (or /tmp/out; 6 files, within the device's 8): catalog_summary.md (the best version per
# task and dtype, issue 15's targets, the README lines, then every version's step), status.txt (rc and
# seconds per task), gpu.txt, logs.tar.gz (one <task>.log each), runs.tar.gz (each run's
# observations and run.json), total.txt.
#   EXTRA='task.dtypes=[bfloat16]' bash bench/h200_catalog.sh   # more overrides for every task's run
#   PARALLEL=1 TASKS="layernorm:240 topk_rows:240" bash bench/h200_catalog.sh
#       (the tasks start together, each with its own limit; the GPU's lock lets one job at a time
#       use the GPU, so only the workers' start-up and compiles overlap). Not with PROFILE=true: ncu
#       fails ("An error was reported by the driver") while another run holds the GPU (session 27)
# Settings that keep a run short: 1 verification trial per shape (the protocol's other checks all
# run), one timing repeat, do_bench 10 ms warm-up / 30 ms repetitions, no ncu profile (PROFILE=true: the
# engine's profile step, ncu on the fastest config of each version and baseline). The ceilings
# are measured once (cached in $KERNELSYNTH_CACHE) and shared by every task. A task stopped by its
# limit keeps the observations it had written (the summary reads them) and is named in the log.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
. bench/device_env.sh  # the shared cache, the carried bubblewrap, HW from the lent card's name (h100 or h200)
RUNS=${RUNS:-/tmp/catalog_runs}; mkdir -p "$RUNS/logs"
TOTAL_S=${TOTAL_S:-450}
TASKS=${TASKS:-"softmax_rows layernorm rmsnorm_residual cross_entropy column_sum softmax_backward swiglu gelu_tanh
transpose2d embedding_gather quantize_int8_rows rope cumsum_rows topk_rows depthwise_conv2d matmul_bias_gelu
causal_attention"}
n=$(echo $TASKS | wc -w)
PER_TASK_S=${PER_TASK_S:-$(( (TOTAL_S - 20) / n ))}
start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
one() {  # task limit
  local t=$1 limit=$2 t0=$(date +%s)
  timeout -k 5 "$limit" python3 -m kernelsynth task="$t" hw=${HW:-h200} exploration.trials=1 exploration.timing_repeats=1 \
    exploration.warmup_ms=10 exploration.rep_ms=30 exploration.profile=${PROFILE:-false} exploration.progress=false \
    hydra.run.dir="$RUNS/$t" ${EXTRA:-} > "$RUNS/logs/$t.log" 2>&1
  local rc=$?
  echo "$t: rc=$rc $(( $(date +%s) - t0 )) s (limit $limit s)$([ $rc -eq 124 ] && echo ', stopped by the limit: partial')" \
    | tee -a "$OUT/status.txt"
}
for entry in $TASKS; do
  t=${entry%%:*}; own=$PER_TASK_S; [ "$t" != "$entry" ] && own=${entry#*:}
  left=$(( TOTAL_S - 20 - ($(date +%s) - start) ))
  if [ "$left" -lt 15 ]; then echo "$t: not run (the ${TOTAL_S} s budget is spent)" | tee -a "$OUT/status.txt"; continue; fi
  limit=$(( own < left ? own : left ))
  if [ -n "${PARALLEL:-}" ]; then one "$t" "$limit" & else one "$t" "$limit"; fi
done
wait
timeout 60 python3 bench/catalog_summary.py "$RUNS" --readme --versions > "$OUT/catalog_summary.md" 2>&1
cat "$OUT/catalog_summary.md"
(cd "$RUNS" && tar czf "$OUT/runs.tar.gz" --exclude='.observation-key' */observations.parquet */observations \
  */run.json 2>/dev/null)
(cd "$RUNS/logs" && tar czf "$OUT/logs.tar.gz" *.log)
echo "total $(( $(date +%s) - start )) s" | tee "$OUT/total.txt"
