#!/usr/bin/env bash
# Issue 16 on the lent H200: import KernelBench-format problems (tests/fixtures/kernelbench, 16, and
# bench/kernelbench_extra, 5) as tasks, run each with exploration.sources=[ladder,inductor]
# (v0 eager and TorchInductor's generated Triton; float32; default trials; no torch.compile
# baseline, no profile), and summarise: how many imported, how many produced records, inductor
# vs eager per task. From the repo root (after the device's install line):
#   bash bench/h200_import.sh
# Several task runs at once on the one GPU (PARALLEL, default 4): a run's compiles (TorchInductor,
# Triton, its workers' start-up) overlap the others' GPU work, while every timed region holds the
# GPU's lock exclusive (kernelsynth/gpulock.py: flock in $KERNELSYNTH_CACHE/gpu-locks, every other
# GPU job shared), so no timing shares the GPU with another run's verification, compile or timing.
# TORCHINDUCTOR_COMPILE_THREADS=1 (one compile process per run: PARALLEL runs on the machine's cores).
# Hard limits: BUDGET seconds of wall time for the task runs (default 420): each run is killed at
# BUDGET (and at TASK_TIMEOUT, default 300 s); none starts with less than MIN_LEFT (90) s left;
# those are listed as not run. What comes back ($OUT, 6 files): summary.md (bench/import_summary.py),
# import.log (the importer's table), runs.log (one line per task run: exit status, seconds),
# runs_tail.log (each run's last lines), import_report.json, runs.tgz (each run's run.json,
# cli.log, observations, trajectories, the inductor files and records).
# On the CPU (correctness only, no timings): HW=cpu PARALLEL=2 TASKS="kb_l1_3_softmax kb_l1_9_crossentropy" bash bench/h200_import.sh
# TASKS (space-separated task names) runs only those, in that order; the import is always of all 21.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
if [ -f bench/device_env.sh ]; then . bench/device_env.sh; fi
export KERNELSYNTH_CACHE=${KERNELSYNTH_CACHE:-/tmp/kcache} PYTHONUNBUFFERED=1
export TORCHINDUCTOR_COMPILE_THREADS=${TORCHINDUCTOR_COMPILE_THREADS:-1}
TASK_TIMEOUT=${TASK_TIMEOUT:-300}; BUDGET=${BUDGET:-420}; MIN_LEFT=${MIN_LEFT:-90}; HW=${HW:-h200}
PARALLEL=${PARALLEL:-4}; TRIALS=${TRIALS:-5}
SCRATCH=${SCRATCH:-/tmp/kb_import}; rm -rf "$SCRATCH"; mkdir -p "$SCRATCH/runs"
start=$(date +%s)
timeout 120 python3 -m kernelsynth.tools import-kernelbench tests/fixtures/kernelbench bench/kernelbench_extra \
  --out "$SCRATCH/specs" > "$OUT/import.log" 2>&1; echo "import exit $? after $(( $(date +%s) - start )) s" >> "$OUT/import.log"
export KERNELSYNTH_SPECS="$SCRATCH/specs"
# level-2 problems first (the first H200 run, session 10, ran out of budget before any of them)
tasks=${TASKS:-$( (ls -d "$SCRATCH"/specs/kb_l2_*/; ls -d "$SCRATCH"/specs/kb_l[013-9]*_*/) 2>/dev/null | xargs -n1 basename)}
run_task() {  # $1 task, $2 seconds it may take
  local t0=$(date +%s)
  timeout -k 5 "$2" python3 -m kernelsynth task="$1" hw="$HW" \
    'exploration.sources=[ladder,inductor]' 'task.dtypes=[float32]' exploration.baselines=false \
    exploration.profile=false exploration.progress=false exploration.trials="$TRIALS" exploration.timeout_s=200 \
    hydra.run.dir="$SCRATCH/runs/$1" > "$SCRATCH/runs/$1.log" 2>&1
  echo "$1 exit=$? seconds=$(( $(date +%s) - t0 )) started_at=$(( t0 - start ))" >> "$OUT/runs.log"
}
: > "$OUT/runs.log"
for t in $tasks; do
  while [ "$(jobs -rp | wc -l)" -ge "$PARALLEL" ]; do sleep 0.5; done
  left=$(( start + BUDGET - $(date +%s) ))
  if [ "$left" -lt "$MIN_LEFT" ]; then echo "$t not run: budget ($left s left)" >> "$OUT/runs.log"; continue; fi
  run_task "$t" $(( left < TASK_TIMEOUT ? left : TASK_TIMEOUT )) &
  sleep 1  # staggered starts: the first run measures the ceilings, the others wait for its cache entry
done
wait
echo "GPU lock files: $(ls -la "$KERNELSYNTH_CACHE"/gpu-locks 2>/dev/null | tr '\n' ' '); runs warning of jobs without the lock: $(cat "$SCRATCH"/runs/*.log 2>/dev/null | grep -c "ran without the GPU's lock")" >> "$OUT/runs.log"
# why a worker could not open the lock (its stderr line, kernelsynth/gpulock.py), first few distinct
cat "$SCRATCH"/runs/*.log "$SCRATCH"/runs/*/cli.log 2>/dev/null | grep -o "kernelsynth gpulock: cannot open.*" | sort | uniq -c | head -5 >> "$OUT/runs.log"
echo "task runs done after $(( $(date +%s) - start )) s (budget $BUDGET s, $PARALLEL at a time)" | tee -a "$OUT/runs.log"
timeout 60 python3 bench/import_summary.py "$SCRATCH" > "$OUT/summary.md" 2>&1
cat "$OUT/summary.md"
for t in $tasks; do tail -25 "$SCRATCH/runs/$t.log" 2>/dev/null | sed "s|^|$t: |"; done > "$OUT/runs_tail.log"
cp "$SCRATCH/specs/import_report.json" "$OUT/" 2>/dev/null
(cd "$SCRATCH/runs" && timeout 60 tar czf "$OUT/runs.tgz" --exclude='*/observations' --exclude='*/.hydra' */ 2>/dev/null)
echo "total $(( $(date +%s) - start )) s" | tee -a "$OUT/runs.log"
