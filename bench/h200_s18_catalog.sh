#!/usr/bin/env bash
# Session 18's catalog call on the H200 (issue 15; < 560 s): the three ladders that got a new version on
# branch cat18 -- quantize_int8_rows v3 (reciprocal + Markstein FMA quotient, prefetch), cross_entropy v3
# (per-lane chunked online logsumexp), depthwise_conv2d v3 (plane bands, one load of each row) -- each
# whole (every version and config), with eager and torch.compile, in bfloat16 and float32.
#
#   bash bench/h200_s18_catalog.sh        (repo root, after the device README's install line; carry .whl, .deb)
#
# One engine run per (task, dtype), bfloat16 first (the dtype the targets are furthest from in all three),
# then float32. Why one run per dtype: a run plans dtype by dtype in the spec's order (cross_entropy's is
# float32 first), each dtype's baselines before its candidates, and v3 last; a run stopped by its limit
# loses what comes last, so splitting by dtype keeps every run's torch.compile (planned first: session 9's
# catalog runs lost it to 53-62 s limits, with eager then torch.compile at the end and about 19 s of
# Inductor compile) and puts the new versions of the dtype that matters most early in the call.
# Per-run limits (seconds) are sized from session 9's costs (12 s to the hardware probe -- the ceilings
# are measured by the first run and cached for the rest -- about 10 s for the oracle at the GPU shapes,
# 19 s for torch.compile, 0.3-8 s per config; 11-13 configs per dtype here, about 80-100 s a run):
#   bfloat16 95-120 s (depthwise_conv2d's most: its v2 is CUDA, 4 NVRTC builds per dtype), float32 75 s
#   each, 540 s in all; TOTAL_S (default 555) caps the call, and a run
#   that would start with under 15 s left is skipped and named.
# Settings of bench/h200_catalog.sh: 1 verification trial per shape (every other check of the protocol
# runs), one timing repeat, do_bench 10 ms warm-up / 30 ms, no ncu profile.
# To $OUT: status.txt (rc and seconds per run), gpu.txt, catalog_summary.md (bench/catalog_summary.py
# --readme --versions over the six runs: best version per task and dtype, x v0, x eager, x torch.compile,
# % of copy, every version's step), logs.tar.gz, runs.tar.gz, total.txt.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
. bench/device_env.sh
RUNS=${RUNS:-/tmp/s18_runs}; mkdir -p "$RUNS/logs"
TOTAL_S=${TOTAL_S:-555}
RUNLIST=${RUNLIST:-"quantize_int8_rows:bfloat16:95 cross_entropy:bfloat16:100 depthwise_conv2d:bfloat16:120
quantize_int8_rows:float32:75 cross_entropy:float32:75 depthwise_conv2d:float32:75"}
start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
for entry in $RUNLIST; do
  t=${entry%%:*}; rest=${entry#*:}; dt=${rest%%:*}; own=${rest#*:}
  left=$(( TOTAL_S - 20 - ($(date +%s) - start) ))
  if [ "$left" -lt 15 ]; then echo "$t $dt: not run (the ${TOTAL_S} s budget is spent)" | tee -a "$OUT/status.txt"; continue; fi
  limit=$(( own < left ? own : left )); t0=$(date +%s)
  timeout -k 5 "$limit" python3 -m kernelsynth task="$t" hw=${HW:-h200} "task.dtypes=[$dt]" exploration.trials=1 \
    exploration.timing_repeats=1 exploration.warmup_ms=10 exploration.rep_ms=30 exploration.profile=false \
    exploration.progress=false hydra.run.dir="$RUNS/$t-$dt" > "$RUNS/logs/$t-$dt.log" 2>&1
  rc=$?
  echo "$t $dt: rc=$rc $(( $(date +%s) - t0 )) s (limit $limit s)$([ $rc -eq 124 ] && echo ', stopped by the limit: partial')" \
    | tee -a "$OUT/status.txt"
done
timeout 15 python3 bench/catalog_summary.py "$RUNS" --readme --versions > "$OUT/catalog_summary.md" 2>&1
cat "$OUT/catalog_summary.md"
(cd "$RUNS" && tar czf "$OUT/runs.tar.gz" --exclude='.observation-key' */observations.parquet */observations \
  */run.json 2>/dev/null)
(cd "$RUNS/logs" && tar czf "$OUT/logs.tar.gz" *.log)
echo "total $(( $(date +%s) - start )) s" | tee "$OUT/total.txt"
