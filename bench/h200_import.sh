#!/usr/bin/env bash
# Issue 16 on the lent H200: import KernelBench-format problems (tests/fixtures/kernelbench, 16, and
# bench/kernelbench_extra, 5) as tasks, run each with exploration.sources=[ladder,inductor]
# (v0 eager and TorchInductor's generated Triton; float32; no torch.compile baseline, no profile),
# and summarise: how many imported, how many produced records, inductor vs eager per task.
# From the repo root (after the device's install line):
#   bash bench/h200_import.sh
# One task per GPU at a time (CUDA_VISIBLE_DEVICES), so timings never share a device; on an
# nvidia-h200-x4 the 21 tasks take about a quarter of the time of one GPU (not measured yet: about a
# minute per task is expected, mostly compiles). Hard limits: TASK_TIMEOUT seconds per task run
# (default 120), BUDGET seconds for the runs (default 330): no task starts that could end after
# BUDGET; those are listed as not run. What comes back ($OUT): summary.md (bench/import_summary.py),
# import.log (the importer's table), runs.log (one line per task run: exit status, seconds).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export KERNELSYNTH_CACHE=${KERNELSYNTH_CACHE:-/tmp/kcache} PYTHONUNBUFFERED=1
TASK_TIMEOUT=${TASK_TIMEOUT:-120}; BUDGET=${BUDGET:-330}; HW=${HW:-h200}
SCRATCH=${SCRATCH:-/tmp/kb_import}; rm -rf "$SCRATCH"; mkdir -p "$SCRATCH/runs"
start=$(date +%s)
timeout 120 python3 -m kernelsynth.tools import-kernelbench tests/fixtures/kernelbench bench/kernelbench_extra \
  --out "$SCRATCH/specs" > "$OUT/import.log" 2>&1; echo "import exit $?" >> "$OUT/import.log"
export KERNELSYNTH_SPECS="$SCRATCH/specs"
tasks=$(ls -d "$SCRATCH"/specs/kb_*/ 2>/dev/null | xargs -n1 basename)
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l); [ "$ngpu" -ge 1 ] || ngpu=1
[ "$HW" = cpu ] && ngpu=1
run_task() {  # $1 task, $2 gpu
  local t0=$(date +%s)
  CUDA_VISIBLE_DEVICES=$2 timeout -k 10 "$TASK_TIMEOUT" python3 -m kernelsynth task="$1" hw="$HW" \
    'exploration.sources=[ladder,inductor]' 'task.dtypes=[float32]' exploration.baselines=false \
    exploration.profile=false exploration.progress=false exploration.trials=2 exploration.timeout_s=100 \
    hydra.run.dir="$SCRATCH/runs/$1" > "$SCRATCH/runs/$1.log" 2>&1
  echo "$1 gpu=$2 exit=$? seconds=$(( $(date +%s) - t0 ))" >> "$OUT/runs.log"
}
: > "$OUT/runs.log"
first=1
for t in $tasks; do
  # no task starts that could end after BUDGET: every run is done (or killed) by then
  if [ $(( $(date +%s) - start + TASK_TIMEOUT )) -gt "$BUDGET" ]; then echo "$t not run: budget" >> "$OUT/runs.log"; continue; fi
  if [ $first = 1 ]; then run_task "$t" 0; first=0; continue; fi  # alone: it measures the ceilings for the cache
  while [ "$(jobs -rp | wc -l)" -ge "$ngpu" ]; do sleep 1; done
  busy=$(jobs -rp | wc -l); gpu=$(( busy % ngpu ))
  # the free GPU: one not named by a running job's marker file
  for g in $(seq 0 $(( ngpu - 1 ))); do [ -e "$SCRATCH/gpu$g.busy" ] || { gpu=$g; break; }; done
  touch "$SCRATCH/gpu$gpu.busy"
  ( run_task "$t" "$gpu"; rm -f "$SCRATCH/gpu$gpu.busy" ) &
done
wait
python3 bench/import_summary.py "$SCRATCH" > "$OUT/summary.md" 2>&1
cat "$OUT/summary.md"
for t in $tasks; do tail -25 "$SCRATCH/runs/$t.log" 2>/dev/null | sed "s|^|$t: |"; done > "$OUT/runs_tail.log"
echo "total $(( $(date +%s) - start )) s" | tee -a "$OUT/runs.log"
