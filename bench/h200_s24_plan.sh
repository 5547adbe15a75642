#!/usr/bin/env bash
# The open device measurements after session 24, in priority order, in ONE call that runs what its budget allows
# (written in session 24, which got an H100 twice and no H200):
#   END_S=585 bash bench/h200_s24_plan.sh    (repo root, after the .whl line; carry .whl, .deb)
# Parts, each skipped (and named in plan.txt) when too little of the call's END_S seconds is left:
#   1. the false rejections session 24 fixed without a GPU: column_sum (v0/v1: rule 23's relative tail of a linear
#      map), rmsnorm_residual (v0 eager bf16: rtol 2^-5) and cumsum_rows (its new abs probe; torch.compile's
#      determinism, still open) -- every version and dtype, eager and torch.compile beside them, 150 s per task;
#   2. on an H200 only: conv v8 alone (bench/conv_v8_probe.py: issue 14's >= 1.1x torch.compile there, 1.097x /
#      1.08x in session 21) with ncu, in what is left (> 110 s).
# PLAN_TASKS / PLAN_EXTRA replace part 1's task list and add overrides to its runs (bench/h200_s25_plan.sh).
# $OUT gets plan.txt (what ran, rc, seconds), catalog.md (bench/catalog_summary.py's table), v8.txt, all.tgz.
set -u
. bench/device_env.sh
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL" /tmp/plan
start=$(date +%s) END=${END_S:-585}
left() { echo $(( END - ($(date +%s) - start) )); }
note() { echo "$*" | tee -a "$FINAL/plan.txt"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv,noheader > "$FINAL/plan.txt" 2>&1
note "HW=$HW END_S=$END"

# 1. the fixed false rejections, whole ladders (keep ~130 s for part 2 on an H200)
KEEP=$([ "$HW" = h200 ] && echo 130 || echo 10)
L=$(( $(left) - KEEP ))
if [ "$L" -gt 120 ]; then
  t0=$(date +%s)
  OUT=/tmp/plan/catalog TASKS="${PLAN_TASKS:-column_sum:150 rmsnorm_residual:150 cumsum_rows:150}" TOTAL_S=$L \
    EXTRA="${PLAN_EXTRA:-}" RUNS=/tmp/plan/catalog/runs bash bench/h200_catalog.sh > /tmp/plan/catalog.stdout 2>&1
  note "1 catalog: rc=$? $(( $(date +%s) - t0 )) s; $(tr '\n' ' ' < /tmp/plan/catalog/status.txt 2>/dev/null)"
  cp /tmp/plan/catalog/catalog_summary.md "$FINAL/catalog.md" 2>/dev/null
else note "1 catalog: not run ($(left) s left)"; fi

# 2. conv v8 on an H200
if [ "$HW" = h200 ] && [ "$(left)" -gt 110 ]; then
  t0=$(date +%s); mkdir -p /tmp/plan/v8
  OUT=/tmp/plan/v8 PROBE_BUDGET_S=$(( $(left) - 30 )) timeout $(( $(left) - 10 )) python3 bench/conv_v8_probe.py \
    > /tmp/plan/v8.stdout 2>&1
  note "2 v8 probe: rc=$? $(( $(date +%s) - t0 )) s"
  cp /tmp/plan/v8/conv_v8_probe.txt "$FINAL/v8.txt" 2>/dev/null || tail -60 /tmp/plan/v8.stdout > "$FINAL/v8.txt"
else note "2 v8 probe: not run (HW=$HW, $(left) s left)"; fi

tar czf "$FINAL/all.tgz" -C /tmp --exclude='*.so' --exclude='*.cubin' --exclude='triton' --exclude='inductor' plan \
  2>/dev/null
note "total $(( $(date +%s) - start )) s"
head -30 "$FINAL/catalog.md" 2>/dev/null; grep -v "^  v8" "$FINAL/v8.txt" 2>/dev/null | tail -30 | cut -c1-300
