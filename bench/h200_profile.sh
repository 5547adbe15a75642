#!/usr/bin/env bash
# Issue 14 items 2, 3 and 5 on the lent H200, in one device call (about 8 of its 10 minutes):
# one run each of flip2d and conv_relu_maxpool (every version beside eager and torch.compile),
# the ceilings table (each copy method's GB/s, each matmul's TFLOP/s, any raise by an
# observation), the profile columns of the ncu step, and the charts. From the repo root, after the
# device's .whl install line (../shared/device/README.md), carrying .whl:
#   bash bench/h200_profile.sh
# Settings (environment): PROFILE_BUDGET (s of ncu per run, default 120), SANDBOX (auto|on|off,
# default auto), HW (default h200; HW=cpu runs the same flow here, on the interpreter: no timings,
# so the profiles and charts are skipped with their reasons). What comes back ($OUT, at most 8
# files): summary.txt (the tables, as Markdown, by bench/profile_report.py), flip2d.log and
# conv_relu_maxpool.log (each run's whole log; its summary table, ceiling and profile lines at the
# end) and five charts.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export KERNELSYNTH_CACHE=${KERNELSYNTH_CACHE:-/tmp/kcache} PYTHONUNBUFFERED=1
S="$OUT/summary.txt"; : > "$S"
{
  echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
  if command -v ncu >/dev/null; then echo "ncu: $(command -v ncu), $(ncu --version 2>&1 | tail -1)"
  else echo "ncu: not on PATH (the profile step also looks in /usr/local/cuda/bin and /opt/nvidia/nsight-compute)"; fi
  python3 -c "import matplotlib; print('matplotlib', matplotlib.__version__)" 2>&1 | tail -1
} >> "$S"
run() {  # task, time limit (s): one run, then its tables
  local task=$1 limit=$2 t0
  t0=$(date +%s)
  timeout "$limit" python3 -m kernelsynth task="$task" hw="${HW:-h200}" exploration.progress=false \
    exploration.profile_budget_s="${PROFILE_BUDGET:-120}" exploration.sandbox.mode="${SANDBOX:-auto}" \
    hydra.run.dir="/tmp/prof_$task" > "$OUT/$task.log" 2>&1
  echo "== $task: exit $? in $(( $(date +%s) - t0 )) s" >> "$S"
  grep -E "sandbox:|ceiling|profile " "$OUT/$task.log" | head -40 >> "$S"
  python3 bench/profile_report.py "/tmp/prof_$task" >> "$S" 2>&1
}
run flip2d 330
run conv_relu_maxpool 240
for c in flip2d-float32-${HW:-h200}-roofline flip2d-float32-${HW:-h200}-ladder conv_relu_maxpool-float32-${HW:-h200}-roofline \
         conv_relu_maxpool-bfloat16-${HW:-h200}-roofline conv_relu_maxpool-bfloat16-${HW:-h200}-ladder; do
  task=${c%%-*}
  cp "/tmp/prof_$task/dataset/charts/$c.png" "$OUT/" 2>/dev/null || echo "chart $c.png: not drawn (see run.json charts)" >> "$S"
done
cat "$S"
